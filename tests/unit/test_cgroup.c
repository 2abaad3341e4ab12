/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup code without cgroups: path handling, mountinfo parsing, the
 * resources -> files mapping for v1 and v2, the settings writer (on plain
 * files in a temp dir), and the device filter program run through a small
 * BPF interpreter against a model of the rule semantics.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../runtime/cgroup/internal.h"

/* ---- helpers ------------------------------------------------------------ */

static const struct cg_setting *find(const struct cg_settings *s,
				     const char *file)
{
	const struct cg_setting *it = cg_settings_find(s, file);

	if (!it)
		fail_msg("no setting for %s", file);
	return it;
}

static void expect(const struct cg_settings *s, const char *file,
		   const char *value)
{
	assert_string_equal(find(s, file)->value, value);
}

/* Index of the setting for file, to check the order of writes. */
static size_t pos(const struct cg_settings *s, const char *file)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->items[i].file, file))
			return i;
	fail_msg("no setting for %s", file);
	return 0;
}

static void expect_error(int ret, const struct error *err, const char *part)
{
	assert_int_equal(ret, -1);
	if (!strstr(err->msg, part))
		fail_msg("error \"%s\" does not mention \"%s\"", err->msg, part);
}

static struct cg_host hybrid_host(bool v1_hugetlb)
{
	struct cg_host h = { .mode = CGROUP_MODE_HYBRID,
			     .v2_mnt = CGROUP_HYBRID_UNIFIED };
	static const enum cg1_ctrl c[] = { CG1_CPU, CG1_CPUACCT, CG1_CPUSET,
					   CG1_MEMORY, CG1_DEVICES,
					   CG1_FREEZER, CG1_BLKIO, CG1_PIDS };

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++)
		h.v1_ctrls |= 1u << c[i];
	if (v1_hugetlb)
		h.v1_ctrls |= 1u << CG1_HUGETLB;
	/* One pseudo hierarchy is enough for cg1_host_hier(). */
	h.hier[0].ctrls = h.v1_ctrls;
	h.hier[0].mnt = (char *)"/sys/fs/cgroup/x";
	h.n_hier = 1;
	return h;
}

/* ---- paths -------------------------------------------------------------- */

static void test_path_normalize(void **state)
{
	struct error err;
	char *p = NULL;

	(void)state;
	assert_int_equal(cg_path_normalize("/a//b/./c/", &p, &err), 0);
	assert_string_equal(p, "/a/b/c");
	free(p);
	assert_int_equal(cg_path_normalize("x/y", &p, &err), 0);
	assert_string_equal(p, "/x/y");
	free(p);
	expect_error(cg_path_normalize("/a/../b", &p, &err), &err, "\"..\"");
	expect_error(cg_path_normalize("/", &p, &err), &err, "root");
	expect_error(cg_path_normalize("//./", &p, &err), &err, "root");
	expect_error(cg_path_normalize("/a\nb", &p, &err), &err, "control");

	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	expect_error(cg_path_normalize(longname, &p, &err), &err, "longer");
}

static void test_resolve_path(void **state)
{
	_cleanup_free_ char *text = NULL, *want = NULL;
	struct error err;
	char *p = NULL;
	const char *own = "/";

	(void)state;
	assert_int_equal(cgroup_resolve_path(NULL, "ctr1", CGROUP_MANAGER_FS,
					     &p, &err), 0);
	assert_string_equal(p, "/agentsbx/ctr1");
	free(p);
	assert_int_equal(cgroup_resolve_path("", "c", CGROUP_MANAGER_FS, &p,
					     &err), 0);
	assert_string_equal(p, "/agentsbx/c");
	free(p);
	assert_int_equal(cgroup_resolve_path("/my//runtime/c/", "c",
					     CGROUP_MANAGER_FS, &p, &err), 0);
	assert_string_equal(p, "/my/runtime/c");
	free(p);

	/* Relative: under the runtime's own cgroup (the "0::" line). */
	assert_int_equal(read_file_at(AT_FDCWD, "/proc/self/cgroup", 65536,
				      &text, NULL, &err), 0);
	char *l = strstr(text, "0::");
	if (l && (l == text || l[-1] == '\n')) {
		l += 3;
		l[strcspn(l, "\n")] = '\0';
		own = l;
	}
	want = xasprintf("%s/sub/c", strcmp(own, "/") ? own : "");
	assert_int_equal(cgroup_resolve_path("sub/c", "c", CGROUP_MANAGER_FS,
					     &p, &err), 0);
	assert_string_equal(p, want);
	free(p);

	expect_error(cgroup_resolve_path(NULL, "a/b", CGROUP_MANAGER_FS, &p,
					 &err), &err, "cannot name");
	expect_error(cgroup_resolve_path(NULL, "..", CGROUP_MANAGER_FS, &p,
					 &err), &err, "cannot name");
	expect_error(cgroup_resolve_path("/../x", "c", CGROUP_MANAGER_FS, &p,
					 &err), &err, "\"..\"");
	expect_error(cgroup_resolve_path("/", "c", CGROUP_MANAGER_FS, &p, &err),
		     &err, "root");
	/* The systemd manager (systemd.c, tested in a systemd guest):
	 * on a host without systemd as init, a clear error. */
	if (access("/run/systemd/system", F_OK) != 0)
		expect_error(cgroup_create("/a", CGROUP_MANAGER_SYSTEMD, NULL, 1, &err),
			     &err, "systemd");
	/* Paths from a state file must be normal. */
	expect_error(cgroup_kill("/a/../b", CGROUP_MANAGER_FS, 9, &err), &err,
		     "\"..\"");
	expect_error(cgroup_destroy("/", CGROUP_MANAGER_FS, true, &err), &err,
		     "root");
	expect_error(cgroup_pids("a/b", CGROUP_MANAGER_FS, NULL, NULL, &err),
		     &err, "not absolute");
}

static void test_mountinfo(void **state)
{
	const char *mi =
		"22 1 0:21 / /sys rw - sysfs sysfs rw\n"
		"30 22 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
		"31 30 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
		"32 30 0:28 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
		"33 30 0:29 / /sys/fs/cgroup/cpu,cpuacct rw shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
		"34 30 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
		"35 30 0:30 / /sys/fs/cgroup/memory2 rw - cgroup cgroup rw,memory\n"
		"36 1 0:31 / /mnt/elsewhere rw - cgroup cgroup rw,pids\n"
		"37 30 0:32 /sub /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
		"38 30 0:33 / /sys/fs/cgroup/net_cls,net_prio rw - cgroup cgroup rw,net_cls,net_prio\n"
		"39 30 0:34 / /sys/fs/cgroup/x rw - cgroup cgroup rw,name=other\n";
	struct cg_host h = { 0 };

	(void)state;
	cg1_parse_mountinfo(mi, &h);
	assert_int_equal(h.n_hier, 4);
	assert_string_equal(h.hier[0].mnt, "/sys/fs/cgroup/systemd");
	assert_int_equal(h.hier[0].ctrls, 1u << CG1_NAME_SYSTEMD);
	assert_string_equal(h.hier[1].mnt, "/sys/fs/cgroup/cpu,cpuacct");
	assert_int_equal(h.hier[1].ctrls, (1u << CG1_CPU) | (1u << CG1_CPUACCT));
	assert_string_equal(cg1_host_hier(&h, CG1_CPUACCT)->mnt,
			    "/sys/fs/cgroup/cpu,cpuacct");
	assert_string_equal(cg1_host_hier(&h, CG1_MEMORY)->mnt,
			    "/sys/fs/cgroup/memory");
	assert_null(cg1_host_hier(&h, CG1_PIDS)); /* not whole, or elsewhere */
	assert_non_null(cg1_host_hier(&h, CG1_NET_PRIO));
	cg_host_free(&h);
}

/* ---- conversions and v2 settings ------------------------------------------ */

static void test_conversions(void **state)
{
	(void)state;
	assert_int_equal(cg2_cpu_weight(2), 1);
	assert_int_equal(cg2_cpu_weight(1024), 39);
	assert_int_equal(cg2_cpu_weight(262144), 10000);
	assert_int_equal(cg2_cpu_weight(1), 1);
	assert_int_equal(cg2_cpu_weight(1u << 30), 10000);
	assert_int_equal(cg2_io_weight(10), 1);
	assert_int_equal(cg2_io_weight(500), 4950);
	assert_int_equal(cg2_io_weight(1000), 10000);
	assert_int_equal(cg2_io_weight(1), 1);
}

static void test_v2_memory(void **state)
{
	struct oci_resources r = { .present = true, .has_memory = true };
	struct cg_settings s = { 0 };
	struct error err;

	(void)state;
	r.memory.limit = (struct opt_i64){ true, 33554432 };
	r.memory.swap = (struct opt_i64){ true, 67108864 };
	r.memory.reservation = (struct opt_i64){ true, -1 };
	r.memory.check_before_update = (struct opt_bool){ true, true };
	r.memory.kernel = (struct opt_i64){ true, 1 << 20 }; /* warned */
	assert_int_equal(cg2_build_settings(&r, true, &s, &err), 0);
	expect(&s, "memory.max", "33554432");
	assert_string_equal(find(&s, "memory.max")->usage_file, "memory.current");
	expect(&s, "memory.swap.max", "33554432");
	expect(&s, "memory.low", "max");
	assert_int_equal(s.n, 3);
	cg_settings_free(&s);

	/* Unlimited memory, swap unsaid: both "max". */
	r.memory = (struct oci_memory){ .limit = { true, -1 } };
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	expect(&s, "memory.max", "max");
	expect(&s, "memory.swap.max", "max");
	assert_true(find(&s, "memory.swap.max")->flags & CG_SET_OPTIONAL);
	cg_settings_free(&s);

	r.memory = (struct oci_memory){ .limit = { true, 100 }, .swap = { true, 50 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "below memory.limit");
	r.memory = (struct oci_memory){ .swap = { true, 50 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "needs a memory.limit");
	r.memory = (struct oci_memory){ .disable_oom_killer = { true, true } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err,
		     "memory.disableOOMKiller: not supported on cgroup v2");
	r.memory = (struct oci_memory){ .limit = { true, -2 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "invalid value -2");
	r.memory = (struct oci_memory){ .swappiness = { true, 60 },
					.kernel_tcp = { true, 1 } };
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	assert_int_equal(s.n, 0); /* warned and ignored */
	cg_settings_free(&s);
}

static void test_v2_cpu(void **state)
{
	struct oci_resources r = { .present = true, .has_cpu = true };
	struct cg_settings s = { 0 };
	struct error err;

	(void)state;
	r.cpu.shares = (struct opt_u64){ true, 1024 };
	r.cpu.quota = (struct opt_i64){ true, 20000 };
	r.cpu.period = (struct opt_u64){ true, 100000 };
	r.cpu.burst = (struct opt_u64){ true, 10000 };
	r.cpu.idle = (struct opt_i64){ true, 0 };
	r.cpu.cpus = (char *)"0-1";
	r.cpu.mems = (char *)"0";
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	expect(&s, "cpu.weight", "39");
	expect(&s, "cpu.max", "20000 100000");
	expect(&s, "cpu.max.burst", "10000");
	assert_true(find(&s, "cpu.max.burst")->flags & CG_SET_RETRY);
	assert_true(pos(&s, "cpu.max.burst") < pos(&s, "cpu.max"));
	assert_true(pos(&s, "cpu.idle") < pos(&s, "cpu.weight"));
	expect(&s, "cpuset.cpus", "0-1");
	expect(&s, "cpuset.mems", "0");
	assert_string_equal(find(&s, "cpuset.cpus")->ctrl, "cpuset");
	cg_settings_free(&s);

	r.cpu = (struct oci_cpu){ .quota = { true, -1 }, .period = { true, 50000 },
				  .idle = { true, 1 }, .shares = { true, 2 } };
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	expect(&s, "cpu.max", "max 50000");
	assert_true(pos(&s, "cpu.weight") < pos(&s, "cpu.idle"));
	cg_settings_free(&s);

	r.cpu = (struct oci_cpu){ .period = { true, 50000 } };
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	expect(&s, "cpu.max", "50000");
	assert_true(find(&s, "cpu.max")->flags & CG_SET_KEEP_QUOTA);
	cg_settings_free(&s);

	r.cpu = (struct oci_cpu){ .realtime_runtime = { true, 1000 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err,
		     "not supported on cgroup v2");
	r.cpu = (struct oci_cpu){ .quota = { true, 1000 }, .burst = { true, 2000 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "larger than quota");
	r.cpu = (struct oci_cpu){ .cpus = (char *)"0;rm" };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "invalid list");
	r.cpu = (struct oci_cpu){ .idle = { true, 2 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "0 or 1");
}

static void test_v2_pids_io_misc(void **state)
{
	struct oci_blkio_throttle rbps = { 8, 0, 600 }, wiops = { 8, 0, 300 },
				  wbps = { 8, 16, 0 };
	struct oci_blkio_weight_device wd = { 8, 0, { true, 500 }, { false, 0 } };
	struct oci_hugepage_limit hp = { (char *)"2MB", 1 << 21 };
	struct oci_rdma rd = { (char *)"mlx5_1", { true, 3 }, { false, 0 } };
	char *keys[] = { (char *)"memory.high", (char *)"cgroup.max.depth" };
	char *vals[] = { (char *)"1000000", (char *)"3" };
	struct oci_resources r = { .present = true };
	struct cg_settings s = { 0 };
	struct error err;

	(void)state;
	r.pids_limit = (struct opt_i64){ true, 0 };
	r.has_block_io = true;
	r.block_io.weight = (struct opt_u64){ true, 500 };
	r.block_io.weight_device = &wd;
	r.block_io.n_weight_device = 1;
	r.block_io.throttle_read_bps = &rbps;
	r.block_io.n_throttle_read_bps = 1;
	r.block_io.throttle_write_iops = &wiops;
	r.block_io.n_throttle_write_iops = 1;
	r.block_io.throttle_write_bps = &wbps;
	r.block_io.n_throttle_write_bps = 1;
	r.hugepage_limits = &hp;
	r.n_hugepage_limits = 1;
	r.rdma = &rd;
	r.n_rdma = 1;
	r.unified = (struct str_map){ keys, vals, 2 };
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	expect(&s, "pids.max", "max");
	/* BFQ's weight first; io.weight (converted) only as its fallback. */
	assert_string_equal(s.items[pos(&s, "io.bfq.weight")].value, "500");
	assert_true(s.items[pos(&s, "io.bfq.weight")].flags & CG_SET_OPTIONAL);
	assert_string_equal(s.items[pos(&s, "io.bfq.weight") + 1].value, "4950");
	assert_true(s.items[pos(&s, "io.bfq.weight") + 1].flags & CG_SET_ALT);
	assert_string_equal(s.items[pos(&s, "io.bfq.weight") + 2].value, "8:0 500");
	assert_string_equal(s.items[pos(&s, "io.bfq.weight") + 3].value, "8:0 4950");
	assert_string_equal(s.items[pos(&s, "io.max")].value,
			    "8:0 rbps=600 wiops=300");
	assert_string_equal(s.items[pos(&s, "io.max") + 1].value, "8:16 wbps=max");
	expect(&s, "hugetlb.2MB.max", "2097152");
	assert_true(find(&s, "hugetlb.2MB.rsvd.max")->flags & CG_SET_OPTIONAL);
	expect(&s, "rdma.max", "mlx5_1 hca_handle=3");
	expect(&s, "memory.high", "1000000");
	assert_string_equal(find(&s, "memory.high")->ctrl, "memory");
	assert_null(find(&s, "cgroup.max.depth")->ctrl);
	cg_settings_free(&s);

	r.pids_limit = (struct opt_i64){ true, 42 };
	r.n_hugepage_limits = 0;
	r.n_rdma = 0;
	r.has_block_io = false;
	r.unified.len = 0;
	assert_int_equal(cg2_build_settings(&r, false, &s, &err), 0);
	expect(&s, "pids.max", "42");
	cg_settings_free(&s);

	hp.page_size = (char *)"2MB.max/../x";
	r.n_hugepage_limits = 1;
	expect_error(cg2_build_settings(&r, false, &s, &err), &err, "invalid pageSize");
	r.n_hugepage_limits = 0;

	static const char *const bad[] = { "cgroup.procs", "cgroup.kill",
					   "cgroup.subtree_control", "../memory.max",
					   "memory.max/x", "nodot", ".max", "memory." };
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		keys[0] = (char *)bad[i];
		r.unified.len = 1;
		assert_int_equal(cg2_build_settings(&r, false, &s, &err), -1);
	}
	r.unified.len = 0;
	r.has_network = true;
	r.network.class_id = (struct opt_u64){ true, 0x100001 };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err,
		     "not available on cgroup v2");
	r.has_network = false;
	r.has_block_io = true;
	r.block_io = (struct oci_blkio){ .leaf_weight = { true, 10 } };
	expect_error(cg2_build_settings(&r, false, &s, &err), &err,
		     "leafWeight: not supported");
}

/* ---- v1 settings ------------------------------------------------------------ */

static void test_v1_memory_cpu(void **state)
{
	struct cg_host h = hybrid_host(false);
	struct oci_resources r = { .present = true, .has_memory = true,
				   .has_cpu = true };
	struct cg_settings v1 = { 0 }, v2 = { 0 };
	struct error err;

	(void)state;
	r.memory.limit = (struct opt_i64){ true, 33554432 };
	r.memory.swap = (struct opt_i64){ true, 67108864 };
	r.memory.reservation = (struct opt_i64){ true, 16777216 };
	r.memory.swappiness = (struct opt_u64){ true, 10 };
	r.memory.kernel = (struct opt_i64){ true, 1 }; /* ignored */
	r.memory.kernel_tcp = (struct opt_i64){ true, 1 << 20 };
	r.memory.disable_oom_killer = (struct opt_bool){ true, true };
	r.cpu.shares = (struct opt_u64){ true, 512 };
	r.cpu.quota = (struct opt_i64){ true, 20000 };
	r.cpu.period = (struct opt_u64){ true, 100000 };
	r.cpu.burst = (struct opt_u64){ true, 1000 };
	r.cpu.realtime_period = (struct opt_u64){ true, 1000000 };
	r.cpu.realtime_runtime = (struct opt_i64){ true, 950000 };
	r.cpu.cpus = (char *)"1";
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	expect(&v1, "memory.limit_in_bytes", "33554432");
	expect(&v1, "memory.memsw.limit_in_bytes", "67108864");
	/* memsw first, both retried: raising and lowering both work. */
	assert_true(pos(&v1, "memory.memsw.limit_in_bytes") <
		    pos(&v1, "memory.limit_in_bytes"));
	assert_true(find(&v1, "memory.memsw.limit_in_bytes")->flags & CG_SET_RETRY);
	assert_true(find(&v1, "memory.limit_in_bytes")->flags & CG_SET_RETRY);
	expect(&v1, "memory.soft_limit_in_bytes", "16777216");
	expect(&v1, "memory.swappiness", "10");
	expect(&v1, "memory.kmem.tcp.limit_in_bytes", "1048576");
	expect(&v1, "memory.oom_control", "1");
	assert_null(cg_settings_find(&v1, "memory.kmem.limit_in_bytes"));
	expect(&v1, "cpu.shares", "512");
	expect(&v1, "cpu.cfs_quota_us", "20000");
	expect(&v1, "cpu.cfs_period_us", "100000");
	expect(&v1, "cpu.cfs_burst_us", "1000");
	expect(&v1, "cpu.rt_period_us", "1000000");
	expect(&v1, "cpu.rt_runtime_us", "950000");
	assert_true(pos(&v1, "cpu.cfs_period_us") < pos(&v1, "cpu.cfs_quota_us"));
	expect(&v1, "cpuset.cpus", "1");
	/* The device defaults are cgroup_create's: here only "deny all". */
	expect(&v1, "devices.deny", "a");
	assert_int_equal(v2.n, 0);
	cg_settings_free(&v1);

	r.memory = (struct oci_memory){ .limit = { true, -1 } };
	r.has_cpu = false;
	assert_int_equal(cg1_build_settings(&r, true, &h, &v1, &v2, &err), 0);
	expect(&v1, "memory.memsw.limit_in_bytes", "-1");
	assert_true(find(&v1, "memory.memsw.limit_in_bytes")->flags & CG_SET_OPTIONAL);
	assert_null(cg_settings_find(&v1, "devices.deny")); /* update, no rules */
	cg_settings_free(&v1);

	r.memory = (struct oci_memory){ .swappiness = { true, 101 } };
	expect_error(cg1_build_settings(&r, false, &h, &v1, &v2, &err), &err,
		     "out of range 0..100");
	r.memory = (struct oci_memory){ .disable_oom_killer = { true, false } };
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	assert_null(cg_settings_find(&v1, "memory.oom_control"));
	cg_settings_free(&v1);
	assert_int_equal(cg1_build_settings(&r, true, &h, &v1, &v2, &err), 0);
	expect(&v1, "memory.oom_control", "0");
	cg_settings_free(&v1);
}

static void test_v1_blkio_hugetlb_net(void **state)
{
	struct cg_host h = hybrid_host(false);
	struct oci_blkio_throttle t = { 8, 0, 1048576 };
	struct oci_blkio_weight_device wd = { 8, 0, { true, 300 }, { true, 200 } };
	struct oci_hugepage_limit hp = { (char *)"2MB", 4194304 };
	struct oci_net_priority prio = { (char *)"eth0", 5 };
	struct oci_resources r = { .present = true, .has_block_io = true };
	struct cg_settings v1 = { 0 }, v2 = { 0 };
	struct error err;

	(void)state;
	r.block_io.weight = (struct opt_u64){ true, 500 };
	r.block_io.weight_device = &wd;
	r.block_io.n_weight_device = 1;
	r.block_io.throttle_read_bps = &t;
	r.block_io.n_throttle_read_bps = 1;
	r.block_io.throttle_write_iops = &t;
	r.block_io.n_throttle_write_iops = 1;
	r.hugepage_limits = &hp;
	r.n_hugepage_limits = 1;
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	expect(&v1, "blkio.weight", "500");
	assert_true(find(&v1, "blkio.weight")->flags & CG_SET_OPTIONAL);
	expect(&v1, "blkio.bfq.weight", "500");
	assert_true(find(&v1, "blkio.bfq.weight")->flags & CG_SET_ALT);
	expect(&v1, "blkio.weight_device", "8:0 300");
	expect(&v1, "blkio.bfq.weight_device", "8:0 300");
	expect(&v1, "blkio.leaf_weight_device", "8:0 200");
	expect(&v1, "blkio.throttle.read_bps_device", "8:0 1048576");
	expect(&v1, "blkio.throttle.write_iops_device", "8:0 1048576");
	/* No v1 hugetlb on a hybrid host: the cgroup2 side gets it. */
	assert_null(cg_settings_find(&v1, "hugetlb.2MB.limit_in_bytes"));
	expect(&v2, "hugetlb.2MB.max", "4194304");
	cg_settings_free(&v1);
	cg_settings_free(&v2);

	h = hybrid_host(true);
	r.has_block_io = false;
	r.has_network = true;
	r.network.class_id = (struct opt_u64){ true, 0x100001 };
	r.network.priorities = &prio;
	r.network.n_priorities = 1;
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	expect(&v1, "hugetlb.2MB.limit_in_bytes", "4194304");
	assert_int_equal(v2.n, 0);
	expect(&v1, "net_cls.classid", "1048577");
	expect(&v1, "net_prio.ifpriomap", "eth0 5");
	cg_settings_free(&v1);

	/* unified: the cgroup2 side on hybrid, refused on v1 only. */
	char *keys[] = { (char *)"hugetlb.2MB.max" }, *vals[] = { (char *)"0" };
	r = (struct oci_resources){ .present = true,
				    .unified = { keys, vals, 1 } };
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	expect(&v2, "hugetlb.2MB.max", "0");
	cg_settings_free(&v1);
	cg_settings_free(&v2);
	h.v2_mnt = NULL;
	h.mode = CGROUP_MODE_V1;
	expect_error(cg1_build_settings(&r, false, &h, &v1, &v2, &err), &err,
		     "cgroup v1 only");
}

static void test_v1_devices(void **state)
{
	struct cg_host h = hybrid_host(false);
	struct oci_device_cgroup rules[] = {
		{ .allow = false, .type = 'a', .access = (char *)"rwm" },
		{ .allow = true, .type = 'c', .major = { true, 1 },
		  .minor = { true, 3 }, .access = (char *)"rw" },
		{ .allow = true, .type = 'a', .access = (char *)"r" },
		{ .allow = true, .type = 'b', .major = { true, 8 } },
		{ .allow = true, .type = 'a' },
		{ .allow = true, .type = 'c', .access = (char *)"rx" },
	};
	struct oci_resources r = { .present = true, .devices = rules,
				   .n_devices = 5 };
	struct cg_settings v1 = { 0 }, v2 = { 0 };
	static const char *const want[][2] = {
		{ "devices.deny", "a" },	 { "devices.deny", "a" },
		{ "devices.allow", "c 1:3 rw" }, { "devices.allow", "c *:* r" },
		{ "devices.allow", "b *:* r" },	 { "devices.allow", "b 8:* rwm" },
		{ "devices.allow", "a" },
	};
	struct error err;

	(void)state;
	assert_int_equal(cg1_build_settings(&r, false, &h, &v1, &v2, &err), 0);
	assert_int_equal(v1.n, sizeof(want) / sizeof(*want));
	for (size_t i = 0; i < v1.n; i++) {
		assert_string_equal(v1.items[i].file, want[i][0]);
		assert_string_equal(v1.items[i].value, want[i][1]);
	}
	cg_settings_free(&v1);
	r.n_devices = 6;
	expect_error(cg1_build_settings(&r, false, &h, &v1, &v2, &err), &err,
		     "devices[5].access");
}

/* ---- the settings writer on plain files ------------------------------------- */

static char tmpdir[] = "/tmp/agentsbx-cgtest-XXXXXX";

static void put(const char *name, const char *content)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static char *get(const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", tmpdir, name);
	struct error err;
	char *out = NULL;

	assert_int_equal(read_file_at(AT_FDCWD, p, 4096, &out, NULL, &err), 0);
	return out;
}

static void test_settings_apply(void **state)
{
	struct cg_dir d = { .fd = -1, .path = tmpdir };
	struct cg_settings s = { 0 };
	struct error err;
	_cleanup_free_ char *a = NULL, *b = NULL, *c = NULL;

	(void)state;
	assert_non_null(mkdtemp(tmpdir));
	d.fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	put("io.weight", "");
	put("cpu.max", "20000 100000\n");
	put("memory.current", "1000000\n");
	put("memory.max", "");
	/* io.bfq.weight absent: the alternative is written. */
	cg_settings_add(&s, "blockIO.weight", "io", CG_SET_OPTIONAL,
			"io.bfq.weight", "500");
	cg_settings_add(&s, "blockIO.weight", "io", CG_SET_ALT, "io.weight",
			"4950");
	cg_settings_add(&s, "cpu.period", "cpu", CG_SET_KEEP_QUOTA, "cpu.max",
			"50000");
	cg_settings_add(&s, "x", "x", CG_SET_OPTIONAL, "absent.file", "1");
	assert_int_equal(cg_settings_apply(&d, &s, NULL, NULL, &err), 0);
	a = get("io.weight");
	b = get("cpu.max");
	assert_string_equal(a, "4950");
	/* Plain files keep the old tail: compare what was written. */
	assert_memory_equal(b, "20000 50000", 11);
	cg_settings_free(&s);

	/* checkBeforeUpdate. */
	cg_settings_add(&s, "memory.limit", "memory", 0, "memory.max", "500000");
	s.items[0].usage_file = "memory.current";
	expect_error(cg_settings_apply(&d, &s, NULL, NULL, &err), &err,
		     "below the current usage 1000000");
	free(s.items[0].value);
	s.items[0].value = xstrdup("2000000");
	assert_int_equal(cg_settings_apply(&d, &s, NULL, NULL, &err), 0);
	c = get("memory.max");
	assert_string_equal(c, "2000000");
	cg_settings_free(&s);

	/* A missing file names the field and the path. */
	cg_settings_add(&s, "network.classID", "net_cls", 0, "net_cls.classid",
			"1");
	expect_error(cg_settings_apply(&d, &s, NULL, NULL, &err), &err,
		     "linux.resources.network.classID: cannot write 1: ");
	assert_non_null(strstr(err.msg, "/net_cls.classid does not exist"));
	cg_settings_free(&s);

	/* The error of a failed write: "write VALUE to PATH: strerror". */
	chmod(tmpdir, 0755);
	_cleanup_free_ char *dirpath = xasprintf("%s/adir", tmpdir);
	mkdir(dirpath, 0755);
	assert_int_equal(cg_write(&d, "adir", "7", &err), -1);
	_cleanup_free_ char *want = xasprintf("open %s/adir: Is a directory", tmpdir);
	assert_string_equal(err.msg, want);

	_cleanup_free_ char *cmd = xasprintf("rm -rf %s", tmpdir);
	assert_int_equal(system(cmd), 0);
	close(d.fd);
}

/* ---- the device filter ---------------------------------------------------------- */

/* Runs the subset of eBPF the generator emits. */
static int run_bpf(const struct bpf_insn *p, size_t n, uint32_t ctx[3])
{
	uint64_t r[11] = { 0 };

	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *i = &p[pc];
		uint64_t imm = (uint64_t)(int64_t)i->imm;

		switch (i->code) {
		case BPF_LDX | BPF_W | BPF_MEM:
			assert_int_equal(i->src_reg, 1);
			assert_int_equal(i->imm, 0);
			r[i->dst_reg] = ctx[i->off / 4];
			break;
		case BPF_ALU64 | BPF_MOV | BPF_X:
			r[i->dst_reg] = r[i->src_reg];
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r[i->dst_reg] = imm;
			break;
		case BPF_ALU64 | BPF_AND | BPF_K:
			r[i->dst_reg] &= imm;
			break;
		case BPF_ALU64 | BPF_RSH | BPF_K:
			r[i->dst_reg] >>= i->imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
			if (r[i->dst_reg] != imm)
				pc += i->off;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			if (r[i->dst_reg] == imm)
				pc += i->off;
			break;
		case BPF_JMP | BPF_EXIT:
			return (int)r[0];
		default:
			fail_msg("unexpected opcode 0x%x at %zu", i->code, pc);
		}
		assert_true(pc + 1 <= n);
	}
	fail_msg("fell off the end");
	return -1;
}

static unsigned acc_bits(const char *a)
{
	unsigned b = 0;

	for (a = a ? a : "rwm"; *a; a++)
		b |= *a == 'r' ? BPF_DEVCG_ACC_READ :
		     *a == 'w' ? BPF_DEVCG_ACC_WRITE : BPF_DEVCG_ACC_MKNOD;
	return b ? b : 7;
}

/* The documented semantics, written plainly. */
static bool model(const struct oci_device_cgroup *rules, size_t n, char type,
		  int major, int minor, unsigned access)
{
	for (unsigned bit = 1; bit <= 4; bit <<= 1) {
		bool allowed = false;

		if (!(access & bit))
			continue;
		for (size_t i = n; i-- > 0;) {
			const struct oci_device_cgroup *r = &rules[i];

			if ((r->type != 'a' && r->type != type) ||
			    (r->major.set && r->major.v >= 0 && r->major.v != major) ||
			    (r->minor.set && r->minor.v >= 0 && r->minor.v != minor) ||
			    !(acc_bits(r->access) & bit))
				continue;
			allowed = r->allow;
			break;
		}
		if (!allowed)
			return false;
	}
	return true;
}

static const char *const accs[] = { "r", "w", "m", "rw", "rm", "wm", "rwm" };

static void random_rule(struct oci_device_cgroup *r)
{
	static const char types[] = "acb";
	int k = rand() % 3;

	r->allow = rand() % 2;
	r->type = types[rand() % 3];
	r->major = (struct opt_i64){ k != 0, k == 1 ? 1 : 5 };
	k = rand() % 3;
	r->minor = (struct opt_i64){ k != 0, k == 1 ? 3 : 5 };
	if (rand() % 8 == 0)
		r->major = (struct opt_i64){ true, -1 };
	r->access = (char *)accs[rand() % 7];
}

static void test_device_filter_semantics(void **state)
{
	(void)state;
	srand(4242);
	for (int round = 0; round < 400; round++) {
		struct oci_device_cgroup rules[7];
		size_t n = (size_t)(rand() % 7);
		_cleanup_free_ struct bpf_insn *prog = NULL;
		size_t len;
		struct error err;

		for (size_t i = 0; i < n; i++)
			random_rule(&rules[i]);
		assert_int_equal(cg_devices_build(rules, n, &prog, &len, &err), 0);
		for (int t = 0; t < 2; t++)
			for (int maj = 1; maj <= 7; maj += 2)
				for (int min = 3; min <= 9; min += 2)
					for (unsigned acc = 1; acc <= 7; acc++) {
						char type = t ? 'b' : 'c';
						uint32_t ctx[3] = {
							acc << 16 | (t ? BPF_DEVCG_DEV_BLOCK :
									 BPF_DEVCG_DEV_CHAR),
							(uint32_t)maj, (uint32_t)min
						};
						bool want = model(rules, n, type, maj,
								  min, acc);

						if (run_bpf(prog, len, ctx) != want)
							fail_msg("round %d: %c %d:%d acc %u: want %d",
								 round, type, maj, min, acc,
								 want);
					}
	}
}

static void test_device_filter_shape(void **state)
{
	struct oci_device_cgroup rules[] = {
		{ .allow = true, .type = 'c', .major = { true, 1 },
		  .minor = { true, 3 }, .access = (char *)"rwm" },
		{ .allow = false, .type = 'a', .access = (char *)"rwm" },
		{ .allow = true, .type = 'c', .major = { true, 1 },
		  .minor = { true, 5 }, .access = (char *)"rw" },
	};
	_cleanup_free_ struct bpf_insn *prog = NULL;
	struct error err;
	size_t len;

	(void)state;
	/* The deny-all in the middle makes the first rule unreachable:
	 * 6 loads + 7 for the last rule + 2 for "deny all". */
	assert_int_equal(cg_devices_build(rules, 3, &prog, &len, &err), 0);
	assert_int_equal(len, 15);
	rules[0].type = 'u';
	free(prog);
	prog = NULL;
	expect_error(cg_devices_build(rules, 3, &prog, &len, &err), &err,
		     "devices[0].type");
	rules[0].type = 'c';
	rules[0].major.v = 1ll << 40;
	expect_error(cg_devices_build(rules, 3, &prog, &len, &err), &err,
		     "out of range");
}

/* Which kernels get a born-in process by pid when the cgroup has a cpuset
 * of its own (v2.c cg2_born_in_keeps_cpuset): those older than 6.1. */
static void test_kernel_release(void **state)
{
	(void)state;
	assert_true(cg_release_older_than("5.15.0-91-generic", 6, 1));
	assert_true(cg_release_older_than("6.0.19", 6, 1));
	assert_false(cg_release_older_than("6.1.0-57-amd64", 6, 1));
	assert_false(cg_release_older_than("6.18.44-fc-v657", 6, 1));
	assert_false(cg_release_older_than("7.0", 6, 1));
	assert_true(cg_release_older_than("garbage", 6, 1));
	assert_true(cg_release_older_than(NULL, 6, 1));
}

static void test_resources_for_spec(void **state)
{
	struct oci_device_cgroup deny = { .allow = false, .type = 'a' };
	struct oci_device devs[] = {
		{ .path = (char *)"/dev/fuse", .type = 'c', .major = 10, .minor = 229 },
		{ .path = (char *)"/dev/sda", .type = 'b', .major = 8, .minor = 0 },
		{ .path = (char *)"/dev/fifo", .type = 'p' },
	};
	struct oci_spec spec = { 0 };
	struct oci_resources out;

	(void)state;
	spec.linux.resources.present = true;
	spec.linux.resources.pids_limit = (struct opt_i64){ true, 5 };
	spec.linux.resources.devices = &deny;
	spec.linux.resources.n_devices = 1;
	spec.linux.devices = devs;
	spec.linux.n_devices = 3;
	cgroup_resources_for_spec(&spec, &out);
	assert_int_equal(out.pids_limit.v, 5);
	assert_int_equal(out.n_devices, 3); /* the FIFO is no device */
	assert_false(out.devices[0].allow);
	assert_true(out.devices[1].allow);
	assert_int_equal(out.devices[1].type, 'c');
	assert_int_equal(out.devices[1].major.v, 10);
	assert_int_equal(out.devices[1].minor.v, 229);
	assert_int_equal(out.devices[2].type, 'b');
	assert_string_equal(out.devices[2].access, "rwm");
	free(out.devices);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_normalize),
		cmocka_unit_test(test_resolve_path),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_conversions),
		cmocka_unit_test(test_v2_memory),
		cmocka_unit_test(test_v2_cpu),
		cmocka_unit_test(test_v2_pids_io_misc),
		cmocka_unit_test(test_v1_memory_cpu),
		cmocka_unit_test(test_v1_blkio_hugetlb_net),
		cmocka_unit_test(test_v1_devices),
		cmocka_unit_test(test_settings_apply),
		cmocka_unit_test(test_device_filter_semantics),
		cmocka_unit_test(test_device_filter_shape),
		cmocka_unit_test(test_resources_for_spec),
		cmocka_unit_test(test_kernel_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
