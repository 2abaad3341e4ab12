/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The systemd cgroup manager without systemd: cgroupsPath "slice:prefix:name"
 * to unit and cgroup path, the scope's own properties, and the split of the
 * cgroupfs settings into unit properties and files (systemd.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../runtime/cgroup/systemd.h"

/* ---- helpers ------------------------------------------------------------ */

static void expect_error(int ret, const struct error *err, const char *part)
{
	assert_int_equal(ret, -1);
	if (!strstr(err->msg, part))
		fail_msg("error \"%s\" does not mention \"%s\"", err->msg, part);
}

static const struct cgsd_prop *prop(const struct cgsd_props *p,
				    const char *name)
{
	const struct cgsd_prop *it = cgsd_props_find(p, name);

	if (!it)
		fail_msg("no property %s", name);
	return it;
}

static void expect_u64(const struct cgsd_props *p, const char *name,
		       uint64_t v)
{
	const struct cgsd_prop *it = prop(p, name);

	assert_int_equal(it->type, CGSD_U64);
	if (it->u != v)
		fail_msg("%s = %llu, expected %llu", name,
			 (unsigned long long)it->u, (unsigned long long)v);
}

static void expect_bool(const struct cgsd_props *p, const char *name, bool v)
{
	const struct cgsd_prop *it = prop(p, name);

	assert_int_equal(it->type, CGSD_BOOL);
	assert_int_equal(it->u, v);
}

static void expect_str(const struct cgsd_props *p, const char *name,
		       const char *v)
{
	const struct cgsd_prop *it = prop(p, name);

	assert_int_equal(it->type, CGSD_STR);
	assert_string_equal(it->s, v);
}

static void expect_bytes(const struct cgsd_props *p, const char *name,
			 const uint8_t *v, size_t n)
{
	const struct cgsd_prop *it = prop(p, name);

	assert_int_equal(it->type, CGSD_BYTES);
	assert_int_equal(it->n_bytes, n);
	assert_memory_equal(it->bytes, v, n);
}

static bool has_file(const struct cg_settings *s, const char *file)
{
	return cg_settings_find(s, file) != NULL;
}

static size_t count_named(const struct cgsd_props *p, const char *name)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += strcmp(p->items[i].name, name) == 0;
	return n;
}

/* v1 host with every controller in one pseudo hierarchy. */
static struct cg_host v1_host(void)
{
	struct cg_host h = { .mode = CGROUP_MODE_HYBRID,
			     .v2_mnt = CGROUP_HYBRID_UNIFIED };
	static const enum cg1_ctrl c[] = { CG1_CPU, CG1_CPUACCT, CG1_CPUSET,
					   CG1_MEMORY, CG1_DEVICES, CG1_FREEZER,
					   CG1_BLKIO, CG1_PIDS, CG1_HUGETLB };

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++)
		h.v1_ctrls |= 1u << c[i];
	h.hier[0].ctrls = h.v1_ctrls;
	h.hier[0].mnt = (char *)"/sys/fs/cgroup/x";
	h.n_hier = 1;
	return h;
}

/* ---- names and paths ------------------------------------------------------ */

static void expect_unit(const char *cgroups_path, const char *id,
			const char *slice, const char *name, const char *path)
{
	struct cgsd_unit u;
	struct error err;

	if (cgsd_parse_path(cgroups_path, id, &u, &err) < 0)
		fail_msg("%s: %s", cgroups_path ? cgroups_path : "(null)", err.msg);
	assert_string_equal(u.slice, slice);
	assert_string_equal(u.name, name);
	assert_string_equal(u.path, path);
	cgsd_unit_free(&u);
}

static void test_parse_path(void **state)
{
	struct cgsd_unit u;
	struct error err;
	char longname[300];

	(void)state;
	expect_unit("system.slice:docker:abc", "x", "system.slice",
		    "docker-abc.scope", "/system.slice/docker-abc.scope");
	expect_unit(":docker:abc", "x", "system.slice", "docker-abc.scope",
		    "/system.slice/docker-abc.scope");
	expect_unit(NULL, "c1", "system.slice", "agentsbx-c1.scope",
		    "/system.slice/agentsbx-c1.scope");
	expect_unit("", "c1", "system.slice", "agentsbx-c1.scope",
		    "/system.slice/agentsbx-c1.scope");
	expect_unit("a-b.slice:p:n", "x", "a-b.slice", "p-n.scope",
		    "/a.slice/a-b.slice/p-n.scope");
	expect_unit("user-1000.slice:p:n", "x", "user-1000.slice", "p-n.scope",
		    "/user.slice/user-1000.slice/p-n.scope");
	expect_unit("-.slice:p:n", "x", "-.slice", "p-n.scope", "/p-n.scope");
	expect_unit("machine.slice::vm1.scope", "x", "machine.slice",
		    "vm1.scope", "/machine.slice/vm1.scope");
	expect_unit("machine.slice:pre:vm1.scope", "x", "machine.slice",
		    "pre-vm1.scope", "/machine.slice/pre-vm1.scope");
	/* What a unit name cannot hold is escaped as systemd-escape does. */
	expect_unit(NULL, "a+b", "system.slice", "agentsbx-a\\x2bb.scope",
		    "/system.slice/agentsbx-a\\x2bb.scope");
	expect_unit("s.slice:p:a/b", "x", "s.slice", "p-a\\x2fb.scope",
		    "/s.slice/p-a\\x2fb.scope");

	expect_error(cgsd_parse_path("a:b", "x", &u, &err), &err,
		     "must be \"slice:prefix:name\"");
	expect_error(cgsd_parse_path("a.slice:b:c:d", "x", &u, &err), &err,
		     "must be \"slice:prefix:name\"");
	expect_error(cgsd_parse_path("/agentsbx/x", "x", &u, &err), &err,
		     "must be \"slice:prefix:name\"");
	expect_error(cgsd_parse_path("system:p:n", "x", &u, &err), &err,
		     "must end in \".slice\"");
	expect_error(cgsd_parse_path(".slice:p:n", "x", &u, &err), &err,
		     "must end in \".slice\"");
	expect_error(cgsd_parse_path("-a.slice:p:n", "x", &u, &err), &err,
		     "'-' separates");
	expect_error(cgsd_parse_path("a--b.slice:p:n", "x", &u, &err), &err,
		     "'-' separates");
	expect_error(cgsd_parse_path("a-.slice:p:n", "x", &u, &err), &err,
		     "'-' separates");
	expect_error(cgsd_parse_path("a b.slice:p:n", "x", &u, &err), &err,
		     "not allowed in a unit name");
	expect_error(cgsd_parse_path("s.slice:p:", "x", &u, &err), &err,
		     "empty");
	expect_error(cgsd_parse_path("s.slice:p:.scope", "x", &u, &err), &err,
		     "empty");
	expect_error(cgsd_parse_path("s.slice:p:pod.slice", "x", &u, &err),
		     &err, "cannot hold processes");
	expect_error(cgsd_parse_path("s.slice::cpu", "x", &u, &err), &err,
		     "would rename");
	expect_error(cgsd_parse_path("s.slice::_x", "x", &u, &err), &err,
		     "would rename");
	expect_error(cgsd_parse_path("s.slice::.x", "x", &u, &err), &err,
		     "would rename");
	expect_error(cgsd_parse_path(NULL, "", &u, &err), &err, "empty");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	expect_error(cgsd_parse_path(NULL, longname, &u, &err), &err,
		     "longer than 255");
}

static void test_slice_path(void **state)
{
	char *p;
	struct error err;

	(void)state;
	assert_int_equal(cgsd_slice_path("system.slice", &p, &err), 0);
	assert_string_equal(p, "/system.slice");
	free(p);
	assert_int_equal(cgsd_slice_path("a-b-c.slice", &p, &err), 0);
	assert_string_equal(p, "/a.slice/a-b.slice/a-b-c.slice");
	free(p);
	assert_int_equal(cgsd_slice_path("-.slice", &p, &err), 0);
	assert_string_equal(p, "");
	free(p);
	expect_error(cgsd_slice_path("a-b", &p, &err), &err, ".slice");
}

static void test_unit_from_path(void **state)
{
	struct cgsd_unit u;
	struct error err;

	(void)state;
	assert_int_equal(cgsd_unit_from_path("/system.slice/docker-abc.scope",
					     &u, &err), 0);
	assert_string_equal(u.name, "docker-abc.scope");
	assert_string_equal(u.slice, "system.slice");
	cgsd_unit_free(&u);
	assert_int_equal(cgsd_unit_from_path("/a.slice/a-b.slice/x.scope", &u,
					     &err), 0);
	assert_string_equal(u.slice, "a-b.slice");
	cgsd_unit_free(&u);
	assert_int_equal(cgsd_unit_from_path("/x.scope", &u, &err), 0);
	assert_string_equal(u.slice, "-.slice");
	cgsd_unit_free(&u);
	expect_error(cgsd_unit_from_path("/agentsbx/c1", &u, &err), &err,
		     "not a systemd scope");
	expect_error(cgsd_unit_from_path("/a/x.scope", &u, &err), &err,
		     "not in a slice");
	expect_error(cgsd_unit_from_path("/s.slice/.scope", &u, &err), &err,
		     "not a systemd scope");
}

/* ---- conversions ------------------------------------------------------------ */

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(cgsd_parse_version("252.38-1~deb12u1"), 252);
	assert_int_equal(cgsd_parse_version("255.4-1ubuntu8"), 255);
	assert_int_equal(cgsd_parse_version("v239"), 239);
	assert_int_equal(cgsd_parse_version(""), 0);
	assert_int_equal(cgsd_parse_version(NULL), 0);
}

static void expect_mask(const char *list, const uint8_t *v, size_t n)
{
	uint8_t *b = NULL;
	size_t len = 99;
	struct error err;

	if (cgsd_cpu_mask("cpu.cpus", list, &b, &len, &err) < 0)
		fail_msg("%s: %s", list, err.msg);
	assert_int_equal(len, n);
	if (n)
		assert_memory_equal(b, v, n);
	free(b);
}

static void test_cpu_mask(void **state)
{
	uint8_t *b;
	size_t n;
	struct error err;

	(void)state;
	expect_mask("0-3,8", (const uint8_t[]){ 0x0f, 0x01 }, 2);
	expect_mask("1", (const uint8_t[]){ 0x02 }, 1);
	expect_mask("7-9", (const uint8_t[]){ 0x80, 0x03 }, 2);
	expect_mask("9,0", (const uint8_t[]){ 0x01, 0x02 }, 2);
	expect_mask("0-3\n", (const uint8_t[]){ 0x0f }, 1);
	expect_mask("", NULL, 0);
	expect_error(cgsd_cpu_mask("cpu.cpus", "3-1", &b, &n, &err), &err,
		     "invalid range");
	expect_error(cgsd_cpu_mask("cpu.cpus", "1-", &b, &n, &err), &err,
		     "invalid range");
	expect_error(cgsd_cpu_mask("cpu.mems", "-1", &b, &n, &err), &err,
		     "invalid range");
	expect_error(cgsd_cpu_mask("cpu.cpus", "a", &b, &n, &err), &err,
		     "invalid list");
	expect_error(cgsd_cpu_mask("cpu.cpus", "8192", &b, &n, &err), &err,
		     "beyond 8191");
}

/* systemd writes cpu.max as per_sec * period / 1e6, rounded down, and keeps
 * per_sec as a whole percent: never below the quota, the quota itself when
 * it is a whole percent, at most 1% of a CPU above. */
static void test_quota_round_trip(void **state)
{
	static const uint64_t periods[] = { 1000,  3000,   7919,   30000,
					    33333, 100000, 250000, 999999,
					    1000000 };
	static const uint64_t quotas[] = { 1000,  1001,  9999,	 10000,
					   12345, 33333, 50000,	 99999,
					   100000, 150000, 777777, 2000000 };

	(void)state;
	assert_int_equal(cgsd_quota_per_sec(50000, 100000), 500000);
	assert_int_equal(cgsd_quota_per_sec(50000, 0), 500000);
	assert_int_equal(cgsd_quota_per_sec(25000, 250000), 100000);
	assert_int_equal(cgsd_quota_per_sec(10000, 30000), 340000);
	assert_int_equal(cgsd_quota_per_sec(1, 100000), 10000);
	for (size_t i = 0; i < sizeof(periods) / sizeof(*periods); i++)
		for (size_t k = 0; k < sizeof(quotas) / sizeof(*quotas); k++) {
			uint64_t q = quotas[k], p = periods[i];
			uint64_t ps = cgsd_quota_per_sec(q, p);
			uint64_t back = ps * p / 1000000;

			assert_int_equal(ps % CGSD_QUOTA_STEP, 0);
			if (back < q || back > q + p / 100 ||
			    (q * 100 % p == 0 && back != q))
				fail_msg("quota %llu period %llu: systemd writes %llu",
					 (unsigned long long)q,
					 (unsigned long long)p,
					 (unsigned long long)back);
		}
	assert_true(cgsd_quota_per_sec(UINT64_MAX / 2, 100000) < UINT64_MAX);
}

/* ---- the scope's properties --------------------------------------------------- */

static void test_scope_props(void **state)
{
	struct cgsd_unit u = { .slice = (char *)"system.slice",
			       .name = (char *)"agentsbx-c1.scope",
			       .path = (char *)"/system.slice/agentsbx-c1.scope" };
	struct cgsd_caps v2 = { 252, true }, v1 = { 252, false },
			 new = { 255, true }, old = { 235, true };
	struct cgsd_props p = { 0 };

	(void)state;
	cgsd_scope_props(&u, 4242, &v2, &p);
	assert_string_equal(p.items[0].name, "Description");
	expect_str(&p, "Slice", "system.slice");
	assert_int_equal(prop(&p, "PIDs")->type, CGSD_PIDS);
	assert_int_equal(prop(&p, "PIDs")->u, 4242);
	expect_bool(&p, "Delegate", true);
	expect_bool(&p, "DefaultDependencies", false);
	expect_bool(&p, "MemoryAccounting", true);
	expect_bool(&p, "CPUAccounting", true);
	expect_bool(&p, "TasksAccounting", true);
	expect_str(&p, "CollectMode", "inactive-or-failed");
	assert_null(cgsd_props_find(&p, "DelegateControllers"));
	assert_null(cgsd_props_find(&p, "OOMPolicy"));
	cgsd_props_free(&p);

	/* v1: the same (the device rules are properties there, see below). */
	cgsd_scope_props(&u, 1, &v1, &p);
	expect_bool(&p, "Delegate", true);
	assert_null(cgsd_props_find(&p, "DelegateControllers"));
	cgsd_props_free(&p);

	cgsd_scope_props(&u, 1, &new, &p);
	expect_str(&p, "OOMPolicy", "continue");
	cgsd_props_free(&p);
	cgsd_scope_props(&u, 1, &old, &p);
	assert_null(cgsd_props_find(&p, "CollectMode"));
	cgsd_props_free(&p);
}

/* ---- the split ------------------------------------------------------------------ */

static char *unified_keys[] = { "memory.high", "io.weight", "cgroup.max.depth",
				"memory.min" };
static char *unified_vals[] = { "max", "default 200", "5", "1048576\n" };

static void full_v2_resources(struct oci_resources *r,
			      struct oci_hugepage_limit *huge,
			      struct oci_blkio_throttle *thr)
{
	memset(r, 0, sizeof(*r));
	r->present = true;
	r->has_memory = true;
	r->memory.limit = (struct opt_i64){ true, 64 << 20 };
	r->memory.swap = (struct opt_i64){ true, 128 << 20 };
	r->memory.reservation = (struct opt_i64){ true, 32 << 20 };
	r->pids_limit = (struct opt_i64){ true, 50 };
	r->has_cpu = true;
	r->cpu.shares = (struct opt_u64){ true, 1024 };
	r->cpu.quota = (struct opt_i64){ true, 50000 };
	r->cpu.period = (struct opt_u64){ true, 100000 };
	r->cpu.burst = (struct opt_u64){ true, 1000 };
	r->cpu.idle = (struct opt_i64){ true, 0 };
	r->cpu.cpus = (char *)"0-1";
	r->cpu.mems = (char *)"0";
	r->has_block_io = true;
	r->block_io.weight = (struct opt_u64){ true, 500 };
	*thr = (struct oci_blkio_throttle){ 8, 0, 1048576 };
	r->block_io.throttle_read_bps = thr;
	r->block_io.n_throttle_read_bps = 1;
	*huge = (struct oci_hugepage_limit){ (char *)"2MB", 4 << 20 };
	r->hugepage_limits = huge;
	r->n_hugepage_limits = 1;
	r->unified.keys = unified_keys;
	r->unified.values = unified_vals;
	r->unified.len = 4;
}

static void test_split_v2(void **state)
{
	struct oci_resources r;
	struct oci_hugepage_limit huge;
	struct oci_blkio_throttle thr;
	struct cg_settings all = { 0 }, rest = { 0 };
	struct cgsd_props p = { 0 };
	struct cgsd_caps caps = { 252, true };
	struct error err;

	(void)state;
	full_v2_resources(&r, &huge, &thr);
	assert_int_equal(cg2_build_settings(&r, false, &all, &err), 0);
	assert_int_equal(cgsd_split_settings(&all, &caps, NULL, &p, &rest, &err), 0);

	expect_u64(&p, "MemoryMax", 64 << 20);
	expect_u64(&p, "MemorySwapMax", 64 << 20); /* v2: swap alone */
	expect_u64(&p, "MemoryLow", 32 << 20);
	expect_u64(&p, "MemoryHigh", UINT64_MAX);
	expect_u64(&p, "MemoryMin", 1048576);
	expect_u64(&p, "TasksMax", 50);
	expect_u64(&p, "CPUWeight", cg2_cpu_weight(1024));
	expect_u64(&p, "CPUQuotaPerSecUSec", 500000);
	expect_u64(&p, "CPUQuotaPeriodUSec", 100000);
	expect_bytes(&p, "AllowedCPUs", (const uint8_t[]){ 0x03 }, 1);
	expect_bytes(&p, "AllowedMemoryNodes", (const uint8_t[]){ 0x01 }, 1);
	/* blockIO.weight comes first, the unified io.weight later: the last
	 * one wins, as with the files. */
	assert_int_equal(count_named(&p, "IOWeight"), 2);
	assert_int_equal(p.items[0].type, CGSD_U64);
	expect_u64(&p, "IOWeight", 200);
	assert_string_equal(prop(&p, "MemoryMax")->field, "memory.limit");
	assert_string_equal(prop(&p, "MemoryHigh")->field, "unified");

	/* What systemd has no property for stays a file, in order. */
	assert_false(has_file(&rest, "memory.max"));
	assert_false(has_file(&rest, "memory.swap.max"));
	assert_false(has_file(&rest, "memory.low"));
	assert_false(has_file(&rest, "memory.high"));
	assert_false(has_file(&rest, "pids.max"));
	assert_false(has_file(&rest, "cpu.weight"));
	assert_false(has_file(&rest, "cpu.max"));
	assert_false(has_file(&rest, "cpuset.cpus"));
	assert_false(has_file(&rest, "io.weight"));
	assert_false(has_file(&rest, "io.bfq.weight"));
	assert_true(has_file(&rest, "cpu.idle"));
	assert_true(has_file(&rest, "cpu.max.burst"));
	assert_true(has_file(&rest, "io.max"));
	assert_true(has_file(&rest, "hugetlb.2MB.max"));
	assert_true(has_file(&rest, "hugetlb.2MB.rsvd.max"));
	assert_true(has_file(&rest, "cgroup.max.depth"));
	assert_true(cg_settings_find(&rest, "cpu.max.burst")->flags & CG_SET_RETRY);
	assert_int_equal(rest.n, 6);
	cg_settings_free(&rest);
	cgsd_props_free(&p);

	/* An older systemd: no cpuset, no MemoryMin (files), no quota period. */
	caps.version = 239;
	assert_int_equal(cgsd_split_settings(&all, &caps, NULL, &p, &rest, &err), 0);
	assert_true(has_file(&rest, "cpuset.cpus"));
	assert_true(has_file(&rest, "cpuset.mems"));
	assert_true(has_file(&rest, "memory.min"));
	assert_null(cgsd_props_find(&p, "AllowedCPUs"));
	assert_null(cgsd_props_find(&p, "CPUQuotaPeriodUSec"));
	expect_u64(&p, "CPUQuotaPerSecUSec", 500000);
	cg_settings_free(&rest);
	cgsd_props_free(&p);
	cg_settings_free(&all);
}

static void test_split_v2_cpu_update(void **state)
{
	struct oci_resources r = { .present = true, .has_cpu = true };
	struct cg_settings all = { 0 }, rest = { 0 };
	struct cgsd_props p = { 0 };
	struct cgsd_caps caps = { 252, true };
	struct cgsd_cpu_now now = { UINT64_MAX, 200000 };
	struct error err;

	(void)state;
	/* Quota alone: the period in force. */
	r.cpu.quota = (struct opt_i64){ true, 50000 };
	assert_int_equal(cg2_build_settings(&r, true, &all, &err), 0);
	assert_int_equal(cgsd_split_settings(&all, &caps, &now, &p, &rest, &err), 0);
	expect_u64(&p, "CPUQuotaPerSecUSec", 250000);
	expect_u64(&p, "CPUQuotaPeriodUSec", 200000);
	assert_int_equal(rest.n, 0);
	cg_settings_free(&all);
	cgsd_props_free(&p);

	/* Period alone: the quota in force is kept (as cpu.max does). */
	now = (struct cgsd_cpu_now){ 50000, 100000 };
	r.cpu.quota = (struct opt_i64){ false, 0 };
	r.cpu.period = (struct opt_u64){ true, 250000 };
	assert_int_equal(cg2_build_settings(&r, true, &all, &err), 0);
	assert_int_equal(cgsd_split_settings(&all, &caps, &now, &p, &rest, &err), 0);
	expect_u64(&p, "CPUQuotaPerSecUSec", 200000);
	expect_u64(&p, "CPUQuotaPeriodUSec", 250000);
	cg_settings_free(&all);
	cgsd_props_free(&p);

	/* No limit. */
	r.cpu.quota = (struct opt_i64){ true, -1 };
	r.cpu.period = (struct opt_u64){ false, 0 };
	assert_int_equal(cg2_build_settings(&r, true, &all, &err), 0);
	assert_int_equal(cgsd_split_settings(&all, &caps, &now, &p, &rest, &err), 0);
	expect_u64(&p, "CPUQuotaPerSecUSec", UINT64_MAX);
	cg_settings_free(&all);
	cgsd_props_free(&p);
}

static void test_split_v2_unified(void **state)
{
	static char *keys[] = { "memory.max", "cpu.max", "pids.max", "io.weight" };
	static char *vals[] = { "max", "25000 50000", "100", "8:0 300" };
	static char *bad_keys[] = { "memory.max" };
	static char *bad_vals[] = { "1G" };
	struct oci_resources r = { .present = true };
	struct cg_settings all = { 0 }, rest = { 0 };
	struct cgsd_props p = { 0 };
	struct cgsd_caps caps = { 252, true };
	struct error err;

	(void)state;
	r.unified = (struct str_map){ keys, vals, 4 };
	assert_int_equal(cg2_build_settings(&r, false, &all, &err), 0);
	assert_int_equal(cgsd_split_settings(&all, &caps, NULL, &p, &rest, &err), 0);
	expect_u64(&p, "MemoryMax", UINT64_MAX);
	expect_u64(&p, "CPUQuotaPerSecUSec", 500000);
	expect_u64(&p, "CPUQuotaPeriodUSec", 50000);
	expect_u64(&p, "TasksMax", 100);
	/* A per-device weight has no property of its own here: a file. */
	assert_null(cgsd_props_find(&p, "IOWeight"));
	assert_string_equal(cg_settings_find(&rest, "io.weight")->value, "8:0 300");
	assert_int_equal(rest.n, 1);
	cg_settings_free(&rest);
	cgsd_props_free(&p);
	cg_settings_free(&all);

	r.unified = (struct str_map){ bad_keys, bad_vals, 1 };
	assert_int_equal(cg2_build_settings(&r, false, &all, &err), 0);
	expect_error(cgsd_split_settings(&all, &caps, NULL, &p, &rest, &err),
		     &err, "cannot be given to systemd as MemoryMax");
	cg_settings_free(&rest);
	cgsd_props_free(&p);
	cg_settings_free(&all);
}

static void test_split_v1(void **state)
{
	struct cg_host h = v1_host();
	struct oci_resources r = { .present = true, .has_memory = true,
				   .has_cpu = true, .has_block_io = true };
	struct oci_device_cgroup dev = { .allow = true, .type = 'c',
					 .major = { true, 1 },
					 .minor = { true, 3 },
					 .access = (char *)"rwm" };
	struct cg_settings v1 = { 0 }, v2 = { 0 }, rest = { 0 };
	struct cgsd_props p = { 0 };
	struct cgsd_caps caps = { 252, false };
	struct error err;

	(void)state;
	r.memory.limit = (struct opt_i64){ true, 64 << 20 };
	r.memory.swap = (struct opt_i64){ true, 128 << 20 };
	r.pids_limit = (struct opt_i64){ true, -1 };
	r.cpu.shares = (struct opt_u64){ true, 512 };
	r.cpu.quota = (struct opt_i64){ true, 20000 };
	r.cpu.period = (struct opt_u64){ true, 40000 };
	r.cpu.cpus = (char *)"0";
	r.block_io.weight = (struct opt_u64){ true, 300 };
	r.devices = &dev;
	r.n_devices = 1;
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	assert_int_equal(cgsd_split_settings(&v1, &caps, NULL, &p, &rest, &err), 0);

	expect_u64(&p, "MemoryLimit", 64 << 20);
	expect_u64(&p, "TasksMax", UINT64_MAX);
	expect_u64(&p, "CPUShares", 512);
	expect_u64(&p, "CPUQuotaPerSecUSec", 500000);
	expect_u64(&p, "CPUQuotaPeriodUSec", 40000);
	assert_int_equal(count_named(&p, "CPUQuotaPerSecUSec"), 1);
	expect_u64(&p, "BlockIOWeight", 300);
	assert_null(cgsd_props_find(&p, "AllowedCPUs")); /* no cpuset on v1 */

	/* The limit is also written, in order with memsw. */
	assert_true(has_file(&rest, "memory.limit_in_bytes"));
	assert_true(has_file(&rest, "memory.memsw.limit_in_bytes"));
	assert_false(has_file(&rest, "pids.max"));
	assert_false(has_file(&rest, "cpu.shares"));
	assert_false(has_file(&rest, "cpu.cfs_quota_us"));
	assert_false(has_file(&rest, "cpu.cfs_period_us"));
	assert_false(has_file(&rest, "blkio.weight"));
	assert_false(has_file(&rest, "blkio.bfq.weight"));
	assert_true(has_file(&rest, "cpuset.cpus"));
	assert_true(has_file(&rest, "devices.deny"));
	assert_true(has_file(&rest, "devices.allow"));
	cg_settings_free(&rest);
	cgsd_props_free(&p);
	cg_settings_free(&v1);
	cg_settings_free(&v2);
}

/* ---- devices on v1 ----------------------------------------------------------- */

static const char proc_devices[] =
	"Character devices:\n"
	"  1 mem\n"
	"  4 /dev/vc/0\n"
	"  4 tty\n"
	"136 pts\n"
	"\n"
	"Block devices:\n"
	"  8 sd\n"
	"259 blkext\n";

#define DEV(a, t, maj, min, acc)                                              \
	{ .allow = (a), .type = (t), .major = { (maj) != -2, (maj) },          \
	  .minor = { (min) != -2, (min) }, .access = (char *)(acc) }

static void expect_pairs(const struct cgsd_props *p, const char *const *want)
{
	const struct cgsd_prop *it = prop(p, "DeviceAllow");
	size_t i = 0;

	assert_int_equal(it->type, CGSD_PAIRS);
	for (; want[i]; i++) {
		if (!it->strv[i])
			fail_msg("DeviceAllow ends before \"%s\"", want[i]);
		assert_string_equal(it->strv[i], want[i]);
	}
	assert_null(it->strv[i]);
}

static void test_device_props(void **state)
{
	const struct oci_device_cgroup rules[] = {
		DEV(true, 'c', 10, 200, "rwm"), /* moot: deny all follows */
		DEV(false, 'a', -2, -2, NULL),
		DEV(true, 'c', -2, -2, "m"),
		DEV(true, 'b', -1, -1, "m"),
		DEV(true, 'c', 1, 3, "rwm"),
		DEV(true, 'c', 136, -2, "rw"),
		DEV(true, 'a', 8, -2, "r"),
		DEV(true, 'c', 250, -2, "rwm"), /* no such driver: nothing */
	};
	const char *const want[] = {
		"char-*", "m", "block-*", "m", "/dev/char/1:3", "rwm",
		"char-pts", "rw", "block-sd", "r", NULL,
	};
	const struct oci_device_cgroup narrow[] = {
		DEV(true, 'c', 1, -2, "rwm"),
		DEV(false, 'c', 1, 1, "rwm"),
	};
	const struct oci_device_cgroup bad[] = { DEV(true, 'c', 1, 3, "rwx") };
	const char *const none[] = { NULL };
	struct cgsd_props p = { 0 };
	struct error err;

	(void)state;
	assert_int_equal(cgsd_device_props(rules, 8, proc_devices, &p, &err), 1);
	expect_str(&p, "DevicePolicy", "strict");
	/* An empty DeviceAllow first (a reset), then the list. */
	assert_int_equal(count_named(&p, "DeviceAllow"), 2);
	assert_null(p.items[1].strv[0]);
	expect_pairs(&p, want);
	cgsd_props_free(&p);

	/* Nothing allowed: strict and an empty list. */
	assert_int_equal(cgsd_device_props(rules + 1, 1, proc_devices, &p, &err), 1);
	expect_pairs(&p, none);
	cgsd_props_free(&p);

	/* A deny narrower than everything cannot be an allow list. */
	assert_int_equal(cgsd_device_props(narrow, 2, proc_devices, &p, &err), 0);
	assert_int_equal(p.n, 0);
	expect_error(cgsd_device_props(bad, 1, proc_devices, &p, &err), &err,
		     "not made of r, w, m");
	assert_int_equal(p.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_path),
		cmocka_unit_test(test_slice_path),
		cmocka_unit_test(test_unit_from_path),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_cpu_mask),
		cmocka_unit_test(test_quota_round_trip),
		cmocka_unit_test(test_scope_props),
		cmocka_unit_test(test_split_v2),
		cmocka_unit_test(test_split_v2_cpu_update),
		cmocka_unit_test(test_split_v2_unified),
		cmocka_unit_test(test_split_v1),
		cmocka_unit_test(test_device_props),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
