/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Opening a host object once and finding where it really is (judge.h).
 * Every caller that needs a host path judged comes here: the bind sources
 * and the rootfs (runtime/init/), the hooks (hooks/), the seccomp
 * listener (runtime/seccomp/).  There is no second copy of this walk.
 */
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
#include "judge.h"

#define DELETED_SUFFIX " (deleted)"

static int openat2_path(const char *path, uint64_t resolve)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = resolve };

	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

static uint64_t walk_resolve(enum judge_walk walk)
{
	switch (walk) {
	case JUDGE_NO_LINKS:
		return RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	case JUDGE_SYMLINKS:
		return RESOLVE_NO_MAGICLINKS;
	case JUDGE_FOLLOW_ALL:
	default:
		return 0;
	}
}

/* The object's identity: stat, and its mount's id (0 where statx has
 * none: before Linux 5.8 the device and inode alone are compared). */
static int identify(int fd, struct stat *st, uint64_t *mnt_id)
{
	struct statx sx;

	if (fstat(fd, st) < 0)
		return -1;
	*mnt_id = 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID))
		*mnt_id = sx.stx_mnt_id;
	return 0;
}

/* The path the kernel gives the fd (/proc/self/fd/N): the one a process
 * of this mount namespace would see only if it opens back to the same
 * object, which judge_locate_fd() checks. */
static int fd_path(const char *what, int fd, char *buf, size_t cap, struct error *err)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, cap - 1);
	if (n < 0)
		return error_sys(err, "%s: where is it (readlink %s)", what, link);
	if ((size_t)n == cap - 1)
		return error_setc(err, ENAMETOOLONG, "%s: where is it (readlink %s)", what, link);
	buf[n] = '\0';
	if (buf[0] != '/')
		return error_set(err, "policy: %s: the object opened is \"%s\", not a file of this mount namespace",
				 what, buf);
	if ((size_t)n > strlen(DELETED_SUFFIX) &&
	    !strcmp(buf + n - strlen(DELETED_SUFFIX), DELETED_SUFFIX))
		return error_set(err, "policy: %s: the file opened was deleted (%s): only a file reachable by its path is judged",
				 what, buf);
	return 0;
}

int judge_locate_fd(const char *what, int fd, struct judged *o, struct error *err)
{
	_cleanup_close_ int again = -1;
	struct stat st2;
	uint64_t mnt2;

	memset(o, 0, sizeof(*o));
	o->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (o->fd < 0)
		return error_sys(err, "%s: duplicate the opened object's fd", what);
	if (identify(o->fd, &o->st, &o->mnt_id) < 0) {
		error_sys(err, "%s: stat the opened object", what);
		goto fail;
	}
	if (fd_path(what, o->fd, o->where, sizeof(o->where), err) < 0)
		goto fail;
	/* weak-locate: the path readlink shows is trusted as it is. */
	if (WEAK_LOCATE)
		return 0;
	again = openat2_path(o->where, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (again < 0 || identify(again, &st2, &mnt2) < 0 || st2.st_dev != o->st.st_dev ||
	    st2.st_ino != o->st.st_ino || mnt2 != o->mnt_id) {
		error_set(err, "policy: %s: the object opened is not what is at %s in this mount namespace (a path of another mount namespace, such as /proc/PID/root/..., an overmounted path, or one moved or swapped while being judged)",
			  what, o->where);
		goto fail;
	}
	return 0;
fail:
	judged_close(o);
	return -1;
}

int judge_open(const char *what, const char *path, enum judge_walk walk,
	       struct judged *o, struct error *err)
{
	_cleanup_close_ int fd = -1;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || path[0] != '/')
		return error_set(err, "%s %s: not an absolute path", what, path ? path : "(null)");
	fd = openat2_path(path, walk_resolve(walk));
	if (fd < 0)
		return error_sys(err, "%s: open %s", what, path);
	return judge_locate_fd(what, fd, o, err);
}

int judge_open_unlocated(const char *what, const char *path, enum judge_walk walk,
			 struct judged *o, struct error *err)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || path[0] != '/')
		return error_set(err, "%s %s: not an absolute path", what, path ? path : "(null)");
	o->fd = openat2_path(path, walk_resolve(walk));
	if (o->fd < 0)
		return error_sys(err, "%s: open %s", what, path);
	if (identify(o->fd, &o->st, &o->mnt_id) < 0) {
		error_sys(err, "%s: stat %s", what, path);
		judged_close(o);
		return -1;
	}
	snprintf(o->where, sizeof(o->where), "%s", path);
	return 0;
}

unsigned judge_type_bit(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return JUDGE_TYPE_REG;
	case S_IFDIR:
		return JUDGE_TYPE_DIR;
	case S_IFSOCK:
		return JUDGE_TYPE_SOCK;
	case S_IFIFO:
		return JUDGE_TYPE_FIFO;
	case S_IFCHR:
		return JUDGE_TYPE_CHR;
	case S_IFBLK:
		return JUDGE_TYPE_BLK;
	case S_IFLNK:
		return JUDGE_TYPE_LNK;
	default:
		return 0;
	}
}

const char *judge_type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a unix socket";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFLNK:
		return "a symbolic link";
	default:
		return "a file of unknown type";
	}
}

int judge_require_type(const char *what, const struct judged *o, unsigned types,
		       const char *allow_field, struct error *err)
{
	if (judge_type_bit(o->st.st_mode) & types)
		return 0;
	if (allow_field)
		return error_set(err, "policy: %s: %s is %s, which this rule refuses (%s would allow it)",
				 what, o->where, judge_type_name(o->st.st_mode), allow_field);
	return error_set(err, "policy: %s: %s is %s, which this rule refuses",
			 what, o->where, judge_type_name(o->st.st_mode));
}

void judged_close(struct judged *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

int judge_reopen_same(const char *what, const char *path, int judged_fd, int *out,
		      struct stat *st, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat judged, here;

	if (fd < 0)
		return error_sys(err, "open %s %s", what, path);
	if (fstat(fd, &here) < 0 || fstat(judged_fd, &judged) < 0)
		return error_sys(err, "stat %s %s", what, path);
	if (here.st_dev != judged.st_dev || here.st_ino != judged.st_ino)
		return error_set(err, "%s %s is no longer the directory create opened", what, path);
	if (st)
		*st = here;
	*out = take_fd(fd);
	return 0;
}
