/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Id-mapped bind mounts (mounts[].options "idmap"/"ridmap", with the
 * mount's uidMappings/gidMappings or, without them, the container's own).
 * The mapping lives in a user namespace: a child is cloned into a new one,
 * its maps are written, its namespace is opened, and the child is killed.
 * The detached tree the parent cloned from the judged source then gets
 * mount_setattr(MOUNT_ATTR_IDMAP) with that namespace, before the child
 * attaches it: a file owned by id H on the source appears owned by the id
 * the mapping gives H ("containerID hostID size": source id containerID+i
 * is seen as hostID+i, as the kernel maps a user namespace's ids).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../internal.h"

/* A child in a new user namespace that only waits to be killed. */
static int spawn_holder(pid_t *out, struct error *err)
{
	pid_t pid;

	if (ns_clone(CLONE_NEWUSER, &pid, err) < 0)
		return error_prefix(err, "a user namespace for an id-mapped mount");
	if (pid == 0) {
		for (;;)
			pause();
	}
	*out = pid;
	return 0;
}

int idmap_userns_open(const struct oci_id_mapping *uids, size_t nu,
		      const struct oci_id_mapping *gids, size_t ng, int *fd,
		      struct error *err)
{
	_cleanup_free_ char *ns = NULL;
	_cleanup_close_ int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	pid_t pid = -1;
	int r = -1;

	if (proc < 0)
		return error_sys(err, "open /proc");
	if (spawn_holder(&pid, err) < 0)
		return -1;
	ns = xasprintf("/proc/%d/ns/user", pid);
	if (ns_write_id_map(proc, pid, "uid_map", uids, nu, err) == 0 &&
	    ns_write_id_map(proc, pid, "gid_map", gids, ng, err) == 0) {
		*fd = open(ns, O_RDONLY | O_CLOEXEC);
		r = *fd < 0 ? error_sys(err, "open %s", ns) : 0;
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}

int idmap_apply(int tree, int userns_fd, bool recursive, const char *what,
		struct error *err)
{
	struct mount_attr a = {
		.attr_set = MOUNT_ATTR_IDMAP,
		.userns_fd = (uint64_t)userns_fd,
	};

	if (mount_setattr(tree, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0),
			  &a, sizeof(a)) == 0)
		return 0;
	if (errno == EINVAL)
		return error_setc(err, errno,
				  "id-mapped mount of %s: the kernel refuses it (the filesystem does not support id-mapped mounts, or the mount is already id-mapped)",
				  what);
	return error_sys(err, "id-mapped mount of %s", what);
}
