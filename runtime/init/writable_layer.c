/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy's writable layer (policy writableLayer): the image
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
#include <sys/statvfs.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "../policy/audit_log.h"
#include "pathres.h"
#include "writable_layer.h"

/* The kernel's own words on a failed fsconfig(FSCONFIG_CMD_CREATE): the
 * first error line ("e overlayfs: ...") of the context's message log. */
static int fs_error(int fsfd, int errnum, struct error *err, const char *what, const char *path)
{
	char msg[256];
	ssize_t n;

	while ((n = read(fsfd, msg, sizeof(msg) - 1)) > 0) {
		msg[n] = '\0';
		msg[strcspn(msg, "\n")] = '\0';
		if (n > 2 && msg[0] == 'e' && msg[1] == ' ')
			return error_setc(err, errnum, "writable layer on %s: %s (%s)", path, what, msg + 2);
	}
	return error_setc(err, errnum, "writable layer on %s: %s", path, what);
}

static int fs_set(int fsfd, const char *key, const char *value, const char *path,
		  struct error *err)
{
	if (fsconfig(fsfd, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0) < 0)
		return error_sys(err, "writable layer on %s: set %s%s%s", path, key, value ? "=" : "",
				 value ? value : "");
	return 0;
}

/* A detached tmpfs of size bytes (and an inode a page: whiteouts and
 * empty files are capped too) holding upper/, with the image root's owner
 * and mode (the overlay's / shows them), and work/.  *mnt is its root. */
static int make_upper(uint64_t size, const struct stat *root, const char *path, int *mnt,
		      int *upper, int *work, struct error *err)
{
	_cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	char sz[32], inodes[32];

	if (fs < 0)
		return error_sys(err, "writable layer on %s: fsopen tmpfs", path);
	snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
	snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)(size / 4096 + 1024));
	if ((!WEAK_LAYER_SIZE && (fs_set(fs, "size", sz, path, err) < 0 ||
				  fs_set(fs, "nr_inodes", inodes, path, err) < 0)) ||
	    fs_set(fs, "mode", "0700", path, err) < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return fs_error(fs, errno, err, "create its tmpfs", path);
	*mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (*mnt < 0)
		return error_sys(err, "writable layer on %s: fsmount tmpfs", path);
	if (mkdirat(*mnt, "upper", 0700) < 0 || mkdirat(*mnt, "work", 0700) < 0)
		return error_sys(err, "writable layer on %s: mkdir upper and work on its tmpfs", path);
	if (fchownat(*mnt, "upper", root->st_uid, root->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(*mnt, "upper", root->st_mode & 07777, 0) < 0)
		return error_sys(err, "writable layer on %s: give upper the image root's owner %u:%u and mode %04o",
				 path, (unsigned)root->st_uid, (unsigned)root->st_gid,
				 (unsigned)(root->st_mode & 07777));
	*upper = openat(*mnt, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	*work = openat(*mnt, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*upper < 0 || *work < 0)
		return error_sys(err, "writable layer on %s: open upper and work", path);
	return 0;
}

/* The image's own mount's nosuid/nodev/noexec, kept on the overlay (the
 * bind of the rootfs onto itself keeps them as well). */
static int lower_mount_attrs(int lower, const char *path, uint64_t *attrs, struct error *err)
{
	struct statvfs sv;

	if (fstatvfs(lower, &sv) < 0)
		return error_sys(err, "writable layer on %s: statvfs", path);
	/* ST_* are the MS_* bits (statvfs(3)) */
	*attrs = ms_flags_to_attr(sv.f_flag & (ST_NOSUID | ST_NODEV | ST_NOEXEC));
	return 0;
}

/* The overlay of the image (lower, read-only) and the tmpfs, by fds: the
 * layers are named as /proc/self/fd/N of directories already open. */
static int make_overlay(int lower, int upper, int work, bool userxattr, const char *path,
			int *out, struct error *err)
{
	_cleanup_close_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
	uint64_t attrs = 0;
	char p[FD_PATH_MAX];

	if (fs < 0)
		return error_sys(err, "writable layer on %s: fsopen overlay", path);
	if (fs_set(fs, "lowerdir", fd_path(lower, p), path, err) < 0 ||
	    fs_set(fs, "upperdir", fd_path(upper, p), path, err) < 0 ||
	    fs_set(fs, "workdir", fd_path(work, p), path, err) < 0)
		return -1;
	/* In a user namespace overlayfs keeps its metadata in user.*
	 * xattrs (trusted.* is the host root's). */
	if (userxattr && fs_set(fs, "userxattr", NULL, path, err) < 0)
		return -1;
	/* The image is hostile and may carry overlay xattrs of its own: no
	 * redirect is followed, no metacopy trusted, no index kept. */
	if (fs_set(fs, "redirect_dir", "nofollow", path, err) < 0 ||
	    fs_set(fs, "metacopy", "off", path, err) < 0 || fs_set(fs, "index", "off", path, err) < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return fs_error(fs, errno, err, "create the overlay", path);
	if (lower_mount_attrs(lower, path, &attrs, err) < 0)
		return -1;
	*out = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attrs);
	if (*out < 0)
		return error_sys(err, "writable layer on %s: fsmount overlay", path);
	return 0;
}

int writable_layer_mount(const struct ctx_decided *d, const struct ctx_handles *h,
			 bool *attached, struct error *err)
{
	_cleanup_close_ int lower = -1, tmpfs = -1, upper = -1, work = -1, ovl = -1;
	bool userxattr = d->new_userns || (h->ns_fd[NS_USER] >= 0 && !d->ns_host[NS_USER]);
	const char *path = d->rootfs;
	char p[FD_PATH_MAX];
	struct stat st;
	int r;

	*attached = false;
	if (rootfs_open_judged(d, h, &lower, &st, err) < 0)
		return -1;
	if (make_upper(d->decision.writable_layer, &st, path, &tmpfs, &upper, &work, err) < 0)
		return -1;
	/* Attached on the rootfs directory for as long as the overlay takes
	 * to build; lower still is the directory under it, opened before. */
	if (move_mount(tmpfs, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "writable layer on %s: attach its tmpfs", path);
	r = make_overlay(lower, upper, work, userxattr, path, &ovl, err);
	if (umount2(fd_path(tmpfs, p), MNT_DETACH) < 0) {
		*attached = true; /* the rootfs path now names the tmpfs */
		return error_sys(err, "writable layer on %s: detach its tmpfs", path);
	}
	if (r < 0)
		return -1;
	if (move_mount(ovl, "", lower, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "writable layer on %s: mount the overlay", path);
	return 0;
}

/* The policy runs the spec's root as another uid (policy uid): a working
 * directory the image gives to root is given to that uid in the layer
 * (a copy-up: the image keeps its owner), so code can write where it
 * starts, as it could as root.  Only a directory on the layer itself (a
 * bind mount, a volume, is the host's and is left as it is), and only
 * with no_new_privs: the uid could then rearrange the directory (even /),
 * and no setuid binary may turn that into root. */
int writable_layer_own_cwd(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct ctx_init *i, int cwd, struct error *err)
{
	const struct oci_user *u = &d->spec.process.user;
	const char *path = d->spec.process.cwd;
	struct statx root, dir;

	if (!d->decision.writable_layer || i->writable_layer_lost || !u->uid ||
	    !d->spec.process.no_new_privileges)
		return 0;
	if (statx(h->rootfs_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &root) < 0)
		return error_sys(err, "writable layer: stat the container's root");
	if (statx(cwd, "", AT_EMPTY_PATH, STATX_MNT_ID | STATX_UID, &dir) < 0)
		return error_sys(err, "writable layer: stat process.cwd %s", path);
	if (!(root.stx_mask & dir.stx_mask & STATX_MNT_ID))
		return error_set(err, "writable layer: process.cwd %s: the kernel gave no mount id", path);
	if (dir.stx_mnt_id != root.stx_mnt_id || dir.stx_uid != 0)
		return 0;
	if (fchownat(cwd, "", u->uid, u->gid, AT_EMPTY_PATH) < 0)
		return error_sys(err, "writable layer: give process.cwd %s to %u:%u", path,
				 (unsigned)u->uid, (unsigned)u->gid);
	return 0;
}

/* The kernel would not build the layer (an image on a filesystem overlayfs
 * cannot stack on, a tmpfs without the user xattrs overlayfs needs in a
 * user namespace): the root is read-only, what the policy gives without a
 * layer; said in the runtime's log and in the audit log. */
void writable_layer_fell_back(const struct ctx_decided *d, struct ctx_init *i,
			      const struct error *why)
{
	struct policy_changes ch = { 0 };
	_cleanup_free_ char *to = xasprintf("true (no writable layer: %s)", why->msg);

	log_warn("%s: the root is read-only instead (policy writableLayer)", why->msg);
	policy_change_add(&ch, "rootfs", "root.readonly", "a writable layer", to);
	audit_log_changes(&d->policy, &(struct audit_subject){ d->id, "create", &d->spec }, &ch,
			  "applied", true);
	policy_changes_free(&ch);
	/* The init's own record: the decision stays as the parent made it. */
	i->writable_layer_lost = true;
}
