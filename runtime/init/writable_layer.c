/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy's writable layer (policy writableLayer, issue 17): the image
 * stays read-only and what the container writes lands in an overlay whose
 * upper layer is a tmpfs of a fixed size.  The tmpfs is made with
 * fsopen/fsmount and attached only while the overlay is built, on the
 * rootfs directory itself in the container's private mount namespace
 * (kernels before 6.x's relaxed clone_private_mount() refuse an upper
 * layer on a detached mount), then detached again: nothing but the overlay
 * reaches it.  Its pages are charged to the container's memory cgroup, and
 * it goes away with the container's mount namespace.  A write past the
 * size fails with ENOSPC; the image on the host is never written.
 *
 * Built in the child, in its new mount namespace, in place of the
 * rootfs's bind onto itself: the overlay is the mount point pivot_root
 * needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/weaken.h"
#include "../internal.h"
#include "pathres.h"
#include "writable_layer.h"

/* The kernel's own words on a failed fsconfig(FSCONFIG_CMD_CREATE), read
 * from the context's message log ("e overlayfs: ..."). */
static int fs_error(int fsfd, int errnum, struct error *err, const char *what)
{
	char msg[256];
	ssize_t n = read(fsfd, msg, sizeof(msg) - 1);

	if (n > 2) {
		msg[n] = '\0';
		msg[strcspn(msg, "\n")] = '\0';
		return error_setc(err, errnum, "%s: %s (%s)", what, strerror(errnum), msg + 2);
	}
	return error_setc(err, errnum, "%s", what);
}

static int fs_set(int fsfd, const char *key, const char *value, struct error *err)
{
	if (fsconfig(fsfd, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0) < 0)
		return error_sys(err, "writable layer: set %s%s%s", key, value ? "=" : "",
				 value ? value : "");
	return 0;
}

/* A tmpfs of size bytes holding upper/ (with the image root's owner and
 * mode: the overlay's / shows them) and work/, attached on the rootfs
 * directory (at): *mnt is its root, to detach it by. */
static int make_upper(uint64_t size, int at, const struct stat *root, int *mnt, int *upper,
		      int *work, struct error *err)
{
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	char sz[32];

	if (fs < 0)
		return error_sys(err, "writable layer: fsopen tmpfs");
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	if ((!WEAKENED("layer-size") && fs_set(fs, "size", sz, err) < 0) ||
	    fs_set(fs, "mode", "0700", err) < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return fs_error(fs, errno, err, "writable layer: create its tmpfs");
	*mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (*mnt < 0)
		return error_sys(err, "writable layer: fsmount tmpfs");
	if (move_mount(*mnt, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "writable layer: attach its tmpfs");
	if (mkdirat(*mnt, "upper", 0700) < 0 || mkdirat(*mnt, "work", 0700) < 0)
		return error_sys(err, "writable layer: mkdir upper and work on its tmpfs");
	if (fchownat(*mnt, "upper", root->st_uid, root->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(*mnt, "upper", root->st_mode & 07777, 0) < 0)
		return error_sys(err, "writable layer: give upper the image root's owner and mode");
	*upper = openat(*mnt, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	*work = openat(*mnt, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*upper < 0 || *work < 0)
		return error_sys(err, "writable layer: open upper and work");
	return 0;
}

/* The overlay of the image (lower, read-only) and the tmpfs, by fds: the
 * layers are named as /proc/self/fd/N of directories already open. */
static int make_overlay(int lower, int upper, int work, bool userxattr, int *out,
			struct error *err)
{
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	char p[FD_PATH_MAX];

	if (fs < 0)
		return error_sys(err, "writable layer: fsopen overlay");
	if (fs_set(fs, "lowerdir", fd_path(lower, p), err) < 0 ||
	    fs_set(fs, "upperdir", fd_path(upper, p), err) < 0 ||
	    fs_set(fs, "workdir", fd_path(work, p), err) < 0)
		return -1;
	/* In a user namespace overlayfs keeps its metadata in user.*
	 * xattrs (trusted.* is the host root's). */
	if (userxattr && fs_set(fs, "userxattr", NULL, err) < 0)
		return -1;
	/* The image is hostile and may carry overlay xattrs of its own: no
	 * redirect is followed, no metacopy trusted, no index kept. */
	if (fs_set(fs, "redirect_dir", "nofollow", err) < 0 || fs_set(fs, "metacopy", "off", err) < 0 ||
	    fs_set(fs, "index", "off", err) < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return fs_error(fs, errno, err, "writable layer: create the overlay");
	*out = fsmount(fs, FSMOUNT_CLOEXEC, 0);
	if (*out < 0)
		return error_sys(err, "writable layer: fsmount overlay");
	return 0;
}

int writable_layer_mount(struct container_ctx *c, struct error *err)
{
	_cleanup_close_ int lower = -1, tmpfs = -1, upper = -1, work = -1, ovl = -1;
	bool userxattr = c->new_userns || (c->ns_fd[NS_USER] >= 0 && !c->ns_host[NS_USER]);
	char p[FD_PATH_MAX];
	struct stat st;

	lower = open(c->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (lower < 0)
		return error_sys(err, "open rootfs %s", c->rootfs);
	if (fstat(lower, &st) < 0)
		return error_sys(err, "stat rootfs %s", c->rootfs);
	if (make_upper(c->decision.writable_layer, lower, &st, &tmpfs, &upper, &work, err) < 0)
		return -1;
	/* lower: the rootfs directory under the tmpfs, opened before it */
	if (make_overlay(lower, upper, work, userxattr, &ovl, err) < 0) {
		umount2(fd_path(tmpfs, p), MNT_DETACH);
		return -1;
	}
	if (umount2(fd_path(tmpfs, p), MNT_DETACH) < 0)
		return error_sys(err, "writable layer: detach its tmpfs from %s", c->rootfs);
	if (move_mount(ovl, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "writable layer: mount the overlay on %s", c->rootfs);
	return 0;
}

/* The policy runs the spec's root as another uid (policy uid): a working
 * directory the image gives to root is given to that uid in the layer
 * (a copy-up: the image keeps its owner), so code can write where it
 * starts, as it could as root.  Only a directory on the layer itself: a
 * bind mount (a volume: the host's files) is left as it is. */
int writable_layer_own_cwd(struct container_ctx *c, int cwd, struct error *err)
{
	const struct oci_user *u = &c->spec->process.user;
	struct statx root, dir;

	if (!c->decision.writable_layer || !u->uid)
		return 0;
	if (statx(c->rootfs_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &root) < 0 ||
	    statx(cwd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_UID, &dir) < 0)
		return error_sys(err, "writable layer: stat process.cwd %s", c->spec->process.cwd);
	if (dir.stx_mnt_id != root.stx_mnt_id || dir.stx_uid != 0)
		return 0;
	if (fchownat(cwd, "", u->uid, u->gid, AT_EMPTY_PATH) < 0)
		return error_sys(err, "writable layer: give process.cwd %s to uid %u",
				 c->spec->process.cwd, (unsigned)u->uid);
	return 0;
}
