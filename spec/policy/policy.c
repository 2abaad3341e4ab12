/* SPDX-License-Identifier: Apache-2.0 */
/* The policy file: defaults, parsing (the same safe JSON loading as
 * config.json), and printing (policy show). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <yajl/yajl_gen.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "policy.h"
#include "policy_parse.h"

#define MiB (1024ull * 1024)

/* Cloud metadata and every IANA special-purpose range that is not the
 * public internet (the IPv6 forms that translate to them are added where
 * the rules are made: policy_cidrs.c). */
static const char *const default_deny_cidrs[] = {
	"169.254.0.0/16",    /* link-local: cloud metadata at 169.254.169.254 */
	"168.63.129.16/32",  /* Azure's wireserver */
	"192.0.0.0/24",	     /* IETF protocol assignments: Oracle's 192.0.0.192 */
	"fd00:ec2::254/128", /* AWS IMDS over IPv6 */
	"fe80::/10",
	"10.0.0.0/8",
	"172.16.0.0/12",
	"192.168.0.0/16", /* RFC 1918 */
	"fc00::/7",	  /* unique local */
	"127.0.0.0/8",
	"::1/128",	 /* the host's loopback, through a gateway */
	"100.64.0.0/10", /* carrier-grade NAT, often internal (Alibaba's metadata) */
	"0.0.0.0/8",	 /* "this network" */
	"198.18.0.0/15", /* benchmarking, often internal */
	"192.0.2.0/24",	 /* documentation ranges */
	"198.51.100.0/24",
	"203.0.113.0/24",
	"192.88.99.0/24", /* the 6to4 relay anycast */
	"224.0.0.0/4",	  /* multicast */
	"240.0.0.0/4",	  /* reserved, and broadcast */
	"100::/64",	  /* discard */
	"2001:db8::/32",  /* documentation */
	"ff00::/8",	  /* multicast */
	NULL,
};

static const char *const no_strings[] = { NULL };

/* Masked besides what `spec` masks (spec_default_masked_paths): the
 * magic SysRq key, and the kernel's debug and security filesystems. */
static const char *const more_masked[] = {
	"/proc/sysrq-trigger",
	"/sys/kernel/debug",
	"/sys/kernel/security",
	NULL,
};

static const char *const default_readonly[] = {
	"/proc/bus",
	"/proc/fs",
	"/proc/irq",
	"/proc/sys",
	NULL,
};

/* Host binaries the engines bind into a container (docker --init).  The
 * engines' state (hosts, resolv.conf, hostname, /dev/shm, volumes) is no
 * prefix here: a directory such as /var/lib/docker/containers holds every
 * tenant's files.  Only what the engine made for this container and its
 * pod is added at create, derived from the bundle's place
 * (spec/policy/policy_engine.c, runtime/policy/engine_dirs.c). */
static const char *const default_bind_prefixes[] = {
	"/usr/bin/docker-init",
	"/usr/libexec/docker",
	NULL,
};

/* weak-engine-parents: the directories of every tenant, as once allowed. */
static const char *const weak_engine_parents[] = {
	"/usr/bin/docker-init",
	"/usr/libexec/docker",
	"/var/lib/docker/containers",
	"/var/lib/docker/volumes",
	"/run/containerd",
	"/var/lib/containerd",
	"/var/lib/containers",
	"/run/containers",
	"/var/lib/kubelet/pods",
	NULL,
};

/*
 * Where Docker's own hook may come from: its libnetwork-setkey prestart
 * hook (path /proc/<dockerd pid>/exe, which opens to the dockerd binary).
 * containerd/CRI add no hook; podman's come from descriptors in
 * /usr/share/containers/oci/hooks.d and name binaries anywhere, so the
 * operator writes a hookRules entry for each (docs/policy.md, "Hooks are commands").
 */
static const char *const default_docker_hook[] = {
	"/usr/bin/dockerd",
	"/usr/sbin/dockerd",
	"/usr/local/bin/dockerd",
	NULL,
};

static void strv_set(struct str_array *a, const char *const *items)
{
	size_t n = 0;

	while (items[n])
		n++;
	a->items = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		a->items[i] = xstrdup(items[i]);
	a->len = n;
}

void policy_default(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->mode = POLICY_ENFORCE;
	p->on_request = ON_REQUEST_REFUSE;
	p->source = xstrdup("built-in default");
	strv_set(&p->deny_cidrs, default_deny_cidrs);
	strv_set(&p->allow_cidrs, no_strings);
	/* egress by name: off (no names) until the operator lists some */
	strv_set(&p->egress.allow, no_strings);
	strv_set(&p->egress.deny, no_strings);
	strv_set(&p->egress_hosts, no_strings);
	p->egress_ports[0] = 80;
	p->egress_ports[1] = 443;
	p->n_egress_ports = 2;
	p->readonly_root = true;
	p->writable_layer = 32 * MiB; /* like /tmp: a 50 MiB disk fill fails */
	p->tmpfs = xcalloc(1, sizeof(*p->tmpfs));
	p->tmpfs[0].path = xstrdup("/tmp");
	p->tmpfs[0].size = 32 * MiB;
	p->n_tmpfs = 1;
	strv_set(&p->masked_paths, spec_default_masked_paths);
	for (size_t i = 0; more_masked[i]; i++)
		policy_strv_add(&p->masked_paths, more_masked[i]);
	strv_set(&p->readonly_paths, default_readonly);
	strv_set(&p->bind_prefixes,
		 WEAK_ENGINE_PARENTS ? weak_engine_parents : default_bind_prefixes);
	strv_set(&p->docker_hook, default_docker_hook);
	strv_set(&p->rootfs_prefixes, no_strings);
	strv_set(&p->bind_special_files, no_strings);
	strv_set(&p->bind_volume_dirs, no_strings);
	strv_set(&p->seccomp_listeners, no_strings);
	p->writable_binds = false;
	p->idmapped_mounts = false;
	p->capabilities.items = xcalloc(1, sizeof(char *));
	p->no_new_privileges = true;
	p->strict_seccomp = true;
	p->default_devices_only = true;
	p->realtime_scheduling = false;
	p->memory = 256 * MiB;
	p->pids = 128;
	p->cpu_quota = 100000;
	p->cpu_period = 100000;
	/* No RLIMIT_CPU: it kills a long-running service after its CPU
	 * seconds; the cgroup cpu quota bounds the rate. */
	p->rlimit_cpu = 0;
	p->rlimit_fsize = 32 * MiB;
	p->rlimit_nofile = 1024;
	p->ptys = 64;
	/* nobody: container code is not host root when identities are off */
	p->uid = (struct opt_u64){ true, 65534 };
	/* ... and no two containers share a host uid: per-uid kernel limits
	 * (inotify instances, pipe pages, RLIMIT_NPROC) and file ownership
	 * stay per tenant. */
	p->identity_first = POLICY_IDENTITY_FIRST;
	p->identity_count = POLICY_IDENTITY_COUNT;
	p->relaxable = 0;
}

void policy_free(struct policy *p)
{
	free(p->source);
	free(p->audit_log);
	free(p->audit_log_caller);
	spec_str_array_free(&p->deny_cidrs);
	spec_str_array_free(&p->allow_cidrs);
	spec_str_array_free(&p->egress.allow);
	spec_str_array_free(&p->egress.deny);
	spec_str_array_free(&p->egress_hosts);
	for (size_t i = 0; i < p->n_tmpfs; i++)
		free(p->tmpfs[i].path);
	free(p->tmpfs);
	spec_str_array_free(&p->masked_paths);
	spec_str_array_free(&p->readonly_paths);
	spec_str_array_free(&p->bind_prefixes);
	spec_str_array_free(&p->docker_hook);
	spec_str_array_free(&p->rootfs_prefixes);
	spec_str_array_free(&p->bind_special_files);
	spec_str_array_free(&p->bind_volume_dirs);
	spec_str_array_free(&p->engine_layer_dirs);
	spec_str_array_free(&p->seccomp_listeners);
	policy_hook_rules_free(p);
	spec_str_array_free(&p->capabilities);
	memset(p, 0, sizeof(*p));
}

/* ---- parsing ------------------------------------------------------------- */

static int parse_mode(struct jctx *c, yajl_val root, struct policy *p)
{
	_cleanup_free_ char *mode = NULL;
	char q[QUOTE_MAX];

	if (jstring(c, root, "mode", &mode) < 0)
		return -1;
	if (!mode)
		return 0;
	if (!strcmp(mode, "enforce"))
		p->mode = POLICY_ENFORCE;
	else if (!strcmp(mode, "audit"))
		p->mode = POLICY_AUDIT;
	else if (!strcmp(mode, "off"))
		p->mode = POLICY_OFF;
	else
		return jfail(c, "mode: expected enforce, audit or off, got %s",
			     spec_quote(q, mode));
	return 0;
}

/* A string array member replaces the default only when present. */
static int replace_strv(struct jctx *c, yajl_val obj, const char *key,
			struct str_array *a)
{
	struct str_array tmp = { 0 };

	if (!jmember(obj, key))
		return 0;
	if (jstr_array(c, obj, key, &tmp) < 0)
		return -1;
	spec_str_array_free(a);
	*a = tmp;
	return 0;
}

static int check_abs_paths(struct jctx *c, const char *what,
			   const struct str_array *a)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < a->len; i++)
		if (!spec_path_is_absolute(a->items[i]) || strstr(a->items[i], "/.."))
			return jfail(c, "%s[%zu]: must be an absolute path without \"..\", got %s",
				     what, i, spec_quote(q, a->items[i]));
	return 0;
}

static int parse_u64_member(struct jctx *c, yajl_val obj, const char *key,
			    uint64_t min, uint64_t max, uint64_t *out)
{
	struct opt_u64 v = { 0 };

	if (jopt_u64(c, obj, key, max, &v) < 0)
		return -1;
	if (!v.set)
		return 0;
	if (v.v < min) {
		jpush_key(c, key);
		return jfail(c, "must be at least %llu", (unsigned long long)min);
	}
	*out = v.v;
	return 0;
}

/* ---- strictness: every key known ----------------------------------------- */

static const char *const limits_keys[] = {
	"memory",
	"pids",
	"cpuQuota",
	"cpuPeriod",
	"rlimitCpu",
	"rlimitFsize",
	"rlimitNofile",
	"ptys",
	NULL,
};
static const char *const tmpfs_keys[] = { "path", "size", NULL };
static const char *const identities_keys[] = { "first", "count", NULL };

static int parse_limits(struct jctx *c, yajl_val root, struct policy *p)
{
	yajl_val l = jmember(root, "limits");
	size_t mark;
	struct opt_i64 pids = { 0 };

	if (!l)
		return 0;
	mark = jpush_key(c, "limits");
	if (jcheck_object(c, l) < 0 || policy_check_known_keys(c, l, limits_keys) < 0 ||
	    parse_u64_member(c, l, "memory", 4 * MiB, 1ull << 50, &p->memory) < 0 ||
	    jopt_i64(c, l, "pids", 8, 1 << 22, &pids) < 0 ||
	    parse_u64_member(c, l, "cpuQuota", 1000, 1ull << 40, &p->cpu_quota) < 0 ||
	    parse_u64_member(c, l, "cpuPeriod", 1000, 1000000, &p->cpu_period) < 0 ||
	    parse_u64_member(c, l, "rlimitCpu", 0, 1ull << 32, &p->rlimit_cpu) < 0 ||
	    parse_u64_member(c, l, "rlimitFsize", 4096, 1ull << 50, &p->rlimit_fsize) < 0 ||
	    parse_u64_member(c, l, "rlimitNofile", 16, 1 << 20, &p->rlimit_nofile) < 0 ||
	    parse_u64_member(c, l, "ptys", 1, 1 << 20, &p->ptys) < 0)
		return -1;
	if (pids.set)
		p->pids = pids.v;
	jpop(c, mark);
	return 0;
}

/* writableLayer: 0 (a plain read-only root) or at least a page. */
static int parse_writable_layer(struct jctx *c, yajl_val root, struct policy *p)
{
	struct opt_u64 v = { 0 };

	if (jopt_u64(c, root, "writableLayer", 1ull << 40, &v) < 0)
		return -1;
	if (!v.set)
		return 0;
	if (v.v && v.v < 4096) {
		jpush_key(c, "writableLayer");
		return jfail(c, "must be 0 (a plain read-only root) or at least 4096 bytes");
	}
	p->writable_layer = v.v;
	return 0;
}

static int parse_tmpfs_entry(struct jctx *c, yajl_val v, void *out)
{
	struct policy_tmpfs *t = out;
	char q[QUOTE_MAX];

	if (jcheck_object(c, v) < 0 || policy_check_known_keys(c, v, tmpfs_keys) < 0 ||
	    jreq_string(c, v, "path", &t->path) < 0 ||
	    parse_u64_member(c, v, "size", 4096, 1ull << 40, &t->size) < 0)
		return -1;
	if (!spec_path_is_absolute(t->path) || strstr(t->path, "..")) {
		jpush_key(c, "path");
		return jfail(c, "must be absolute without \"..\", got %s",
			     spec_quote(q, t->path));
	}
	if (!t->size)
		t->size = 32 * MiB;
	return 0;
}

static int parse_relaxable(struct jctx *c, yajl_val root, struct policy *p)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
		{ "network", RELAX_NETWORK },
		{ "writableRoot", RELAX_WRITABLE_ROOT },
		{ "capabilities", RELAX_CAPS },
		{ "limits", RELAX_LIMITS },
	};
	struct str_array a = { 0 };
	char q[QUOTE_MAX];
	int r = 0;

	if (jstr_array(c, root, "relaxable", &a) < 0)
		return -1;
	for (size_t i = 0; i < a.len && r == 0; i++) {
		bool found = false;
		for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			if (!strcmp(a.items[i], names[j].name)) {
				p->relaxable |= names[j].bit;
				found = true;
			}
		if (!found)
			r = jfail(c, "relaxable[%zu]: unknown relaxation %s", i,
				  spec_quote(q, a.items[i]));
	}
	spec_str_array_free(&a);
	return r;
}

/* "uid": N runs host-root processes as N; "uid": null keeps host root
 * (the default is 65534); absent: the default. */
static int parse_uid(struct jctx *c, yajl_val root, struct policy *p)
{
	struct opt_u64 uid = { 0 };

	for (size_t i = 0; i < root->u.object.len; i++)
		if (!strcmp(root->u.object.keys[i], "uid") &&
		    YAJL_IS_NULL(root->u.object.values[i])) {
			p->uid = (struct opt_u64){ 0 };
			return 0;
		}
	if (jopt_u64(c, root, "uid", UINT32_MAX - 1, &uid) < 0)
		return -1;
	if (uid.set)
		p->uid = uid;
	return 0;
}

static bool has_key(yajl_val obj, const char *key)
{
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key))
			return true;
	return false;
}

/* "identities": {"first", "count"} (both required), or null: off.  The
 * range holds neither root nor nobody (65534, 65535) and fits in a uid_t
 * that is not (uid_t)-1. */
static int parse_identities(struct jctx *c, yajl_val root, struct policy *p)
{
	yajl_val v = jmember(root, "identities");
	uint64_t first, count;
	size_t mark;

	if (!v && has_key(root, "identities")) { /* null */
		p->identity_first = p->identity_count = 0;
		return 0;
	}
	if (!v)
		return 0;
	mark = jpush_key(c, "identities");
	if (jcheck_object(c, v) < 0 || policy_check_known_keys(c, v, identities_keys) < 0 ||
	    jreq_u64(c, v, "first", &first) < 0 || jreq_u64(c, v, "count", &count) < 0)
		return -1;
	if (first == 0 || count == 0 || first + count > UINT32_MAX ||
	    (first <= 65535 && first + count > 65534))
		return jfail(c, "the range [%llu, %llu) must be non-empty, hold neither uid 0 nor 65534/65535, and end below 4294967295",
			     (unsigned long long)first, (unsigned long long)(first + count));
	p->identity_first = (uint32_t)first;
	p->identity_count = (uint32_t)count;
	jpop(c, mark);
	return 0;
}

/* onRequestAboveFloor: refuse | clamp; auditLog: an absolute path or "". */
static int parse_speech(struct jctx *c, yajl_val root, struct policy *p)
{
	_cleanup_free_ char *on = NULL;
	char q[QUOTE_MAX];

	if (jstring(c, root, "onRequestAboveFloor", &on) < 0)
		return -1;
	if (on && !strcmp(on, "clamp"))
		p->on_request = ON_REQUEST_CLAMP;
	else if (on && strcmp(on, "refuse"))
		return jfail(c, "onRequestAboveFloor: expected refuse or clamp, got %s",
			     spec_quote(q, on));
	if (jstring(c, root, "auditLog", &p->audit_log) < 0)
		return -1;
	if (!p->audit_log && jmember(root, "auditLog"))
		p->audit_log = xstrdup(""); /* "": none (jstring leaves "" unset) */
	if (p->audit_log && p->audit_log[0] &&
	    (!spec_path_is_absolute(p->audit_log) || strstr(p->audit_log, "/..")))
		return jfail(c, "auditLog: must be an absolute path without \"..\" (or \"\" for none), got %s",
			     spec_quote(q, p->audit_log));
	return 0;
}

static int extend_strv(struct jctx *c, yajl_val ext, const char *key, struct str_array *a)
{
	struct str_array add = { 0 };

	if (!jmember(ext, key))
		return 0;
	if (jstr_array(c, ext, key, &add) < 0)
		return -1;
	for (size_t i = 0; i < add.len; i++)
		if (!policy_strv_has(a, add.items[i]))
			policy_strv_add(a, add.items[i]);
	spec_str_array_free(&add);
	return 0;
}

/* extend.tmpfs: each entry added, or replacing the one at the same path. */
static int extend_tmpfs(struct jctx *c, yajl_val ext, struct policy *p)
{
	struct policy_tmpfs *add = NULL;
	size_t n = 0;

	if (!jmember(ext, "tmpfs"))
		return 0;
	if (JOBJECT_ARRAY(c, ext, "tmpfs", parse_tmpfs_entry, add, n) < 0) {
		for (size_t i = 0; i < n; i++) /* zeroed past the bad one */
			free(add[i].path);
		free(add);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < p->n_tmpfs && strcmp(p->tmpfs[j].path, add[i].path))
			j++;
		if (j == p->n_tmpfs) {
			p->tmpfs = xrealloc(p->tmpfs, (p->n_tmpfs + 1) * sizeof(*p->tmpfs));
			p->tmpfs[p->n_tmpfs++] = add[i];
			continue;
		}
		free(p->tmpfs[j].path);
		p->tmpfs[j] = add[i];
	}
	free(add);
	return 0;
}

/* "extend": {"bindPrefixes": [...], ...}: after the replacing keys, so
 * that {"bindPrefixes": [A], "extend": {"bindPrefixes": [B]}} is [A, B]. */
static int parse_extend(struct jctx *c, yajl_val root, struct policy *p)
{
	yajl_val ext = jmember(root, "extend");
	size_t mark;

	if (!ext)
		return 0;
	mark = jpush_key(c, "extend");
	if (jcheck_object(c, ext) < 0 || policy_check_known_fields(c, ext, true) < 0 ||
	    extend_strv(c, ext, "denyCidrs", &p->deny_cidrs) < 0 ||
	    extend_strv(c, ext, "maskedPaths", &p->masked_paths) < 0 ||
	    extend_strv(c, ext, "readonlyPaths", &p->readonly_paths) < 0 ||
	    extend_strv(c, ext, "bindPrefixes", &p->bind_prefixes) < 0 ||
	    extend_strv(c, ext, "bindSpecialFiles", &p->bind_special_files) < 0 ||
	    extend_strv(c, ext, "bindVolumeDirs", &p->bind_volume_dirs) < 0 ||
	    extend_strv(c, ext, "rootfsPrefixes", &p->rootfs_prefixes) < 0 ||
	    extend_strv(c, ext, "seccompListeners", &p->seccomp_listeners) < 0 ||
	    extend_strv(c, ext, "dockerHook", &p->docker_hook) < 0 ||
	    policy_parse_hook_rules(c, ext, p, true) < 0 ||
	    extend_strv(c, ext, "capabilities", &p->capabilities) < 0 ||
	    extend_tmpfs(c, ext, p) < 0 || parse_relaxable(c, ext, p) < 0)
		return -1;
	jpop(c, mark);
	return 0;
}

static int parse_document(struct jctx *c, yajl_val root, struct policy *p)
{
	struct opt_bool b;

	if (jcheck_object(c, root) < 0 || policy_check_known_fields(c, root, false) < 0 ||
	    parse_mode(c, root, p) < 0 || parse_speech(c, root, p) < 0)
		return -1;
#define BOOL_MEMBER(key, field)                      \
	do {                                         \
		b.set = false;                       \
		if (jopt_bool(c, root, key, &b) < 0) \
			return -1;                   \
		if (b.set)                           \
			p->field = b.v;              \
	} while (0)
	BOOL_MEMBER("networkAllowed", network_allowed);
	BOOL_MEMBER("readonlyRoot", readonly_root);
	BOOL_MEMBER("noNewPrivileges", no_new_privileges);
	BOOL_MEMBER("strictSeccomp", strict_seccomp);
	BOOL_MEMBER("defaultDevicesOnly", default_devices_only);
	BOOL_MEMBER("realtimeScheduling", realtime_scheduling);
	BOOL_MEMBER("writableBinds", writable_binds);
	BOOL_MEMBER("idmappedMounts", idmapped_mounts);
#undef BOOL_MEMBER
	if (parse_writable_layer(c, root, p) < 0)
		return -1;
	if (replace_strv(c, root, "denyCidrs", &p->deny_cidrs) < 0 ||
	    replace_strv(c, root, "allowCidrs", &p->allow_cidrs) < 0 ||
	    replace_strv(c, root, "maskedPaths", &p->masked_paths) < 0 ||
	    replace_strv(c, root, "readonlyPaths", &p->readonly_paths) < 0 ||
	    replace_strv(c, root, "bindPrefixes", &p->bind_prefixes) < 0 ||
	    replace_strv(c, root, "capabilities", &p->capabilities) < 0 ||
	    replace_strv(c, root, "bindSpecialFiles", &p->bind_special_files) < 0 ||
	    replace_strv(c, root, "bindVolumeDirs", &p->bind_volume_dirs) < 0 ||
	    replace_strv(c, root, "rootfsPrefixes", &p->rootfs_prefixes) < 0 ||
	    replace_strv(c, root, "seccompListeners", &p->seccomp_listeners) < 0 ||
	    replace_strv(c, root, "dockerHook", &p->docker_hook) < 0 ||
	    policy_parse_hook_rules(c, root, p, false) < 0)
		return -1;
	if (jmember(root, "tmpfs")) {
		for (size_t i = 0; i < p->n_tmpfs; i++)
			free(p->tmpfs[i].path);
		free(p->tmpfs);
		p->tmpfs = NULL;
		p->n_tmpfs = 0;
		if (JOBJECT_ARRAY(c, root, "tmpfs", parse_tmpfs_entry, p->tmpfs, p->n_tmpfs) < 0)
			return -1;
	}
	if (parse_relaxable(c, root, p) < 0 || parse_extend(c, root, p) < 0)
		return -1;
	/* Checked on the lists in force, defaults and extensions included. */
	if (check_abs_paths(c, "dockerHook", &p->docker_hook) < 0 ||
	    check_abs_paths(c, "bindSpecialFiles", &p->bind_special_files) < 0 ||
	    check_abs_paths(c, "bindVolumeDirs", &p->bind_volume_dirs) < 0 ||
	    check_abs_paths(c, "rootfsPrefixes", &p->rootfs_prefixes) < 0 ||
	    check_abs_paths(c, "seccompListeners", &p->seccomp_listeners) < 0 ||
	    check_abs_paths(c, "maskedPaths", &p->masked_paths) < 0 ||
	    check_abs_paths(c, "readonlyPaths", &p->readonly_paths) < 0 ||
	    check_abs_paths(c, "bindPrefixes", &p->bind_prefixes) < 0)
		return -1;
	for (size_t i = 0; i < p->capabilities.len; i++)
		if (capability_from_name(p->capabilities.items[i]) < 0)
			return jfail(c, "capabilities[%zu]: unknown capability \"%s\"", i,
				     p->capabilities.items[i]);
	if (parse_uid(c, root, p) < 0 || parse_identities(c, root, p) < 0 ||
	    policy_parse_egress(c, root, p) < 0)
		return -1;
	/* A file written for "uid" alone (before identities) would have it
	 * ignored: say so instead. */
	if (p->identity_count && has_key(root, "uid") && !has_key(root, "identities"))
		return jfail(c, "\"uid\" applies only with \"identities\": null (identities, the default, gives every container a uid of its own); add \"identities\": null to keep the policy's one uid");
	if (parse_limits(c, root, p) < 0)
		return -1;
	return 0;
}

int policy_parse(const char *buf, size_t len, const char *source,
		 struct policy *p, struct error *err)
{
	struct jctx c;
	yajl_val root;
	int rc;

	policy_default(p);
	free(p->source);
	p->source = xstrdup(source);
	if (spec_json_load(buf, len, source, &root, err) < 0) {
		policy_free(p);
		return -1;
	}
	jctx_init(&c, source, err);
	rc = parse_document(&c, root, p);
	yajl_tree_free(root);
	if (rc < 0)
		policy_free(p);
	return rc;
}

int policy_load(const char *path, struct policy *p, struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	const char *file = path ? path : POLICY_DEFAULT_PATH;
	size_t len;

	if (read_file_at(AT_FDCWD, file, SPEC_MAX_FILE_SIZE, &buf, &len, err) < 0) {
		if (!path && err->code == ENOENT) {
			policy_default(p);
			return 0;
		}
		return error_prefix(err, "policy");
	}
	return policy_parse(buf, len, file, p, err);
}

/* spec/agent-seccomp*.json, compiled in by the Makefile. */
extern const char agent_seccomp_json[];
extern const char agent_seccomp_ioctl_json[];

static const struct {
	const char *name;
	const char *json;
} agent_profiles[POLICY_AGENT_FILTERS] = {
	{ "agent-seccomp.json", agent_seccomp_json },
	{ "agent-seccomp-ioctl.json", agent_seccomp_ioctl_json },
};

/* weak-socket-proto (spec/policy/weak.h): socket() judged by family and type
 * only, without the protocol argument: the protocol-0 rules lose their protocol test,
 * the other AF_INET/AF_INET6 rules go. */
static void weaken_socket_proto(struct oci_seccomp *sc)
{
	size_t kept = 0;

	for (size_t i = 0; i < sc->n_syscalls; i++) {
		struct oci_seccomp_syscall *s = &sc->syscalls[i];
		bool inet = s->n_args == 3 && s->args[0].index == 0 &&
			    (s->args[0].value == AF_INET || s->args[0].value == AF_INET6);

		if (s->names.len == 1 && !strcmp(s->names.items[0], "socket") && inet) {
			if (s->args[2].value != 0 || strcmp(s->action, "SCMP_ACT_ALLOW")) {
				spec_str_array_free(&s->names);
				free(s->action);
				for (size_t j = 0; j < s->n_args; j++)
					free(s->args[j].op);
				free(s->args);
				continue;
			}
			free(s->args[2].op);
			s->n_args = 2;
		}
		sc->syscalls[kept++] = *s;
	}
	sc->n_syscalls = kept;
}

void policy_agent_seccomp_source(unsigned i, const char **text, const char **variant)
{
	static char name[128];

	*text = i < POLICY_AGENT_FILTERS ? agent_profiles[i].json : "";
	if (i >= POLICY_AGENT_FILTERS) {
		*variant = "none";
		return;
	}
	snprintf(name, sizeof(name), "%s%s%s", agent_profiles[i].name,
		 i == 0 && WEAK_SOCKET_PROTO ? ", weak-socket-proto" : "",
		 WEAK_COMPAT_ABI ? ", weak-compat-abi" : "");
	*variant = name;
}

int policy_agent_seccomp(unsigned i, struct oci_seccomp *out, struct error *err)
{
	struct jctx c;
	yajl_val root;
	int rc;

	memset(out, 0, sizeof(*out));
	if (i >= POLICY_AGENT_FILTERS)
		return error_set(err, "no agent seccomp filter %u", i);
	if (spec_json_load(agent_profiles[i].json, strlen(agent_profiles[i].json),
			   agent_profiles[i].name, &root, err) < 0)
		return -1;
	jctx_init(&c, agent_profiles[i].name, err);
	rc = jcheck_object(&c, root);
	if (rc == 0)
		rc = jparse_seccomp(&c, root, out);
	yajl_tree_free(root);
	if (rc == 0 && i == 0 && WEAK_SOCKET_PROTO)
		weaken_socket_proto(out);
	if (rc == 0 && WEAK_COMPAT_ABI) {
		policy_strv_add(&out->architectures, "SCMP_ARCH_X86");
		policy_strv_add(&out->architectures, "SCMP_ARCH_X32");
	}
	if (rc == 0) {
		out->present = true;
		rc = spec_check_seccomp(out, err);
	}
	return rc;
}

/* ---- policy show ------------------------------------------------------------ */

static void gkv_u64(yajl_gen g, const char *key, uint64_t v)
{
	jgen_key_int(g, key, (long long)v);
}

char *policy_to_json(const struct policy *p)
{
	static const char *const modes[] = { "enforce", "audit", "off" };
	yajl_gen g = jgen_new(true);

	yajl_gen_map_open(g);
	jgen_str(g, "source");
	jgen_str(g, p->source ? p->source : "");
	jgen_str(g, "mode");
	jgen_str(g, modes[p->mode]);
	jgen_str(g, "onRequestAboveFloor");
	jgen_str(g, p->on_request == ON_REQUEST_CLAMP ? "clamp" : "refuse");
	jgen_str(g, "auditLog");
	jgen_str(g, p->audit_log ? p->audit_log : POLICY_AUDIT_LOG_DEFAULT);
	jgen_key_bool(g, "networkAllowed", p->network_allowed);
	policy_gen_strv(g, "denyCidrs", &p->deny_cidrs);
	policy_gen_strv(g, "allowCidrs", &p->allow_cidrs);
	jgen_key_bool(g, "readonlyRoot", p->readonly_root);
	gkv_u64(g, "writableLayer", p->writable_layer);
	jgen_str(g, "tmpfs");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->n_tmpfs; i++) {
		yajl_gen_map_open(g);
		jgen_str(g, "path");
		jgen_str(g, p->tmpfs[i].path);
		gkv_u64(g, "size", p->tmpfs[i].size);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	policy_egress_gen(g, p);
	policy_gen_strv(g, "maskedPaths", &p->masked_paths);
	policy_gen_strv(g, "readonlyPaths", &p->readonly_paths);
	policy_gen_strv(g, "bindPrefixes", &p->bind_prefixes);
	policy_gen_strv(g, "bindSpecialFiles", &p->bind_special_files);
	policy_gen_strv(g, "bindVolumeDirs", &p->bind_volume_dirs);
	policy_gen_strv(g, "rootfsPrefixes", &p->rootfs_prefixes);
	policy_gen_strv(g, "seccompListeners", &p->seccomp_listeners);
	policy_gen_strv(g, "dockerHook", &p->docker_hook);
	policy_hook_rules_gen(g, p);
	jgen_key_bool(g, "writableBinds", p->writable_binds);
	jgen_key_bool(g, "idmappedMounts", p->idmapped_mounts);
	policy_gen_strv(g, "capabilities", &p->capabilities);
	jgen_key_bool(g, "noNewPrivileges", p->no_new_privileges);
	jgen_key_bool(g, "strictSeccomp", p->strict_seccomp);
	jgen_key_bool(g, "defaultDevicesOnly", p->default_devices_only);
	jgen_key_bool(g, "realtimeScheduling", p->realtime_scheduling);
	if (p->uid.set) {
		gkv_u64(g, "uid", p->uid.v);
	} else {
		jgen_str(g, "uid");
		yajl_gen_null(g);
	}
	jgen_str(g, "identities");
	if (p->identity_count) {
		yajl_gen_map_open(g);
		gkv_u64(g, "first", p->identity_first);
		gkv_u64(g, "count", p->identity_count);
		yajl_gen_map_close(g);
	} else {
		yajl_gen_null(g);
	}
	jgen_str(g, "limits");
	yajl_gen_map_open(g);
	gkv_u64(g, "memory", p->memory);
	gkv_u64(g, "pids", (uint64_t)p->pids);
	gkv_u64(g, "cpuQuota", p->cpu_quota);
	gkv_u64(g, "cpuPeriod", p->cpu_period);
	gkv_u64(g, "rlimitCpu", p->rlimit_cpu);
	gkv_u64(g, "rlimitFsize", p->rlimit_fsize);
	gkv_u64(g, "rlimitNofile", p->rlimit_nofile);
	gkv_u64(g, "ptys", p->ptys);
	yajl_gen_map_close(g);
	jgen_str(g, "relaxable");
	yajl_gen_array_open(g);
	if (p->relaxable & RELAX_NETWORK)
		jgen_str(g, "network");
	if (p->relaxable & RELAX_WRITABLE_ROOT)
		jgen_str(g, "writableRoot");
	if (p->relaxable & RELAX_CAPS)
		jgen_str(g, "capabilities");
	if (p->relaxable & RELAX_LIMITS)
		jgen_str(g, "limits");
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return jgen_finish(g, NULL);
}
