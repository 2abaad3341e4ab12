/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CGROUP_H
#define AGENTSBX_CGROUP_H

/*
 * The container's cgroup, whatever the host has: pure v2 (v2.c),
 * v1 or hybrid (v1.c, plus the v2 side of a hybrid host), or
 * systemd (systemd.c).  The rest of the runtime only sees this file.
 *
 * A container's cgroup is named by one path relative to the hierarchy root
 * ("/agentsbx/ID" by default); on v1 the same relative path is used under
 * every controller.  The path and the manager are kept in the state file so
 * that later commands (delete, kill --all, pause, ps, update, events) find
 * the cgroup again without the spec.
 */

#include <stdbool.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../spec/spec.h"

enum cgroup_mode {
	CGROUP_MODE_V1,	    /* v1 controllers only */
	CGROUP_MODE_HYBRID, /* v1 controllers + cgroup2 at /sys/fs/cgroup/unified */
	CGROUP_MODE_V2,	    /* unified hierarchy at /sys/fs/cgroup */
};

enum cgroup_manager {
	CGROUP_MANAGER_FS,	/* cgroupfs, v1/hybrid/v2 as detected */
	CGROUP_MANAGER_SYSTEMD, /* --systemd-cgroup */
};

struct cgroup_stats; /* events --stats (events.c) */

/* Fill the caches of what the host has (mode, mounts) now. */
void cgroup_warm_cache(void);

/* Whether this process may make cgroups where a container's would go
 * (root; a rootless caller with a delegated cgroup v2 subtree). */
bool cgroup_caller_can_create(void);

/* What the host has; cached after the first call (statfs of /sys/fs/cgroup). */
int cgroup_detect_mode(enum cgroup_mode *mode, struct error *err);

/*
 * The cgroup path for a container: spec's linux.cgroupsPath if set
 * (absolute, or relative to the runtime's own cgroup; "slice:prefix:name"
 * with systemd), else "/agentsbx/ID".  Returns a heap string.
 */
int cgroup_resolve_path(const char *cgroups_path, const char *id,
			enum cgroup_manager manager, char **out,
			struct error *err);

/*
 * Create the cgroup (every ancestor, controllers enabled on v2), apply
 * resources, and move pid into it.  Called by the parent while the child
 * waits, before the child executes anything of the container's.  On
 * failure nothing is left behind (the directories it made are removed).
 */
int cgroup_create(const char *path, enum cgroup_manager manager,
		  const struct oci_resources *res, pid_t pid,
		  struct error *err);

/*
 * Device access (linux.resources.devices) starts from "deny all"; the rules
 * apply in order (for each access bit the last matching rule decides), and
 * cgroup_create/cgroup_update (when given rules) append the defaults every
 * container needs: rwm on null, zero, full, random, urandom, tty, ptmx,
 * pts/N, and mknod (only) of any node -- as runc does.
 *
 * runc also allows each linux.devices node: this returns spec's resources
 * with those rules added after the spec's own.  *out shares everything with
 * spec except out->devices, a heap array to free().
 */
void cgroup_resources_for_spec(const struct oci_spec *spec,
			       struct oci_resources *out);

/*
 * cgroup v2 with cgroupfs: cgroup_create without a process, before the
 * clone, and *fd an fd on the cgroup for clone3(CLONE_INTO_CGROUP): the
 * init is born in it, which costs far less than a write of cgroup.procs
 * (no cgroup_threadgroup_rwsem for writing).  Elsewhere (v1, hybrid,
 * systemd) nothing is done and *fd is -1: cgroup_create after the clone.
 */
int cgroup_create_for_clone(const char *path, enum cgroup_manager manager,
			    const struct oci_resources *res, int *fd,
			    struct error *err);

/* Move pid into an existing container cgroup (exec). */
int cgroup_enter(const char *path, enum cgroup_manager manager, pid_t pid,
		 struct error *err);

/* Apply new resources to a live cgroup (update). */
int cgroup_update(const char *path, enum cgroup_manager manager,
		  const struct oci_resources *res, struct error *err);

/* Signal every process in the cgroup (kill --all). */
int cgroup_kill(const char *path, enum cgroup_manager manager, int sig,
		struct error *err);

/* The pids in the cgroup (ps).  *pids is a heap array. */
int cgroup_pids(const char *path, enum cgroup_manager manager, pid_t **pids,
		size_t *n, struct error *err);

/* Freeze or thaw (pause/resume); *frozen reports the current state. */
int cgroup_freeze(const char *path, enum cgroup_manager manager, bool freeze,
		  struct error *err);
int cgroup_is_frozen(const char *path, enum cgroup_manager manager,
		     bool *frozen, struct error *err);

/*
 * Remove the cgroup.  With force, processes still in it are killed
 * (cgroup.kill where it exists) and waited for; EBUSY is retried.
 * A cgroup that does not exist is not an error.
 */
int cgroup_destroy(const char *path, enum cgroup_manager manager, bool force,
		   struct error *err);

#endif
