/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device nodes in the container's /dev: the default set every container
 * gets (null, zero, full, random, urandom, tty), the spec's linux.devices,
 * and the standard links.  Without a user namespace the nodes are made with
 * mknod; inside one (where mknod is refused) the host's node is bound onto
 * an empty file, as runc does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "internal.h"
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

/* mknod a node in its (created) parent directory inside the rootfs. */
static int mknod_device(int rootfd, const struct oci_device *d, mode_t perm,
			struct error *err)
{
	char parent[4096];
	const char *base;
	_cleanup_close_ int dirfd = -1;
	mode_t mode = device_type_mode(d->type) | perm;
	dev_t dev = d->type == 'p' ? 0 : makedev(d->major, d->minor);

	path_split(d->path, parent, sizeof(parent), &base);
	if (path_mkdir_in_root(rootfd, parent, 0755, &dirfd, err) < 0)
		return -1;
	if (mknodat(dirfd, base, mode, dev) < 0) {
		if (errno != EEXIST)
			return error_sys(err, "mknod %s", d->path);
		/* Whatever is there (a file of the image, a symlink) goes. */
		if (unlinkat(dirfd, base, 0) < 0)
			return error_sys(err, "replace %s", d->path);
		if (mknodat(dirfd, base, mode, dev) < 0)
			return error_sys(err, "mknod %s", d->path);
	}
	if (fchmodat(dirfd, base, perm, 0) < 0)
		return error_sys(err, "chmod %s", d->path);
	if (d->uid.set || d->gid.set) {
		if (fchownat(dirfd, base, d->uid.set ? (uid_t)d->uid.v : (uid_t)-1,
			     d->gid.set ? (gid_t)d->gid.v : (gid_t)-1,
			     AT_SYMLINK_NOFOLLOW) < 0)
			return error_sys(err, "chown %s", d->path);
	}
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
	if (path_mkfile_in_root(rootfd, d->path, 0600, &dst, err) < 0)
		return -1;
	tree = open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	if (tree < 0)
		return error_sys(err, "clone host device %s", d->path);
	if (move_mount(tree, "", dst, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "bind host device %s", d->path);
	return 0;
}

static int create_device(struct container_ctx *c, const struct oci_device *d,
			 mode_t default_perm, struct error *err)
{
	mode_t perm = d->file_mode.set ? (mode_t)(d->file_mode.v & 07777) : default_perm;

	if (c->new_userns)
		return bind_device(c->rootfs_fd, d, err);
	return mknod_device(c->rootfs_fd, d, perm, err);
}

static bool spec_has_device(const struct oci_spec *spec, const char *path)
{
	for (size_t i = 0; i < spec->linux.n_devices; i++)
		if (!strcmp(spec->linux.devices[i].path, path))
			return true;
	return false;
}

/* A bind mount of the host's /dev replaces all of this, as in runc. */
static bool dev_is_bind_mounted(const struct container_ctx *c)
{
	for (size_t i = 0; i < c->mounts.len; i++)
		if (c->mounts.items[i].kind == MOUNT_KIND_BIND &&
		    !strcmp(c->mounts.items[i].spec->destination, "/dev"))
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

int devices_setup(struct container_ctx *c, struct error *err)
{
	const struct oci_spec *spec = c->spec;
	bool has_pts = false;

	for (size_t i = 0; i < c->mounts.len; i++)
		if (!strcmp(c->mounts.items[i].spec->destination, "/dev/pts"))
			has_pts = true;
	if (dev_is_bind_mounted(c))
		return 0;
	for (size_t i = 0; i < spec->linux.n_devices; i++) {
		if (create_device(c, &spec->linux.devices[i], 0600, err) < 0)
			return error_prefix(err, "linux.devices[%zu]", i);
	}
	for (size_t i = 0; i < sizeof(default_devices) / sizeof(default_devices[0]); i++) {
		if (spec_has_device(spec, default_devices[i].path))
			continue;
		if (create_device(c, &default_devices[i], 0666, err) < 0)
			return -1;
	}
	return create_links(c->rootfs_fd, has_pts, err);
}
