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

#include "../lib/cleanup.h"
#include "../lib/weaken.h"

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
	if (WEAKENED("resolve-in-root"))
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

int path_mkdir_in_root(int rootfd, const char *path, mode_t mode, int *out,
		       struct error *err)
{
	char buf[4096];
	_cleanup_close_ int cur = -1;
	char *save = NULL, *comp;

	/* Fast path: it exists (symlinks inside the root allowed). */
	if (path_open_in_root(rootfd, path, O_PATH | O_DIRECTORY, false, out,
			      err) == 0)
		return 0;
	if (err->code != ENOENT)
		return -1;

	if (snprintf(buf, sizeof(buf), "%s", rel(path)) >= (int)sizeof(buf))
		return error_set(err, "path too long: %s", path);
	cur = dup(rootfd);
	if (cur < 0)
		return error_sys(err, "dup rootfs fd");
	for (comp = strtok_r(buf, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(comp, ".") || !*comp)
			continue;
		if (!strcmp(comp, ".."))
			return error_set(err, "mkdir %s in rootfs: \"..\" not allowed",
					 path);
		/* An existing component may be a symlink inside the root:
		 * resolve it in the root relative to where we are. */
		if (open_component(cur, comp, &next) == 0) {
			close(cur);
			cur = next;
			continue;
		}
		if (errno == ELOOP || errno == EXDEV) {
			struct open_how how = {
				.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
			};
			/* Re-resolve the prefix so far from the root. */
			size_t plen = (size_t)(comp - buf) + strlen(comp);
			char prefix[4096];
			long fd;

			snprintf(prefix, sizeof(prefix), "%.*s", (int)plen,
				 rel(path));
			fd = sys_openat2(rootfd, prefix, &how);
			if (fd < 0)
				return error_sys(err, "mkdir %s in rootfs: resolve %s",
						 path, prefix);
			close(cur);
			cur = (int)fd;
			continue;
		}
		if (errno != ENOENT)
			return error_sys(err, "mkdir %s in rootfs: open %s", path,
					 comp);
		if (mkdirat(cur, comp, mode) < 0 && errno != EEXIST)
			return error_sys(err, "mkdir %s in rootfs", path);
		if (open_component(cur, comp, &next) < 0)
			return error_sys(err, "mkdir %s in rootfs: reopen %s", path,
					 comp);
		close(cur);
		cur = next;
	}
	*out = take_fd(cur);
	return 0;
}

int path_mkfile_in_root(int rootfd, const char *path, mode_t mode, int *out,
			struct error *err)
{
	char parent[4096];
	const char *base;
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;

	if (path_open_in_root(rootfd, path, O_PATH, false, out, err) == 0)
		return 0;
	if (err->code != ENOENT)
		return -1;
	path_split(path, parent, sizeof(parent), &base);
	if (path_mkdir_in_root(rootfd, parent, 0755, &dirfd, err) < 0)
		return -1;
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
