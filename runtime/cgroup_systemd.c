/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The systemd cgroup manager (--systemd-cgroup): the container's cgroup is
 * a transient scope unit started over D-Bus with libsystemd's sd-bus; the
 * limits systemd knows become unit properties, the rest is written to the
 * files (cgroup_v2.c / cgroup_v1.c), and everything that only reads or
 * signals (kill, ps, pause, exec, stats) works on the files directly.
 * See cgroup_systemd.h.
 */
#include "cgroup_systemd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER SD_DEST ".Manager"
#define SD_UNIT_IFACE SD_DEST ".Unit"
#define SD_SCOPE_IFACE SD_DEST ".Scope"
#define SD_JOB_IFACE SD_DEST ".Job"
#define SD_NO_SUCH_UNIT SD_DEST ".NoSuchUnit"
#define SD_PRIVATE_ADDR "unix:path=/run/systemd/private"
#define SD_POLL_MS 250 /* a look at the job when no JobRemoved came */

#define _cleanup_bus_error_ __attribute__((cleanup(sd_bus_error_free)))
#define _cleanup_bus_msg_ __attribute__((cleanup(sd_bus_message_unrefp)))

/* ---- names and paths --------------------------------------------------- */

/* Controller names systemd knows: a unit named after one gets a '_' in
 * front of its cgroup directory.  Such names are refused. */
static const char *const sd_controller_names[] = {
	"cpu",	   "cpuacct",	   "cpuset",	  "io",
	"blkio",   "memory",	   "devices",	  "pids",
	"bpf-firewall", "bpf-devices", "bpf-foreign", "bpf-socket-bind",
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
		dev_list_add(d, xasprintf("/dev/%s/%" PRId64 ":%" PRId64, kind,
					  r->major.v, r->minor.v),
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
		size_t k = 0;
		unsigned bits;

		if (cg_device_rule_check(r, i, &bits, err) < 0)
			goto fail;
		if (bits & 2)
			acc[k++] = 'r';
		if (bits & 4)
			acc[k++] = 'w';
		if (bits & 1)
			acc[k++] = 'm';
		acc[k] = '\0';
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
	struct split_ctx s = { .in = in, .caps = caps,
			       .now = now ? now : &defaults, .props = props };

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

/* ---- the bus ---------------------------------------------------------------- */

struct sd_conn {
	sd_bus *bus;
	struct cgsd_unit unit;
	char *unit_path; /* the unit's D-Bus object */
	struct cgsd_caps caps;
};

static void conn_close(struct sd_conn *c)
{
	if (c->bus)
		sd_bus_flush_close_unref(c->bus);
	cgsd_unit_free(&c->unit);
	free(c->unit_path);
	memset(c, 0, sizeof(*c));
}

static int check_running(struct error *err)
{
	if (access(CGSD_RUN_DIR, F_OK) == 0)
		return 0;
	error_set(err, "systemd cgroup manager: systemd is not running (no %s)",
		  CGSD_RUN_DIR);
	err->code = ENOENT;
	return -1;
}

/* "systemd cgroup manager: METHOD UNIT: message (error name)". */
static int bus_fail(struct error *err, int r, const sd_bus_error *e,
		    const char *method, const char *unit)
{
	if (e && sd_bus_error_is_set(e))
		error_set(err, "systemd cgroup manager: %s %s: %s (%s)", method,
			  unit, e->message ? e->message : "", e->name);
	else
		error_setc(err, r < 0 ? -r : EIO, "systemd cgroup manager: %s %s",
			   method, unit);
	err->code = r < 0 ? -r : EIO;
	return -1;
}

/* systemd's own socket, when no dbus-daemon runs (root only). */
static int open_private(sd_bus **out)
{
	sd_bus *bus = NULL;
	int r = sd_bus_new(&bus);

	if (r >= 0)
		r = sd_bus_set_address(bus, SD_PRIVATE_ADDR);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*out = bus;
	return 0;
}

static int bus_open(sd_bus **out, struct error *err)
{
	int r = sd_bus_open_system(out);

	if (r >= 0)
		return 0;
	if (geteuid() == 0 && open_private(out) == 0) {
		log_debug("systemd cgroup manager: no system bus (%s), using %s",
			  strerror(-r), SD_PRIVATE_ADDR);
		return 0;
	}
	error_setc(err, -r,
		   "systemd cgroup manager: cannot connect to the system bus");
	return -1;
}

static int read_version(struct sd_conn *c, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_free_ char *v = NULL;
	int r = sd_bus_get_property_string(c->bus, SD_DEST, SD_PATH,
					   SD_MANAGER, "Version", &e, &v);

	if (r < 0)
		return bus_fail(err, r, &e, "Get", "Manager.Version");
	c->caps.version = cgsd_parse_version(v);
	return 0;
}

/* Connected, with the unit named by path and what systemd offers. */
static int conn_open(struct sd_conn *c, const struct cg_host *h,
		     const char *path, struct error *err)
{
	int r;

	memset(c, 0, sizeof(*c));
	if (check_running(err) < 0 ||
	    cgsd_unit_from_path(path, &c->unit, err) < 0)
		return -1;
	r = sd_bus_path_encode(SD_PATH "/unit", c->unit.name, &c->unit_path);
	if (r < 0)
		return bus_fail(err, r, NULL, "encode the object path of",
				c->unit.name);
	if (bus_open(&c->bus, err) < 0 || read_version(c, err) < 0)
		return -1;
	c->caps.unified = h->mode == CGROUP_MODE_V2;
	return 0;
}

static int append_variant(sd_bus_message *m, const struct cgsd_prop *p)
{
	const char *sig = p->type == CGSD_STRV ? "as" : "ay";
	int r = sd_bus_message_open_container(m, 'r', "sv");

	if (r >= 0)
		r = sd_bus_message_append(m, "s", p->name);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'v', sig);
	if (r >= 0 && p->type == CGSD_STRV)
		r = sd_bus_message_append_strv(m, p->strv);
	else if (r >= 0)
		r = sd_bus_message_append_array(m, 'y', p->bytes, p->n_bytes);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

static int append_pairs(sd_bus_message *m, const struct cgsd_prop *p)
{
	int r = sd_bus_message_open_container(m, 'r', "sv");

	if (r >= 0)
		r = sd_bus_message_append(m, "s", p->name);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'v', "a(ss)");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(ss)");
	for (size_t i = 0; r >= 0 && p->strv[i] && p->strv[i + 1]; i += 2)
		r = sd_bus_message_append(m, "(ss)", p->strv[i], p->strv[i + 1]);
	for (int k = 0; r >= 0 && k < 3; k++)
		r = sd_bus_message_close_container(m);
	return r;
}

static int append_prop(sd_bus_message *m, const struct cgsd_prop *p)
{
	switch (p->type) {
	case CGSD_BOOL:
		return sd_bus_message_append(m, "(sv)", p->name, "b",
					     (int)(p->u != 0));
	case CGSD_U64:
		return sd_bus_message_append(m, "(sv)", p->name, "t", p->u);
	case CGSD_STR:
		return sd_bus_message_append(m, "(sv)", p->name, "s", p->s);
	case CGSD_PIDS:
		return sd_bus_message_append(m, "(sv)", p->name, "au", 1,
					     (uint32_t)p->u);
	case CGSD_STRV:
	case CGSD_BYTES:
		return append_variant(m, p);
	case CGSD_PAIRS:
		return append_pairs(m, p);
	}
	return -EINVAL;
}

static int append_props(sd_bus_message *m, const struct cgsd_props *props)
{
	int r = sd_bus_message_open_container(m, 'a', "(sv)");

	for (size_t i = 0; r >= 0 && i < props->n; i++)
		r = append_prop(m, &props->items[i]);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

/* A job being waited for: JobRemoved tells its result. */
struct job_wait {
	char *job;
	char *result;
	bool done;
};

static int on_job_removed(sd_bus_message *m, void *data, sd_bus_error *ret)
{
	struct job_wait *w = data;
	const char *job, *unit, *result;
	uint32_t id;

	(void)ret;
	if (!w->job || sd_bus_message_read(m, "uoss", &id, &job, &unit,
					   &result) < 0)
		return 0;
	if (strcmp(job, w->job) == 0) {
		free(w->result);
		w->result = xstrdup(result);
		w->done = true;
	}
	return 0;
}

/* Signals go out only to subscribers; without them, the polling does. */
static int watch_jobs(struct sd_conn *c, struct job_wait *w,
		      sd_bus_slot **slot, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_match_signal(c->bus, slot, SD_DEST, SD_PATH, SD_MANAGER,
				    "JobRemoved", on_job_removed, w);

	if (r < 0)
		return bus_fail(err, r, NULL, "AddMatch JobRemoved for",
				c->unit.name);
	r = sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER,
			       "Subscribe", &e, NULL, "");
	if (r < 0)
		log_debug("systemd cgroup manager: Subscribe: %s",
			  e.message ? e.message : strerror(-r));
	return 0;
}

static bool job_gone(struct sd_conn *c, const char *job)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	uint32_t id;

	return sd_bus_get_property_trivial(c->bus, SD_DEST, job, SD_JOB_IFACE,
					   "Id", &e, 'u', &id) < 0 &&
	       sd_bus_error_is_set(&e);
}

static int wait_job(struct sd_conn *c, struct job_wait *w, const char *method,
		    struct error *err)
{
	long long deadline = cg_now_ms() + CGSD_JOB_TIMEOUT_MS;
	long long next_poll = cg_now_ms() + SD_POLL_MS;

	while (!w->done) {
		long long now;
		int r = sd_bus_process(c->bus, NULL);

		if (r < 0)
			return bus_fail(err, r, NULL, method, c->unit.name);
		if (r > 0)
			continue;
		now = cg_now_ms();
		if (now >= next_poll) {
			if (job_gone(c, w->job))
				break;
			next_poll = now + SD_POLL_MS;
		}
		if (now >= deadline)
			return error_setc(err, ETIMEDOUT,
					  "systemd cgroup manager: %s %s: job %s not done after %d ms",
					  method, c->unit.name, w->job,
					  CGSD_JOB_TIMEOUT_MS);
		r = sd_bus_wait(c->bus, (uint64_t)(next_poll - now) * 1000);
		if (r < 0 && r != -EINTR)
			return bus_fail(err, r, NULL, method, c->unit.name);
	}
	log_debug("systemd cgroup manager: %s %s: job %s: %s", method,
		  c->unit.name, w->job, w->result ? w->result : "gone (polled)");
	if (w->result && strcmp(w->result, "done") != 0)
		return error_set(err,
				 "systemd cgroup manager: %s %s: the job ended \"%s\" (journalctl -u %s)",
				 method, c->unit.name, w->result, c->unit.name);
	return 0;
}

static void job_wait_free(struct job_wait *w)
{
	free(w->job);
	free(w->result);
}

/* The job path of a reply, then the wait for it. */
static int follow_job(struct sd_conn *c, sd_bus_message *reply,
		      struct job_wait *w, const char *method, struct error *err)
{
	const char *job;
	int r = sd_bus_message_read(reply, "o", &job);

	if (r < 0)
		return bus_fail(err, r, NULL, method, c->unit.name);
	w->job = xstrdup(job);
	return wait_job(c, w, method, err);
}

static int unit_property(struct sd_conn *c, const char *iface,
			 const char *name, char **out, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_get_property_string(c->bus, SD_DEST, c->unit_path, iface,
					   name, &e, out);

	if (r < 0) {
		_cleanup_free_ char *what = xasprintf("Get %s of", name);

		return bus_fail(err, r, &e, what, c->unit.name);
	}
	return 0;
}

static int start_scope(struct sd_conn *c, const struct cgsd_props *props,
		       struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_bus_msg_ sd_bus_message *m = NULL;
	_cleanup_bus_msg_ sd_bus_message *reply = NULL;
	_cleanup_free_ char *state = NULL;
	sd_bus_slot *slot = NULL;
	struct job_wait w = { 0 };
	int r;

	if (watch_jobs(c, &w, &slot, err) < 0)
		return -1;
	r = sd_bus_message_new_method_call(c->bus, &m, SD_DEST, SD_PATH,
					   SD_MANAGER, "StartTransientUnit");
	if (r >= 0)
		r = sd_bus_message_append(m, "ss", c->unit.name, "fail");
	if (r >= 0)
		r = append_props(m, props);
	if (r >= 0)
		r = sd_bus_message_append(m, "a(sa(sv))", 0);
	if (r < 0)
		r = bus_fail(err, r, NULL, "build StartTransientUnit for",
			     c->unit.name);
	else if ((r = sd_bus_call(c->bus, m, CGSD_JOB_TIMEOUT_MS * 1000ULL, &e,
				  &reply)) < 0)
		r = bus_fail(err, r, &e, "StartTransientUnit", c->unit.name);
	else
		r = follow_job(c, reply, &w, "StartTransientUnit", err);
	sd_bus_slot_unref(slot);
	job_wait_free(&w);
	if (r < 0)
		return -1;
	if (unit_property(c, SD_UNIT_IFACE, "ActiveState", &state, err) < 0)
		return -1;
	if (strcmp(state, "active") != 0)
		return error_set(err,
				 "systemd cgroup manager: StartTransientUnit %s: the scope is %s, not active",
				 c->unit.name, state);
	return 0;
}

static int stop_unit(struct sd_conn *c, struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_bus_msg_ sd_bus_message *reply = NULL;
	sd_bus_slot *slot = NULL;
	struct job_wait w = { 0 };
	int r;

	if (watch_jobs(c, &w, &slot, err) < 0)
		return -1;
	r = sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit",
			       &e, &reply, "ss", c->unit.name, "replace");
	if (r < 0 && sd_bus_error_has_name(&e, SD_NO_SUCH_UNIT))
		r = 0; /* gone already (it stops by itself when empty) */
	else if (r < 0)
		r = bus_fail(err, r, &e, "StopUnit", c->unit.name);
	else
		r = follow_job(c, reply, &w, "StopUnit", err);
	sd_bus_slot_unref(slot);
	job_wait_free(&w);
	return r;
}

static void reset_failed(struct sd_conn *c)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_call_method(c->bus, SD_DEST, SD_PATH, SD_MANAGER,
				   "ResetFailedUnit", &e, NULL, "s",
				   c->unit.name);

	if (r < 0 && !sd_bus_error_has_name(&e, SD_NO_SUCH_UNIT))
		log_debug("systemd cgroup manager: ResetFailedUnit %s: %s",
			  c->unit.name, e.message ? e.message : strerror(-r));
}

static int set_properties(struct sd_conn *c, const struct cgsd_props *props,
			  struct error *err)
{
	_cleanup_bus_error_ sd_bus_error e = SD_BUS_ERROR_NULL;
	_cleanup_bus_msg_ sd_bus_message *m = NULL;
	int r = sd_bus_message_new_method_call(c->bus, &m, SD_DEST, SD_PATH,
					       SD_MANAGER, "SetUnitProperties");

	if (r >= 0)
		r = sd_bus_message_append(m, "sb", c->unit.name, 1);
	if (r >= 0)
		r = append_props(m, props);
	if (r < 0)
		return bus_fail(err, r, NULL, "build SetUnitProperties for",
				c->unit.name);
	r = sd_bus_call(c->bus, m, CGSD_JOB_TIMEOUT_MS * 1000ULL, &e, NULL);
	if (r < 0)
		return bus_fail(err, r, &e, "SetUnitProperties", c->unit.name);
	return 0;
}

/* systemd's idea of the scope's cgroup must be the path we keep. */
static int check_cgroup(struct sd_conn *c, struct error *err)
{
	_cleanup_free_ char *cg = NULL;

	if (unit_property(c, SD_SCOPE_IFACE, "ControlGroup", &cg, err) < 0)
		return -1;
	if (strcmp(cg, c->unit.path) != 0)
		return error_set(err,
				 "systemd cgroup manager: %s is in cgroup \"%s\", not \"%s\" (systemd in another cgroup namespace?)",
				 c->unit.name, cg, c->unit.path);
	return 0;
}

/* ---- the files -------------------------------------------------------------- */

static int open_leaf(const char *mnt, bool v2, const char *path,
		     struct cg_dir *root, struct cg_dir *leaf,
		     struct error *err)
{
	if (cg_open_mount(mnt, v2, root, err) < 0)
		return -1;
	if (cg_walk(root, path, false, NULL, NULL, leaf, NULL, err) < 0) {
		if (err->code == ENOENT)
			error_setc(err, ENOENT, "cgroup %s%s does not exist",
				   mnt, path);
		return -1;
	}
	return 0;
}

/* The mount holding a setting's file (NULL: none). */
static const char *mount_for(const struct cg_host *h, const char *ctrl)
{
	const struct cg1_hier *hier;
	int c;

	if (h->mode == CGROUP_MODE_V2)
		return h->v2_mnt;
	c = ctrl ? cg1_ctrl_from_name(ctrl) : -1;
	hier = c >= 0 ? cg1_host_hier(h, (enum cg1_ctrl)c) : NULL;
	return hier ? hier->mnt : NULL;
}

static int read_u64_file(const struct cg_host *h, const char *path,
			 const char *ctrl, const char *file, char **out)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	const char *mnt = mount_for(h, ctrl);
	struct error ignored;

	if (!mnt || open_leaf(mnt, h->mode == CGROUP_MODE_V2, path, &root,
			      &leaf, &ignored) < 0 ||
	    cg_read(&leaf, file, out, &ignored) < 0)
		return -1;
	(*out)[strcspn(*out, "\n")] = '\0';
	return 0;
}

/* The quota in force, for an update that changes only one of the two. */
static void read_cpu_now(const struct cg_host *h, const char *path,
			 struct cgsd_cpu_now *now)
{
	_cleanup_free_ char *a = NULL, *b = NULL;
	char q[32] = "", p[32] = "";
	unsigned long long u;

	now->quota = UINT64_MAX;
	now->period = CGSD_DEFAULT_PERIOD;
	if (h->mode == CGROUP_MODE_V2) {
		if (read_u64_file(h, path, "cpu", "cpu.max", &a) < 0 ||
		    sscanf(a, "%31s %31s", q, p) != 2)
			return;
	} else {
		if (read_u64_file(h, path, "cpu", "cpu.cfs_quota_us", &a) < 0 ||
		    read_u64_file(h, path, "cpu", "cpu.cfs_period_us", &b) < 0)
			return;
		snprintf(q, sizeof(q), "%s", a);
		snprintf(p, sizeof(p), "%s", b);
	}
	if (parse_u64(q, &u) == 0)
		now->quota = u;
	if (parse_u64(p, &u) == 0 && u > 0)
		now->period = u;
}

/* checkBeforeUpdate, before systemd gets a limit (it would not check). */
static int check_usage(const struct cg_host *h, const char *path,
		       const struct cg_settings *set, struct error *err)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct cg_setting *it = &set->items[i];
		_cleanup_free_ char *text = NULL;
		long long limit, usage;

		if (!it->usage_file || parse_i64(it->value, &limit) < 0 ||
		    read_u64_file(h, path, it->ctrl, it->usage_file, &text) < 0 ||
		    parse_i64(text, &usage) < 0 || limit < 0 || limit >= usage)
			continue;
		return error_set(err,
				 "linux.resources.%s: new limit %lld is below the current usage %lld (%s) and checkBeforeUpdate is set",
				 it->field, limit, usage, it->usage_file);
	}
	return 0;
}

/* cpuset refuses tasks while cpus or mems is empty: the parent's. */
static int cpuset_fill(const struct cg_dir *parent, const struct cg_dir *dir,
		       bool made, bool leaf, void *ctx, struct error *err)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

	if (!parent)
		return 0;
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *mine = NULL, *theirs = NULL;

		if (cg_read(dir, files[i], &mine, err) < 0)
			return -1;
		if (mine[strspn(mine, " \n")])
			continue;
		if (cg_read(parent, files[i], &theirs, err) < 0)
			return -1;
		theirs[strcspn(theirs, "\n")] = '\0';
		if (cg_write(dir, files[i], theirs, err) < 0)
			return error_prefix(err, "initialise cpuset %s",
					    dir->path);
	}
	return 0;
}

/*
 * v1: systemd made the scope in the hierarchies it delegates (and in its
 * own); the container gets the same path in all the others (freezer,
 * cpuset, devices, net_cls, hugetlb, ...), as with cgroupfs.
 */
static int join_v1(const struct cg_host *h, const char *path, pid_t pid,
		   struct error *err)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
		bool cpuset = h->hier[i].ctrls & (1u << CG1_CPUSET);

		if (cg_open_mount(h->hier[i].mnt, false, &root, err) < 0 ||
		    cg_walk(&root, path, true, cpuset ? cpuset_fill : NULL, NULL,
			    &leaf, NULL, err) < 0 ||
		    cg_write(&leaf, "cgroup.procs", buf, err) < 0)
			return -1;
	}
	return 0;
}

static bool in_hier(const char *ctrl, const void *ctx)
{
	const struct cg1_hier *hier = ctx;
	int c = ctrl ? cg1_ctrl_from_name(ctrl) : -1;

	return c >= 0 && (hier->ctrls & (1u << c));
}

static int apply_v1(const struct cg_host *h, const char *path,
		    const struct cg_settings *set, struct error *err)
{
	for (size_t k = 0; k < set->n; k++)
		if (!mount_for(h, set->items[k].ctrl))
			return error_set(err,
					 "linux.resources.%s: the %s controller is not mounted on this host (no %s)",
					 set->items[k].field,
					 set->items[k].ctrl ? set->items[k].ctrl : "?",
					 set->items[k].file);
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
		bool any = false;

		for (size_t k = 0; k < set->n; k++)
			any |= in_hier(set->items[k].ctrl, &h->hier[i]);
		if (!any)
			continue;
		if (open_leaf(h->hier[i].mnt, false, path, &root, &leaf, err) < 0 ||
		    cg_settings_apply(&leaf, set, in_hier, &h->hier[i], err) < 0)
			return -1;
	}
	return 0;
}

/* What systemd does not manage: limits, and the device filter (v2). */
struct fs_rest {
	struct cg_settings main; /* v2, or the v1 hierarchies */
	struct cg_settings side; /* hybrid: the cgroup2 side */
};

static void fs_rest_free(struct fs_rest *r)
{
	cg_settings_free(&r->main);
	cg_settings_free(&r->side);
}

static int apply_rest(const struct cg_host *h, const char *path,
		      const struct fs_rest *rest,
		      const struct oci_resources *res, struct error *err)
{
	if (h->mode == CGROUP_MODE_V2)
		return cg2_update(h->v2_mnt, path, &rest->main, res, err);
	if (apply_v1(h, path, &rest->main, err) < 0)
		return -1;
	if (rest->side.n > 0)
		return cg2_update(h->v2_mnt, path, &rest->side, NULL, err);
	return 0;
}

/* v1: the device rules go to systemd too, or it resets them (see
 * cgsd_device_props); rules it cannot hold are refused, not weakened. */
static int v1_device_props(const struct oci_resources *res,
			   struct cgsd_props *props, struct error *err)
{
	_cleanup_free_ char *text = NULL;
	struct error e;
	int r;

	if (read_file_at(AT_FDCWD, "/proc/devices", 1u << 16, &text, NULL,
			 &e) < 0) {
		log_warn("systemd cgroup manager: %s: DeviceAllow= by device number only",
			 e.msg);
		text = xstrdup("");
	}
	r = cgsd_device_props(res->devices, res->n_devices, text, props, err);
	if (r == 0)
		return error_set(err,
				 "linux.resources.devices: with --systemd-cgroup on cgroup v1 the rules must be an allow list (deny all, then allows): systemd rewrites a scope's devices cgroup at every daemon-reload from DeviceAllow=, which cannot deny");
	return r < 0 ? -1 : 0;
}

/* Settings as cgroupfs would write them, then the split. */
static int build_split(const struct cg_host *h, const char *path,
		       const struct cgsd_caps *caps,
		       const struct oci_resources *res, bool update,
		       struct cgsd_props *props, struct fs_rest *rest,
		       struct error *err)
{
	struct cg_settings all = { 0 };
	struct cgsd_cpu_now now = { UINT64_MAX, CGSD_DEFAULT_PERIOD };
	int r;

	if (h->mode == CGROUP_MODE_V2)
		r = cg2_build_settings(res, update, &all, err);
	else
		r = cg1_build_settings(res, update, h, &all, &rest->side, err);
	if (r < 0)
		return -1;
	if (update)
		read_cpu_now(h, path, &now);
	r = update ? check_usage(h, path, &all, err) : 0;
	if (r == 0)
		r = cgsd_split_settings(&all, caps, &now, props, &rest->main,
					err);
	if (r == 0 && !caps->unified && res && res->n_devices > 0)
		r = v1_device_props(res, props, err);
	cg_settings_free(&all);
	return r;
}

static int fs_kill(const struct cg_host *h, const char *path, int sig,
		   struct error *err)
{
	if (h->mode == CGROUP_MODE_V2)
		return cg2_kill(h->v2_mnt, path, sig, err);
	return cg1_kill(h, path, sig, err);
}

static int fs_destroy(const struct cg_host *h, const char *path, bool force,
		      struct error *err)
{
	if (h->mode == CGROUP_MODE_V2)
		return cg2_destroy(h->v2_mnt, path, force, err);
	return cg1_destroy(h, path, force, err);
}

/* Does the cgroup still hold processes?  (destroy without force) */
static int fs_busy(const struct cg_host *h, const char *path,
		   struct error *err)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int r = h->mode == CGROUP_MODE_V2 ?
			cg2_pids(h->v2_mnt, path, &pids, &n, err) :
			cg1_pids(h, path, &pids, &n, err);

	if (r < 0)
		return err->code == ENOENT ? 0 : -1;
	if (n)
		return error_setc(err, EBUSY, "cgroup %s still has %zu process(es)",
				  path, n);
	return 0;
}

/* ---- the manager -------------------------------------------------------------- */

int cgsd_resolve_path(const char *cgroups_path, const char *id, char **out,
		      struct error *err)
{
	struct cgsd_unit u;
	sd_bus *bus = NULL;

	if (check_running(err) < 0 || bus_open(&bus, err) < 0)
		return -1;
	sd_bus_flush_close_unref(bus);
	if (cgsd_parse_path(cgroups_path, id, &u, err) < 0)
		return -1;
	*out = take_ptr(u.path);
	cgsd_unit_free(&u);
	return 0;
}

int cgsd_kill(const struct cg_host *h, const char *path, int sig,
	      struct error *err)
{
	if (fs_kill(h, path, sig, err) == 0)
		return 0;
	/* systemd removes a scope's cgroups as soon as it is empty: when
	 * they vanish under the signalling, every process is gone. */
	return err->code == ENOENT ? 0 : -1;
}

/* A create that failed half way: nothing may be left. */
static void undo_scope(struct sd_conn *c, const struct cg_host *h,
		       const char *path)
{
	struct error e;

	if (fs_kill(h, path, SIGKILL, &e) < 0 && e.code != ENOENT)
		log_debug("cgroup: %s", e.msg);
	if (stop_unit(c, &e) < 0)
		log_warn("cleanup after a failed create: %s", e.msg);
	else if (fs_destroy(h, path, true, &e) < 0)
		log_warn("cleanup after a failed create: %s", e.msg);
	reset_failed(c);
}

int cgsd_create(const struct cg_host *h, const char *path,
		const struct oci_resources *res, pid_t pid, struct error *err)
{
	struct sd_conn c;
	struct cgsd_props props = { 0 };
	struct fs_rest rest = { { 0 }, { 0 } };
	int ret = -1;

	if (conn_open(&c, h, path, err) < 0)
		goto out;
	cgsd_scope_props(&c.unit, pid, &c.caps, &props);
	if (build_split(h, path, &c.caps, res, false, &props, &rest, err) < 0)
		goto out;
	/* A failed scope of a former container of that name is in the way. */
	reset_failed(&c);
	if (start_scope(&c, &props, err) < 0)
		goto out;
	if (check_cgroup(&c, err) < 0 ||
	    (!c.caps.unified && join_v1(h, path, pid, err) < 0) ||
	    apply_rest(h, path, &rest, res, err) < 0) {
		undo_scope(&c, h, path);
		goto out;
	}
	ret = 0;
out:
	cgsd_props_free(&props);
	fs_rest_free(&rest);
	conn_close(&c);
	return ret;
}

int cgsd_update(const struct cg_host *h, const char *path,
		const struct oci_resources *res, struct error *err)
{
	struct sd_conn c;
	struct cgsd_props props = { 0 };
	struct fs_rest rest = { { 0 }, { 0 } };
	int ret = -1;

	if (conn_open(&c, h, path, err) < 0 ||
	    build_split(h, path, &c.caps, res, true, &props, &rest, err) < 0)
		goto out;
	/* systemd does not report a value the kernel refuses (it logs it):
	 * on v1, where the memory limit is written here too (memsw order),
	 * the files go first so that such a value is not recorded. */
	if (!c.caps.unified && apply_rest(h, path, &rest, res, err) < 0)
		goto out;
	if (props.n > 0 && set_properties(&c, &props, err) < 0)
		goto out;
	ret = c.caps.unified ? apply_rest(h, path, &rest, res, err) : 0;
out:
	cgsd_props_free(&props);
	fs_rest_free(&rest);
	conn_close(&c);
	return ret;
}

int cgsd_destroy(const struct cg_host *h, const char *path, bool force,
		 struct error *err)
{
	struct sd_conn c;
	struct error e;
	int ret = -1;

	if (check_running(&e) < 0) {
		log_warn("%s: removing %s as cgroupfs would", e.msg, path);
		return fs_destroy(h, path, force, err);
	}
	if (!force && fs_busy(h, path, err) < 0)
		return -1;
	if (conn_open(&c, h, path, err) < 0)
		goto out;
	if (force && fs_kill(h, path, SIGKILL, err) < 0 && err->code != ENOENT)
		goto out;
	if (stop_unit(&c, err) < 0)
		goto out;
	reset_failed(&c);
	/* What systemd leaves: v1 hierarchies of ours, a stray child. */
	ret = fs_destroy(h, path, true, err);
out:
	conn_close(&c);
	return ret;
}
