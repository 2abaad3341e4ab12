/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container's filesystem view, built in the child inside its new mount
 * namespace: propagation of /, the rootfs bound onto itself, the spec's
 * mounts in order, then (after the createContainer hooks) masked and
 * read-only paths, pivot_root and the read-only root.
 *
 * Every target is resolved inside the rootfs (pathres.c) and mounted
 * through its fd; bind sources are cloned with open_tree() and attached
 * with move_mount(), so no mount ever follows a path the container wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../../spec/policy/policy.h"
#include "../internal.h"
#include "pathres.h"
#include "writable_layer.h"

/* Open the target of a mount, creating it as a directory or a file. */
static int open_target(int rootfd, const char *dest, bool is_dir, bool strict,
		       int *out, struct error *err)
{
	struct stat st;

	if (strict && !WEAK_PROC_TARGET) {
		/* /proc and /sys: no symlink anywhere on the way, and the
		 * target must be a real directory (CVE-2019-16884,
		 * CVE-2019-19921). */
		if (path_open_in_root(rootfd, dest, O_PATH | O_DIRECTORY, true,
				      out, err) < 0) {
			int fd;
			if (err->code != ENOENT)
				return error_prefix(err, "mount target %s", dest);
			if (path_mkdir_in_root(rootfd, dest, 0755, &fd, err) < 0)
				return -1;
			close(fd);
			if (path_open_in_root(rootfd, dest, O_PATH | O_DIRECTORY,
					      true, out, err) < 0)
				return error_prefix(err, "mount target %s", dest);
		}
		return 0;
	}
	if (is_dir)
		return path_mkdir_in_root(rootfd, dest, 0755, out, err);
	if (path_mkfile_in_root(rootfd, dest, 0644, out, err) < 0)
		return -1;
	if (fstat(*out, &st) < 0)
		return error_sys(err, "stat mount target %s", dest);
	if (S_ISDIR(st.st_mode)) {
		close(*out);
		return error_set(err, "mount target %s: is a directory but the source is not",
				 dest);
	}
	return 0;
}

/* Re-resolve a target after something was mounted on it: the old fd still
 * points below the new mount. */
static int reopen_target(int rootfd, const char *dest, int *out,
			 struct error *err)
{
	return path_open_in_root(rootfd, dest, O_PATH, false, out, err);
}

/* A destination that resolved into a procfs through a symlink of the
 * image: refused unless it is one runc allows by name (lxcfs files); into
 * a sysfs: refused under a policy (its lexical rule refuses /sys/...). */
static int target_in_pseudo_fs(int dst, const struct mount_entry *e, struct error *err)
{
	_cleanup_free_ char *clean = policy_clean_path(e->spec->destination);
	struct statfs sf;

	if (fstatfs(dst, &sf) < 0)
		return error_sys(err, "statfs mount target %s", e->spec->destination);
	if (sf.f_type == SYSFS_MAGIC && e->no_sysfs_target)
		return error_set(err, "mount target %s is inside a sysfs: not allowed by the policy",
				 e->spec->destination);
	if (sf.f_type != PROC_SUPER_MAGIC)
		return 0;
	if (policy_path_under(clean, "/proc") &&
	    policy_proc_dest_allowed(clean, e->spec->type, e->kind == MOUNT_KIND_BIND))
		return 0;
	return error_set(err, "mount target %s is inside a procfs: not allowed",
			 e->spec->destination);
}

/* The weak-bind-race build only: the source looked up again by name here,
 * in the child, after the parent judged it (CVE-2021-30465). */
static int weak_clone_by_name(const struct mount_entry *e, int *tree,
			      struct error *err)
{
	_cleanup_close_ int src = open(e->source, O_PATH | O_CLOEXEC);

	if (src < 0)
		return error_sys(err, "bind mount source %s", e->source);
	*tree = (int)open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (e->recursive ? AT_RECURSIVE : 0));
	if (*tree < 0)
		return error_sys(err, "clone mount %s", e->source);
	if (mounts_setattr(*tree, false, ms_flags_to_attr(e->flags), 0, 0,
			   e->spec->destination, err) < 0 ||
	    mounts_setattr(*tree, true, e->attr_set, e->attr_clr, 0, e->spec->destination, err) < 0)
		return -1;
	return 0;
}

/* Since 6.8 a namespace lists its mounts (/proc/self/mountinfo) by unique
 * mount id, in the order they were made, and the parent cloned the bind
 * trees before the child mounted the root: attached as they are they come
 * before "/" and /proc, where runc's follow the spec's order (runtime-tools'
 * `mounts` case reads it).  The attached tree is cloned once more here (a
 * detached tree cannot be cloned from another mount namespace), the first
 * clone detached, and the new one attached in its place: the same judged
 * object, with ids in spec order.  On kernels that keep attach order the
 * step changes nothing. */
static int reattach_in_spec_order(int rootfd, int dst, const struct mount_entry *e,
				  int *top, struct error *err)
{
	_cleanup_close_ int first = -1;
	const char *dest = e->spec->destination;
	char p[FD_PATH_MAX];

	if (reopen_target(rootfd, dest, &first, err) < 0)
		return -1;
	*top = (int)open_tree(first, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (e->recursive ? AT_RECURSIVE : 0));
	if (*top < 0)
		return error_sys(err, "clone bind mount %s on %s", e->source, dest);
	if (umount2(fd_path(first, p), MNT_DETACH) < 0)
		return error_sys(err, "detach the first clone of %s on %s", e->source, dest);
	if (move_mount(*top, "", dst, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "bind mount %s on %s", e->source, dest);
	return 0;
}

/* The tree the parent cloned from the judged source (mounts.c), attached
 * as it is: no lookup of the source by name here. */
static int mount_bind(int rootfd, const struct mount_entry *e, int tree,
		      struct error *err)
{
	_cleanup_close_ int dst = -1, weak_tree = -1, top = -1;
	const char *dest = e->spec->destination;

	if (open_target(rootfd, dest, e->source_is_dir, false, &dst, err) < 0)
		return -1;
	if (tree < 0) {
		if (!WEAK_BIND_RACE)
			return error_set(err, "bind mount %s on %s: no prepared source", e->source, dest);
		if (weak_clone_by_name(e, &weak_tree, err) < 0)
			return -1;
		tree = weak_tree;
	}
	if (target_in_pseudo_fs(dst, e, err) < 0)
		return -1;
	if (move_mount(tree, "", dst, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "bind mount %s on %s", e->source, dest);
	if (reattach_in_spec_order(rootfd, dst, e, &top, err) < 0)
		return -1;
	if (!e->propagation)
		return 0;
	return mounts_setattr(top, e->propagation & MS_REC, 0, 0,
			      e->propagation & ~MS_REC, dest, err);
}

static int mount_fresh(int rootfd, const struct mount_entry *e, bool strict,
		       struct error *err)
{
	_cleanup_close_ int dst = -1, top = -1;
	const char *dest = e->spec->destination;
	char p[FD_PATH_MAX];

	if (open_target(rootfd, dest, true, strict, &dst, err) < 0 ||
	    target_in_pseudo_fs(dst, e, err) < 0)
		return -1;
	if (mount(e->source, fd_path(dst, p), e->spec->type, e->flags, e->data) < 0)
		return error_sys(err, "mount %s on %s", e->spec->type, dest);
	if (!e->attr_set && !e->attr_clr && !e->propagation)
		return 0;
	if (reopen_target(rootfd, dest, &top, err) < 0)
		return -1;
	if (mounts_setattr(top, true, e->attr_set, e->attr_clr, 0, dest, err) < 0)
		return -1;
	return mounts_setattr(top, e->propagation & MS_REC, 0, 0,
			      e->propagation & ~MS_REC, dest, err);
}

static int mount_entry(const struct ctx_decided *d, const struct ctx_record *r, int rootfd,
		       const struct mount_entry *e, int tree, struct error *err)
{
	switch (e->kind) {
	case MOUNT_KIND_BIND:
		return mount_bind(rootfd, e, tree, err);
	case MOUNT_KIND_PROC:
	case MOUNT_KIND_SYSFS:
		return mount_fresh(rootfd, e, true, err);
	case MOUNT_KIND_CGROUP:
		return rootfs_mount_cgroup(d, r, rootfd, e, err);
	case MOUNT_KIND_FS:
		return mount_fresh(rootfd, e, false, err);
	}
	return error_set(err, "mount %s: unknown kind", e->spec->destination);
}

/* / of the new mount namespace: the requested propagation, but never
 * shared while we pivot (pivot_root refuses a shared parent).  A
 * non-recursive type changes / alone: every mount below it is made a slave
 * first, or one still shared with the host's (a rootfs under a shared
 * /run) would carry what is mounted on the rootfs out to the host. */
static int set_root_propagation(unsigned long prop, struct error *err)
{
	unsigned long flags = prop;

	if (prop & MS_SHARED)
		flags = MS_PRIVATE | MS_REC;
	if (!(flags & MS_REC) && !WEAK_PROPAGATION &&
	    mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return error_sys(err, "make the mounts below / slaves");
	if (mount(NULL, "/", NULL, flags, NULL) < 0)
		return error_sys(err, "set propagation of /");
	return 0;
}

/* No mount namespace of its own (none in the spec, or a joined one that is
 * the host's): the process runs in the host's mount tree, chrooted into
 * the rootfs, as runc runs it.  Nothing is mounted there: a mount would be
 * the host's (and outlive the container), and pivot_root would replace
 * the host's root. */
static bool in_host_mount_ns(const struct ctx_decided *d)
{
	return !spec_find_namespace(&d->spec, NS_MOUNT) || d->ns_host[NS_MOUNT];
}

static int check_host_mount_ns(const struct ctx_decided *d, struct error *err)
{
	const struct oci_linux *l = &d->spec.linux;
	const char *what = d->mounts.len ? "mounts" : l->masked_paths.len ? "linux.maskedPaths" :
					      l->readonly_paths.len	  ? "linux.readonlyPaths" :
					      d->spec.root.readonly	  ? "root.readonly" :
									    NULL;

	if (what)
		return error_set(err, "%s: without a mount namespace of its own (linux.namespaces has no new \"mount\") it would change the host's mount table: not supported",
				 what);
	return 0;
}

static int make_cwd(const struct ctx_decided *d, const struct ctx_handles *h,
		    const struct ctx_init *i, struct error *err)
{
	_cleanup_close_ int cwd = -1;

	/* A missing cwd is created, as runc does; inside the rootfs only. */
	if (path_mkdir_in_root(h->rootfs_fd, d->spec.process.cwd, 0755, &cwd, err) < 0)
		return error_prefix(err, "process.cwd");
	return writable_layer_own_cwd(d, h, i, cwd, err);
}

/* The rootfs made a mount point for pivot_root: the policy's writable
 * layer over it, or else the rootfs bound onto itself.  A layer the kernel
 * will not build (an image on a filesystem overlayfs cannot stack on, a
 * kernel without tmpfs user xattrs in a user namespace) leaves the root
 * read-only, which is what the policy asks for without one, and says so. */
static int mount_rootfs(const struct ctx_decided *d, const struct ctx_handles *h,
			struct ctx_init *i, struct error *err)
{
	_cleanup_close_ int old = -1;
	char p[FD_PATH_MAX];

	if (d->decision.writable_layer) {
		struct error lerr = { 0 };
		bool attached;

		if (writable_layer_mount(d, h, &attached, &lerr) == 0)
			return 0;
		if (attached) {
			*err = lerr;
			return -1;
		}
		writable_layer_fell_back(d, i, &lerr);
	}
	if (rootfs_open_judged(d, h, &old, NULL, err) < 0)
		return -1;
	if (mount(fd_path(old, p), fd_path(old, p), NULL, MS_BIND | MS_REC, NULL) < 0)
		return error_sys(err, "bind mount rootfs %s", d->rootfs);
	return 0;
}

int rootfs_prepare_mounts(const struct ctx_decided *d, const struct ctx_record *r,
			  struct ctx_handles *h, struct ctx_init *i, struct error *err)
{
	if (in_host_mount_ns(d))
		return check_host_mount_ns(d, err) < 0 ? -1 : make_cwd(d, h, i, err);
	if (set_root_propagation(d->mounts.rootfs_propagation, err) < 0)
		return -1;
	if (mount_rootfs(d, h, i, err) < 0)
		return -1;
	close(h->rootfs_fd);
	h->rootfs_fd = open(d->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->rootfs_fd < 0)
		return error_sys(err, "reopen rootfs %s", d->rootfs);
	/* A shared rootfs is made shared after pivot_root, which refuses a
	 * shared new root (rootfs_finalize). */

	for (size_t k = 0; k < d->mounts.len; k++) {
		if (mount_entry(d, r, h->rootfs_fd, &d->mounts.items[k], h->mount_trees.fd[k],
				err) < 0)
			return error_prefix(err, "mounts[%zu]", k);
	}
	/* The detached trees are attached: no host handle left behind. */
	mounts_close_trees(&h->mount_trees);
	if (devices_setup(d, h, err) < 0)
		return -1;
	return make_cwd(d, h, i, err);
}

/* ---- masked and read-only paths ------------------------------------------ */

/* The host's /dev/null, checked to be the char device 1:3 (CVE-2025-31133:
 * a swapped /dev/null would otherwise bind a host file over the mask). */
static int open_dev_null(int *out, struct error *err)
{
	struct stat st;
	int fd = open("/dev/null", O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return error_sys(err, "open /dev/null");
	if (WEAK_DEVNULL_CHECK) {
		*out = fd;
		return 0;
	}
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode) ||
	    st.st_rdev != makedev(1, 3)) {
		close(fd);
		return error_set(err, "/dev/null is not the null device");
	}
	*out = fd;
	return 0;
}

static int mask_path(int rootfd, int nullfd, const char *path,
		     struct error *err)
{
	_cleanup_close_ int dst = -1, tree = -1;
	char p[FD_PATH_MAX];
	struct stat st;

	if (path_open_in_root(rootfd, path, O_PATH | O_NOFOLLOW, false, &dst, err) < 0) {
		if (err->code == ENOENT)
			return 0;
		return error_prefix(err, "mask %s", path);
	}
	if (fstat(dst, &st) < 0)
		return error_sys(err, "mask %s: stat", path);
	if (S_ISDIR(st.st_mode)) {
		if (mount("tmpfs", fd_path(dst, p), "tmpfs", MS_RDONLY,
			  "size=0,mode=0555") < 0)
			return error_sys(err, "mask %s with an empty tmpfs", path);
		return 0;
	}
	tree = (int)open_tree(nullfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return error_sys(err, "mask %s: clone /dev/null", path);
	if (move_mount(tree, "", dst, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "mask %s with /dev/null", path);
	return 0;
}

static int readonly_path(int rootfd, const char *path, struct error *err)
{
	_cleanup_close_ int dst = -1, tree = -1;

	if (path_open_in_root(rootfd, path, O_PATH | O_NOFOLLOW, false, &dst, err) < 0) {
		if (err->code == ENOENT)
			return 0;
		return error_prefix(err, "make %s read-only", path);
	}
	tree = (int)open_tree(dst, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		return error_sys(err, "make %s read-only: clone", path);
	/* Only read-only, as runc: nosuid/nodev/noexec are the spec's to ask. */
	if (mounts_setattr(tree, true, MOUNT_ATTR_RDONLY, 0, 0, path, err) < 0)
		return -1;
	if (move_mount(tree, "", dst, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "make %s read-only", path);
	return 0;
}

static int apply_masks(const struct ctx_decided *d, const struct ctx_handles *h,
		       struct error *err)
{
	const struct oci_linux *l = &d->spec.linux;
	_cleanup_close_ int nullfd = -1;

	for (size_t i = 0; i < l->readonly_paths.len; i++)
		if (readonly_path(h->rootfs_fd, l->readonly_paths.items[i], err) < 0)
			return -1;
	if (!l->masked_paths.len)
		return 0;
	if (open_dev_null(&nullfd, err) < 0)
		return -1;
	for (size_t i = 0; i < l->masked_paths.len; i++)
		if (mask_path(h->rootfs_fd, nullfd, l->masked_paths.items[i], err) < 0)
			return -1;
	return 0;
}

/* ---- the switch of root ---------------------------------------------------- */

static int do_pivot_root(int rootfd, struct error *err)
{
	if (fchdir(rootfd) < 0)
		return error_sys(err, "chdir to rootfs");
	/* pivot_root(".", "."): the old root is stacked under the new one and
	 * detached right away, with no directory needed in the rootfs. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return error_sys(err, "pivot_root");
	if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return error_sys(err, "make old root a slave");
	if (umount2(".", MNT_DETACH) < 0)
		return error_sys(err, "detach old root");
	if (chdir("/") < 0)
		return error_sys(err, "chdir to new root");
	return 0;
}

/* In the host's mount namespace (in_host_mount_ns): runc's chroot. */
static int do_chroot(int rootfd, struct error *err)
{
	if (fchdir(rootfd) < 0)
		return error_sys(err, "chdir to rootfs");
	if (chroot(".") < 0)
		return error_sys(err, "chroot to rootfs");
	if (chdir("/") < 0)
		return error_sys(err, "chdir to new root");
	return 0;
}

/* --no-pivot: for a rootfs on a ramfs, where pivot_root cannot work. */
static int do_move_root(int rootfd, struct error *err)
{
	if (fchdir(rootfd) < 0)
		return error_sys(err, "chdir to rootfs");
	if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
		return error_sys(err, "move rootfs to /");
	if (chroot(".") < 0)
		return error_sys(err, "chroot to rootfs");
	if (chdir("/") < 0)
		return error_sys(err, "chdir to new root");
	return 0;
}

int rootfs_finalize(const struct ctx_decided *d, struct ctx_handles *h,
		    const struct ctx_init *i, struct error *err)
{
	_cleanup_close_ int root = -1;

	if (in_host_mount_ns(d)) {
		if (do_chroot(h->rootfs_fd, err) < 0)
			return -1;
		close(h->host_proc_fd);
		h->host_proc_fd = -1;
		return 0;
	}
	if (apply_masks(d, h, err) < 0)
		return -1;
	if (d->opts->no_pivot ? do_move_root(h->rootfs_fd, err) < 0 : do_pivot_root(h->rootfs_fd, err) < 0)
		return -1;
	/* The runtime's procfs is not needed past here; keep no handle to
	 * the host's mount tree inside the container. */
	close(h->host_proc_fd);
	h->host_proc_fd = -1;
	if ((d->mounts.rootfs_propagation & MS_SHARED) &&
	    mount(NULL, "/", NULL, d->mounts.rootfs_propagation, NULL) < 0)
		return error_sys(err, "set propagation of the container's /");
	/* A writable layer that could not be built leaves the root read-only. */
	if (!d->spec.root.readonly && !i->writable_layer_lost)
		return 0;
	root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_sys(err, "open new root");
	return mounts_setattr(root, false, MOUNT_ATTR_RDONLY, 0, 0, "/ (root.readonly)", err);
}

/* exec into a container without a mount namespace of its own (its init's
 * is ours: nothing to join, so setns left this process in the host's
 * tree): it takes the init's root, runc's chroot, read from the init's
 * /proc entry (pid checked by the caller, which holds its pidfd). */
int rootfs_enter_init_root(pid_t init, bool joined_mnt, struct error *err)
{
	_cleanup_close_ int root = -1;
	char path[64];

	if (joined_mnt)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)init);
	root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return error_sys(err, "open %s", path);
	if (fchdir(root) < 0 || chroot(".") < 0)
		return error_sys(err, "chroot to the container's root (%s)", path);
	return 0;
}
