/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device nodes in the container's /dev: the default set every container
 * gets (null, zero, full, random, urandom, tty), the spec's linux.devices,
 * and the standard links.  Without a user namespace the nodes are made with
 * mknod; inside one (where mknod is refused) the host's node is bound onto
 * an empty file, as runc does.  Every node is made under the container's
 * /dev only (checked in the parent, and resolved in the child with /dev as
 * the root), and set up through its own fd, never by a name that could
 * have become a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "pathres.h"

static const struct oci_device default_devices[] = {
	{ .path = "/dev/null", .type = 'c', .major = 1, .minor = 3 },
	{ .path = "/dev/zero", .type = 'c', .major = 1, .minor = 5 },
	{ .path = "/dev/full", .type = 'c', .major = 1, .minor = 7 },
	{ .path = "/dev/random", .type = 'c', .major = 1, .minor = 8 },
	{ .path = "/dev/urandom", .type = 'c', .major = 1, .minor = 9 },
	{ .path = "/dev/tty", .type = 'c', .major = 5, .minor = 0 },
};

static const struct {
	const char *target;
	const char *link;
} default_links[] = {
	{ "/proc/self/fd", "/dev/fd" },
	{ "/proc/self/fd/0", "/dev/stdin" },
	{ "/proc/self/fd/1", "/dev/stdout" },
	{ "/proc/self/fd/2", "/dev/stderr" },
};

static mode_t device_type_mode(char type)
{
	switch (type) {
	case 'b':
		return S_IFBLK;
	case 'p':
		return S_IFIFO;
	default:
		return S_IFCHR;
	}
}

/* "/dev/NAME[/NAME...]": under /dev, no "." or ".." component, a name
 * at the end.  Lexical; where it resolves is checked in the child. */
static bool path_under_dev(const char *path)
{
	const char *p = path + strlen("/dev/");
	bool named = false;

	if (strncmp(path, "/dev/", 5) || path[strlen(path) - 1] == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		named |= n > 0;
		p += n;
		while (*p == '/')
			p++;
	}
	return named;
}

int devices_check_paths(const struct oci_spec *spec, struct error *err)
{
	if (WEAK_DEV_PATH)
		return 0;
	for (size_t i = 0; i < spec->linux.n_devices; i++)
		if (!path_under_dev(spec->linux.devices[i].path))
			return error_set(err, "linux.devices[%zu].path %s: a device node is made only under /dev (no \".\" or \"..\" components)",
					 i, spec->linux.devices[i].path);
	return 0;
}

/* The container's /dev: a real directory of the rootfs (made if missing),
 * not a symlink to somewhere else in it. */
static int open_dev_dir(int rootfd, int *out, struct error *err)
{
	if (path_open_in_root(rootfd, "/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW, true,
			      out, err) == 0)
		return 0;
	if (err->code != ENOENT)
		return error_prefix(err, "the container's /dev");
	return path_mkdir_in_root(rootfd, "/dev", 0755, out, err);
}

/* The directory a node goes in, and its name there.  The parent is
 * resolved (and made) inside the container's /dev taken as the root
 * (RESOLVE_IN_ROOT): neither ".." nor a symlink of the image can lead it
 * out of /dev, so nothing outside /dev is ever replaced. */
static int open_device_parent(int rootfd, const char *path, int *dirfd,
			      const char **base, struct error *err)
{
	char parent[4096];
	_cleanup_close_ int devfd = -1;

	if (WEAK_DEV_PATH) {
		/* The parent resolved from the rootfs: anywhere in it. */
		path_split(path, parent, sizeof(parent), base);
		return path_mkdir_in_root(rootfd, parent, 0755, dirfd, err);
	}
	if (!path_under_dev(path))
		return error_set(err, "%s: not under /dev", path);
	if (open_dev_dir(rootfd, &devfd, err) < 0)
		return -1;
	path_split(path + strlen("/dev"), parent, sizeof(parent), base);
	if (path_mkdir_in_root(devfd, parent, 0755, dirfd, err) < 0)
		return error_prefix(err, "%s: its directory in the container's /dev", path);
	return 0;
}

/* The node at dirfd/base, without following a symlink, must be the one
 * asked for: what the mode and owner are then set on. */
static int open_made_node(int dirfd, const char *base, const struct oci_device *d,
			  mode_t type, dev_t dev, int *out, struct error *err)
{
	_cleanup_close_ int fd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return error_sys(err, "open the node %s", d->path);
	if ((st.st_mode & S_IFMT) != type || (d->type != 'p' && st.st_rdev != dev))
		return error_set(err, "%s: not the node just made (replaced while being set up)",
				 d->path);
	*out = take_fd(fd);
	return 0;
}

/* mknod a node in its parent directory inside the container's /dev, then
 * mode and owner on the node's own fd. */
static int mknod_device(const struct ctx_handles *h, const struct oci_device *d,
			mode_t perm, struct error *err)
{
	const char *base;
	char fdp[32];
	_cleanup_close_ int dirfd = -1, node = -1;
	mode_t type = device_type_mode(d->type);
	dev_t dev = d->type == 'p' ? 0 : makedev(d->major, d->minor);

	if (open_device_parent(h->rootfs_fd, d->path, &dirfd, &base, err) < 0)
		return -1;
	if (mknodat(dirfd, base, type | perm, dev) < 0) {
		if (errno != EEXIST)
			return error_sys(err, "mknod %s", d->path);
		/* Whatever is there in /dev (an image's node, a symlink) goes. */
		if (unlinkat(dirfd, base, 0) < 0)
			return error_sys(err, "replace %s", d->path);
		if (mknodat(dirfd, base, type | perm, dev) < 0)
			return error_sys(err, "mknod %s", d->path);
	}
	if (open_made_node(dirfd, base, d, type, dev, &node, err) < 0)
		return -1;
	/* chmod through the fd (the runtime's procfs): fchmod() refuses an
	 * O_PATH fd, and fchmodat() on the name would follow a symlink. */
	snprintf(fdp, sizeof(fdp), "self/fd/%d", node);
	if (fchmodat(h->host_proc_fd, fdp, perm, 0) < 0)
		return error_sys(err, "chmod %s", d->path);
	if ((d->uid.set || d->gid.set) &&
	    fchownat(node, "", d->uid.set ? (uid_t)d->uid.v : (uid_t)-1,
		     d->gid.set ? (gid_t)d->gid.v : (gid_t)-1, AT_EMPTY_PATH) < 0)
		return error_sys(err, "chown %s", d->path);
	return 0;
}

/* The file a host node is bound onto: made in the container's /dev,
 * never a symlink. */
static int open_bind_target(int rootfd, const struct oci_device *d, int *out,
			    struct error *err)
{
	const char *base;
	_cleanup_close_ int dirfd = -1, fd = -1;
	struct stat st;

	if (open_device_parent(rootfd, d->path, &dirfd, &base, err) < 0)
		return -1;
	if (mknodat(dirfd, base, S_IFREG | 0600, 0) < 0 && errno != EEXIST)
		return error_sys(err, "create %s", d->path);
	fd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_sys(err, "open %s", d->path);
	if (S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode))
		return error_set(err, "%s: a %s is there, not a file to bind the device onto",
				 d->path, S_ISLNK(st.st_mode) ? "symlink" : "directory");
	*out = take_fd(fd);
	return 0;
}

/* In a user namespace: bind the host's node (same path) onto a file. */
static int bind_device(int rootfd, const struct oci_device *d,
		       struct error *err)
{
	_cleanup_close_ int src = -1, dst = -1, tree = -1;
	struct stat st;

	src = open(d->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return error_sys(err, "open host device %s", d->path);
	if (fstat(src, &st) < 0)
		return error_sys(err, "stat host device %s", d->path);
	if ((st.st_mode & S_IFMT) != device_type_mode(d->type) ||
	    (d->type != 'p' && st.st_rdev != makedev(d->major, d->minor)))
		return error_set(err, "host device %s is not %c %lld:%lld", d->path,
				 d->type, (long long)d->major, (long long)d->minor);
	if (open_bind_target(rootfd, d, &dst, err) < 0)
		return -1;
	tree = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return error_sys(err, "clone host device %s", d->path);
	if (move_mount(tree, "", dst, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "bind host device %s", d->path);
	return 0;
}

static int create_device(const struct ctx_decided *dec, const struct ctx_handles *h,
			 const struct oci_device *d, mode_t default_perm, struct error *err)
{
	mode_t perm = d->file_mode.set ? (mode_t)(d->file_mode.v & 07777) : default_perm;

	/* No mknod in a user namespace, made or joined: the host's node. */
	if (dec->new_userns || spec_find_namespace(&dec->spec, NS_USER))
		return bind_device(h->rootfs_fd, d, err);
	return mknod_device(h, d, perm, err);
}

static bool spec_has_device(const struct oci_spec *spec, const char *path)
{
	for (size_t i = 0; i < spec->linux.n_devices; i++)
		if (!strcmp(spec->linux.devices[i].path, path))
			return true;
	return false;
}

/* A bind mount of the host's /dev replaces all of this, as in runc. */
static bool dev_is_bind_mounted(const struct mount_plan *mounts)
{
	for (size_t i = 0; i < mounts->len; i++)
		if (mounts->items[i].kind == MOUNT_KIND_BIND &&
		    !strcmp(mounts->items[i].spec->destination, "/dev"))
			return true;
	return false;
}

static int create_links(int rootfd, bool has_pts, struct error *err)
{
	_cleanup_close_ int devfd = -1;

	if (path_mkdir_in_root(rootfd, "/dev", 0755, &devfd, err) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(default_links) / sizeof(default_links[0]); i++) {
		const char *name = default_links[i].link + strlen("/dev/");
		if (symlinkat(default_links[i].target, devfd, name) < 0 && errno != EEXIST)
			return error_sys(err, "symlink %s", default_links[i].link);
	}
	if (has_pts) {
		/* /dev/ptmx must be the devpts instance's, not the host's. */
		if (unlinkat(devfd, "ptmx", 0) < 0 && errno != ENOENT)
			return error_sys(err, "remove /dev/ptmx");
		if (symlinkat("pts/ptmx", devfd, "ptmx") < 0)
			return error_sys(err, "symlink /dev/ptmx");
	}
	return 0;
}

int devices_setup(const struct ctx_decided *d, const struct ctx_handles *h,
		  struct error *err)
{
	const struct oci_spec *spec = &d->spec;
	bool has_pts = false;

	for (size_t i = 0; i < d->mounts.len; i++)
		if (!strcmp(d->mounts.items[i].spec->destination, "/dev/pts"))
			has_pts = true;
	if (dev_is_bind_mounted(&d->mounts))
		return 0;
	for (size_t i = 0; i < spec->linux.n_devices; i++) {
		if (create_device(d, h, &spec->linux.devices[i], 0600, err) < 0)
			return error_prefix(err, "linux.devices[%zu]", i);
	}
	for (size_t i = 0; i < sizeof(default_devices) / sizeof(default_devices[0]); i++) {
		if (spec_has_device(spec, default_devices[i].path))
			continue;
		if (create_device(d, h, &default_devices[i], 0666, err) < 0)
			return -1;
	}
	return create_links(h->rootfs_fd, has_pts, err);
}
