/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy in the lifecycle: loaded and applied to the spec before
 * anything is created (create and exec), every change logged; in audit
 * mode the changes are computed on a copy and only logged.  Then, once the
 * rootfs and the joined namespaces are open, those kernel objects are
 * judged (policy_judge_objects): the host's namespaces, a host root.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../hooks/hooks.h"
#include "weak.h"
#include "../cgroup/cgroup.h"
#include "../internal.h"
#include "../judge/judge.h"
#include "audit_log.h"

static void log_changes(const struct policy_changes *ch, bool audit)
{
	for (size_t i = 0; i < ch->len; i++) {
		const struct policy_change *c = &ch->items[i];
		log_msg(audit ? LOG_LVL_WARN : LOG_LVL_INFO, "policy%s: %s: %s: %s -> %s",
			audit ? " (audit, not applied)" : "", c->rule, c->field, c->from, c->to);
	}
}

/* A refusal is a decision too: one line, the error as its "from". */
void policy_audit_refusal(const struct ctx_decided *d, const struct error *err)
{
	struct policy_changes ch = { 0 };
	struct audit_subject subj = { d->id, d->is_exec ? "exec" : "create", &d->spec };

	policy_change_add(&ch, "refusal", "config.json", err->msg, "(refused: nothing created)");
	audit_log_changes(&d->policy, &subj, &ch, "refused", d->policy.mode == POLICY_ENFORCE);
	policy_changes_free(&ch);
}

/* linux.namespaces[network].path is the host's (docker --network host),
 * judged on the opened namespace.  Not there or not a namespace: false,
 * and the later steps say why. */
static bool host_netns_asked(const struct ctx_handles *h, const struct oci_spec *s)
{
	const struct oci_namespace *ns = spec_find_namespace(s, NS_NETWORK);
	_cleanup_close_ int fd = -1, proc = -1;
	struct error ignored;
	bool host = false;

	if (!ns || !ns->path)
		return false;
	proc = h->host_proc_fd >= 0 ? fcntl(h->host_proc_fd, F_DUPFD_CLOEXEC, 0) :
				      open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0 || ns_open_file(ns->path, NS_NETWORK, &fd, &ignored) < 0 ||
	    ns_fd_is_host(fd, proc, NS_NETWORK, &host, &ignored) < 0)
		return false;
	return host;
}

/*
 * What the spec explicitly asks for above the floor (policy_requests.c):
 * under enforce with onRequestAboveFloor refuse, one error naming it all;
 * with clamp, tightened below like any default.  Audit: logged as what
 * enforce would refuse.  Every one goes to the audit log.
 */
static int check_requests(const struct ctx_decided *d, const struct ctx_handles *h,
			  const struct oci_spec *s, struct error *err)
{
	struct policy_requests r;
	struct audit_subject subj = { d->id, d->is_exec ? "exec" : "create", s };
	bool audit = d->policy.mode == POLICY_AUDIT;
	bool refuse = d->policy.on_request == ON_REQUEST_REFUSE;
	int rc = 0;

	policy_requests(&d->policy, s, d->id, host_netns_asked(h, s), &r);
	if (!r.len)
		return 0;
	if (!refuse) {
		struct policy_requests never;

		policy_requests_take_unclampable(&r, &never);
		if (never.len) { /* refused as requests, clamp or not */
			policy_requests_free(&r);
			r = never;
			refuse = true;
		}
	}
	audit_log_requests(&d->policy, &subj, &r, refuse ? "refused" : "clamped", !audit);
	if (refuse) {
		rc = policy_requests_refuse(&d->policy, &r, err);
		if (audit) {
			log_warn("policy (audit, not applied): would refuse: %s", err->msg);
			rc = 0;
		}
	} else {
		for (size_t i = 0; i < r.len; i++)
			log_warn("policy%s: asked for %s: clamped to the floor (onRequestAboveFloor: clamp)",
				 audit ? " (audit, not applied)" : "", r.items[i].what);
	}
	policy_requests_free(&r);
	return rc;
}

/* Audit: the same transformation on a fresh parse, logged, then dropped. */
static int audit_spec(const struct ctx_decided *d, const struct ctx_handles *h,
		      struct error *err)
{
	struct oci_spec copy;
	struct policy_changes ch = { 0 };
	struct policy_decision decision = { 0 };
	int r;

	if (!d->config_json)
		return 0; /* exec: the container's own create was audited */
	if (spec_parse(d->config_json, d->config_len, &copy, err) < 0)
		return -1;
	if (d->bundle)
		policy_resolve_bind_sources(&copy, d->bundle);
	if (check_requests(d, h, &copy, err) < 0) {
		spec_free(&copy);
		return -1;
	}
	r = policy_apply(&d->policy, &copy, &ch, &decision, err);
	policy_decision_free(&decision);
	if (r == 0) {
		log_changes(&ch, true);
		audit_log_changes(&d->policy, &(struct audit_subject){ d->id, "create", &copy },
				  &ch, "applied", false);
	} else {
		log_warn("policy (audit, not applied): would refuse: %s", err->msg);
		policy_audit_refusal(d, err);
	}
	hooks_guard_container(d->id, d->bundle);
	if (hooks_judge_all(&d->policy, &copy, false, err) < 0) {
		log_warn("policy (audit, not applied): would refuse: %s", err->msg);
		policy_audit_refusal(d, err);
	}
	policy_changes_free(&ch);
	spec_free(&copy);
	return 0;
}

static int prepare_agent_filter(struct ctx_decided *d, unsigned i,
				const char *cache, struct error *err)
{
	uint8_t key[SECCOMP_KEY_SIZE];
	const char *text, *variant;
	struct oci_seccomp sc;
	int r;

	/* Keyed by the text the binary carries: a hit (every create after the
	 * first) parses nothing, which cost 0.3-0.6 ms of each create. */
	policy_agent_seccomp_source(i, &text, &variant);
	seccomp_text_key(variant, text, key);
	if (seccomp_prepare_builtin_cached(key, cache, &d->agent_seccomp[i]) == 0)
		return 0;
	if (policy_agent_seccomp(i, &sc, err) < 0)
		return error_prefix(err, "policy: the agent seccomp profile");
	r = seccomp_prepare_builtin(&sc, key, cache, &d->agent_seccomp[i], err);
	/* The parsed profile is only needed to compile (or find) the BPF. */
	{
		struct oci_spec holder = { 0 };
		holder.linux.seccomp = sc;
		spec_free(&holder);
	}
	if (r < 0)
		return error_prefix(err, "policy: the agent seccomp profile");
	return 0;
}

static int prepare_agent_seccomp(struct ctx_decided *d, struct error *err)
{
	for (unsigned i = 0; i < POLICY_AGENT_FILTERS; i++)
		if (prepare_agent_filter(d, i, d->seccomp_cache, err) < 0)
			return -1;
	return 0;
}

/* ---- kernel objects, judged once they are open ------------------------------ */

/* Never joined under enforce, with no policy field to allow it: the host's
 * pid (its processes), ipc (its shared memory), uts (its hostname), mount
 * (pivot_root would replace its root), cgroup, user and time namespaces. */
static const bool host_ns_refused[NS_TYPE_MAX] = {
	[NS_PID] = true,
	[NS_IPC] = true,
	[NS_UTS] = true,
	[NS_MOUNT] = true,
	[NS_CGROUP] = true,
	[NS_USER] = true,
	[NS_TIME] = true,
};

/* A joined namespace must be a pod's: another container's under this
 * --root (the pause's, for the containers of a pod; docker --network
 * container:X, --ipc container:X), or one no process is in yet (a pod's,
 * made by CNI for its pause).  Not some daemon's namespace with services
 * on its lo, nor the namespace of a container under another --root (a
 * tenant of another engine: its processes, its shared memory, its
 * hostname — found by the floor's oracle for pid, ipc and uts). */
static int judge_shared_ns(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct oci_namespace *ns, struct ns_owner_hint *hint,
			   struct error *err)
{
	const char *name = ns_type_name(ns->type);
	bool found;
	pid_t user;

	if (WEAK_NS_HOST)
		return 0;
	if (ns_of_container(d, h, ns->type, h->ns_fd[ns->type], hint, &found, err) < 0)
		return -1;
	if (found)
		return 0;
	if (ns_in_use(h, ns->type, h->ns_fd[ns->type], &user, err) < 0)
		return -1;
	if (user)
		return error_set(err, "policy: linux.namespaces[%s].path %s is neither the %s namespace of a running container under --root %s nor an empty one (process %d is in it): refused by the policy (%s); no policy field allows it",
				 name, ns->path, name, d->g->root, (int)user, d->policy.source);
	return 0;
}

static int judge_namespace(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct oci_namespace *ns, struct ns_owner_hint *hint,
			   struct error *err)
{
	bool found;

	/* docker --network host passes the host's namespace as a path: a
	 * container there reaches the host's loopback services, and egress
	 * rules would be installed on the host itself.  (Which network a
	 * container may have is the network rule's, in policy_apply.) */
	if (ns->type == NS_NETWORK) {
		if (d->decision.refuse_host_netns && d->ns_host[NS_NETWORK])
			return policy_refuse_host_ns(&d->policy, NS_NETWORK, ns->path, err);
		return judge_shared_ns(d, h, ns, hint, err);
	}
	if (WEAK_NS_HOST)
		return 0;
	if (host_ns_refused[ns->type] && d->ns_host[ns->type])
		return policy_refuse_host_ns(&d->policy, ns->type, ns->path, err);
	if (ns->type != NS_MOUNT)
		return judge_shared_ns(d, h, ns, hint, err);
	/* pivot_root in a joined mount namespace replaces the root of every
	 * process in it: only another container's (under this --root). */
	if (ns_of_container(d, h, NS_MOUNT, h->ns_fd[NS_MOUNT], hint, &found, err) < 0)
		return -1;
	if (!found)
		return error_set(err, "policy: linux.namespaces[mount].path %s is not the mount namespace of a running container under --root %s: refused by the policy (%s); no policy field allows it",
				 ns->path, d->g->root, d->policy.source);
	return 0;
}

static bool same_dir(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* anc is fd's directory or one of its ancestors (walked by "..", up to
 * the runtime's own root). */
static int is_ancestor(const struct stat *anc, int fd, bool *yes, struct error *err)
{
	_cleanup_close_ int cur = openat(fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st, up;

	*yes = false;
	if (cur < 0 || fstat(cur, &st) < 0)
		return error_sys(err, "stat a directory to compare with the rootfs");
	for (int depth = 0; depth < 4096; depth++) {
		int next;

		if (same_dir(&st, anc)) {
			*yes = true;
			return 0;
		}
		next = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (next < 0 || fstat(next, &up) < 0) {
			if (next >= 0)
				close(next);
			return error_sys(err, "stat a parent directory to compare with the rootfs");
		}
		close(cur);
		cur = next;
		if (same_dir(&up, &st))
			return 0; /* "/": no higher */
		st = up;
	}
	return 0;
}

/* root.path is judged like a bind source: an image the engine unpacked
 * for this container (inside its bundle, a podman layer of this
 * container), or a directory under the operator's rootfsPrefixes; any
 * other host directory (a home, /etc) is refused.  It may not be the
 * host's root (ours or PID 1's), nor contain the runtime's state (--root)
 * or the bundle: the container would see (and, with a writable root,
 * change) them.  The bundle itself may be the rootfs (runtime-tools'
 * "root": {"path": "."}): the container then sees its own bundle. */
static int judge_rootfs(const struct ctx_decided *d, const struct ctx_handles *h,
			struct error *err)
{
	struct judged bundle;
	struct stat rootfs, host_root;
	bool above, allowed;

	if (WEAK_ROOTFS_HOST)
		return 0;
	if (fstat(h->rootfs_fd, &rootfs) < 0)
		return error_sys(err, "stat rootfs %s", d->rootfs);
	if (stat("/", &host_root) < 0)
		return error_sys(err, "stat /");
	/* PID 1's root too, for a runtime that itself runs in a chroot. */
	if (same_dir(&rootfs, &host_root) ||
	    (fstatat(h->host_proc_fd, "1/root", &host_root, 0) == 0 &&
	     same_dir(&rootfs, &host_root)))
		return error_set(err, "policy: root.path %s is the host's root directory: refused by the policy (%s); no policy field allows it",
				 d->rootfs, d->policy.source);
	if (is_ancestor(&rootfs, h->root_fd, &above, err) < 0)
		return -1;
	if (above)
		return error_set(err, "policy: root.path %s contains the runtime's state directory (--root %s): refused by the policy (%s); no policy field allows it",
				 d->rootfs, d->g->root, d->policy.source);
	if (judge_open("the bundle", d->bundle, JUDGE_SYMLINKS, &bundle, err) < 0)
		return -1;
	if (same_dir(&rootfs, &bundle.st))
		above = false;
	else if (is_ancestor(&rootfs, bundle.fd, &above, err) < 0) {
		judged_close(&bundle);
		return -1;
	}
	allowed = WEAK_ROOTFS_ANYWHERE ||
		  policy_rootfs_allowed(&d->policy, bundle.where, d->rootfs);
	judged_close(&bundle);
	if (above)
		return error_set(err, "policy: root.path %s contains the bundle %s: refused by the policy (%s); no policy field allows it",
				 d->rootfs, d->bundle, d->policy.source);
	if (!allowed)
		return error_set(err, "policy: root.path %s is a host directory, not an image the engine unpacked for this container (inside its bundle %s, or one layer of its engine's graph driver): refused by the policy (%s); a directory under the policy's rootfsPrefixes would be allowed",
				 d->rootfs, d->bundle, d->policy.source);
	return 0;
}

/* linux.seccomp.listenerPath: the runtime connects to it as root and
 * hands it the container's seccomp fd, so under enforce it must be a unix
 * socket under the operator's seccompListeners, located by the judge;
 * the socket judged is the one connected to (create.c, notify.c). */
static int judge_seccomp_listener(const struct ctx_decided *d, struct ctx_handles *h,
				  struct error *err)
{
	const char *path = d->spec.linux.seccomp.listener_path;
	struct judged o;

	if (!path)
		return 0;
	if (judge_open("linux.seccomp.listenerPath", path, JUDGE_SYMLINKS, &o, err) < 0)
		return -1;
	if (judge_require_type("linux.seccomp.listenerPath", &o, JUDGE_TYPE_SOCK, NULL, err) < 0)
		goto fail;
	if (!WEAK_SECCOMP_LISTENER &&
	    !policy_bind_allowed(&d->policy.seccomp_listeners, o.where)) {
		error_set(err, "policy: linux.seccomp.listenerPath %s (%s) is not a seccomp agent the operator named: the runtime would connect to it as root and hand it the container's seccomp fd; refused by the policy (%s): an entry in the policy's seccompListeners would allow it",
			  path, o.where, d->policy.source);
		goto fail;
	}
	h->listener_fd = o.fd;
	return 0;
fail:
	judged_close(&o);
	return -1;
}

static int judge_objects(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err)
{
	struct ns_owner_hint hint = { { 0 } };

	for (size_t i = 0; i < d->spec.linux.n_namespaces; i++) {
		const struct oci_namespace *ns = &d->spec.linux.namespaces[i];
		if (ns->path && judge_namespace(d, h, ns, &hint, err) < 0)
			return -1;
	}
	return judge_rootfs(d, h, err) < 0 ? -1 : judge_seccomp_listener(d, h, err);
}

int policy_judge_objects(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err)
{
	struct error would;

	switch (d->policy.mode) {
	case POLICY_OFF:
		return 0;
	case POLICY_AUDIT:
		if (judge_objects(d, h, &would) < 0) {
			log_warn("policy (audit, not applied): would refuse: %s", would.msg);
			policy_audit_refusal(d, &would);
		}
		return 0;
	case POLICY_ENFORCE:
		break;
	}
	return judge_objects(d, h, err); /* a refusal: logged by create */
}

/*
 * A limit the host cannot hold, said rather than passed in silence: on a
 * cgroup v1 memory hierarchy TCP socket buffers are charged apart from
 * memory.limit_in_bytes, and memory.kmem.tcp.limit_in_bytes only puts the
 * sockets under pressure (each may still take an skb, up to 64 KiB on
 * loopback: measured 142 MiB held under a 32 MiB kernelTCP with 1,500
 * connections).  cgroup v2 counts them in memory.max.
 */
static void warn_unbounded_tcp_memory(const struct ctx_decided *d)
{
	struct policy_changes ch = { 0 };
	enum cgroup_mode mode;
	struct error ignored;

	if (!d->config_json || !d->spec.linux.resources.memory.limit.set ||
	    cgroup_detect_mode(&mode, &ignored) < 0 || mode == CGROUP_MODE_V2)
		return;
	policy_change_add(&ch, "limits", "linux.resources.memory.kernelTCP", "cgroup v1",
			  "not a bound: TCP socket memory is charged apart from limits.memory and only pressured at kernelTCP (a cgroup v2 host bounds it)");
	audit_log_changes(&d->policy, &(struct audit_subject){ d->id, "create", &d->spec }, &ch,
			  "warning", false);
	log_info("policy: cgroup v1: TCP socket memory of container %s is not bounded by limits.memory (only pressured at kernelTCP); a cgroup v2 host bounds it",
		 d->id);
	policy_changes_free(&ch);
}

int policy_enforce(struct ctx_decided *d, const struct ctx_handles *h, struct error *err)
{
	struct policy_changes ch = { 0 };

	if (policy_load(d->g->policy_path, &d->policy, err) < 0)
		return -1;
	d->policy_loaded = true;
	if (d->opts && d->opts->no_writable_layer)
		d->policy.writable_layer = 0;
	switch (d->policy.mode) {
	case POLICY_OFF:
		return 0;
	case POLICY_AUDIT:
		return audit_spec(d, h, err);
	case POLICY_ENFORCE:
		break;
	}
	/* Under enforce only, where a layer is built: the audit log's path,
	 * resolved as the caller: the container init
	 * writes there too (a writable layer the kernel would not build),
	 * as uid 0 of its own user namespace when rootless. */
	if (!d->policy.audit_log) {
		const char *log = audit_log_path(&d->policy);
		d->policy.audit_log_caller = xstrdup(log ? log : "");
	}
	if (d->bundle)
		policy_resolve_bind_sources(&d->spec, d->bundle);
	/* The front door's own workspace joins this container's bindPrefixes. */
	if (d->own_bind_prefix)
		policy_strv_add(&d->policy.bind_prefixes, d->own_bind_prefix);
	if (policy_add_engine_dirs(d, h, err) < 0 || check_requests(d, h, &d->spec, err) < 0)
		return -1;
	if (policy_apply(&d->policy, &d->spec, &ch, &d->decision, err) < 0) {
		policy_audit_refusal(d, err);
		return -1;
	}
	audit_log_changes(&d->policy, &(struct audit_subject){ d->id, d->is_exec ? "exec" : "create", &d->spec },
			  &ch, "applied", true);
	warn_unbounded_tcp_memory(d);
	/* create: every hook judged (and its file kept open) now. */
	hooks_guard_set(&d->policy);
	hooks_guard_container(d->id, d->bundle);
	if (d->config_json && hooks_pin(&d->spec, err) < 0) {
		policy_audit_refusal(d, err);
		return -1;
	}
	log_changes(&ch, false);
	policy_changes_free(&ch);
	/* What the policy made must still be a valid spec. */
	if (spec_validate(&d->spec, err) < 0)
		return error_prefix(err, "after the policy (%s)", d->policy.source);
	if (d->decision.stack_agent_seccomp)
		return prepare_agent_seccomp(d, err);
	return 0;
}

int policy_judge_cgroup(const struct ctx_decided *d, const struct ctx_record *r,
			struct error *err)
{
	_cleanup_free_ char *which = NULL;
	pid_t pid;

	if (!d->policy_loaded || d->policy.mode != POLICY_ENFORCE ||
	    r->cgroup_manager != CGROUP_MANAGER_FS || !r->cgroup_path)
		return 0;
	if (cgroup_ancestor_with_processes(r->cgroup_path, &which, &pid, err) < 0)
		return -1;
	if (which)
		return error_set(err, "policy: linux.cgroupsPath %s is inside cgroup %s, which holds processes itself (process %d: another container's or a host service's): the container would be charged to its limits; refused by the policy (%s); no policy field allows it",
				 r->cgroup_path, which, (int)pid, d->policy.source);
	return 0;
}
