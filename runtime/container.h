/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CONTAINER_H
#define AGENTSBX_CONTAINER_H

/*
 * The lifecycle operations, one per runc command.  cmd/ parses flags into
 * these option structs and calls one function; everything else is here.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/error.h"

#define DEFAULT_STATE_ROOT "/run/agentsbx"
#define CONTAINER_ID_MAX 255

struct global_opts {
	const char *root;	 /* --root, default DEFAULT_STATE_ROOT */
	const char *policy_path; /* --policy; NULL: /etc/agentsbx/policy.json */
	bool systemd_cgroup;
	bool debug;
};

struct create_opts {
	const char *id;
	const char *bundle;	    /* default "." */
	const char *pid_file;	    /* NULL: none */
	const char *console_socket; /* NULL: none */
	bool no_pivot;
	bool no_new_keyring;
	int preserve_fds;
	bool detach; /* run only */

	/* Set only by a caller that runs containers of its own (the agent
	 * front door), never from a flag or a spec: a directory of the
	 * runtime's own whose binds are allowed besides the policy's
	 * bindPrefixes (a session's files), and the signal mask the container
	 * init restores before it execs (NULL: the one it was cloned with). */
	const char *own_bind_prefix;
	const sigset_t *init_sigmask;
	/* The policy's writable layer is not stacked on this root: the
	 * front door's sandbox keeps the read-only root it documents (its
	 * root is a disposable overlay already; code writes to /tmp and
	 * /outputs). */
	bool no_writable_layer;
	/* A directory that holds an identity (container_identity_hold): the
	 * container runs as that uid, as every other container made with it
	 * (a session's runs share their files). */
	const char *identity_dir;
	/* Started too, from what the create knows (as `run` does: the state
	 * and spec are not read back).  A start that fails leaves the
	 * container created: container_create_detailed fails with *out
	 * filled, for the caller to delete it. */
	bool start;
};

/* What a create knows of its container: enough to delete it, once its
 * init is reaped, without reading its state and spec back
 * (container_delete_reaped). */
struct container_known {
	char *cgroup_path; /* heap, or NULL */
	int cgroup_manager;
	bool poststop; /* poststop hooks (they need the state): a full delete */
	dev_t dir_dev; /* the state directory it made */
	ino_t dir_ino;
};

/* What container_create_detailed() reports about the container it made. */
struct created_container {
	pid_t pid;		      /* the container init, waiting for start (or started) */
	uint32_t uid, gid;	      /* its process's host ids */
	struct container_known known; /* its cgroup among it */
};

struct exec_opts {
	const char *id;
	const char *process_file; /* --process */
	bool detach;
	const char *pid_file;
	const char *console_socket;
	bool tty;
	const char *cwd;
	char **env; /* NULL-terminated, may be NULL */
	const char *user;
	const char *additional_gids;
	char **caps;
	bool no_new_privs;
	int preserve_fds;
	char **args; /* NULL-terminated */
};

/* identities (the policy field): dir, an absolute directory of the
 * caller's own, holds a host uid of its own that the containers created
 * with create_opts.identity_dir = dir share; *uid 0: the policy gives
 * none (off, audit, rootless).  With identities off, *uid is the policy's
 * "uid".  Given back by container_identity_release(dir) before the
 * directory goes (or found stale once it is gone). */
int container_identity_hold(const struct global_opts *g, const char *dir, uint32_t *uid,
			    struct error *err);
void container_identity_release(const char *dir);

/* Check a container id: [A-Za-z0-9][A-Za-z0-9_.+-]*, bounded length. */
int container_id_validate(const char *id, struct error *err);

int container_create(const struct global_opts *g, const struct create_opts *o,
		     struct error *err);
/* container_create, also reporting the init's pid and cgroup (*out is
 * filled when the container exists: on success, and when o->start failed
 * after the create; out->pid 0 otherwise; free it with
 * created_container_free). */
int container_create_detailed(const struct global_opts *g,
			      const struct create_opts *o,
			      struct created_container *out, struct error *err);
void created_container_free(struct created_container *c);
int container_start(const struct global_opts *g, const char *id,
		    struct error *err);
/* Delete a container whose init the caller has reaped, from what its
 * create knew: the state directory must still be the one the create made
 * (else it is left alone: another container's now).  Poststop hooks: the
 * full delete. */
int container_delete_reaped(const struct global_opts *g, const char *id,
			    const struct container_known *k, struct error *err);
/* create + start, then (unless detached) wait: *exit_status gets the
 * container's exit code, 128+N for a signal. */
int container_run(const struct global_opts *g, const struct create_opts *o,
		  int *exit_status, struct error *err);
/* Print the state JSON of one container to stdout. */
int container_state(const struct global_opts *g, const char *id,
		    struct error *err);
int container_kill(const struct global_opts *g, const char *id, int sig,
		   bool all, struct error *err);
int container_delete(const struct global_opts *g, const char *id, bool force,
		     struct error *err);
int container_list(const struct global_opts *g, bool json, bool quiet,
		   struct error *err);
/* The ids of the containers under --root (*ids a heap array of heap
 * strings, free with container_ids_free); a missing root is empty. */
int container_ids(const struct global_opts *g, char ***ids, size_t *n,
		  struct error *err);
void container_ids_free(char **ids, size_t n);
int container_exec(const struct global_opts *g, const struct exec_opts *o,
		   int *exit_status, struct error *err);

/* pause (freeze=true) / resume. */
int container_pause(const struct global_opts *g, const char *id, bool freeze,
		    struct error *err);
/* ps: json prints the array of host pids; otherwise `ps ps_args` (default
 * -ef) filtered to the container's processes. */
int container_ps(const struct global_opts *g, const char *id, bool json,
		 char **ps_args, struct error *err);

struct oci_resources;
/* update: apply new limits to the container's cgroup. */
int container_update(const struct global_opts *g, const char *id,
		     struct oci_resources *res, struct error *err);

/* events: stats every interval (once with stats_once) and OOM events, as
 * JSON lines, until the container stops. */
/* policy log: the policy's audit log (its JSON lines, those of container
 * if not NULL) on stdout; follow: and what comes next, across rotations. */
int container_policy_log(const struct global_opts *g, bool follow, const char *container,
			 struct error *err);
int container_events(const struct global_opts *g, const char *id, bool stats_once,
		     unsigned interval_ms, struct error *err);

/* Whether the memory cgroup at cgroup_path (as in created_container) has
 * OOM-killed a process (v1 memory.oom_control, v2 memory.events); false
 * when it cannot be read.  Read it before the cgroup is removed. */
bool container_cgroup_oom_killed(const char *cgroup_path);

/* Make --root if it is missing (what create does first), so that a
 * caller can create containers from a process whose stderr is not its own. */
int runtime_prepare_root(const struct global_opts *g, struct error *err);

/* Look up what the host has (cgroup mounts) now, in one thread, so that
 * later calls from several threads only read the cached answer. */
void runtime_warm_caches(void);

/* `features`: the JSON of features.md, printed to stdout. */
int runtime_features(struct error *err);

#endif
