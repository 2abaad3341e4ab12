/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_POLICY_H
#define AGENTSBX_POLICY_H

/*
 * The agent sandbox policy: the floor set by the operator (a policy file,
 * or the built-in default), not by whoever wrote the `docker run` line or
 * the config.json.  policy_apply() turns an incoming spec into one no looser
 * than the floor and lists every change it made (for the log and for
 * `agentsbx policy explain`).  Pure data, like the rest of spec/: the
 * network egress rules and the stacked seccomp profile it asks for are
 * carried out by runtime/.
 */

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "../spec.h"

#define POLICY_DEFAULT_PATH "/etc/agentsbx/policy.json"

enum policy_mode {
	POLICY_ENFORCE, /* apply the floor (default) */
	POLICY_AUDIT,	/* compute and log the changes, apply none */
	POLICY_OFF,	/* a plain OCI runtime, as runc */
};

struct policy_tmpfs {
	char *path;
	uint64_t size; /* bytes */
};

/* What an agentsbx.* annotation may relax, when the policy allows it. */
enum policy_relax {
	RELAX_NETWORK = 1 << 0,	      /* agentsbx.network=allow */
	RELAX_WRITABLE_ROOT = 1 << 1, /* agentsbx.rootfs=writable */
	RELAX_CAPS = 1 << 2,	      /* agentsbx.capabilities=CAP_A,CAP_B (within allowed) */
	RELAX_LIMITS = 1 << 3,	      /* agentsbx.memory=..., agentsbx.pids=... (within max) */
};

/* What the floor does with a spec that explicitly asks for more
 * (policy_requests.c): refuse it at create, or tighten it and log. */
enum policy_on_request {
	ON_REQUEST_REFUSE, /* default */
	ON_REQUEST_CLAMP,
};

#define POLICY_AUDIT_LOG_DEFAULT "/var/log/agentsbx/policy.log"

/* An operator's hook rule (hookRules[]): the binary, the kinds (bits of
 * 1 << enum hook_kind), argv globs ("${id}": the container's id) and the
 * environment entries it may carry (globs). */
struct policy_hook_rule {
	char *path;
	unsigned kinds;
	struct str_array args;
	struct str_array env;
};

/* egress by name: the names a container may reach (exact, or "*.suffix":
 * every name below suffix), denyDomains winning (policy_egress.c). */
#define POLICY_EGRESS_NAME_MAX 253
/* The proxy's address on the container's lo, its HTTP proxy port. */
#define POLICY_EGRESS_ADDR "127.0.0.2"
#define POLICY_EGRESS_PROXY_PORT 3128
#define POLICY_EGRESS_PORTS_MAX 16
struct policy_egress_names {
	struct str_array allow;
	struct str_array deny;
};
enum egress_verdict { EGRESS_ALLOWED,
		      EGRESS_NOT_LISTED,
		      EGRESS_DENIED };

struct policy {
	enum policy_mode mode;
	char *source;			   /* the file it came from, or "built-in default" */
	enum policy_on_request on_request; /* onRequestAboveFloor */
	/* auditLog: the JSON-lines log of every decision; NULL: not set in
	 * the file (POLICY_AUDIT_LOG_DEFAULT); "": no audit log.  The runtime's
	 * $AGENTSBX_POLICY_LOG wins over both (runtime/policy/audit_log.h). */
	char *audit_log;
	/* Not from the file: the default audit log as the runtime's caller
	 * resolved it (runtime/policy/audit_log.c), for the container init,
	 * which may be uid 0 of a user namespace by then. */
	char *audit_log_caller;

	/* network */
	bool network_allowed;	      /* keep the container's network namespace */
	struct str_array deny_cidrs;  /* egress dropped when networking is allowed */
	struct str_array allow_cidrs; /* egress kept even inside deny_cidrs (pod and
				       * service CIDRs, cluster DNS) */
	/* egress by name (policy_egress.c, runtime/egress/): the names a
	 * container may reach through the runtime's proxy; none: off */
	struct policy_egress_names egress;
	struct str_array egress_hosts; /* "name=address": the operator's pins */
	unsigned egress_ports[POLICY_EGRESS_PORTS_MAX];
	size_t n_egress_ports;

	/* filesystem */
	bool readonly_root;
	/* writableLayer: with readonly_root, the image stays read-only and the
	 * container writes to an overlay whose upper layer is a tmpfs of this
	 * many bytes (thrown away with the container); 0: a plain read-only
	 * root, every write EROFS. */
	uint64_t writable_layer;
	struct policy_tmpfs *tmpfs;
	size_t n_tmpfs;
	struct str_array masked_paths;
	struct str_array readonly_paths;
	struct str_array bind_prefixes; /* host paths a bind mount may come from */
	bool writable_binds;		/* writable directory binds allowed (unbounded disk) */
	bool idmapped_mounts;		/* idmap/ridmap binds allowed */

	/* where root.path may be besides the bundle's own tree */
	struct str_array rootfs_prefixes;
	/* volume directories: a bind may come from <dir>/<name>/_data */
	struct str_array bind_volume_dirs;
	/* sockets, FIFOs and device nodes a bind may come from */
	struct str_array bind_special_files;
	/* derived at create, not a policy key: the engine's graph-driver
	 * directories of this container, whose <hex>/merged may be root.path */
	struct str_array engine_layer_dirs;
	/* unix sockets linux.seccomp.listenerPath may name */
	struct str_array seccomp_listeners;

	/* hooks (spec/policy/policy_hooks.c): the commands an OCI hook may be */
	struct str_array docker_hook; /* dockerd binaries of Docker's own hook */
	struct policy_hook_rule *hook_rules;
	size_t n_hook_rules;

	/* privileges */
	struct str_array capabilities; /* the allowed set (default: none) */
	bool no_new_privileges;
	bool strict_seccomp; /* stack the agent profile on the spec's */
	bool default_devices_only;
	struct opt_u64 uid; /* run as this uid (and gid) when the spec says host
			     * root and identities is off; default 65534,
			     * "uid": null: unset */
	/* identities: every container (every pod) without a user namespace
	 * of its own runs as a host uid and gid of its own, taken from
	 * [identity_first, identity_first + identity_count) at create and
	 * given back at delete (runtime/policy/identity.c); count 0: off. */
	uint32_t identity_first;
	uint32_t identity_count;
	bool realtime_scheduling; /* SCHED_DEADLINE/FIFO/RR, RT I/O (policy_process.c) */

	/* resources: a maximum, also the value filled in when missing */
	uint64_t memory; /* bytes; swap is set equal (no swap) */
	int64_t pids;
	uint64_t cpu_quota; /* per cpu_period */
	uint64_t cpu_period;
	uint64_t rlimit_cpu;   /* seconds; 0: none (the default) */
	uint64_t rlimit_fsize; /* bytes */
	uint64_t rlimit_nofile;
	uint64_t ptys; /* devpts max= of every devpts mount */

	unsigned relaxable; /* enum policy_relax bits */
};

/* One change the policy made (or, in audit mode, would make). */
struct policy_change {
	char *rule;  /* "network", "capabilities", ... */
	char *field; /* the spec field: "linux.namespaces", "process.capabilities.bounding" */
	char *from;
	char *to;
};

struct policy_changes {
	struct policy_change *items;
	size_t len;
};

/* What runtime/ must do beyond the spec, decided by policy_apply(). */
struct policy_decision {
	bool egress_filter;		/* an egress table in the container's netns: */
	bool inbound_only;		/* ... dropping every new outbound connection
				  * (a kept pod netns, no network allowed), or
				  * else deny_cidrs minus allow_cidrs */
	bool stack_agent_seccomp;	/* load the agent profile after the spec's */
	bool check_bind_sources;	/* re-check bind sources after realpath() */
	bool only_loopback;		/* after the hooks: no interface but lo */
	bool refuse_host_netns;		/* the runtime's own netns may not be joined */
	bool refuse_writable_dir_binds; /* rw bind of a directory not on tmpfs */
	uint64_t writable_layer;	/* bytes: an overlay over the read-only
					 * image, its upper on a tmpfs this size */
	bool egress_proxy;		/* egress by name: only lo, routed to the runtime's
			    * proxy, which serves egress_allow */
	struct str_array egress_allow;	/* heap: policy_decision_free() */
	bool identity;			/* the process runs as a host uid/gid of
					 * this container's own (identities): the
					 * runtime takes one and writes it into
					 * process.user before anything runs */
};

/* The built-in identities range: above systemd's container range
 * (524288..1879048191, systemd.io/UIDS-GIDS) and below 2^31, which some
 * tools still read as a signed int. */
#define POLICY_IDENTITY_FIRST 1879048192u
#define POLICY_IDENTITY_COUNT 65536u
/* What policy_apply() writes into process.user until the runtime has the
 * container's own identity: nobody, never root, should a caller forget. */
#define POLICY_IDENTITY_PLACEHOLDER 65534u

/*
 * spec/policy/policy_requests.c: what a spec explicitly asks for above the
 * floor (--cap-add, --privileged, --device, --memory above the cap...), told
 * apart from what the engine filled in unasked.  Each request names what
 * was asked, the rule, and the policy field that would allow it (NULL:
 * none does).
 */
enum policy_engine { ENGINE_UNKNOWN,
		     ENGINE_DOCKER,
		     ENGINE_PODMAN,
		     ENGINE_CRI };

struct policy_request {
	char *what;
	char *rule;
	char *allow;
	bool unclampable; /* refused even under clamp (a host namespace by path) */
};

struct policy_requests {
	struct policy_request *items;
	size_t len;
};

/* Which engine wrote the spec: podman and CRI by their annotations, Docker
 * by its binds from <data-root>/containers/<id>/ (id: create's). */
enum policy_engine policy_engine_of(const struct oci_spec *s, const char *id);
const char *policy_engine_name(enum policy_engine e);
const char *policy_annotation(const struct oci_spec *s, const char *key);
/* host_netns: the runtime found linux.namespaces[network].path to be the
 * host's network namespace (judged on the opened fd). */
void policy_requests(const struct policy *p, const struct oci_spec *s, const char *id,
		     bool host_netns, struct policy_requests *out);
void policy_requests_free(struct policy_requests *r);
/* The one error that refuses them all.  Returns -1. */
int policy_requests_refuse(const struct policy *p, const struct policy_requests *r,
			   struct error *err);
/* onRequestAboveFloor clamp: the requests it cannot tighten (unclampable)
 * moved from r into out (refused all the same). */
void policy_requests_take_unclampable(struct policy_requests *r, struct policy_requests *out);
/* One of the device nodes every container gets (null, zero, full, ...). */
bool policy_device_is_default(const struct oci_device *d);

/* The built-in default (enforce, everything at its strictest). */
void policy_default(struct policy *p);
/* Parse a policy file; fields it leaves out keep the built-in default. */
int policy_parse(const char *buf, size_t len, const char *source,
		 struct policy *p, struct error *err);
/* path NULL: POLICY_DEFAULT_PATH, and the built-in default if it is
 * missing.  A given path that is missing, or any bad file, is an error. */
int policy_load(const char *path, struct policy *p, struct error *err);
void policy_free(struct policy *p);
/* The policy in force as JSON (policy show). */
char *policy_to_json(const struct policy *p);
/* The policy file's fields as a Markdown page (docs/policy-fields.md). */
char *policy_fields_markdown(void);

/*
 * Make spec no looser than the policy (in enforce mode; audit computes the
 * same list on a copy and leaves spec alone).  A request that cannot be
 * made safe by changing it (a bind mount of / from the host) is an error.
 * Every change is appended to *changes.
 */
int policy_apply(const struct policy *p, struct oci_spec *spec,
		 struct policy_changes *changes, struct policy_decision *d,
		 struct error *err);
void policy_changes_free(struct policy_changes *c);
void policy_decision_free(struct policy_decision *d);
/* policy_egress.c, the rule: the names this container may reach (the
 * policy's, or those its agentsbx.egress.allow annotation narrows them
 * to) into d->egress_allow, and d->egress_proxy where it gets a proxy. */
int policy_rule_egress(const struct policy *p, struct oci_spec *s, struct policy_changes *ch,
		       struct policy_decision *d, struct error *err);
/* The refusal of the host's namespace of type t, asked for by leaving the
 * entry out (path NULL) or by a path that is the host's: one message for
 * Docker (--network/--pid/--ipc/--uts host) and Kubernetes (hostNetwork,
 * hostPID, hostIPC).  Returns -1. */
int policy_refuse_host_ns(const struct policy *p, enum ns_type t, const char *path,
			  struct error *err);
/* policy_cidrs.c: denyCidrs as egress applies them: each range parsed,
 * plus the IPv6 forms that reach a denied IPv4 range through a translator
 * (NAT64, 6to4) and the translation prefixes denied whole; none inside
 * another.  Appended to *out. */
int policy_egress_deny_list(const struct str_array *deny, struct str_array *out,
			    struct error *err);
/* policy_egress.c: name against the lists; a pattern as a list may hold it;
 * a pattern (a narrowing: an annotation, --allow-domain) asking for
 * nothing the list does not allow. */
enum egress_verdict policy_egress_name(const struct policy_egress_names *n, const char *name);
bool policy_egress_pattern_valid(const char *p);
bool policy_egress_pattern_within(const struct policy_egress_names *n, const char *p);
/* An address (4 or 16 bytes, network order) is in one of the ranges. */
bool policy_cidrs_hold(const struct str_array *cidrs, bool v6, const unsigned char *addr);
/* Record one change (from NULL: "(unset)"); every rule file uses it. */
void policy_change_add(struct policy_changes *ch, const char *rule, const char *field,
		       const char *from, const char *to);
/* String vectors of the spec, kept NULL-terminated as spec.h promises. */
bool policy_strv_has(const struct str_array *a, const char *s);
/* "a,b,c" (heap). */
char *policy_strv_join(const struct str_array *a);
void policy_strv_add(struct str_array *a, const char *s);
/* policy_process.c: realtime scheduling and I/O classes refused unless
 * the policy's realtimeScheduling allows them. */
int policy_rule_scheduling(const struct policy *p, const struct oci_spec *s,
			   struct error *err);
/* policy_mounts.c.  source (absolute; cleaned here) is under one of
 * prefixes; a relative source is never allowed. */
bool policy_bind_allowed(const struct str_array *prefixes, const char *source);
/* policy_advice.c: what a bind refusal says to do.  where: the source
 * (as judged); the text lists the prefixes and names the field, and the
 * directory to add when where is in an engine's per-container directory
 * (one component of 64 hex digits: <data-root>/containers/<id>/...). */
struct policy_bind_advice_in {
	const struct str_array *prefixes;
	const char *source; /* the policy's */
	const char *where;
};
char *policy_bind_advice(const struct policy_bind_advice_in *in);
/* The directory holding where's engine container directory, or NULL. */
char *policy_engine_dir_of(const char *path);
/* "/a/./b/../c" -> "/a/c"; ".." never climbs above "/". */
char *policy_clean_path(const char *path);
/* clean is under prefix (or is it). */
bool policy_path_under(const char *clean, const char *prefix);
bool policy_mount_is_bind(const struct oci_mount *m);
/* A bind source as an absolute clean path: relative ones are the bundle's. */
char *policy_bind_source_path(const char *bundle, const char *source);
/* Rewrite every relative bind source of s as policy_bind_source_path();
 * done before policy_apply() so that it judges where they land. */
void policy_resolve_bind_sources(struct oci_spec *s, const char *bundle);
/* policy_engine.c: the engine's own directories for this container,
 * derived from the bundle's path and the shim's `work` link in it (NULL:
 * none), appended to out.  sandbox_id: the pod's sandbox (CRI), or NULL. */
/* root.path (located) may be used: inside the bundle (located; the
 * engine's own unpacked image), under rootfsPrefixes, or one layer's
 * <dir>/<hex>/merged of this container's engine's layer directories. */
bool policy_rootfs_allowed(const struct policy *p, const char *bundle, const char *rootfs);
/* Docker's <data-root>/overlay2 (fuse-overlayfs), podman's <graph>/overlay. */
void policy_engine_layer_dirs(const char *bundle, const char *work, const char *id,
			      struct str_array *out);
void policy_engine_bind_prefixes(const char *bundle, const char *work, const char *id,
				 const char *sandbox_id, struct str_array *out);
/* Docker's or podman's volumes directory for this container's engine
 * (<data-root>/volumes, <graph root>/volumes), into out. */
void policy_engine_volume_dirs(const char *bundle, const char *work, const char *id,
			       struct str_array *out);
/* where is one volume's data, <dir>/<name>/_data[/...], of one of dirs. */
bool policy_volume_allowed(const struct str_array *dirs, const char *where);
/* The kubelet's directory of the pod pod_uid, for a container whose bundle
 * is a containerd task of id (malloc'd), or NULL. */
char *policy_engine_pod_dir(const char *bundle, const char *id, const char *pod_uid);
/* runc's checkProcMount: dest is not under /proc, or is /proc itself (for
 * proc or a bind), or one of the files lxcfs binds over (binds only). */
bool policy_proc_dest_allowed(const char *dest, const char *type, bool bind);
/* The kernel's memparse() (k/m/g/t/p/e, base from the prefix, wrapping). */
unsigned long long policy_memparse(const char *s, const char **end);
/* A tmpfs "size=..." or "nr_blocks=..." option in bytes as mm/shmem.c reads
 * it (0: unlimited).  ram: bytes of RAM for "size=N%", 0 if unknown.
 * -1: unparseable; -2: relative to RAM and ram is 0. */
int policy_tmpfs_size(const char *opt, uint64_t ram, uint64_t page, uint64_t *bytes);
bool policy_tmpfs_size_option(const char *opt);
/* The refusals (bind sources, filesystem types, destinations), then the
 * changes (the read-only image or its writable layer in d, tmpfs caps,
 * read-only sysfs and cgroupfs). */
int policy_mounts_refuse(const struct policy *p, struct oci_spec *s,
			 struct policy_changes *ch, struct error *err);
void policy_mounts_apply(const struct policy *p, struct oci_spec *s, bool writable_root,
			 struct policy_changes *ch, struct policy_decision *d);

/*
 * spec/policy/policy_hooks.c: the hooks rule.  Under enforce, a hook runs
 * only if its whole command (the file its path opens to, located by
 * runtime/judge/, its argv and its env) matches Docker's own hook for
 * this container or an operator's hookRules entry; startContainer hooks,
 * looked up in the container's own root (the image), are refused.  Off and
 * audit: every hook runs, as runc runs them.
 */
struct hook_subject {
	enum hook_kind kind;
	size_t index;
	const struct oci_hook *hook;
	const char *real_path; /* the binary, located; NULL: not opened */
	const char *id;	       /* this container's id */
	const char *bundle;    /* its bundle, located; NULL: unknown */
	const char *exec_root; /* Docker's -exec-root argument, located */
};
int policy_hook_judge(const struct policy *p, const struct hook_subject *h, struct error *err);
/* The path of Docker's hook's "-exec-root=" argument, for runtime/ to
 * locate; NULL when the hook is not shaped as Docker's. */
const char *policy_docker_hook_exec_root(const struct oci_hook *hook);

/*
 * The strict agent seccomp profile, as filters stacked in this order:
 * 0, spec/policy/agent-seccomp.json: the allowlist;
 * 1, spec/policy/agent-seccomp-ioctl.json: ioctl requests denied by value (a
 *    conditional deny cannot live beside the allowlist's unconditional
 *    ioctl allow in one libseccomp filter: the allow wins).
 */
#define POLICY_AGENT_FILTERS 2
int policy_agent_seccomp(unsigned i, struct oci_seccomp *out, struct error *err);
/* What agent filter i is made from: its JSON text, and a name for the
 * variant this build makes of it (a cache key from these needs no parse). */
void policy_agent_seccomp_source(unsigned i, const char **text, const char **variant);

/* policy_kernel.c: the process user (an identity of its own, or not host
 * root), TCP socket memory, devpts max=, linux.resources.unified keys that
 * would undo the limits.  Called by policy_apply() after the limits are
 * set; sets d->identity. */
void policy_apply_kernel(const struct policy *p, struct oci_spec *spec,
			 struct policy_changes *changes, struct policy_decision *d);
/* `update` under enforce: the new values no looser than the floor (only
 * what the update sets is judged; swap without the limit is refused). */
int policy_cap_update(const struct policy *p, struct oci_resources *r,
		      struct policy_changes *changes, struct error *err);
/* A linux.resources.unified key the floor lets through. */
bool policy_unified_key_allowed(const char *key);

#endif
