/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespaces: created by the one clone() of the container init, joined by
 * path with setns(), with the id maps written by the parent.
 *
 *  - pid and time namespaces only apply to children, so joining one (or
 *    creating a time namespace, whose offsets must be written before any
 *    process enters it) happens in the parent before clone();
 *  - the cgroup namespace is created by the child after the parent has
 *    moved it into its cgroup, so that the cgroup is the namespace's root;
 *  - joining a user namespace: the child enters it first and unshares the
 *    other new namespaces after, so that they are owned by it;
 *  - a path is opened once, in the parent, and judged (policy/ns_owner.c); the
 *    join is a setns() on that fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const int ns_flags[NS_TYPE_MAX] = {
	[NS_PID] = CLONE_NEWPID,
	[NS_NETWORK] = CLONE_NEWNET,
	[NS_MOUNT] = CLONE_NEWNS,
	[NS_IPC] = CLONE_NEWIPC,
	[NS_UTS] = CLONE_NEWUTS,
	[NS_USER] = CLONE_NEWUSER,
	[NS_CGROUP] = CLONE_NEWCGROUP,
	[NS_TIME] = CLONE_NEWTIME,
};

/* The order the child joins namespaces in: user first (it changes what
 * we may join next), mount last (it changes how paths resolve). */
static const enum ns_type join_order[] = {
	NS_USER,
	NS_NETWORK,
	NS_IPC,
	NS_UTS,
	NS_CGROUP,
	NS_MOUNT,
};

int ns_prepare(struct ctx_decided *d, struct error *err)
{
	const struct oci_namespace *user = spec_find_namespace(&d->spec, NS_USER);
	unsigned long flags = 0;

	/* No mount namespace: the host's, chrooted (rootfs.c), as runc. */
	for (size_t i = 0; i < d->spec.linux.n_namespaces; i++) {
		const struct oci_namespace *ns = &d->spec.linux.namespaces[i];
		if (ns->path || ns->type == NS_TIME || ns->type == NS_CGROUP)
			continue;
		flags |= (unsigned long)ns_flags[ns->type];
	}
	if (spec_find_namespace(&d->spec, NS_CGROUP) &&
	    !spec_find_namespace(&d->spec, NS_CGROUP)->path)
		d->unshare_after_go |= CLONE_NEWCGROUP;
	d->new_userns = user && !user->path;
	if (user && user->path) {
		/* Created by the child once it is in the joined user ns, so
		 * that they are owned by it; a new pid namespace then takes a
		 * fork (ns_fork_init). */
		d->unshare_after_go |= flags;
		flags = 0;
	}
	d->clone_flags = flags;
	return 0;
}

/* Join the namespace judged in the parent (policy/ns_owner.c): the fd
 * opened once from linux.namespaces[].path, never the path again. */
static int join_ns(const struct ctx_handles *h, const struct oci_namespace *ns,
		   struct error *err)
{
	int fd = h->ns_fd[ns->type];

	if (fd < 0)
		return error_set(err, "join %s namespace %s: not opened", ns_type_name(ns->type),
				 ns->path);
	if (setns(fd, ns_flags[ns->type]) < 0)
		return error_sys(err, "join %s namespace %s", ns_type_name(ns->type),
				 ns->path);
	return 0;
}

static int write_time_offsets(const struct oci_linux *l, struct error *err)
{
	char buf[128];
	int n = 0;

	if (l->time_monotonic.set)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "monotonic %lld %u\n",
			      (long long)l->time_monotonic.secs, l->time_monotonic.nanosecs);
	if (l->time_boottime.set)
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "boottime %lld %u\n",
			      (long long)l->time_boottime.secs, l->time_boottime.nanosecs);
	if (!n)
		return 0;
	return write_file_at(AT_FDCWD, "/proc/self/timens_offsets", buf, err);
}

/* Our own pid and time namespaces for children, to go back to after the
 * clone: what this process forks later (poststart and poststop hooks in
 * `run`) belongs to the runtime namespace. */
static int save_for_children(struct ctx_handles *h, struct error *err)
{
	h->own_pidns_fd = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
	if (h->own_pidns_fd < 0)
		return error_sys(err, "open /proc/self/ns/pid_for_children");
	h->own_timens_fd = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
	if (h->own_timens_fd < 0 && errno != ENOENT)
		return error_sys(err, "open /proc/self/ns/time_for_children");
	return 0;
}

void ns_restore_after_clone(const struct ctx_handles *h)
{
	if (h->own_pidns_fd >= 0 && setns(h->own_pidns_fd, CLONE_NEWPID) < 0)
		log_warn("return to the runtime's pid namespace: %s", strerror(errno));
	if (h->own_timens_fd >= 0 && setns(h->own_timens_fd, CLONE_NEWTIME) < 0)
		log_warn("return to the runtime's time namespace: %s", strerror(errno));
}

int ns_join_before_clone(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err)
{
	const struct oci_namespace *pid = spec_find_namespace(&d->spec, NS_PID);
	const struct oci_namespace *time = spec_find_namespace(&d->spec, NS_TIME);

	if (((pid && pid->path) || time) && save_for_children(h, err) < 0)
		return -1;
	if (pid && pid->path && join_ns(h, pid, err) < 0)
		return -1;
	if (!time)
		return 0;
	if (time->path)
		return join_ns(h, time, err);
	if (unshare(CLONE_NEWTIME) < 0)
		return error_sys(err, "create time namespace");
	return write_time_offsets(&d->spec.linux, err);
}

#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#define ABX_CLONE_INTO_CGROUP 0x200000000ULL

/* struct clone_args up to .cgroup (CLONE_ARGS_SIZE_VER2, Linux 5.7). */
struct abx_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
		stack_size, tls, set_tid, set_tid_size, cgroup;
};

int ns_clone_into(unsigned long flags, int cgroup_fd, pid_t *pid,
		  bool *born_in, struct error *err)
{
	struct abx_clone_args a = {
		.flags = flags | ABX_CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cgroup_fd,
	};
	long r;

	*born_in = false;
	if (cgroup_fd < 0)
		return ns_clone(flags, pid, err);
	/* Fork-like as ns_clone: no stack given, the child continues here. */
	r = syscall(SYS_clone3, &a, sizeof(a));
	if (r >= 0) {
		*pid = (pid_t)r;
		*born_in = true;
		return 0;
	}
	/* No clone3 (ENOSYS, or a seccomp filter saying so), or one without
	 * the cgroup field (E2BIG) or flag (EINVAL); or a cgroup at its
	 * pids.max or memory.max (EAGAIN, ENOMEM: an exec into a full
	 * container, which a move by pid is not refused, as with runc): the
	 * old way. */
	if (errno != ENOSYS && errno != E2BIG && errno != EINVAL && errno != EAGAIN &&
	    errno != ENOMEM)
		return error_sys(err, "clone3 into the container's cgroup");
	log_debug("clone3(CLONE_INTO_CGROUP): %s: clone, then cgroup.procs",
		  strerror(errno));
	return ns_clone(flags, pid, err);
}

int ns_clone(unsigned long flags, pid_t *pid, struct error *err)
{
	/* A fork-like clone: no new stack, the child continues here. */
	long r = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);

	if (r < 0)
		return error_sys(err, "clone container init");
	*pid = (pid_t)r;
	return 0;
}

int ns_write_id_maps(const struct ctx_decided *d, const struct ctx_handles *h,
		     const struct ctx_record *r, struct error *err)
{
	const struct oci_linux *l = &d->spec.linux;

	if (!d->new_userns)
		return 0;
	if (rootless_caller())
		return rootless_write_id_maps(d, h, r, err);
	if (ns_write_id_map(h->host_proc_fd, r->pid, "gid_map", l->gid_mappings,
			    l->n_gid_mappings, err) < 0)
		return -1;
	return ns_write_id_map(h->host_proc_fd, r->pid, "uid_map", l->uid_mappings,
			       l->n_uid_mappings, err);
}

int ns_child_join(const struct ctx_decided *d, struct ctx_handles *h, struct error *err)
{
	for (size_t i = 0; i < sizeof(join_order) / sizeof(join_order[0]); i++) {
		const struct oci_namespace *ns = spec_find_namespace(&d->spec, join_order[i]);
		if (!ns || !ns->path)
			continue;
		if (join_ns(h, ns, err) < 0)
			return -1;
	}
	/* Nothing more to join: no handle on a namespace stays in the init. */
	ns_close_joined(h);
	return 0;
}

int ns_child_after_go(const struct ctx_decided *d, const struct ctx_handles *h,
		      struct ctx_init *i, struct error *err)
{
	if (d->new_userns || (spec_find_namespace(&d->spec, NS_USER))) {
		/* Root of the user namespace, now that the maps exist. */
		if (setresgid(0, 0, 0) < 0)
			return error_sys(err, "setresgid(0) in user namespace");
		if (setresuid(0, 0, 0) < 0)
			return error_sys(err, "setresuid(0) in user namespace");
	}
	if (d->unshare_after_go && unshare((int)d->unshare_after_go) < 0)
		return error_sys(err, "unshare namespaces 0x%lx", d->unshare_after_go);
	if (d->unshare_after_go & CLONE_NEWPID)
		return ns_fork_into_pid_namespace(h->sync_child, err);
	return 0;
}

/*
 * A pid namespace made by unshare() (or joined for children) holds only
 * the children of who made it: this process forks into it and goes.
 * CLONE_PARENT makes the new process the runtime's child, as one it cloned
 * itself would be (the runtime waits for it, and it dies with the runtime
 * until READY); the runtime learns its pid over sync_fd and reaps this
 * process.  Returns 0 in the new process only.
 */
int ns_fork_into_pid_namespace(int sync_fd, struct error *err)
{
	long r = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);

	if (r < 0)
		return error_sys(err, "fork into the new pid namespace");
	if (r > 0)
		_exit(sync_send_value(sync_fd, SYNC_INIT_PID, r, err) < 0);
	/* Should the runtime die before this, the sync socket's EOF ends us
	 * at the next step (getppid() is 0 here: the parent is outside). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	return 0;
}

/* A new network namespace has only lo, and it is down: bring it up. */
int ns_loopback_up(const struct ctx_decided *d, struct error *err)
{
	const struct oci_namespace *net = spec_find_namespace(&d->spec, NS_NETWORK);
	struct ifreq ifr = { 0 };
	_cleanup_close_ int fd = -1;

	if (!net || net->path)
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_sys(err, "socket for loopback setup");
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return error_sys(err, "get flags of lo");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return error_sys(err, "bring lo up");
	return 0;
}
