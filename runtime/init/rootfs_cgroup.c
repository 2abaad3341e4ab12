/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The "cgroup" mount of a spec (Docker always sends one at /sys/fs/cgroup).
 * The container sees only its own cgroup, read-only unless the spec says
 * rw (CVE-2023-25809: a writable host cgroupfs is an escape):
 *  - v2 with a cgroup namespace: a fresh cgroup2 mount, rooted at the
 *    container's cgroup by the namespace;
 *  - v2 without: a bind of the container's cgroup directory;
 *  - v1/hybrid: a tmpfs holding, per controller, a bind of the container's
 *    directory in that controller (and of the unified side on hybrid).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "pathres.h"

#define HOST_CGROUP_ROOT "/sys/fs/cgroup"

/* own_ns: the container has its own cgroup namespace (unshare_after_go). */
static uint64_t cgroup_mount_attr(bool own_ns, const struct mount_entry *e)
{
	uint64_t attr = ms_flags_to_attr(e->flags) | MOUNT_ATTR_NOSUID |
			MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;

	/* Read-only unless the spec says rw *and* the container has its own
	 * cgroup namespace (CVE-2023-25809). */
	if (!(e->flags & MS_RDONLY) && !own_ns)
		attr |= MOUNT_ATTR_RDONLY;
	if (WEAK_CGROUP_RO)
		attr &= ~(uint64_t)MOUNT_ATTR_RDONLY;
	return attr;
}

/* Bind host_dir onto dirfd, with attributes, recursively. */
static int bind_dir_fd(const char *host_dir, int dstfd, uint64_t attr,
		       struct error *err)
{
	_cleanup_close_ int tree = -1;
	struct mount_attr a = { .attr_set = attr };

	tree = open_tree(AT_FDCWD, host_dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return error_sys(err, "clone cgroup mount %s", host_dir);
	if (attr && mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a,
				  sizeof(a)) < 0)
		return error_sys(err, "set attributes of cgroup mount %s", host_dir);
	if (move_mount(tree, "", dstfd, "",
		       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return error_sys(err, "bind cgroup mount %s", host_dir);
	return 0;
}

static int mount_v2(bool own_ns, const char *cgroup_path, int dstfd,
		    const struct mount_entry *e, struct error *err)
{
	_cleanup_free_ char *host = NULL;
	char p[FD_PATH_MAX];

	if (own_ns) {
		if (mount("cgroup2", fd_path(dstfd, p), "cgroup2",
			  e->flags | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
			return error_sys(err, "mount cgroup2 on %s", e->spec->destination);
		return 0;
	}
	host = xasprintf(HOST_CGROUP_ROOT "%s", cgroup_path);
	return bind_dir_fd(host, dstfd, cgroup_mount_attr(own_ns, e), err);
}

static bool is_cgroup_fs(int dirfd, const char *name)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct statfs sfs;

	if (fd < 0 || fstatfs(fd, &sfs) < 0)
		return false;
	return sfs.f_type == CGROUP_SUPER_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/* One controller (or the unified side) of a v1/hybrid host. */
static int mount_v1_controller(const char *cgroup_path, int tmpfd,
			       const char *name, uint64_t attr, struct error *err)
{
	_cleanup_free_ char *host = NULL;
	_cleanup_close_ int dst = -1;
	struct stat st;

	host = xasprintf(HOST_CGROUP_ROOT "/%s%s", name, cgroup_path);
	if (stat(host, &st) < 0) {
		log_debug("cgroup mount: %s has no %s: skipped", name, host);
		return 0;
	}
	if (mkdirat(tmpfd, name, 0755) < 0 && errno != EEXIST)
		return error_sys(err, "mkdir %s in cgroup tmpfs", name);
	dst = openat(tmpfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0)
		return error_sys(err, "open %s in cgroup tmpfs", name);
	return bind_dir_fd(host, dst, attr, err);
}

static int mount_v1(bool own_ns, const char *cgroup_path, int rootfd, int dstfd,
		    const struct mount_entry *e, struct error *err)
{
	_cleanup_close_ int hostfd = -1, tmpfd = -1, top = -1;
	uint64_t attr = cgroup_mount_attr(own_ns, e);
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	char p[FD_PATH_MAX];
	struct dirent *de;
	DIR *d;

	if (mount("tmpfs", fd_path(dstfd, p), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=755,size=64k") < 0)
		return error_sys(err, "mount tmpfs on %s", e->spec->destination);
	if (path_open_in_root(rootfd, e->spec->destination, O_RDONLY | O_DIRECTORY,
			      true, &tmpfd, err) < 0)
		return -1;
	hostfd = open(HOST_CGROUP_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hostfd < 0)
		return error_sys(err, "open " HOST_CGROUP_ROOT);
	d = fdopendir(dup(hostfd));
	if (!d)
		return error_sys(err, "read " HOST_CGROUP_ROOT);
	while ((de = readdir(d))) {
		char target[256];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type == DT_LNK) {
			/* cpu -> cpu,cpuacct and the like: keep the links. */
			n = readlinkat(hostfd, de->d_name, target, sizeof(target) - 1);
			if (n > 0) {
				target[n] = '\0';
				if (symlinkat(target, tmpfd, de->d_name) < 0 && errno != EEXIST) {
					closedir(d);
					return error_sys(err, "symlink %s in cgroup tmpfs",
							 de->d_name);
				}
			}
			continue;
		}
		if (!is_cgroup_fs(hostfd, de->d_name))
			continue;
		if (mount_v1_controller(cgroup_path, tmpfd, de->d_name, attr, err) < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (!(e->flags & MS_RDONLY))
		return 0;
	if (path_open_in_root(rootfd, e->spec->destination, O_PATH, true, &top, err) < 0)
		return -1;
	if (mount_setattr(top, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return error_sys(err, "make %s read-only", e->spec->destination);
	return 0;
}

/* A container without a cgroup of its own (rootless, not delegated: create
 * warned) sees none of the host's: an empty read-only tmpfs. */
static int mount_no_cgroup(int dstfd, const struct mount_entry *e, struct error *err)
{
	char p[FD_PATH_MAX];

	if (mount("tmpfs", fd_path(dstfd, p), "tmpfs",
		  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755,size=4k") < 0)
		return error_sys(err, "mount an empty tmpfs on %s (the container has no cgroup)",
				 e->spec->destination);
	return 0;
}

int rootfs_mount_cgroup(const struct ctx_decided *d, const struct ctx_record *r, int rootfd,
			const struct mount_entry *e, struct error *err)
{
	_cleanup_close_ int dst = -1;
	bool own_ns = d->unshare_after_go & CLONE_NEWCGROUP;
	enum cgroup_mode mode;

	if (cgroup_detect_mode(&mode, err) < 0)
		return -1;
	if (path_mkdir_in_root(rootfd, e->spec->destination, 0755, &dst, err) < 0)
		return -1;
	close(dst);
	if (path_open_in_root(rootfd, e->spec->destination, O_PATH | O_DIRECTORY,
			      true, &dst, err) < 0)
		return error_prefix(err, "cgroup mount target");
	if (!r->cgroup_path)
		return mount_no_cgroup(dst, e, err);
	if (mode == CGROUP_MODE_V2)
		return mount_v2(own_ns, r->cgroup_path, dst, e, err);
	return mount_v1(own_ns, r->cgroup_path, rootfd, dst, e, err);
}
