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
 * How a new process of the container (create's init, exec's process) gets
 * into the container's cgroup without a migration.  A write of a pid to
 * cgroup.procs takes the kernel's global cgroup_threadgroup_rwsem for
 * writing, and when no other writer ran in the last grace period that
 * waits for an RCU grace period: 5-12 ms on the hosts measured, more than
 * the rest of `run` (bench/README.md).  Instead:
 *  - cgroup2 (pure v2; the unified side of a hybrid host): the process is
 *    born in it, clone3(CLONE_INTO_CGROUP) with v2_fd;
 *  - cgroup v1: the process writes "0" into each hierarchy's "tasks" file
 *    itself, first thing after the clone (cgroup_place_self).  Moving the
 *    calling thread only takes no global lock (Linux >= 5.5, 9a3284fad42f
 *    "cgroup: Optimize single thread migration", also in 5.4.y; before,
 *    the same lock as cgroup.procs, never more), and the new process has
 *    one thread then: the same placement as cgroup.procs.
 * The files are opened here (the container's directories, judged by the
 * walk from each hierarchy's root), so the process writes through fds
 * whose opener's credentials the kernel checks (root's), whatever user
 * namespace it is in by then.
 */
#define CGROUP_BIRTH_MAX_TASKS 16

struct cgroup_birth {
	const char *path; /* the container's cgroup (the caller's string) */
	int v2_fd;	  /* its cgroup2 directory, or -1 */
	bool by_pid;	  /* v2_fd is entered by cgroup.procs, not at birth (an old kernel, a cpuset) */
	int tasks_fd[CGROUP_BIRTH_MAX_TASKS];
	const char *tasks_mnt[CGROUP_BIRTH_MAX_TASKS]; /* each one's hierarchy, for messages */
	size_t n_tasks;
	bool after_clone; /* systemd: the scope is made with the pid (cgroup_create) */
};

void cgroup_birth_init(struct cgroup_birth *b);
void cgroup_birth_close(struct cgroup_birth *b);
/* The fd for clone3(CLONE_INTO_CGROUP), or -1: the plain clone. */
int cgroup_birth_clone_fd(const struct cgroup_birth *b);

/*
 * cgroupfs: cgroup_create without a process, before the clone, and *b
 * filled for the new process (above).  systemd: nothing is made
 * (b->after_clone): cgroup_create with the pid after the clone.  On
 * failure nothing is left behind.
 */
int cgroup_create_for_clone(const char *path, enum cgroup_manager manager,
			    const struct oci_resources *res,
			    struct cgroup_birth *b, struct error *err);

/* *b for a new process of an existing container (exec). */
int cgroup_open_birth(const char *path, enum cgroup_manager manager,
		      struct cgroup_birth *b, struct error *err);

/* The parent's part after the clone: a process not born in its cgroup2
 * directory (a kernel without CLONE_INTO_CGROUP, a cgroup at its pids.max
 * or memory.max: exec into a full container works, as with runc) or meant
 * to enter it by pid (by_pid) is moved there by pid, through v2_fd.
 * Closes the parent's copies of b's files. */
int cgroup_after_clone(struct cgroup_birth *b, pid_t pid, bool born_in,
		       struct error *err);

/* The new process's part: write "0" into each v1 tasks file, then close
 * b's files.  Before anything else of the container's setup (and before
 * any fork: a child made earlier would stay behind). */
int cgroup_place_self(struct cgroup_birth *b, struct error *err);

/* Move pid into an existing container cgroup by cgroup.procs (tests). */
int cgroup_enter(const char *path, enum cgroup_manager manager, pid_t pid,
		 struct error *err);

/* (cgroupfs) An existing ancestor of path, below the hierarchy's root,
 * that holds processes itself (*which, heap, and one of them *pid), or
 * *which NULL: a cgroup there would be charged to that one's limits. */
int cgroup_ancestor_with_processes(const char *path, char **which, pid_t *pid,
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
