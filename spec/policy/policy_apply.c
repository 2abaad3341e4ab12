/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_apply(): the incoming spec made no looser than the policy.  One
 * function per rule; each change is recorded as (rule, field, from, to).
 * Where a request cannot be made safe by changing it (a host bind mount
 * outside the allowed prefixes), the container is refused instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "policy.h"

struct apply {
	const struct policy *p;
	struct oci_spec *s;
	struct policy_changes *ch;
	struct error *err;
	bool network_allowed;
	bool writable_root;
};

static void change(struct apply *a, const char *rule, const char *field,
		   const char *from, const char *to)
{
	policy_change_add(a->ch, rule, field, from, to);
}

static void change_num(struct apply *a, const char *rule, const char *field,
		       const char *from, unsigned long long v)
{
	char to[32];

	snprintf(to, sizeof(to), "%llu", v);
	change(a, rule, field, from, to);
}

/* ---- small helpers over spec arrays ---------------------------------------- */

static char *fmt_u64(const struct opt_u64 *o)
{
	return o->set ? xasprintf("%llu", (unsigned long long)o->v) : NULL;
}

static char *fmt_i64(const struct opt_i64 *o)
{
	return o->set ? xasprintf("%lld", (long long)o->v) : NULL;
}

/* ---- relaxations asked for by annotations ---------------------------------- */

static int rule_annotations(struct apply *a)
{
	const struct str_map *m = &a->s->annotations;

	for (size_t i = 0; i < m->len; i++) {
		const char *k = m->keys[i], *v = m->values[i];
		unsigned need;

		if (strncmp(k, "agentsbx.", 9) || !strcmp(k, "agentsbx.egress.allow"))
			continue; /* the last: a narrowing, judged by policy_rule_egress */
		if (!strcmp(k, "agentsbx.network") && !strcmp(v, "allow"))
			need = RELAX_NETWORK;
		else if (!strcmp(k, "agentsbx.rootfs") && !strcmp(v, "writable"))
			need = RELAX_WRITABLE_ROOT;
		else
			return error_set(a->err, "policy: annotation %s=\"%s\": unknown relaxation",
					 k, v);
		if (!(a->p->relaxable & need))
			return error_set(a->err, "policy: annotation %s=%s asks for a relaxation the policy (%s) does not allow",
					 k, v, a->p->source);
		if (need == RELAX_NETWORK)
			a->network_allowed = true;
		else
			a->writable_root = true;
		change(a, "relaxation", k, NULL, v);
	}
	return 0;
}

/* ---- namespaces and network ------------------------------------------------ */

static void add_namespace(struct apply *a, enum ns_type t)
{
	struct oci_linux *l = &a->s->linux;

	l->namespaces = xrealloc(l->namespaces, (l->n_namespaces + 1) * sizeof(*l->namespaces));
	l->namespaces[l->n_namespaces].type = t;
	l->namespaces[l->n_namespaces].path = NULL;
	l->n_namespaces++;
	a->s->has_linux = true;
	change(a, "namespaces", "linux.namespaces", "(none: the host's)",
	       ns_type_name(t));
}

static const char *const host_ns_asked[NS_TYPE_MAX] = {
	[NS_NETWORK] = "docker --network host, Kubernetes hostNetwork",
	[NS_PID] = "docker --pid host, Kubernetes hostPID",
	[NS_IPC] = "docker --ipc host, Kubernetes hostIPC",
	[NS_UTS] = "docker --uts host, Kubernetes hostNetwork",
};

int policy_refuse_host_ns(const struct policy *p, enum ns_type t, const char *path,
			  struct error *err)
{
	const char *name = ns_type_name(t);
	_cleanup_free_ char *how =
		path ? xasprintf("linux.namespaces[%s].path %s is the host's %s namespace (the runtime's own or PID 1's)",
				 name, path, name) :
		       xasprintf("no linux.namespaces entry of type %s: the container would run in the host's",
				 name);

	return error_set(err, "policy: host %s%s%s%s: %s: refused by the policy (%s); no policy field allows it",
			 name, host_ns_asked[t] ? " (" : "", host_ns_asked[t] ? host_ns_asked[t] : "",
			 host_ns_asked[t] ? ")" : "", how, p->source);
}

/* The host's network, pid, ipc and uts namespaces are judged by what
 * they are: an entry left out is the host's (docker --pid host, a
 * Kubernetes hostPID pod).  Under onRequestAboveFloor refuse it was
 * refused before (policy_requests.c, one message for every request);
 * this is the backstop.  With clamp the container is tightened: a new
 * namespace.  A missing mount or cgroup namespace is added in every
 * case: engines leave those out without meaning the host's (Docker on
 * cgroup v1 gives no cgroup namespace by default). */
static int rule_namespaces(struct apply *a)
{
	static const enum ns_type refused[] = { NS_NETWORK, NS_PID, NS_IPC, NS_UTS };
	static const enum ns_type added[] = { NS_MOUNT, NS_CGROUP };

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (spec_find_namespace(a->s, refused[i]) || WEAK_NS_ABSENT)
			continue;
		if (a->p->on_request != ON_REQUEST_CLAMP)
			return policy_refuse_host_ns(a->p, refused[i], NULL, a->err);
		add_namespace(a, refused[i]);
	}
	for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++)
		if (!spec_find_namespace(a->s, added[i]))
			add_namespace(a, added[i]);
	return 0;
}

/*
 * The network model (docs/policy.md, the policy table's "network" row):
 *  - a namespace the runtime makes (no path): only lo; whatever a hook
 *    plumbs into it is removed (Docker's bridge);
 *  - a namespace the engine made and the spec joins (a path: a pod's CNI
 *    namespace, another container's): kept, with its addresses, so that
 *    probes, port-forward and Services reach the pod; a table in it drops
 *    every new outbound connection (runtime/policy/netfilter.c), so the
 *    code inside reaches nothing;
 *  - networkAllowed: egress open but for denyCidrs, allowCidrs winning.
 * Whose namespace a path may be (not the host's; another container's or
 * an empty one) is judged on the opened file (runtime/policy/enforce.c).
 */
static void rule_network(struct apply *a, struct policy_decision *d)
{
	const struct oci_namespace *net = spec_find_namespace(a->s, NS_NETWORK);

	if (a->network_allowed) {
		_cleanup_free_ char *deny = policy_strv_join(&a->p->deny_cidrs);
		_cleanup_free_ char *allow = policy_strv_join(&a->p->allow_cidrs);
		_cleanup_free_ char *to = xasprintf("%s dropped%s%s%s", deny[0] ? deny : "nothing",
						    allow[0] ? " (but " : "", allow,
						    allow[0] ? " allowed)" : "");
		change(a, "network", "egress", "(open)", to);
		d->egress_filter = a->p->deny_cidrs.len > 0;
		return;
	}
	if (!net)
		return; /* the host's: refused above (but in the ns-absent build) */
	if (net->path && !WEAK_POD_EGRESS) {
		change(a, "network", "egress", "(open)",
		       "new outbound connections dropped (the joined namespace is kept: inbound connections and their replies pass)");
		d->egress_filter = true;
		d->inbound_only = true;
		return;
	}
	d->only_loopback = !net->path;
}

/* ---- filesystem: rootfs, tmpfs and mount rules in policy_mounts.c -------------- */

static void rule_paths(struct apply *a)
{
	struct oci_linux *l = &a->s->linux;

	for (size_t i = 0; i < a->p->masked_paths.len; i++)
		if (!policy_strv_has(&l->masked_paths, a->p->masked_paths.items[i])) {
			policy_strv_add(&l->masked_paths, a->p->masked_paths.items[i]);
			change(a, "paths", "linux.maskedPaths", NULL, a->p->masked_paths.items[i]);
		}
	for (size_t i = 0; i < a->p->readonly_paths.len; i++)
		if (!policy_strv_has(&l->readonly_paths, a->p->readonly_paths.items[i])) {
			policy_strv_add(&l->readonly_paths, a->p->readonly_paths.items[i]);
			change(a, "paths", "linux.readonlyPaths", NULL, a->p->readonly_paths.items[i]);
		}
}

/* ---- privileges ---------------------------------------------------------------- */

static void cut_caps(struct apply *a, struct str_array *set, const char *name,
		     bool always_empty)
{
	struct str_array keep = { 0 };
	_cleanup_free_ char *before = policy_strv_join(set);
	_cleanup_free_ char *field = xasprintf("process.capabilities.%s", name);

	for (size_t i = 0; i < set->len; i++)
		if (!always_empty && policy_strv_has(&a->p->capabilities, set->items[i]))
			policy_strv_add(&keep, set->items[i]);
	if (keep.len == set->len) {
		for (size_t i = 0; i < keep.len; i++)
			free(keep.items[i]);
		free(keep.items);
		return;
	}
	{
		_cleanup_free_ char *after = policy_strv_join(&keep);
		change(a, "capabilities", field, before, after[0] ? after : "(none)");
	}
	for (size_t i = 0; i < set->len; i++)
		free(set->items[i]);
	free(set->items);
	*set = keep;
	if (!set->items)
		set->items = xcalloc(1, sizeof(char *));
}

static void rule_capabilities(struct apply *a)
{
	struct oci_capabilities *c = &a->s->process.capabilities;

	a->s->process.has_capabilities = true;
	cut_caps(a, &c->bounding, "bounding", false);
	cut_caps(a, &c->effective, "effective", false);
	cut_caps(a, &c->permitted, "permitted", false);
	cut_caps(a, &c->inheritable, "inheritable", true);
	cut_caps(a, &c->ambient, "ambient", true);
	if (a->p->no_new_privileges && !a->s->process.no_new_privileges) {
		a->s->process.no_new_privileges = true;
		change(a, "privileges", "process.noNewPrivileges", "false", "true");
	}
}

static void rule_seccomp(struct apply *a)
{
	if (a->p->strict_seccomp)
		change(a, "seccomp", "linux.seccomp",
		       a->s->linux.seccomp.present ? "the spec's profile" : "(none)",
		       "the spec's profile + the strict agent profile, stacked");
}

/* Only the default device nodes; the device cgroup to match. */
static const struct {
	char type;
	int64_t major, minor; /* -1: any */
} default_allow[] = {
	{ 'c', 1, 3 },
	{ 'c', 1, 5 },
	{ 'c', 1, 7 },
	{ 'c', 1, 8 },
	{ 'c', 1, 9 },
	{ 'c', 5, 0 },
	{ 'c', 5, 2 },
	{ 'c', 136, -1 },
};

bool policy_device_is_default(const struct oci_device *d)
{
	return d->type == 'c' && ((d->major == 1 && (d->minor == 3 || d->minor == 5 ||
						     d->minor == 7 || d->minor == 8 ||
						     d->minor == 9)) ||
				  (d->major == 5 && (d->minor == 0 || d->minor == 2)));
}

static void rule_devices(struct apply *a)
{
	struct oci_linux *l = &a->s->linux;
	struct oci_resources *r = &l->resources;
	size_t kept = 0;

	if (!a->p->default_devices_only)
		return;
	for (size_t i = 0; i < l->n_devices; i++) {
		if (policy_device_is_default(&l->devices[i])) {
			l->devices[kept++] = l->devices[i];
			continue;
		}
		change(a, "devices", "linux.devices", l->devices[i].path, "(removed)");
		free(l->devices[i].path);
	}
	l->n_devices = kept;
	for (size_t i = 0; i < r->n_devices; i++)
		free(r->devices[i].access);
	free(r->devices);
	r->n_devices = 1 + sizeof(default_allow) / sizeof(default_allow[0]);
	r->devices = xcalloc(r->n_devices, sizeof(*r->devices));
	r->devices[0] = (struct oci_device_cgroup){ .allow = false, .type = 'a', .access = xstrdup("rwm") };
	for (size_t i = 0; i < sizeof(default_allow) / sizeof(default_allow[0]); i++) {
		struct oci_device_cgroup *d = &r->devices[i + 1];
		d->allow = true;
		d->type = default_allow[i].type;
		d->major = (struct opt_i64){ true, default_allow[i].major };
		d->minor = (struct opt_i64){ default_allow[i].minor >= 0, default_allow[i].minor };
		d->access = xstrdup("rwm");
	}
	r->present = true;
	change(a, "devices", "linux.resources.devices", NULL,
	       "deny all; allow null, zero, full, random, urandom, tty, ptmx, pts");
}

/* ---- resources ---------------------------------------------------------------------- */

static void cap_i64(struct apply *a, struct opt_i64 *o, int64_t max, const char *field,
		    bool unlimited_le_zero)
{
	_cleanup_free_ char *before = fmt_i64(o);
	bool unlimited = !o->set || (unlimited_le_zero ? o->v <= 0 : o->v < 0);

	if (!unlimited && o->v <= max)
		return;
	o->set = true;
	o->v = max;
	change_num(a, "limits", field, before, (unsigned long long)max);
}

static void rule_limits(struct apply *a)
{
	struct oci_resources *r = &a->s->linux.resources;
	const struct policy *p = a->p;
	_cleanup_free_ char *swap_before = NULL;

	r->present = true;
	r->has_memory = true;
	/* 0 as -1: the cgroup code writes no limit for either (found by the
	 * floor's oracle: memory.limit 0 left the memory cgroup unlimited) */
	cap_i64(a, &r->memory.limit, (int64_t)p->memory, "linux.resources.memory.limit", true);
	/* swap is memory+swap: equal to the limit means no swap at all. */
	if (!r->memory.swap.set || r->memory.swap.v != r->memory.limit.v) {
		swap_before = fmt_i64(&r->memory.swap);
		r->memory.swap = (struct opt_i64){ true, r->memory.limit.v };
		change_num(a, "limits", "linux.resources.memory.swap", swap_before, (unsigned long long)r->memory.limit.v);
	}
	cap_i64(a, &r->pids_limit, p->pids, "linux.resources.pids.limit", true);
	r->has_cpu = true;
	if (!r->cpu.period.set || r->cpu.period.v != p->cpu_period) {
		_cleanup_free_ char *before = fmt_u64(&r->cpu.period);
		/* Keep the spec's share of a cpu when it is below the cap. */
		if (r->cpu.quota.set && r->cpu.quota.v > 0 && r->cpu.period.set &&
		    r->cpu.period.v > 0)
			r->cpu.quota.v = (int64_t)((unsigned __int128)r->cpu.quota.v *
						   p->cpu_period / r->cpu.period.v);
		r->cpu.period = (struct opt_u64){ true, p->cpu_period };
		change_num(a, "limits", "linux.resources.cpu.period", before, (unsigned long long)p->cpu_period);
	}
	cap_i64(a, &r->cpu.quota, (int64_t)p->cpu_quota, "linux.resources.cpu.quota", true);
}

static void cap_rlimit(struct apply *a, int resource, const char *name, uint64_t max)
{
	struct oci_process *pr = &a->s->process;
	char before[64];

	for (size_t i = 0; i < pr->n_rlimits; i++) {
		struct oci_rlimit *r = &pr->rlimits[i];
		if (r->resource != resource)
			continue;
		if (r->soft <= max && r->hard <= max)
			return;
		snprintf(before, sizeof(before), "%llu/%llu", (unsigned long long)r->soft,
			 (unsigned long long)r->hard);
		r->soft = r->soft < max ? r->soft : max;
		r->hard = max;
		change_num(a, "limits", name, before, (unsigned long long)max);
		return;
	}
	pr->rlimits = xrealloc(pr->rlimits, (pr->n_rlimits + 1) * sizeof(*pr->rlimits));
	pr->rlimits[pr->n_rlimits++] = (struct oci_rlimit){
		.type = xstrdup(name),
		.resource = resource,
		.soft = max,
		.hard = max,
	};
	change_num(a, "limits", name, NULL, (unsigned long long)max);
}

static void rule_rlimits(struct apply *a)
{
	if (a->p->rlimit_cpu) /* 0: no RLIMIT_CPU in the floor */
		cap_rlimit(a, RLIMIT_CPU, "RLIMIT_CPU", a->p->rlimit_cpu);
	cap_rlimit(a, RLIMIT_FSIZE, "RLIMIT_FSIZE", a->p->rlimit_fsize);
	cap_rlimit(a, RLIMIT_NOFILE, "RLIMIT_NOFILE", a->p->rlimit_nofile);
}

/* ---- the whole ------------------------------------------------------------------------ */

int policy_apply(const struct policy *p, struct oci_spec *spec,
		 struct policy_changes *changes, struct policy_decision *d,
		 struct error *err)
{
	struct apply a = { .p = p, .s = spec, .ch = changes, .err = err, .network_allowed = p->network_allowed };

	memset(d, 0, sizeof(*d));
	if (p->mode == POLICY_OFF)
		return 0;
	if (!spec->has_process)
		return 0; /* nothing runs; start will refuse */
	/* The host's namespaces first: a hostIPC pod's bind of the host's
	 * /dev/shm is refused as what it is, host ipc. */
	if (rule_annotations(&a) < 0 || rule_namespaces(&a) < 0 ||
	    policy_mounts_refuse(p, spec, changes, err) < 0)
		return -1;
	if (policy_rule_scheduling(p, spec, err) < 0)
		return -1;
	rule_network(&a, d);
	if (policy_rule_egress(p, spec, changes, d, err) < 0)
		return -1;
	policy_mounts_apply(p, spec, a.writable_root, changes, d);
	rule_paths(&a);
	rule_capabilities(&a);
	rule_seccomp(&a);
	rule_devices(&a);
	rule_limits(&a);
	rule_rlimits(&a);
	policy_apply_kernel(p, spec, changes, d); /* policy_kernel.c */
	d->refuse_host_netns = true;
	d->stack_agent_seccomp = p->strict_seccomp;
	d->check_bind_sources = true;
	d->refuse_writable_dir_binds = !p->writable_binds;
	return 0;
}

void policy_decision_free(struct policy_decision *d)
{
	spec_str_array_free(&d->egress_allow);
}
