/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The systemd cgroup manager, its pure half: unit names and slice paths,
 * the unit properties, and which cgroup setting becomes which property
 * (the rest is written to the files).  No bus, no syscalls: unit-tested in
 * tests/unit/test_cgroup_systemd.c.  The bus and the files are in
 * systemd.c.
 */
#include "systemd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

/* ---- names and paths --------------------------------------------------- */

/* Controller names systemd knows: a unit named after one gets a '_' in
 * front of its cgroup directory.  Such names are refused. */
static const char *const sd_controller_names[] = {
	"cpu",
	"cpuacct",
	"cpuset",
	"io",
	"blkio",
	"memory",
	"devices",
	"pids",
	"bpf-firewall",
	"bpf-devices",
	"bpf-foreign",
	"bpf-socket-bind",
	"bpf-restrict-network-interfaces",
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool unit_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.' ||
	       c == '-';
}

/* s with every character a unit name cannot hold as \xNN. */
static char *unit_escape(const char *s)
{
	char *out = xmalloc(4 * strlen(s) + 1), *p = out;

	for (; *s; s++) {
		if (unit_char_ok(*s))
			*p++ = *s;
		else
			p += sprintf(p, "\\x%02x", (unsigned char)*s);
	}
	*p = '\0';
	return out;
}

void cgsd_unit_free(struct cgsd_unit *u)
{
	free(u->slice);
	free(u->name);
	free(u->path);
	memset(u, 0, sizeof(*u));
}

static int check_slice(const char *slice, struct error *err)
{
	size_t len = strlen(slice), body = len - strlen(".slice");

	if (strcmp(slice, "-.slice") == 0)
		return 0;
	if (!has_suffix(slice, ".slice") || body == 0)
		return error_set(err, "systemd slice \"%s\": the name must end in \".slice\"",
				 slice);
	if (len > CGSD_UNIT_NAME_MAX)
		return error_set(err, "systemd slice \"%s\": longer than %d",
				 slice, CGSD_UNIT_NAME_MAX);
	for (size_t i = 0; i < body; i++)
		if (!unit_char_ok(slice[i]) && slice[i] != '\\')
			return error_set(err,
					 "systemd slice \"%s\": '%c' is not allowed in a unit name",
					 slice, slice[i]);
	if (slice[0] == '-' || slice[body - 1] == '-' || strstr(slice, "--"))
		return error_set(err,
				 "systemd slice \"%s\": '-' separates parent slices, it cannot start, end or double",
				 slice);
	return 0;
}

int cgsd_slice_path(const char *slice, char **out, struct error *err)
{
	_cleanup_free_ char *path = xstrdup("");
	size_t body;

	if (check_slice(slice, err) < 0)
		return -1;
	if (strcmp(slice, "-.slice") == 0) {
		*out = take_ptr(path);
		return 0;
	}
	/* Each '-' ends a parent: a-b-c.slice is in a-b.slice, in a.slice. */
	body = strlen(slice) - strlen(".slice");
	for (size_t i = 0; i <= body; i++) {
		char *longer;

		if (i < body && slice[i] != '-')
			continue;
		longer = xasprintf("%s/%.*s.slice", path, (int)i, slice);
		free(path);
		path = longer;
	}
	*out = take_ptr(path);
	return 0;
}

/* "slice:prefix:name", exactly two colons. */
static int split_three(const char *in, char **a, char **b, char **c)
{
	const char *p1 = strchr(in, ':'), *p2 = p1 ? strchr(p1 + 1, ':') : NULL;

	if (!p2 || strchr(p2 + 1, ':'))
		return -1;
	*a = xstrndup(in, (size_t)(p1 - in));
	*b = xstrndup(p1 + 1, (size_t)(p2 - p1 - 1));
	*c = xstrdup(p2 + 1);
	return 0;
}

/* Names systemd would rename in the cgroup tree (a '_' in front). */
static int check_unit_body(const char *body, const char *what,
			   struct error *err)
{
	bool renamed = body[0] == '.' || body[0] == '_';

	for (size_t i = 0; i < sizeof(sd_controller_names) /
				       sizeof(*sd_controller_names);
	     i++)
		renamed |= strcmp(body, sd_controller_names[i]) == 0;
	if (renamed)
		return error_set(err,
				 "%s: systemd would rename the cgroup of \"%s.scope\" (a leading '.' or '_', or a controller's name): choose another name",
				 what, body);
	return 0;
}

static int unit_name(const char *prefix, const char *name, const char *what,
		     char **out, struct error *err)
{
	_cleanup_free_ char *bare = xstrdup(name), *body = NULL, *esc = NULL;

	if (has_suffix(bare, ".slice"))
		return error_set(err,
				 "%s: \"%s\" is a slice, which cannot hold processes: name a scope",
				 what, name);
	if (has_suffix(bare, ".scope"))
		bare[strlen(bare) - strlen(".scope")] = '\0';
	if (!*bare)
		return error_set(err, "%s: the unit name is empty", what);
	body = *prefix ? xasprintf("%s-%s", prefix, bare) : xstrdup(bare);
	esc = unit_escape(body);
	if (check_unit_body(esc, what, err) < 0)
		return -1;
	*out = xasprintf("%s.scope", esc);
	if (strlen(*out) > CGSD_UNIT_NAME_MAX) {
		error_set(err, "%s: unit name \"%s\" is longer than %d", what,
			  *out, CGSD_UNIT_NAME_MAX);
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int cgsd_parse_path(const char *cgroups_path, const char *id,
		    struct cgsd_unit *out, struct error *err)
{
	_cleanup_free_ char *slice = NULL, *prefix = NULL, *name = NULL;
	_cleanup_free_ char *what = NULL, *spath = NULL, *unit = NULL;
	_cleanup_free_ char *joined = NULL;

	memset(out, 0, sizeof(*out));
	if (!cgroups_path || !*cgroups_path) {
		if (!id || !*id)
			return error_set(err, "an empty container id cannot name a systemd unit");
		what = xasprintf("container id \"%s\"", id);
		slice = xstrdup(CGSD_DEFAULT_SLICE);
		prefix = xstrdup(CGSD_DEFAULT_PREFIX);
		name = xstrdup(id);
	} else {
		what = xasprintf("linux.cgroupsPath \"%s\"", cgroups_path);
		if (split_three(cgroups_path, &slice, &prefix, &name) < 0)
			return error_set(err,
					 "%s: with --systemd-cgroup it must be \"slice:prefix:name\"",
					 what);
	}
	if (!*slice) {
		free(slice);
		slice = xstrdup(CGSD_DEFAULT_SLICE);
	}
	if (unit_name(prefix, name, what, &unit, err) < 0)
		return -1;
	if (cgsd_slice_path(slice, &spath, err) < 0)
		return error_prefix(err, "%s", what);
	joined = xasprintf("%s/%s", spath, unit);
	if (cg_path_normalize(joined, &out->path, err) < 0)
		return error_prefix(err, "%s", what);
	out->slice = take_ptr(slice);
	out->name = take_ptr(unit);
	return 0;
}

int cgsd_unit_from_path(const char *path, struct cgsd_unit *out,
			struct error *err)
{
	const char *last = strrchr(path, '/'), *prev;

	memset(out, 0, sizeof(*out));
	if (!last || !has_suffix(last + 1, ".scope") ||
	    strlen(last + 1) <= strlen(".scope"))
		return error_set(err,
				 "cgroup path \"%s\" is not a systemd scope's (made with --systemd-cgroup?)",
				 path);
	if (last == path) {
		out->slice = xstrdup("-.slice");
	} else {
		for (prev = last - 1; prev > path && *prev != '/'; prev--)
			;
		out->slice = xstrndup(prev + 1, (size_t)(last - prev - 1));
		if (!has_suffix(out->slice, ".slice")) {
			error_set(err, "cgroup path \"%s\": the scope is not in a slice",
				  path);
			cgsd_unit_free(out);
			return -1;
		}
	}
	out->name = xstrdup(last + 1);
	out->path = xstrdup(path);
	return 0;
}

/* ---- properties ------------------------------------------------------------ */

static struct cgsd_prop *prop_add(struct cgsd_props *p, const char *name,
				  enum cgsd_type type, const char *field)
{
	struct cgsd_prop *it;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->items = xrealloc(p->items, p->cap * sizeof(*p->items));
	}
	it = &p->items[p->n++];
	memset(it, 0, sizeof(*it));
	it->name = name;
	it->type = type;
	it->field = field;
	return it;
}

static void prop_u64(struct cgsd_props *p, const char *name, uint64_t v,
		     const char *field)
{
	prop_add(p, name, CGSD_U64, field)->u = v;
}

static void prop_bool(struct cgsd_props *p, const char *name, bool v)
{
	prop_add(p, name, CGSD_BOOL, NULL)->u = v;
}

/* Takes s. */
static void prop_str(struct cgsd_props *p, const char *name, char *s)
{
	prop_add(p, name, CGSD_STR, NULL)->s = s;
}

void cgsd_props_free(struct cgsd_props *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct cgsd_prop *it = &p->items[i];

		free(it->s);
		free(it->bytes);
		for (size_t k = 0; it->strv && it->strv[k]; k++)
			free(it->strv[k]);
		free(it->strv);
	}
	free(p->items);
	memset(p, 0, sizeof(*p));
}

const struct cgsd_prop *cgsd_props_find(const struct cgsd_props *p,
					const char *name)
{
	for (size_t i = p->n; i-- > 0;)
		if (strcmp(p->items[i].name, name) == 0)
			return &p->items[i];
	return NULL;
}

unsigned cgsd_parse_version(const char *version)
{
	unsigned long v;

	if (!version)
		return 0;
	version += strcspn(version, "0123456789");
	v = strtoul(version, NULL, 10);
	return v > 100000 ? 0 : (unsigned)v;
}

void cgsd_scope_props(const struct cgsd_unit *u, pid_t pid,
		      const struct cgsd_caps *caps, struct cgsd_props *out)
{
	prop_str(out, "Description", xasprintf("agentsbx container %s", u->name));
	prop_str(out, "Slice", xstrdup(u->slice));
	prop_add(out, "PIDs", CGSD_PIDS, NULL)->u = (uint64_t)pid;
	/* No ordering against shutdown.target & co: the runtime manages it. */
	prop_bool(out, "DefaultDependencies", false);
	prop_bool(out, "Delegate", true);
	prop_bool(out, "MemoryAccounting", true);
	prop_bool(out, "CPUAccounting", true);
	prop_bool(out, "TasksAccounting", true);
	if (caps->version >= 236) /* not left behind when it fails */
		prop_str(out, "CollectMode", xstrdup("inactive-or-failed"));
	if (caps->version >= 253) /* one OOM kill does not stop the scope */
		prop_str(out, "OOMPolicy", xstrdup("continue"));
}

/* ---- conversions ------------------------------------------------------------ */

int cgsd_cpu_mask(const char *field, const char *list, uint8_t **bytes,
		  size_t *n, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(list);
	_cleanup_free_ uint8_t *mask = NULL;
	char *save = NULL;
	size_t len = 0;

	copy[strcspn(copy, "\n")] = '\0';
	if (cg_check_cpulist(field, copy, err) < 0)
		return -1;
	for (char *r = strtok_r(copy, ",", &save); r;
	     r = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(r, '-'), *end;
		unsigned long lo = strtoul(r, &end, 10), hi = lo;

		if (end == r || (dash && (end != dash || !dash[1])))
			return error_set(err,
					 "linux.resources.%s: invalid range \"%s\" in \"%s\"",
					 field, r, list);
		if (dash) {
			hi = strtoul(dash + 1, &end, 10);
			if (*end || hi < lo)
				return error_set(err,
						 "linux.resources.%s: invalid range \"%s\" in \"%s\"",
						 field, r, list);
		}
		if (hi >= CGSD_CPU_MAX)
			return error_set(err,
					 "linux.resources.%s: %lu is beyond %d in \"%s\"",
					 field, hi, CGSD_CPU_MAX - 1, list);
		if (hi / 8 + 1 > len) {
			mask = xrealloc(mask, hi / 8 + 1);
			memset(mask + len, 0, hi / 8 + 1 - len);
			len = hi / 8 + 1;
		}
		for (unsigned long i = lo; i <= hi; i++)
			mask[i / 8] |= (uint8_t)(1u << (i % 8));
	}
	*bytes = take_ptr(mask);
	*n = len;
	return 0;
}

uint64_t cgsd_quota_per_sec(uint64_t quota, uint64_t period)
{
	uint64_t per_sec;

	if (period == 0)
		period = CGSD_DEFAULT_PERIOD;
	if (quota > (UINT64_MAX - period) / 1000000 / 2)
		return UINT64_MAX - 1; /* beyond any machine: not "infinity" */
	per_sec = (quota * 1000000 + period - 1) / period;
	/* Whole percents: what systemd keeps across a daemon-reload. */
	return (per_sec + CGSD_QUOTA_STEP - 1) / CGSD_QUOTA_STEP * CGSD_QUOTA_STEP;
}

/* ---- devices on v1 ---------------------------------------------------------- */

static bool wild(const struct opt_i64 *v)
{
	return !v->set || v->v < 0;
}

/* The driver's name for a major in /proc/devices, or NULL. */
static char *major_name(const char *proc_devices, char type, int64_t major)
{
	const char *want = type == 'c' ? "Character devices:" : "Block devices:";
	bool in = false;

	for (const char *l = proc_devices; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char name[64];
		long long m;

		if (len && l[len - 1] == ':')
			in = strncmp(l, want, len) == 0;
		else if (in && sscanf(l, "%lld %63s", &m, name) == 2 && m == major)
			return xstrdup(name);
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

struct dev_list {
	char **pairs; /* path, access, ..., NULL */
	size_t n, cap;
};

static void dev_list_clear(struct dev_list *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->pairs[i]);
	d->n = 0;
	if (d->pairs)
		d->pairs[0] = NULL;
}

static void dev_list_add(struct dev_list *d, char *path, const char *acc)
{
	if (d->n + 3 > d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->pairs = xrealloc(d->pairs, d->cap * sizeof(*d->pairs));
	}
	d->pairs[d->n++] = path;
	d->pairs[d->n++] = xstrdup(acc);
	d->pairs[d->n] = NULL;
}

/* One allow rule, for one type ('c' or 'b'). */
static void dev_allow(struct dev_list *d, const struct oci_device_cgroup *r,
		      char type, const char *acc, const char *proc_devices)
{
	const char *kind = type == 'c' ? "char" : "block";
	char *name;

	if (wild(&r->major)) {
		dev_list_add(d, xasprintf("%s-*", kind), acc);
	} else if (wild(&r->minor)) {
		name = major_name(proc_devices, type, r->major.v);
		if (!name)
			return; /* no such driver here: nothing to allow */
		dev_list_add(d, xasprintf("%s-%s", kind, name), acc);
		free(name);
	} else {
		dev_list_add(d, xasprintf("/dev/%s/%" PRId64 ":%" PRId64, kind, r->major.v, r->minor.v),
			     acc);
	}
}

int cgsd_device_props(const struct oci_device_cgroup *rules, size_t n,
		      const char *proc_devices, struct cgsd_props *out,
		      struct error *err)
{
	struct dev_list d = { 0 };
	struct cgsd_prop *p;

	for (size_t i = 0; i < n; i++) {
		const struct oci_device_cgroup *r = &rules[i];
		char acc[4];
		unsigned bits;
		size_t k;

		if (cg_device_rule_check(r, i, &bits, err) < 0)
			goto fail;
		k = cg_device_access_string(bits, acc);
		if (!r->allow && r->type == 'a' && wild(&r->major) &&
		    wild(&r->minor) && k == 3) {
			dev_list_clear(&d); /* deny all: what came before is moot */
			continue;
		}
		if (!r->allow) {
			dev_list_clear(&d);
			free(d.pairs);
			return 0;
		}
		if (r->type != 'b')
			dev_allow(&d, r, 'c', acc, proc_devices);
		if (r->type != 'c')
			dev_allow(&d, r, 'b', acc, proc_devices);
	}
	prop_str(out, "DevicePolicy", xstrdup("strict"));
	/* An empty list first: SetUnitProperties adds to the one in force. */
	prop_add(out, "DeviceAllow", CGSD_PAIRS, "devices")->strv =
		xcalloc(1, sizeof(char *));
	p = prop_add(out, "DeviceAllow", CGSD_PAIRS, "devices");
	p->strv = d.pairs ? d.pairs : xcalloc(1, sizeof(char *));
	return 1;
fail:
	dev_list_clear(&d);
	free(d.pairs);
	return -1;
}

/* ---- the split: which setting becomes which property -------------------- */

enum map_kind {
	MAP_LIMIT,	  /* "max" / "-1" or bytes/count */
	MAP_LIMIT_MIRROR, /* the same, and the file is written too */
	MAP_NUMBER,	  /* a plain number; anything else stays a file */
	MAP_IO_WEIGHT,	  /* "N" or "default N"; per device: a file */
	MAP_CPU_MAX,	  /* v2 cpu.max */
	MAP_CFS,	  /* v1 cpu.cfs_quota_us / cpu.cfs_period_us */
	MAP_CPU_MASK,	  /* cpuset lists */
};

struct file_map {
	const char *file;
	const char *prop;
	enum map_kind kind;
	unsigned since; /* systemd version that has the property */
	bool unified;	/* a cgroup v2 file; else v1 */
};

static const struct file_map file_maps[] = {
	{ "memory.max", "MemoryMax", MAP_LIMIT, 231, true },
	{ "memory.high", "MemoryHigh", MAP_LIMIT, 231, true },
	{ "memory.low", "MemoryLow", MAP_LIMIT, 231, true },
	{ "memory.min", "MemoryMin", MAP_LIMIT, 240, true },
	{ "memory.swap.max", "MemorySwapMax", MAP_LIMIT, 232, true },
	{ "memory.zswap.max", "MemoryZSwapMax", MAP_LIMIT, 253, true },
	{ "pids.max", "TasksMax", MAP_LIMIT, 228, true },
	{ "cpu.weight", "CPUWeight", MAP_NUMBER, 231, true },
	{ "cpu.max", "CPUQuotaPerSecUSec", MAP_CPU_MAX, 213, true },
	{ "cpuset.cpus", "AllowedCPUs", MAP_CPU_MASK, 244, true },
	{ "cpuset.mems", "AllowedMemoryNodes", MAP_CPU_MASK, 244, true },
	{ "io.weight", "IOWeight", MAP_IO_WEIGHT, 231, true },
	/* v1: systemd keeps memory.limit_in_bytes; memsw (no property) must
	 * stay >= it at every step, so the limit is also written in order
	 * with it (the same value: systemd's later writes change nothing). */
	{ "memory.limit_in_bytes", "MemoryLimit", MAP_LIMIT_MIRROR, 0, false },
	{ "pids.max", "TasksMax", MAP_LIMIT, 228, false },
	{ "cpu.shares", "CPUShares", MAP_NUMBER, 0, false },
	{ "cpu.cfs_quota_us", "CPUQuotaPerSecUSec", MAP_CFS, 213, false },
	{ "cpu.cfs_period_us", "CPUQuotaPerSecUSec", MAP_CFS, 213, false },
	{ "blkio.weight", "BlockIOWeight", MAP_NUMBER, 0, false },
};

struct split_ctx {
	const struct cg_settings *in;
	const struct cgsd_caps *caps;
	const struct cgsd_cpu_now *now;
	struct cgsd_props *props;
	bool cfs_done; /* v1 quota and period: one pair of properties */
};

static const struct file_map *map_for(const struct cg_setting *it,
				      const struct cgsd_caps *caps)
{
	for (size_t i = 0; i < sizeof(file_maps) / sizeof(*file_maps); i++) {
		const struct file_map *m = &file_maps[i];

		if (m->unified == caps->unified && strcmp(m->file, it->file) == 0)
			return caps->version >= m->since ? m : NULL;
	}
	return NULL;
}

/* The value without surrounding blanks, in buf. */
static const char *trimmed(const char *v, char *buf, size_t len)
{
	size_t n;

	v += strspn(v, " \t\n");
	n = strlen(v);
	while (n && strchr(" \t\n", v[n - 1]))
		n--;
	snprintf(buf, len, "%.*s", (int)n, v);
	return buf;
}

static int parse_number(const char *v, uint64_t *out)
{
	unsigned long long u;

	if (!*v || strspn(v, "0123456789") != strlen(v) || parse_u64(v, &u) < 0)
		return -1;
	*out = u;
	return 0;
}

/* "max" (v2) or "-1" (v1): no limit. */
static int parse_limit(const char *v, uint64_t *out)
{
	if (strcmp(v, "max") == 0 || strcmp(v, "-1") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	return parse_number(v, out);
}

static int bad_value(const struct cg_setting *it, const char *prop,
		     struct error *err)
{
	return error_set(err,
			 "linux.resources.%s (%s): \"%s\" cannot be given to systemd as %s",
			 it->field, it->file, it->value, prop);
}

static void quota_props(struct split_ctx *s, const char *field,
			uint64_t quota, uint64_t period)
{
	if (period == 0)
		period = s->now->period ? s->now->period : CGSD_DEFAULT_PERIOD;
	prop_u64(s->props, "CPUQuotaPerSecUSec",
		 quota == UINT64_MAX ? UINT64_MAX :
				       cgsd_quota_per_sec(quota, period),
		 field);
	/* Older systemd keeps 100 ms: the same share of the CPU then. */
	if (s->caps->version >= 242)
		prop_u64(s->props, "CPUQuotaPeriodUSec", period, field);
}

/* v2 "Q P", "max P", "Q", "max"; with CG_SET_KEEP_QUOTA just "P". */
static int map_cpu_max(struct split_ctx *s, const struct cg_setting *it,
		       const char *v, struct error *err)
{
	char q[32] = "", p[32] = "";
	uint64_t quota = s->now->quota, period = 0;

	if (sscanf(v, "%31s %31s", q, p) < 1)
		return bad_value(it, "CPUQuotaPerSecUSec", err);
	if (it->flags & CG_SET_KEEP_QUOTA) {
		if (p[0] || parse_number(q, &period) < 0 || period == 0)
			return bad_value(it, "CPUQuotaPeriodUSec", err);
	} else if (parse_limit(q, &quota) < 0 ||
		   (p[0] && (parse_number(p, &period) < 0 || period == 0))) {
		return bad_value(it, "CPUQuotaPerSecUSec", err);
	}
	quota_props(s, it->field, quota, period);
	return 1;
}

/* v1: quota and period are two settings, one pair of properties. */
static int map_cfs(struct split_ctx *s, const struct cg_setting *it,
		   struct error *err)
{
	const struct cg_setting *q = cg_settings_find(s->in, "cpu.cfs_quota_us");
	const struct cg_setting *p = cg_settings_find(s->in, "cpu.cfs_period_us");
	uint64_t quota = s->now->quota, period = 0;
	char buf[64];

	if (s->cfs_done)
		return 1;
	s->cfs_done = true;
	if (q && parse_limit(trimmed(q->value, buf, sizeof(buf)), &quota) < 0)
		return bad_value(q, "CPUQuotaPerSecUSec", err);
	if (p && (parse_number(trimmed(p->value, buf, sizeof(buf)), &period) < 0 ||
		  period == 0))
		return bad_value(p, "CPUQuotaPeriodUSec", err);
	quota_props(s, (q ? q : it)->field, quota, period);
	return 1;
}

/* 1: mapped, 0: not this value (stays a file), -1: error. */
static int map_one(struct split_ctx *s, const struct cg_setting *it,
		   const struct file_map *m, struct error *err)
{
	char v[128];
	uint64_t u;
	struct cgsd_prop *p;

	trimmed(it->value, v, sizeof(v));
	switch (m->kind) {
	case MAP_LIMIT:
	case MAP_LIMIT_MIRROR:
		if (parse_limit(v, &u) < 0)
			return bad_value(it, m->prop, err);
		prop_u64(s->props, m->prop, u, it->field);
		return 1;
	case MAP_NUMBER:
		if (parse_number(v, &u) < 0)
			return 0;
		prop_u64(s->props, m->prop, u, it->field);
		return 1;
	case MAP_IO_WEIGHT:
		if (parse_number(str_has_prefix(v, "default ") ? v + 8 : v,
				 &u) < 0)
			return 0;
		prop_u64(s->props, m->prop, u, it->field);
		return 1;
	case MAP_CPU_MAX:
		return map_cpu_max(s, it, v, err);
	case MAP_CFS:
		return map_cfs(s, it, err);
	case MAP_CPU_MASK:
		p = prop_add(s->props, m->prop, CGSD_BYTES, it->field);
		return cgsd_cpu_mask(it->field, it->value, &p->bytes,
				     &p->n_bytes, err) < 0 ?
			       -1 :
			       1;
	}
	return 0;
}

static void copy_setting(struct cg_settings *out, const struct cg_setting *it)
{
	cg_settings_add(out, it->field, it->ctrl, it->flags, it->file, "%s",
			it->value);
	out->items[out->n - 1].usage_file = it->usage_file;
}

/*
 * A setting and the CG_SET_ALT ones after it are one choice (CFQ's or BFQ's
 * weight file): when one of them maps, systemd writes the weight for the
 * whole group; else the group stays files as it is.
 */
static int split_group(struct split_ctx *s, size_t first, size_t end,
		       struct cg_settings *rest, struct error *err)
{
	bool mirror = false;

	for (size_t i = first; i < end; i++) {
		const struct cg_setting *it = &s->in->items[i];
		const struct file_map *m = map_for(it, s->caps);
		int r;

		if (!m)
			continue;
		r = map_one(s, it, m, err);
		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		mirror = m->kind == MAP_LIMIT_MIRROR;
		if (!mirror)
			return 0;
		break;
	}
	for (size_t i = first; i < end; i++)
		copy_setting(rest, &s->in->items[i]);
	return 0;
}

int cgsd_split_settings(const struct cg_settings *in,
			const struct cgsd_caps *caps,
			const struct cgsd_cpu_now *now,
			struct cgsd_props *props, struct cg_settings *rest,
			struct error *err)
{
	static const struct cgsd_cpu_now defaults = { UINT64_MAX,
						      CGSD_DEFAULT_PERIOD };
	struct split_ctx s = { .in = in, .caps = caps, .now = now ? now : &defaults, .props = props };

	for (size_t i = 0; in && i < in->n;) {
		size_t end = i + 1;

		while (end < in->n && (in->items[end].flags & CG_SET_ALT))
			end++;
		if (split_group(&s, i, end, rest, err) < 0)
			return -1;
		i = end;
	}
	return 0;
}
