/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whose a joined namespace is: every linux.namespaces[].path is opened
 * once, in the parent, by the judge (runtime/judge/ns.c: an nsfs file of
 * the type the spec says, and whether it is the host's); here, whether it
 * is another container's under the same --root, or in use by a process.
 * That very fd is what runtime/init/namespaces.c joins, so the object
 * judged is the object entered: no second lookup by name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "../judge/judge.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	const char *file; /* under /proc/PID/ns/ */
	int flag;	  /* CLONE_NEW*, as NS_GET_NSTYPE reports it */
} ns_kinds[NS_TYPE_MAX] = {
	[NS_PID] = { "pid", CLONE_NEWPID },
	[NS_NETWORK] = { "net", CLONE_NEWNET },
	[NS_MOUNT] = { "mnt", CLONE_NEWNS },
	[NS_IPC] = { "ipc", CLONE_NEWIPC },
	[NS_UTS] = { "uts", CLONE_NEWUTS },
	[NS_USER] = { "user", CLONE_NEWUSER },
	[NS_CGROUP] = { "cgroup", CLONE_NEWCGROUP },
	[NS_TIME] = { "time", CLONE_NEWTIME },
};

static bool same_object(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int ns_open_file(const char *path, enum ns_type t, int *out, struct error *err)
{
	return judge_ns_open(path, ns_kinds[t].flag, ns_type_name(t), out, err);
}

int ns_fd_is_host(int fd, int proc_fd, enum ns_type t, bool *host,
		  struct error *err)
{
	return judge_ns_is_host(fd, proc_fd, ns_kinds[t].file, host, err);
}

int ns_open_joined(struct ctx_decided *d, struct ctx_handles *h, struct error *err)
{
	for (size_t i = 0; i < d->spec.linux.n_namespaces; i++) {
		const struct oci_namespace *ns = &d->spec.linux.namespaces[i];

		if (!ns->path || h->ns_fd[ns->type] >= 0)
			continue;
		if (ns_open_file(ns->path, ns->type, &h->ns_fd[ns->type], err) < 0 ||
		    ns_fd_is_host(h->ns_fd[ns->type], h->host_proc_fd, ns->type,
				  &d->ns_host[ns->type], err) < 0)
			return -1;
	}
	return 0;
}

void ns_close_joined(struct ctx_handles *h)
{
	for (int t = 0; t < NS_TYPE_MAX; t++) {
		if (h->ns_fd[t] >= 0)
			close(h->ns_fd[t]);
		h->ns_fd[t] = -1;
	}
}

/* The init of container id (under --root) is alive, and want is its
 * namespace of type t.  The start time is compared after the stat, so that
 * a pid reused in between cannot pass. */
static bool init_ns_is(const struct ctx_handles *h, const char *id, enum ns_type t,
		       const struct stat *want)
{
	_cleanup_close_ int dfd = -1;
	struct container_state st;
	struct error ignored;
	struct stat ns;
	char path[64];
	bool same = false;

	dfd = openat(h->root_fd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0 || state_read(dfd, &st, &ignored) < 0)
		return false;
	if (st.pid > 0) {
		snprintf(path, sizeof(path), "%d/ns/%s", st.pid, ns_kinds[t].file);
		same = fstatat(h->host_proc_fd, path, &ns, 0) == 0 &&
		       same_object(&ns, want) && proc_is_same(st.pid, st.start_time);
	}
	state_free(&st);
	return same;
}

int ns_of_container(const struct ctx_decided *d, const struct ctx_handles *h,
		    enum ns_type t, int fd, struct ns_owner_hint *hint, bool *found,
		    struct error *err)
{
	_cleanup_close_ int dfd = -1;
	struct stat want;
	struct dirent *de;
	DIR *dir;

	*found = false;
	if (fstat(fd, &want) < 0)
		return error_sys(err, "stat %s namespace fd", ns_type_name(t));
	/* Judged the same way as in the scan: only the order differs. */
	if (hint && hint->id[0] && strcmp(hint->id, d->id) && init_ns_is(h, hint->id, t, &want)) {
		*found = true;
		return 0;
	}
	dfd = openat(h->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(dir = fdopendir(dfd)))
		return error_sys(err, "read the state root %s", d->g->root);
	dfd = -1; /* owned by dir */
	while (!*found && (de = readdir(dir)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, d->id) &&
		    init_ns_is(h, de->d_name, t, &want)) {
			*found = true;
			if (hint)
				snprintf(hint->id, sizeof(hint->id), "%s", de->d_name);
		}
	closedir(dir);
	return 0;
}

int ns_in_use(const struct ctx_handles *h, enum ns_type t, int fd, pid_t *user,
	      struct error *err)
{
	_cleanup_close_ int dfd = -1;
	struct stat want, ns;
	struct dirent *de;
	char path[64];
	DIR *d;

	*user = 0;
	if (fstat(fd, &want) < 0)
		return error_sys(err, "stat %s namespace fd", ns_type_name(t));
	dfd = openat(h->host_proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd)))
		return error_sys(err, "read /proc");
	dfd = -1; /* owned by d */
	while (!*user && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (pid <= 0 || *end)
			continue;
		snprintf(path, sizeof(path), "%ld/ns/%s", pid, ns_kinds[t].file);
		/* A process gone in between is not in it. */
		if (fstatat(h->host_proc_fd, path, &ns, 0) == 0 && same_object(&ns, &want))
			*user = (pid_t)pid;
	}
	closedir(d);
	return 0;
}
