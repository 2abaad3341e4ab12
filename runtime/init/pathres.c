/* SPDX-License-Identifier: Apache-2.0 */
#include "pathres.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "weak.h"
#include "../internal.h"
#include "../judge/judge.h"

static long sys_openat2(int dirfd, const char *path, struct open_how *how)
{
	return syscall(SYS_openat2, dirfd, path, how, sizeof(*how));
}

/* Strip leading slashes: openat2 under RESOLVE_IN_ROOT treats an absolute
 * path as relative to the root anyway, but "" must become ".". */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

int path_open_in_root(int rootfd, const char *path, int flags, bool no_symlinks,
		      int *out, struct error *err)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (no_symlinks)
		how.resolve |= RESOLVE_NO_SYMLINKS;
	if (WEAK_RESOLVE_IN_ROOT)
		how.resolve = 0; /* symlinks and ".." may leave the rootfs */
	if (flags & O_CREAT)
		how.mode = 0644;
	do
		fd = sys_openat2(rootfd, rel(path), &how);
	while (fd < 0 && (errno == EAGAIN || errno == EINTR));
	if (fd < 0)
		return error_sys(err, "open %s in rootfs", path);
	*out = (int)fd;
	return 0;
}

const char *fd_path(int fd, char buf[FD_PATH_MAX])
{
	snprintf(buf, FD_PATH_MAX, "/proc/self/fd/%d", fd);
	return buf;
}

void path_split(const char *path, char *parent, size_t parent_sz,
		const char **base)
{
	const char *p = rel(path);
	const char *slash = strrchr(p, '/');

	if (!slash) {
		snprintf(parent, parent_sz, ".");
		*base = p;
		return;
	}
	snprintf(parent, parent_sz, "%.*s", (int)(slash - p), p);
	*base = slash + 1;
}

/* Open one component below dirfd without following anything. */
static int open_component(int dirfd, const char *name, int *out)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd = sys_openat2(dirfd, name, &how);

	if (fd < 0)
		return -1;
	*out = (int)fd;
	return 0;
}

#define WALK_MAX 4096
#define WALK_SYMLINKS 40

/* Drop the last component of an in-root path ("a/b" -> "a", "a" -> ""). */
static void pop_component(char *done)
{
	char *slash = strrchr(done, '/');

	if (slash)
		*slash = '\0';
	else
		done[0] = '\0';
}

/* The next component of *todo (leading slashes skipped) into comp; *todo
 * advanced past it.  false when none is left. */
static bool next_component(const char **todo, char *comp, size_t size)
{
	const char *p = *todo, *end;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	end = strchrnul(p, '/');
	snprintf(comp, size, "%.*s", (int)(end - p), p);
	while (*end == '/')
		end++;
	*todo = end;
	return true;
}

/*
 * The walk behind path_mkdir_in_root and path_mkfile_in_root when something
 * on the way is missing.  Each component is looked at without following
 * (fstatat AT_SYMLINK_NOFOLLOW, then opened RESOLVE_NO_SYMLINKS from the
 * directory reached so far); a symlink -- dangling ones included, as runc
 * and crun create a mount target where the link points -- is read and its
 * target walked in its place, inside the root: an absolute target from
 * the root, ".." never above it.  A missing directory on the way is
 * created.  The last component is not: *dir_out is its parent's fd and
 * name its name ("" when path is the root).  A component swapped for a
 * symlink during the walk makes the open fail, never escape.
 */
static int walk_create(int rootfd, const char *path, mode_t mode, int *dir_out,
		       char *name, size_t name_sz, struct error *err)
{
	char todo_buf[2][WALK_MAX], done[WALK_MAX] = "", comp[256] = "";
	const char *todo;
	int which = 0, links = 0;
	_cleanup_close_ int cur = dup(rootfd);

	if (cur < 0)
		return error_sys(err, "dup rootfs fd");
	if (WEAK_RESOLVE_IN_ROOT) {
		/* The parent looked up as path_open_in_root's weak build does:
		 * symlinks and ".." may leave the rootfs. */
		char parent[WALK_MAX];
		const char *base;

		path_split(path, parent, sizeof(parent), &base);
		if (path_open_in_root(rootfd, parent, O_PATH | O_DIRECTORY, false,
				      dir_out, err) == 0) {
			snprintf(name, name_sz, "%s", base);
			return 0;
		}
		error_clear(err);
	}
	if (snprintf(todo_buf[0], WALK_MAX, "%s", rel(path)) >= WALK_MAX)
		return error_set(err, "path too long: %s", path);
	todo = todo_buf[0];
	name[0] = '\0';
	while (next_component(&todo, comp, sizeof(comp))) {
		bool last = !*todo;
		struct stat st;
		int next;

		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			struct open_how how = {
				.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS,
			};
			long fd;

			pop_component(done);
			fd = sys_openat2(rootfd, done[0] ? done : ".", &how);
			if (fd < 0)
				return error_sys(err, "%s in rootfs: resolve /%s", path, done);
			close(cur);
			cur = (int)fd;
			continue;
		}
		if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return error_sys(err, "%s in rootfs: stat /%s/%s", path, done, comp);
			if (last)
				break;
			if (mkdirat(cur, comp, mode) < 0 && errno != EEXIST)
				return error_sys(err, "mkdir %s in rootfs: /%s/%s", path, done, comp);
		} else if (S_ISLNK(st.st_mode)) {
			char target[WALK_MAX];
			ssize_t n;

			if (++links > WALK_SYMLINKS) {
				errno = ELOOP;
				return error_sys(err, "%s in rootfs", path);
			}
			n = readlinkat(cur, comp, target, sizeof(target) - 1);
			if (n < 0)
				return error_sys(err, "%s in rootfs: readlink /%s/%s", path, done, comp);
			target[n] = '\0';
			which = !which;
			if (snprintf(todo_buf[which], WALK_MAX, "%s/%s", target, todo) >= WALK_MAX)
				return error_set(err, "path too long: %s", path);
			todo = todo_buf[which];
			if (target[0] == '/') {
				done[0] = '\0';
				close(cur);
				cur = dup(rootfd);
				if (cur < 0)
					return error_sys(err, "dup rootfs fd");
			}
			continue;
		} else if (last) {
			break;
		}
		if (open_component(cur, comp, &next) < 0)
			return error_sys(err, "%s in rootfs: open /%s/%s", path, done, comp);
		close(cur);
		cur = next;
		if (strlen(done) + strlen(comp) + 2 > sizeof(done))
			return error_set(err, "path too long: %s", path);
		if (done[0])
			strcat(done, "/");
		strcat(done, comp);
	}
	if (strcmp(comp, ".") && strcmp(comp, "..") && !next_component(&todo, comp, sizeof(comp)))
		snprintf(name, name_sz, "%s", comp);
	*dir_out = take_fd(cur);
	return 0;
}

int path_mkdir_in_root(int rootfd, const char *path, mode_t mode, int *out,
		       struct error *err)
{
	char name[256];
	_cleanup_close_ int dir = -1;

	/* Fast path: it exists (symlinks inside the root allowed). */
	if (path_open_in_root(rootfd, path, O_PATH | O_DIRECTORY, false, out,
			      err) == 0)
		return 0;
	if (err->code != ENOENT)
		return -1;
	error_clear(err);
	if (walk_create(rootfd, path, mode, &dir, name, sizeof(name), err) < 0)
		return -1;
	if (!name[0]) {
		*out = take_fd(dir);
		return 0;
	}
	if (mkdirat(dir, name, mode) < 0 && errno != EEXIST)
		return error_sys(err, "mkdir %s in rootfs", path);
	if (open_component(dir, name, out) < 0)
		return error_sys(err, "mkdir %s in rootfs: reopen %s", path, name);
	return 0;
}

int path_mkfile_in_root(int rootfd, const char *path, mode_t mode, int *out,
			struct error *err)
{
	char base[256];
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;

	if (path_open_in_root(rootfd, path, O_PATH, false, out, err) == 0)
		return 0;
	if (err->code != ENOENT)
		return -1;
	error_clear(err);
	if (walk_create(rootfd, path, 0755, &dirfd, base, sizeof(base), err) < 0)
		return -1;
	if (!base[0])
		return error_set(err, "create %s in rootfs: is the root", path);
	{
		/* O_PATH dirfd cannot be used for O_CREAT; reopen it. */
		_cleanup_close_ int wdir =
			openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (wdir < 0)
			return error_sys(err, "open parent of %s in rootfs", path);
		fd = openat(wdir, base,
			    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0)
			return error_sys(err, "create %s in rootfs", path);
		close(fd);
		fd = openat(wdir, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return error_sys(err, "reopen %s in rootfs", path);
	}
	*out = take_fd(fd);
	return 0;
}

/* The rootfs create judged, as an fd of the container's mount namespace.
 * In a joined mount namespace the path names that namespace's own rootfs,
 * which create could not open: nothing to compare it with. */
int rootfs_open_judged(const struct ctx_decided *d, const struct ctx_handles *h, int *out,
		       struct stat *st, struct error *err)
{
	if (spec_find_namespace(&d->spec, NS_MOUNT)->path) {
		_cleanup_close_ int fd = open(d->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || (st && fstat(fd, st) < 0))
			return error_sys(err, "open rootfs %s", d->rootfs);
		*out = take_fd(fd);
		return 0;
	}
	return judge_reopen_same("rootfs", d->rootfs, h->rootfs_fd, out, st, err);
}
