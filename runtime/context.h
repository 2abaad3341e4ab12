/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CONTEXT_H
#define AGENTSBX_CONTEXT_H

/*
 * The context of one create (or exec), in parts by phase and owner.  The
 * lifecycle holds the whole (struct container_ctx) and hands every step the
 * parts it reads, const, and the parts it writes:
 *
 *   part         written by                              read by
 *   ctx_decided  the lifecycle and the policy, before    everyone after, const:
 *                the clone (load, enforce, prepare)      the init, start, the hooks
 *   ctx_handles  the lifecycle, the policy and the       the parent; the init, which
 *                judge in the parent (what they open)    closes its copies as it goes
 *   ctx_record   the lifecycle: its state (pid, cgroup)  the init: its cgroup, and
 *                                                        its state for hooks
 *   ctx_init     the init, or an exec'd process, after   itself only
 *                the clone until its execve
 *
 * The init is a clone of the parent: what it writes is its own copy, so
 * nothing the init does changes what the parent holds.
 */

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "../spec/policy/policy.h"
#include "../spec/spec.h"
#include "cgroup/cgroup.h"
#include "container.h"
#include "egress/egress.h"
#include "init/caps.h"
#include "init/mounts.h"
#include "lifecycle/state.h"
#include "seccomp/seccomp.h"

/* The egress proxy's sockets, as the init sends them (egress_spawn.c). */
struct egress_fds {
	struct egress_listeners l;
};

/* What the caller asked, the spec and the policy decided: complete before
 * the clone, and const to every step after it. */
struct ctx_decided {
	/* The caller's: set when the context is made (create, run, exec). */
	const struct global_opts *g;
	const struct create_opts *opts;
	const char *id;
	bool is_exec;	      /* exec: a process joining, not the init */
	bool foreground;      /* run without --detach: we stay to proxy and wait */
	bool restore_sigmask; /* the child restores saved_sigmask (run) */
	sigset_t saved_sigmask;
	/* A directory of the runtime's own that this container's binds may
	 * come from besides the policy's bindPrefixes: the agent front door's
	 * workspace (a session's files).  Set by runtime/ code only, never from
	 * a spec or a flag. */
	const char *own_bind_prefix;
	const char *exec_bundle; /* exec: the container's bundle (its state) */

	/* The spec, as the policy left it (identity_take writes its user). */
	struct oci_spec spec;
	char *config_json; /* the bytes of config.json, saved in the state dir */
	size_t config_len;
	char *bundle;	     /* absolute */
	char *rootfs;	     /* absolute: where root.path really is (the judge) */
	char *seccomp_cache; /* --root/.seccomp-cache */
	int listen_fds;	     /* LISTEN_FDS passed through (socket activation) */

	struct policy policy; /* the policy in force */
	bool policy_loaded;
	struct policy_decision decision;

	/* Computed once here, applied in the child. */
	struct mount_plan mounts;
	struct caps_plan caps;
	struct seccomp_prog seccomp; /* len 0: none */
	/* the policy's agent filters, stacked after the spec's (len 0: none) */
	struct seccomp_prog agent_seccomp[POLICY_AGENT_FILTERS];
	unsigned long clone_flags;	/* namespaces created by clone() */
	unsigned long unshare_after_go; /* created by the child (cgroup ns) */
	bool new_userns;
	/* Whether each linux.namespaces[].path opened is the host's (ours or
	 * PID 1's): judged on ctx_handles.ns_fd. */
	bool ns_host[NS_TYPE_MAX];
};

/* What the parent opened for the container, -1 when not (open).  The init
 * gets copies with the clone and closes them as it goes: a step of the
 * init that takes ctx_handles non-const closes or moves its copies. */
struct ctx_handles {
	int rootfs_fd;	   /* O_PATH|O_DIRECTORY of the rootfs (the init: its
			    * own, reopened in its mount namespace) */
	int host_proc_fd;  /* the runtime's /proc, checked to be procfs */
	int listener_fd;   /* linux.seccomp.listenerPath judged (O_PATH) */
	int root_fd;	   /* --root, made if missing (ctx_open_root) */
	int state_dir_fd;  /* --root/ID, locked */
	int fifo_fd;	   /* exec.fifo, O_RDWR: init reads start's byte */
	int done_fd;	   /* exec.done, O_RDWR: closed by init's execve */
	int sync_parent;   /* the parent's end of the socketpair */
	int sync_child;	   /* the child's end */
	int console_sock;  /* --console-socket, connected */
	int console_peer;  /* foreground run: our end of the console pair */
	int trampoline_fd; /* the sealed exec trampoline (trampoline.h) */
	int landlock_fd;   /* a ruleset to enter (landlock.h) */
	int own_pidns_fd;  /* our pid/time namespaces for children, when */
	int own_timens_fd; /* ns_join_before_clone() changes them */
	/* linux.namespaces[].path opened once (runtime/policy/ns_owner.c):
	 * the fd joined; ctx_decided.ns_host says whose it is. */
	int ns_fd[NS_TYPE_MAX];
	struct mount_trees mount_trees; /* the binds' sources, cloned */
	struct cgroup_birth cg_birth;	/* the new process's way into its cgroup */
	struct egress_fds egress;	/* the proxy's sockets, as the init sends them */
};

/* What the lifecycle records of the container: its state, written by
 * create (and exec) in the parent, read by the init. */
struct ctx_record {
	pid_t pid;
	unsigned long long start_time;
	char *created;
	char *cgroup_path; /* NULL: none (rootless without delegation) */
	enum cgroup_manager cgroup_manager;
	bool cgroup_created;
	bool state_dir_made;
	char *state_json; /* for the parent's hooks' stdin */
	/* The state as JSON with this pid and status (heap): set by the
	 * lifecycle (container_ctx_init), called by the init for its hooks,
	 * which knows no state format of its own. */
	char *(*render_state_json)(const struct ctx_decided *d, const struct ctx_record *r,
				   pid_t pid, enum container_status status);
};

/* What the init (or an exec'd process) finds out and does between its
 * clone and its execve: written by it alone, in its own copy. */
struct ctx_init {
	char *exec_path;       /* args[0] resolved in the container's PATH */
	char *home;	       /* HOME from the container's /etc/passwd, if unset */
	bool proc_fallback_ok; /* trampoline_proc_fallback_ok(), asked early */
	bool cwd_open;	       /* cwd_fd: process.cwd resolved, not yet entered */
	int cwd_fd;
	bool fds_ready;		   /* process_prepare_fds() done */
	bool locked_down;	   /* credentials and seccomp already applied */
	bool seccomp_loaded;	   /* the spec's filter (each is loaded once) */
	bool agent_seccomp_loaded; /* the policy's agent filters */
	/* The policy's writable layer could not be built: the root is
	 * read-only instead (writable_layer_fell_back). */
	bool writable_layer_lost;
};

/* The owner of the parts: made, handed out and released by the lifecycle
 * (runtime/lifecycle/ctx.c). */
struct container_ctx {
	struct ctx_decided decided;
	struct ctx_handles handles;
	struct ctx_record record;
	struct ctx_init init;
};

#endif
