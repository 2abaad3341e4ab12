/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Policy rules for what the container shares with the host kernel-wide:
 *  - the user: a process shares its host uid's counters (inotify
 *    instances, mqueue bytes, pipe pages, RLIMIT_NPROC) and files with
 *    every process of that uid, and its groups' files with theirs: under
 *    `identities` every container gets a uid and gid of its own and no
 *    supplementary group; else the policy's `uid` replaces host root (and
 *    root's group, whatever the uid);
 *  - TCP socket memory: on cgroup v1 it is charged to the memory cgroup
 *    only once memory.kmem.tcp.limit_in_bytes is set (linux.resources.
 *    memory.kernelTCP), on v2 it is part of memory.max;
 *  - ptys: each devpts mount gets `max=` (limits.ptys), so one container
 *    cannot take all of kernel.pty.max;
 *  - linux.resources.unified: written after the policy's limits, so on a
 *    cgroup v2 host "memory.max": "max" would undo the floor; keys of the
 *    limited controllers that are not only-tightening are removed.
 * Pure data, like policy_apply.c, which calls policy_apply_kernel().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "weak.h"
#include "policy.h"

/* ---- the process user ------------------------------------------------------ */

/* The host id that container id is, through a new user namespace's map
 * (ids of the map's kind), or itself without one.  A joined user
 * namespace: its map is not ours to read here; the id is assumed to be
 * the host's (the replacement is then merely unneeded).  Unmapped: the
 * spec check refuses it; -1. */
static int64_t host_id_of(const struct oci_spec *s, const struct oci_id_mapping *maps,
			  size_t n, uint32_t id)
{
	const struct oci_namespace *user = spec_find_namespace(s, NS_USER);

	if (!user || user->path)
		return id;
	for (size_t i = 0; i < n; i++)
		if (id >= maps[i].container_id && id - maps[i].container_id < maps[i].size)
			return (int64_t)maps[i].host_id + (id - maps[i].container_id);
	return -1;
}

static bool uid_is_host_root(const struct oci_spec *s, uint32_t uid)
{
	return host_id_of(s, s->linux.uid_mappings, s->linux.n_uid_mappings, uid) == 0;
}

static bool gid_is_host_root(const struct oci_spec *s, uint32_t gid)
{
	return host_id_of(s, s->linux.gid_mappings, s->linux.n_gid_mappings, gid) == 0;
}

static void set_id(uint32_t *id, uint32_t to, const char *field, struct policy_changes *ch)
{
	char from_s[32], to_s[32];

	if (*id == to)
		return;
	snprintf(from_s, sizeof(from_s), "%u", *id);
	snprintf(to_s, sizeof(to_s), "%u", to);
	policy_change_add(ch, "user", field, from_s, to_s);
	*id = to;
}

/* The supplementary groups that are host root's (all: every one) go. */
static void filter_groups(const struct oci_spec *s, struct oci_user *u, bool all,
			  struct policy_changes *ch)
{
	size_t kept = 0;

	for (size_t i = 0; i < u->n_additional_gids; i++) {
		char from[32];

		if (!all && !gid_is_host_root(s, u->additional_gids[i])) {
			u->additional_gids[kept++] = u->additional_gids[i];
			continue;
		}
		snprintf(from, sizeof(from), "%u", u->additional_gids[i]);
		policy_change_add(ch, "user", "process.user.additionalGids", from, "(removed)");
	}
	u->n_additional_gids = kept;
}

/*
 * identities: a process in the host's user namespace runs as the
 * container's own host uid and gid, whatever the spec names (0, 1000,
 * another tenant's), with no supplementary group: a group is an identity
 * too (a root:docker socket, a file of group 0).  The number is the
 * runtime's to take (runtime/policy/identity.c); until then the spec
 * holds nobody.
 */
static void rule_identity(struct oci_user *u, const struct oci_spec *s,
			  struct policy_changes *ch, struct policy_decision *d)
{
	char from[32];

	snprintf(from, sizeof(from), "%u:%u", u->uid, u->gid);
	policy_change_add(ch, "user", "process.user", from,
			  "a uid and gid of the container's own (identities)");
	u->uid = u->gid = POLICY_IDENTITY_PLACEHOLDER;
	filter_groups(s, u, true, ch);
	d->identity = true;
}

static void rule_user(const struct policy *p, struct oci_spec *s, struct policy_changes *ch,
		      struct policy_decision *d)
{
	struct oci_user *u = &s->process.user;
	bool shared = WEAK_SHARED_IDENTITY || WEAK_GROUP_ZERO;

	if (p->identity_count && !shared && !spec_find_namespace(s, NS_USER)) {
		rule_identity(u, s, ch, d);
		return;
	}
	if (!p->uid.set)
		return; /* "uid": null keeps root, its group too */
	if (WEAK_GROUP_ZERO && !uid_is_host_root(s, u->uid))
		return;
	if (uid_is_host_root(s, u->uid))
		set_id(&u->uid, (uint32_t)p->uid.v, "process.user.uid", ch);
	/* Root's group is root's whatever the uid: {"uid": 1000, "gid": 0}
	 * reads and writes what group 0 may. */
	if (gid_is_host_root(s, u->gid))
		set_id(&u->gid, (uint32_t)p->uid.v, "process.user.gid", ch);
	filter_groups(s, u, false, ch);
}

/* ---- TCP socket memory ------------------------------------------------------ */

static void rule_kernel_tcp(const struct policy *p, struct oci_spec *s,
			    struct policy_changes *ch)
{
	struct oci_memory *m = &s->linux.resources.memory;
	char from[32], to[32];

	(void)p;
	if (!m->limit.set || m->limit.v <= 0)
		return; /* rule_limits always sets it; nothing to follow otherwise */
	if (m->kernel_tcp.set && m->kernel_tcp.v > 0 && m->kernel_tcp.v <= m->limit.v)
		return;
	snprintf(from, sizeof(from), "%lld", (long long)m->kernel_tcp.v);
	snprintf(to, sizeof(to), "%lld", (long long)m->limit.v);
	policy_change_add(ch, "limits", "linux.resources.memory.kernelTCP",
			  m->kernel_tcp.set ? from : NULL, to);
	m->kernel_tcp = (struct opt_i64){ true, m->limit.v };
}

/* ---- ptys -------------------------------------------------------------------- */

/* The value of a devpts "max=" option: -1 if it is not one or not a number. */
static long long devpts_max_of(const char *opt)
{
	char *end;
	unsigned long long v;

	if (strncmp(opt, "max=", 4) || !opt[4] || opt[4] == '-')
		return -1;
	v = strtoull(opt + 4, &end, 10);
	return *end || v > (1ull << 31) ? -1 : (long long)v;
}

static void rule_ptys(const struct policy *p, struct oci_spec *s, struct policy_changes *ch)
{
	_cleanup_free_ char *want = xasprintf("max=%llu", (unsigned long long)p->ptys);

	for (size_t i = 0; i < s->n_mounts; i++) {
		struct oci_mount *mt = &s->mounts[i];
		struct str_array *o = &mt->options;
		_cleanup_free_ char *field = NULL;
		bool ok = false;
		size_t kept = 0;

		if (!mt->type || strcmp(mt->type, "devpts"))
			continue;
		/* Every max= goes (the kernel takes the last), ours is added. */
		for (size_t j = 0; j < o->len; j++) {
			long long v = devpts_max_of(o->items[j]);
			if (strncmp(o->items[j], "max=", 4)) {
				o->items[kept++] = o->items[j];
				continue;
			}
			ok = v > 0 && (unsigned long long)v <= p->ptys && j == o->len - 1;
			if (ok) {
				o->items[kept++] = o->items[j];
				continue;
			}
			free(o->items[j]);
		}
		o->len = kept;
		if (ok)
			continue;
		o->items = xrealloc(o->items, (o->len + 2) * sizeof(char *));
		o->items[o->len++] = xstrdup(want);
		o->items[o->len] = NULL;
		field = xasprintf("mounts[%s].options", mt->destination ? mt->destination : "?");
		policy_change_add(ch, "limits", field, NULL, want);
	}
}

/* ---- linux.resources.unified --------------------------------------------------- */

/* Keys of the controllers the policy limits (memory, pids, cpu) that can
 * only tighten what it sets, or only weigh the container against its
 * siblings: kept.  Every other key of those controllers is removed. */
static const char *const unified_tightening[] = {
	"memory.high",
	"memory.oom.group",
	"memory.swap.high",
	"cpu.weight",
	"cpu.weight.nice",
	"cpu.idle",
	NULL,
};

bool policy_unified_key_allowed(const char *key)
{
	static const char *const limited[] = { "memory.", "pids.", "cpu.", NULL };
	bool in_limited = false;

	for (size_t i = 0; limited[i]; i++)
		in_limited |= !strncmp(key, limited[i], strlen(limited[i]));
	if (!in_limited)
		return true;
	for (size_t i = 0; unified_tightening[i]; i++)
		if (!strcmp(key, unified_tightening[i]))
			return true;
	return false;
}

static void rule_unified(struct str_map *u, struct policy_changes *ch)
{
	size_t kept = 0;

	for (size_t i = 0; i < u->len; i++) {
		_cleanup_free_ char *field = NULL;

		if (policy_unified_key_allowed(u->keys[i])) {
			u->keys[kept] = u->keys[i];
			u->values[kept++] = u->values[i];
			continue;
		}
		field = xasprintf("linux.resources.unified[%s]", u->keys[i]);
		policy_change_add(ch, "limits", field, u->values[i], "(removed: the policy's limits hold)");
		free(u->keys[i]);
		free(u->values[i]);
	}
	u->len = kept;
}

/* ---- update -------------------------------------------------------------------------- */

/* A value asked above the cap: refused naming the cap (onRequestAboveFloor
 * refuse), else capped.  Unlimited (0, -1) is capped quietly, as at create. */
/* zero_unset: 0 is "not asked" (memory, cpu quota: an engine's update
 * sends every resource, those not asked for as 0 — docker update --cpus
 * 0.5 sends memory 0): left alone, never the cap in place of the limit
 * the container has.  Else (pids) 0, as -1, is unlimited: capped. */
static int cap_value(const struct policy *p, struct policy_changes *ch, struct opt_i64 *o,
		     int64_t max, const char *field, const char *cap_field, bool zero_unset,
		     struct error *err)
{
	char from[32], to[32];

	if (zero_unset && o->set && o->v == 0)
		o->set = false;
	if (!o->set || (o->v > 0 && o->v <= max))
		return 0;
	if (o->v > max && p->on_request == ON_REQUEST_REFUSE)
		return error_set(err, "policy: update asks for %s = %lld, above the cap limits.%s = %lld of the policy (%s): refused; raising \"limits\": {\"%s\"} in the policy allows it (with \"onRequestAboveFloor\": \"clamp\" the cap would be set instead)",
				 field, (long long)o->v, cap_field, (long long)max,
				 p->source, cap_field);
	snprintf(from, sizeof(from), "%lld", (long long)o->v);
	snprintf(to, sizeof(to), "%lld", (long long)max);
	policy_change_add(ch, "limits", field, from, to);
	o->v = max;
	return 0;
}

int policy_cap_update(const struct policy *p, struct oci_resources *r,
		      struct policy_changes *ch, struct error *err)
{
	struct oci_memory *m = &r->memory;
	struct oci_cpu *c = &r->cpu;

	if (p->mode != POLICY_ENFORCE)
		return 0;
	if (r->has_memory) {
		if (m->swap.set && m->swap.v == 0) /* not asked (see cap_value) */
			m->swap.set = false;
		if (m->limit.set && m->limit.v == 0)
			m->limit.set = false;
		if (m->swap.set && !m->limit.set)
			return error_set(err, "policy: update of linux.resources.memory.swap without memory.limit: not allowed under enforce (the policy keeps swap equal to the limit; limits.memory)");
		if (cap_value(p, ch, &m->limit, (int64_t)p->memory, "linux.resources.memory.limit",
			      "memory", true, err) < 0 ||
		    cap_value(p, ch, &m->kernel_tcp, (int64_t)p->memory,
			      "linux.resources.memory.kernelTCP", "memory", true, err) < 0)
			return -1;
		if (m->limit.set) {
			m->swap = (struct opt_i64){ true, m->limit.v };
			m->kernel_tcp = (struct opt_i64){ true, m->limit.v };
		}
	}
	if (cap_value(p, ch, &r->pids_limit, p->pids, "linux.resources.pids.limit", "pids", false,
		      err) < 0)
		return -1;
	if (r->has_cpu) {
		if (c->period.set && c->period.v != p->cpu_period) {
			/* The share of a cpu, kept below the cap, over the policy's period. */
			if (c->quota.set && c->quota.v > 0 && c->period.v > 0)
				c->quota.v = (int64_t)((unsigned __int128)c->quota.v *
						       p->cpu_period / c->period.v);
			policy_change_add(ch, "limits", "linux.resources.cpu.period", NULL, "the policy's cpuPeriod");
			c->period.v = p->cpu_period;
		}
		if (cap_value(p, ch, &c->quota, (int64_t)p->cpu_quota, "linux.resources.cpu.quota",
			      "cpuQuota", true, err) < 0)
			return -1;
	}
	if (p->default_devices_only && r->n_devices) {
		policy_change_add(ch, "devices", "linux.resources.devices", "(update)", "(removed)");
		for (size_t i = 0; i < r->n_devices; i++)
			free(r->devices[i].access);
		free(r->devices);
		r->devices = NULL;
		r->n_devices = 0;
	}
	rule_unified(&r->unified, ch);
	return 0;
}

void policy_apply_kernel(const struct policy *p, struct oci_spec *s,
			 struct policy_changes *ch, struct policy_decision *d)
{
	rule_user(p, s, ch, d);
	rule_kernel_tcp(p, s, ch);
	rule_ptys(p, s, ch);
	rule_unified(&s->linux.resources.unified, ch);
}
