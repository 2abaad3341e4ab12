/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_INTERNAL_H
#define AGENTSBX_INTERNAL_H

/*
 * What the parent prepares before clone() and the container init uses
 * after it.  The child is a clone of the parent's memory, so everything
 * that can be computed (parsed mount flags, capability sets, compiled
 * seccomp) is computed once in the parent and only applied in the child.
 * The context is in parts by phase and owner (context.h); each step below
 * takes the parts it reads, const, and those it writes.
 */

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../lib/error.h"
#include "context.h"
#include "init/sync.h"

/* lifecycle/ctx.c: the context, and what create and exec share. */
void container_ctx_init(struct container_ctx *c, const struct global_opts *g,
			const struct create_opts *o);
void container_ctx_release(struct container_ctx *c);
/* The state as it is now, borrowing the context's strings. */
void ctx_state(const struct ctx_decided *d, const struct ctx_record *r,
	       enum container_status status, struct container_state *st);
/* r->state_json for hooks and the seccomp listener, with this status. */
void ctx_update_state_json(const struct ctx_decided *d, struct ctx_record *r,
			   enum container_status status);
/* Shared by create and exec: --root (once), the spec's seccomp filter from
 * the cache, the console socket or our own pty pair, the pid file. */
int ctx_open_root(struct ctx_decided *d, struct ctx_handles *h, struct error *err);
int ctx_prepare_seccomp(struct ctx_decided *d, struct error *err);
int ctx_prepare_terminal(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err);
int write_pid_file(const char *path, pid_t pid, struct error *err);

/* lifecycle/create.c */
int create_container(struct container_ctx *c, struct error *err);
/* lifecycle/lifecycle.c: `start` of the container just created (run),
 * from what create knows: no state or spec read back from disk. */
int container_start_ctx(const struct ctx_decided *d, const struct ctx_handles *h,
			const struct ctx_record *r, struct error *err);
/* What create knows, for container_delete_reaped (run.c). */
void container_known_from_ctx(const struct ctx_decided *d, const struct ctx_handles *h,
			      const struct ctx_record *r, struct container_known *k);

/* policy/enforce.c: load the policy and apply it to d->spec. */
int policy_enforce(struct ctx_decided *d, const struct ctx_handles *h, struct error *err);
/* runtime/policy/engine_dirs.c: the engine's directories for this
 * container (containerd's CRI dirs under its state and root, dockerd's
 * data-root) join d->policy.bind_prefixes (create, and exec from the
 * state's bundle). */
int policy_add_engine_dirs(struct ctx_decided *d, const struct ctx_handles *h,
			   struct error *err);
/* After the rootfs and the joined namespaces are open, before anything is
 * written: judge them (the host's namespaces, a host root) under enforce;
 * the seccomp listener judged is opened into h->listener_fd. */
int policy_judge_objects(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err);
/* init/egress_net.c: in the container's own network namespace (egress by
 * name): the route to lo, the redirect, the proxy's sockets to the parent. */
int egress_net_setup(const struct policy *p, const char *id, int sync_fd, struct error *err);
/* policy/netfilter.c: the redirect of the egress ports and DNS. */
int netfilter_install_egress_redirect(const unsigned *ports, size_t n, const char *id,
				      struct error *err);
/* policy/egress_spawn.c: the proxy's sockets as the init sends them, the
 * proxy started for them (recorded in the state directory first), and
 * stopped at delete. */
struct egress_spawn {
	const char *id;
	const struct policy *policy;
	const struct policy_decision *decision;
	uid_t uid; /* the proxy runs as it (the container's own) */
	int state_dir_fd;
};
void egress_fds_init(struct egress_fds *e);
void egress_fds_close(struct egress_fds *e);
int egress_fds_take(struct egress_fds *e, const struct policy *p, int fd, long long port,
		    bool *complete, struct error *err);
int egress_proxy_spawn(const struct egress_spawn *s, struct egress_fds *fds, struct error *err);
void egress_proxy_stop(int state_dir_fd, const char *id);
/* policy/identity.c: under identities (d->decision.identity), a host uid
 * and gid of the container's own (its pod's), recorded in its state
 * directory and written into process.user: create, once the state
 * directory is there; exec, the one create recorded; delete gives it back. */
int identity_take(struct ctx_decided *d, const struct ctx_handles *h, struct error *err);
int identity_apply_exec(struct ctx_decided *d, int state_dir_fd, struct error *err);
int identity_of(int state_dir_fd, uint32_t *uid, struct error *err);
void identity_release(int state_dir_fd, const char *id);
/* policy/enforce.c: under enforce, the cgroup the container would get is
 * not inside one that holds processes itself (another tenant's, a host
 * service's: it would be charged to that one's limits). */
int policy_judge_cgroup(const struct ctx_decided *d, const struct ctx_record *r,
			struct error *err);
/* A refusal into the policy's audit log (policy/audit_log.h). */
void policy_audit_refusal(const struct ctx_decided *d, const struct error *err);

/* netfilter.c: the container's own egress table in the current netns:
 * no new outbound connection (inbound_only), or the policy's denyCidrs
 * dropped but its allowCidrs. */
int netfilter_install_egress(const struct policy *p, bool inbound_only, const char *id,
			     struct error *err);
/* A joined netns that gets the table: noted in the state dir before the
 * clone, checked to be init's after it, the table removed at delete.
 * Also opens libnftables (before the clone) when egress rules are due. */
int netfilter_note_joined_netns(const struct ctx_decided *d, const struct ctx_handles *h,
				struct error *err);
int netfilter_check_joined_netns(const struct ctx_handles *h, const struct ctx_record *r,
				 struct error *err);
int netfilter_remove_egress(int state_dir_fd, const char *id, struct error *err);
/* policy/release.c: the egress table, the egress proxy and the identity
 * given back (delete, a failed create); failures logged with what. */
void policy_release_container(int state_dir_fd, const char *id, const char *what);
/* Remove every interface but lo from the current netns. */
int netfilter_only_loopback(struct error *err);

/* namespaces.c */
int ns_prepare(struct ctx_decided *d, struct error *err);
int ns_join_before_clone(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err);
int ns_write_id_maps(const struct ctx_decided *d, const struct ctx_handles *h,
		     const struct ctx_record *r, struct error *err);
/* "containerID hostID size" lines into /proc/PID/FILE (uid_map, gid_map)
 * through proc_fd, a checked procfs. */
int ns_write_id_map(int proc_fd, pid_t pid, const char *file,
		    const struct oci_id_mapping *m, size_t n, struct error *err);
int ns_child_join(const struct ctx_decided *d, struct ctx_handles *h, struct error *err);
int ns_child_after_go(const struct ctx_decided *d, const struct ctx_handles *h,
		      struct ctx_init *i, struct error *err);
int ns_fork_into_pid_namespace(int sync_fd, struct error *err);
int ns_loopback_up(const struct ctx_decided *d, struct error *err);
int ns_clone(unsigned long flags, pid_t *pid, struct error *err);
/* ns_clone, but with clone3(CLONE_INTO_CGROUP) when cgroup_fd >= 0: the
 * child is born in that cgroup (*born_in); on a kernel without it, a
 * plain clone (*born_in false: the caller moves the child). */
int ns_clone_into(unsigned long flags, int cgroup_fd, pid_t *pid,
		  bool *born_in, struct error *err);
void ns_restore_after_clone(const struct ctx_handles *h);

/* rootless.c: created by an unprivileged caller (no CAP_SETUID on the
 * host); the id maps of the new user namespace: our own ids directly, any
 * other through newuidmap/newgidmap. */
bool rootless_caller(void);
/* newuidmap and newgidmap are there: maps beyond the caller's own ids. */
bool rootless_can_map_more(void);
int rootless_write_id_maps(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct ctx_record *r, struct error *err);

/* policy/ns_owner.c: namespace files judged as kernel objects. */
/* Open path once: it must be an nsfs file of type t. */
int ns_open_file(const char *path, enum ns_type t, int *out, struct error *err);
/* fd is the runtime's own namespace of type t, or PID 1's. */
int ns_fd_is_host(int fd, int proc_fd, enum ns_type t, bool *host,
		  struct error *err);
/* Every linux.namespaces[].path into h->ns_fd and d->ns_host. */
int ns_open_joined(struct ctx_decided *d, struct ctx_handles *h, struct error *err);
void ns_close_joined(struct ctx_handles *h);
/* The container found to own a joined namespace: a pod's container joins
 * its sandbox's network, ipc and uts, so the next type is looked for in
 * that container first, not in a new scan of every state under --root. */
struct ns_owner_hint {
	char id[CONTAINER_ID_MAX + 1];
};
/* fd is the namespace of type t of a live container under --root (hint:
 * NULL, or tried first and set to the owner found). */
int ns_of_container(const struct ctx_decided *d, const struct ctx_handles *h,
		    enum ns_type t, int fd, struct ns_owner_hint *hint, bool *found,
		    struct error *err);
/* *user: a process in the namespace fd of type t (0: none, an empty
 * namespace such as the one CNI made for a pod). */
int ns_in_use(const struct ctx_handles *h, enum ns_type t, int fd, pid_t *user,
	      struct error *err);

/* child.c: runs in the container init, never returns.  It writes its own
 * part and its copies of the handles, never what was decided or recorded. */
__attribute__((noreturn)) void child_main(const struct ctx_decided *d,
					  const struct ctx_record *r, struct ctx_handles *h,
					  struct ctx_init *i);

/* rootfs.c: mounts, pivot_root, masked/readonly paths (in the child). */
int rootfs_prepare_mounts(const struct ctx_decided *d, const struct ctx_record *r,
			  struct ctx_handles *h, struct ctx_init *i, struct error *err);
/* The rootfs opened by path in the child's mount namespace (the parent's
 * fd belongs to the parent's).  In a new mount namespace, a copy of the
 * parent's, it must be the directory the parent opened and judged; in a
 * joined one (another container's) the path is read there, as runc
 * reads it. */
int rootfs_open_judged(const struct ctx_decided *d, const struct ctx_handles *h, int *out,
		       struct stat *st, struct error *err);
int rootfs_finalize(const struct ctx_decided *d, struct ctx_handles *h,
		    const struct ctx_init *i, struct error *err);
int rootfs_enter_init_root(pid_t init, bool joined_mnt, struct error *err);
int rootfs_mount_cgroup(const struct ctx_decided *d, const struct ctx_record *r, int rootfd,
			const struct mount_entry *e, struct error *err);

/* devices.c */
/* In the parent, before anything is made: every linux.devices[].path is
 * under /dev with no ".." (the child checks where it resolves, too). */
int devices_check_paths(const struct oci_spec *spec, struct error *err);
int devices_setup(const struct ctx_decided *d, const struct ctx_handles *h,
		  struct error *err);

/* process.c: the last steps before execve (in the child). */
int process_resolve_exec(const struct ctx_decided *d, struct ctx_init *i, struct error *err);
int process_resolve_home(const struct ctx_decided *d, struct ctx_init *i, struct error *err);
int process_setup_early(const struct ctx_decided *d, const struct ctx_handles *h,
			struct error *err);
int process_apply_credentials(const struct ctx_decided *d, struct ctx_init *i,
			      struct error *err);
int process_open_cwd(const struct ctx_decided *d, struct ctx_init *i, struct error *err);
int process_prepare_fds(const struct ctx_decided *d, struct ctx_handles *h,
			struct ctx_init *i, struct error *err);
__attribute__((noreturn)) void process_exec(const struct ctx_decided *d, struct ctx_handles *h,
					    struct ctx_init *i);
int process_load_seccomp(const struct ctx_decided *d, struct ctx_init *i, int *listener,
			 struct error *err);
void process_report_start_failure(const struct ctx_handles *h, const struct error *err);
int process_set_rlimits(const struct oci_process *p, struct error *err);
int mempolicy_apply(const struct oci_spec *spec, struct error *err);
int process_cpu_affinity(const char *list, const char *field, struct error *err);
int process_setup_exec(const struct ctx_decided *d, struct error *err);

/* sysctl/hostname in the child; procfs checks. */
int proc_check_fd(int fd, const char *what, struct error *err);
int sysctl_apply(const struct ctx_decided *d, const struct ctx_handles *h, struct error *err);
/* In the parent, in every mode: no net.* (ipc) sysctl into a joined host
 * network (ipc) namespace, no hostname into a joined host uts one. */
int sysctl_check_host_namespaces(const struct ctx_decided *d, struct error *err);

#endif
