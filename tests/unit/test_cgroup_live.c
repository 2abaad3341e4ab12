/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.h on this host's real cgroups (v1/hybrid here, pure v2 in the
 * guest of tests/vm/run-cgroup2-tests.sh): create with resources, files
 * read back, the child inside, pids, freeze/thaw, update, kill, destroy,
 * the device filter, and the errors.  Everything lives under
 * /agentsbx-test-<random> and is removed at the end.  Needs root.
 */
#include <linux/bpf.h>
#include <sys/syscall.h>

#include "test_cgroup_helpers.h"
#include "../../runtime/internal.h"

static const struct oci_resources *res_basic(void)
{
	static struct oci_resources r;

	r = (struct oci_resources){ .present = true, .has_memory = true,
				    .has_cpu = true };
	r.memory.limit = (struct opt_i64){ true, 64 << 20 };
	r.pids_limit = (struct opt_i64){ true, 64 };
	r.cpu.quota = (struct opt_i64){ true, 50000 };
	r.cpu.period = (struct opt_u64){ true, 100000 };
	r.cpu.cpus = (char *)"0";
	r.cpu.mems = (char *)"0";
	return &r;
}

static void check_basic_files(const char *p)
{
	if (mode == CGROUP_MODE_V2) {
		assert_ctrl("memory", p, "memory.max", "67108864");
		assert_ctrl("pids", p, "pids.max", "64");
		assert_ctrl("cpu", p, "cpu.max", "50000 100000");
		assert_ctrl("cpuset", p, "cpuset.cpus", "0");
		assert_ctrl("cpuset", p, "cpuset.mems", "0");
		return;
	}
	assert_ctrl("memory", p, "memory.limit_in_bytes", "67108864");
	assert_ctrl("pids", p, "pids.max", "64");
	assert_ctrl("cpu", p, "cpu.cfs_quota_us", "50000");
	assert_ctrl("cpu", p, "cpu.cfs_period_us", "100000");
	assert_ctrl("cpuset", p, "cpuset.cpus", "0");
	assert_ctrl("cpuset", p, "cpuset.mems", "0");
	/* Default deny, then the defaults: no "a *:* rwm" left. */
	_cleanup_free_ char *list = read_ctrl("devices", p, "devices.list");
	assert_non_null(list);
	assert_non_null(strstr(list, "c 1:3 rwm"));
	assert_null(strstr(list, "a *:* rwm"));
}

static uint64_t count_after(unsigned ms)
{
	uint64_t a = __atomic_load_n(counter, __ATOMIC_RELAXED);

	sleep_ms(ms);
	return __atomic_load_n(counter, __ATOMIC_RELAXED) - a;
}

static void test_lifecycle(void **state)
{
	_cleanup_free_ char *p = cg_path("c1");
	_cleanup_free_ pid_t *pids = NULL;
	struct oci_resources upd = no_resources();
	struct error err;
	size_t n = 0;
	bool frozen = true;
	pid_t child;

	(void)state;
	map_counter();
	child = spawn_counter();
	if (cgroup_create(p, CGROUP_MANAGER_FS, res_basic(), child, &err) < 0)
		fail_msg("create: %s", err.msg);
	check_basic_files(p);
	assert_true(pid_in_cgroup(child, p));
	if (mode == CGROUP_MODE_HYBRID)
		assert_true(dir_exists("unified", p));

	assert_int_equal(cgroup_pids(p, CGROUP_MANAGER_FS, &pids, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], child);

	/* Frozen: the counter stops; thawed: it goes on. */
	assert_int_equal(cgroup_is_frozen(p, CGROUP_MANAGER_FS, &frozen, &err), 0);
	assert_false(frozen);
	if (cgroup_freeze(p, CGROUP_MANAGER_FS, true, &err) < 0)
		fail_msg("freeze: %s", err.msg);
	assert_int_equal(cgroup_is_frozen(p, CGROUP_MANAGER_FS, &frozen, &err), 0);
	assert_true(frozen);
	assert_int_equal(count_after(300), 0);
	assert_int_equal(cgroup_freeze(p, CGROUP_MANAGER_FS, false, &err), 0);
	assert_int_equal(cgroup_is_frozen(p, CGROUP_MANAGER_FS, &frozen, &err), 0);
	assert_false(frozen);
	assert_true(count_after(300) > 0);

	/* Update: more memory, no pids limit. */
	upd.has_memory = true;
	upd.memory.limit = (struct opt_i64){ true, 128 << 20 };
	upd.pids_limit = (struct opt_i64){ true, -1 };
	if (cgroup_update(p, CGROUP_MANAGER_FS, &upd, &err) < 0)
		fail_msg("update: %s", err.msg);
	assert_ctrl("memory", p, mode == CGROUP_MODE_V2 ? "memory.max" :
			"memory.limit_in_bytes", "134217728");
	assert_ctrl("pids", p, "pids.max", "max");

	/* A busy cgroup is not removed without force. */
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, false, &err), -1);
	assert_non_null(strstr(err.msg, "still has"));

	assert_int_equal(cgroup_kill(p, CGROUP_MANAGER_FS, SIGKILL, &err), 0);
	reap(child, SIGKILL);
	if (cgroup_destroy(p, CGROUP_MANAGER_FS, false, &err) < 0)
		fail_msg("destroy: %s", err.msg);
	assert_gone(p);
	/* Gone already: not an error. */
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err), 0);
}

/* Every line of /proc/PID/cgroup (each v1 hierarchy, and cgroup2) names
 * path: the process is in the container's cgroup everywhere. */
static bool pid_in_every_hierarchy(pid_t pid, const char *path)
{
	_cleanup_free_ char *f = xasprintf("/proc/%d/cgroup", (int)pid);
	_cleanup_free_ char *text = NULL;
	struct error err;
	size_t lines = 0;

	if (read_file_at(AT_FDCWD, f, 65536, &text, NULL, &err) < 0)
		return false;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char *where = strchr(l, ':');

		where = where ? strchr(where + 1, ':') : NULL;
		if (!where || strcmp(where + 1, path) != 0) {
			print_message("not in %s: %s\n", path, l);
			return false;
		}
		lines++;
	}
	return lines > 0;
}

/*
 * Issue 19: the cgroup is made (limits and all) before the clone and the
 * new process gets in without a migration by pid (cgroup.h): born in it
 * on cgroup2 (clone3 CLONE_INTO_CGROUP), and on v1 it writes "0" into
 * each hierarchy's tasks file itself.  The same for exec's process into
 * an existing cgroup (cgroup_open_birth).
 */
static pid_t clone_placed(struct cgroup_birth *b, const char *p)
{
	struct error err;
	bool born = false;
	pid_t child;

	if (ns_clone_into(0, cgroup_birth_clone_fd(b), &child, &born, &err) < 0)
		fail_msg("clone into: %s", err.msg);
	if (child == 0) {
		if (cgroup_place_self(b, &err) < 0) {
			fprintf(stderr, "%s\n", err.msg);
			_exit(3);
		}
		for (;;)
			pause();
	}
	if (cgroup_birth_clone_fd(b) >= 0)
		assert_true(born); /* Linux >= 5.7 */
	assert_int_equal(cgroup_after_clone(b, child, born, &err), 0);
	assert_int_equal(b->v2_fd, -1); /* the parent's copies are closed */
	assert_int_equal(b->n_tasks, 0);
	for (int i = 0; i < 200 && !pid_in_every_hierarchy(child, p); i++)
		sleep_ms(5);
	return child;
}

static void test_born_in_cgroup(void **state)
{
	_cleanup_free_ char *p = cg_path("born");
	struct cgroup_birth b;
	struct error err;
	pid_t first, second;

	(void)state;
	if (cgroup_create_for_clone(p, CGROUP_MANAGER_FS, res_basic(), &b, &err) < 0)
		fail_msg("create for clone: %s", err.msg);
	check_basic_files(p);
	assert_false(b.after_clone);
	if (mode == CGROUP_MODE_V2) {
		assert_true(b.v2_fd >= 0);
		assert_int_equal(b.n_tasks, 0);
	} else {
		assert_int_equal(b.n_tasks, host->n_hier);
		assert_int_equal(b.v2_fd >= 0, mode == CGROUP_MODE_HYBRID);
	}
	first = clone_placed(&b, p);
	assert_true(pid_in_every_hierarchy(first, p));

	/* exec's way into the same cgroup. */
	if (cgroup_open_birth(p, CGROUP_MANAGER_FS, &b, &err) < 0)
		fail_msg("open birth: %s", err.msg);
	second = clone_placed(&b, p);
	assert_true(pid_in_every_hierarchy(second, p));

	/* systemd: nothing made before the clone. */
	assert_int_equal(cgroup_create_for_clone(p, CGROUP_MANAGER_SYSTEMD, res_basic(), &b, &err), 0);
	assert_true(b.after_clone);
	assert_int_equal(b.v2_fd, -1);

	kill(first, SIGKILL);
	kill(second, SIGKILL);
	reap(first, SIGKILL);
	reap(second, SIGKILL);
	if (cgroup_destroy(p, CGROUP_MANAGER_FS, false, &err) < 0)
		fail_msg("destroy: %s", err.msg);
	assert_gone(p);
}

/* A sub-cgroup made by the container (as with a cgroup namespace). */
static void make_sub(const char *p, pid_t pid)
{
	const char *ctrl = mode == CGROUP_MODE_V2 ? "memory" : "pids";
	_cleanup_free_ char *dir = ctrl_dir(ctrl, p);
	_cleanup_free_ char *sub = xasprintf("%s/sub", dir);
	_cleanup_free_ char *procs = xasprintf("%s/sub/cgroup.procs", dir);
	char buf[16];
	struct error err;

	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	assert_int_equal(write_file_at(AT_FDCWD, procs, buf, &err), 0);
}

static void test_kill_all_and_force_destroy(void **state)
{
	_cleanup_free_ char *p = cg_path("c2");
	_cleanup_free_ pid_t *pids = NULL;
	struct oci_resources r = no_resources();
	pid_t kids[4];
	struct error err;
	size_t n;

	(void)state;
	map_counter();
	kids[0] = spawn_counter();
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, kids[0], &err) < 0)
		fail_msg("create: %s", err.msg);
	/* Later processes join through cgroup_enter (exec). */
	for (int i = 1; i < 4; i++) {
		kids[i] = spawn_counter();
		if (cgroup_enter(p, CGROUP_MANAGER_FS, kids[i], &err) < 0)
			fail_msg("enter: %s", err.msg);
	}
	make_sub(p, kids[3]);
	assert_int_equal(cgroup_pids(p, CGROUP_MANAGER_FS, &pids, &n, &err), 0);
	assert_int_equal(n, 4);

	/* kill --all with a catchable signal reaches every one. */
	assert_int_equal(cgroup_kill(p, CGROUP_MANAGER_FS, SIGTERM, &err), 0);
	for (int i = 0; i < 4; i++)
		reap(kids[i], SIGTERM);

	for (int i = 0; i < 4; i++)
		kids[i] = spawn_counter();
	for (int i = 0; i < 4; i++)
		assert_int_equal(cgroup_enter(p, CGROUP_MANAGER_FS, kids[i], &err), 0);
	if (cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err) < 0)
		fail_msg("destroy --force: %s", err.msg);
	for (int i = 0; i < 4; i++)
		reap(kids[i], SIGKILL);
	assert_gone(p);
}

static void test_reuse_refused(void **state)
{
	_cleanup_free_ char *p = cg_path("c3");
	struct oci_resources r = no_resources();
	struct error err;
	pid_t a, b;

	(void)state;
	map_counter();
	a = spawn_counter();
	b = spawn_counter();
	assert_int_equal(cgroup_create(p, CGROUP_MANAGER_FS, &r, a, &err), 0);
	assert_int_equal(cgroup_create(p, CGROUP_MANAGER_FS, &r, b, &err), -1);
	assert_non_null(strstr(err.msg, "has processes"));
	assert_false(pid_in_cgroup(b, p));
	kill(b, SIGKILL);
	reap(b, SIGKILL);
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err), 0);
	reap(a, SIGKILL);
	assert_gone(p);
}

/* A refused resource: the error names it, nothing is left behind. */
static void refused(const struct oci_resources *r, const char *part)
{
	_cleanup_free_ char *p = cg_path("refused/c");
	_cleanup_free_ char *parent = cg_path("refused");
	struct error err;

	assert_int_equal(cgroup_create(p, CGROUP_MANAGER_FS, r, 0, &err), -1);
	if (!strstr(err.msg, part))
		fail_msg("error \"%s\" does not mention \"%s\"", err.msg, part);
	fprintf(stderr, "refused as expected: %s\n", err.msg);
	assert_gone(p);
	assert_gone(parent);
}

static void test_refusals(void **state)
{
	struct oci_resources r = no_resources();
	char *k[] = { (char *)"memory.high" }, *v[] = { (char *)"1000000" };

	(void)state;
	r.has_network = true;
	r.network.class_id = (struct opt_u64){ true, 0x100001 };
	if (mode == CGROUP_MODE_V2)
		refused(&r, "not available on cgroup v2");
	else if (!cg1_host_hier(host, CG1_NET_CLS))
		refused(&r, "network.classID: the net_cls controller is not mounted");

	r = no_resources();
	r.has_memory = true;
	r.memory.disable_oom_killer = (struct opt_bool){ true, true };
	if (mode == CGROUP_MODE_V2)
		refused(&r, "disableOOMKiller: not supported on cgroup v2");

	r = no_resources();
	r.has_block_io = true;
	r.block_io.leaf_weight = (struct opt_u64){ true, 100 };
	refused(&r, "leafWeight");

	/* On a hybrid host the cgroup2 side has no memory controller. */
	r = no_resources();
	r.unified = (struct str_map){ k, v, 1 };
	if (mode == CGROUP_MODE_HYBRID)
		refused(&r, "the memory controller is not available in /sys/fs/cgroup/unified");
	k[0] = (char *)"nosuchctrl.max";
	if (mode != CGROUP_MODE_V1)
		refused(&r, "the nosuchctrl controller is not available");
}

/* Lowering the limit below what is in use. */
static void test_limit_below_usage(void **state)
{
	_cleanup_free_ char *p = cg_path("c4");
	struct oci_resources r = no_resources();
	int go[2], done[2];
	struct error err;
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	if (pid == 0) {
		/* Once in the cgroup, hold 24 MiB (volatile: the compiler
		 * would drop an allocation nobody reads). */
		volatile char *m;

		if (read(go[0], &c, 1) != 1)
			_exit(1);
		m = malloc(24 << 20);
		for (size_t i = 0; i < 24 << 20; i += 4096)
			m[i] = 1;
		if (write(done[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	r.has_memory = true;
	r.memory.limit = (struct opt_i64){ true, 256 << 20 };
	assert_int_equal(cgroup_create(p, CGROUP_MANAGER_FS, &r, pid, &err), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);

	r.memory.limit = (struct opt_i64){ true, 4 << 20 };
	r.memory.check_before_update = (struct opt_bool){ true, true };
	assert_int_equal(cgroup_update(p, CGROUP_MANAGER_FS, &r, &err), -1);
	fprintf(stderr, "refused as expected: %s\n", err.msg);
	if (mode == CGROUP_MODE_V2) {
		assert_non_null(strstr(err.msg, "below the current usage"));
	} else {
		_cleanup_free_ char *want = xasprintf(
			"write 4194304 to %s%s/memory.limit_in_bytes: Device or resource busy",
			cg1_host_hier(host, CG1_MEMORY)->mnt, p);
		assert_string_equal(err.msg, want);
	}
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err), 0);
	reap(pid, SIGKILL);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
}

/* ---- devices ------------------------------------------------------------- */

/* A child that, on each byte from the parent, tries the opens and reports
 * one errno per open (0 for success). */
struct prober {
	pid_t pid;
	int go, result;
};

static const struct {
	const char *path;
	int flags;
} probes[] = {
	{ "/dev/null", O_RDWR },  { "/dev/zero", O_RDONLY },
	{ "/dev/kmsg", O_RDONLY }, { "/dev/kmsg", O_WRONLY },
};

#define NPROBES (sizeof(probes) / sizeof(*probes))

static struct prober prober_start(void)
{
	int a[2], b[2];
	struct prober pr;

	assert_int_equal(pipe(a), 0);
	assert_int_equal(pipe(b), 0);
	pr.pid = fork();
	if (pr.pid == 0) {
		char c;

		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1) {
			int res[NPROBES];

			for (size_t i = 0; i < NPROBES; i++) {
				int fd = open(probes[i].path, probes[i].flags);

				res[i] = fd < 0 ? errno : 0;
				if (fd >= 0)
					close(fd);
			}
			if (write(b[1], res, sizeof(res)) != sizeof(res))
				_exit(1);
		}
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	pr.go = a[1];
	pr.result = b[0];
	return pr;
}

static void probe(struct prober *pr, const int want[NPROBES])
{
	int res[NPROBES];

	assert_int_equal(write(pr->go, "p", 1), 1);
	assert_int_equal(read(pr->result, res, sizeof(res)), sizeof(res));
	for (size_t i = 0; i < NPROBES; i++)
		if (res[i] != want[i])
			fail_msg("open %s (flags %d): %s, want %s", probes[i].path,
				 probes[i].flags, strerror(res[i]),
				 strerror(want[i]));
}

static void prober_stop(struct prober *pr)
{
	close(pr->go);
	close(pr->result);
	reap(pr->pid, 0);
}

static void test_devices(void **state)
{
	_cleanup_free_ char *p = cg_path("dev");
	struct oci_device_cgroup kmsg_r = { .allow = true, .type = 'c',
					    .major = { true, 1 },
					    .minor = { true, 11 },
					    .access = (char *)"r" };
	struct oci_resources r = no_resources();
	static const int before[NPROBES] = { 0, 0, EPERM, EPERM };
	static const int after[NPROBES] = { 0, 0, 0, EPERM };
	struct prober pr = prober_start();
	struct error err;

	(void)state;
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, pr.pid, &err) < 0)
		fail_msg("create: %s", err.msg);
	probe(&pr, before);
	r.devices = &kmsg_r;
	r.n_devices = 1;
	if (cgroup_update(p, CGROUP_MANAGER_FS, &r, &err) < 0)
		fail_msg("update: %s", err.msg);
	probe(&pr, after);
	prober_stop(&pr);
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, false, &err), 0);
}

static unsigned attached_programs(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint32_t ids[8];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)fd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uintptr_t)ids;
	a.query.prog_cnt = 8;
	assert_int_equal(syscall(__NR_bpf, BPF_PROG_QUERY, &a, sizeof(a)), 0);
	return a.query.prog_cnt;
}

/* The v2 device filter by itself, on the cgroup2 side of a hybrid host
 * (the kernel runs it there too), or on a pure v2 host. */
static void device_filter_replace(void)
{
	_cleanup_free_ char *p = cg_path("bpf");
	_cleanup_free_ char *dir = ctrl_dir("unified", p);
	_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", dir);
	struct oci_device_cgroup only_null = { .allow = true, .type = 'c',
					       .major = { true, 1 },
					       .minor = { true, 3 } };
	struct oci_device_cgroup only_zero_kmsg[] = {
		{ .allow = true, .type = 'c', .major = { true, 1 },
		  .minor = { true, 5 }, .access = (char *)"r" },
		{ .allow = true, .type = 'c', .major = { true, 1 },
		  .minor = { true, 11 } },
		{ .allow = false, .type = 'c', .major = { true, 1 },
		  .minor = { true, 11 }, .access = (char *)"w" },
	};
	static const int want1[NPROBES] = { 0, EPERM, EPERM, EPERM };
	static const int want2[NPROBES] = { EPERM, 0, 0, EPERM };
	struct cg_dir d = CG_DIR_INIT, root = CG_DIR_INIT;
	struct prober pr;
	struct error err;
	char buf[16];

	pr = prober_start();
	assert_int_equal(cg_open_mount(host->v2_mnt, true, &root, &err), 0);
	assert_int_equal(cg_walk(&root, p, true, NULL, NULL, &d, NULL, &err), 0);
	if (cg_devices_apply(&d, &only_null, 1, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(attached_programs(dir), 1);
	snprintf(buf, sizeof(buf), "%d", (int)pr.pid);
	assert_int_equal(write_file_at(AT_FDCWD, procs, buf, &err), 0);
	probe(&pr, want1);
	if (cg_devices_apply(&d, only_zero_kmsg, 3, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(attached_programs(dir), 1); /* replaced */
	probe(&pr, want2);
	prober_stop(&pr);
	cg_dir_close(&d);
	assert_int_equal(cg_remove_tree(&root, p, &err), 0);
	cg_dir_close(&root);
}

/* skip() jumps out: the tests decide before they allocate anything. */
static void test_device_filter_replace(void **state)
{
	(void)state;
	if (!host->v2_mnt)
		skip();
	device_filter_replace();
}

/* ---- hugetlb, cpuset ancestry --------------------------------------------- */

static bool hugetlb_testable(void)
{
	const char *side = mode == CGROUP_MODE_V2 ? "hugetlb" : "unified";
	_cleanup_free_ char *avail = NULL;
	struct stat st;

	if (stat("/sys/kernel/mm/hugepages/hugepages-2048kB", &st) < 0 ||
	    mode == CGROUP_MODE_V1 ||
	    (mode == CGROUP_MODE_HYBRID && cg1_host_hier(host, CG1_HUGETLB)))
		return false;
	avail = read_ctrl(side, "", "cgroup.controllers");
	return avail && cg_word_in(avail, "hugetlb");
}

static void hugetlb(void)
{
	_cleanup_free_ char *p = cg_path("huge");
	_cleanup_free_ char *root_ctl = NULL;
	struct oci_hugepage_limit hp = { (char *)"2MB", 4 << 20 };
	struct oci_resources r = no_resources();
	struct error err;
	const char *side = mode == CGROUP_MODE_V2 ? "hugetlb" : "unified";
	int lock;

	/* The root's subtree_control is the host's: put it back as it was. */
	lock = root_lock();
	root_ctl = read_ctrl(side, "", "cgroup.subtree_control");
	r.hugepage_limits = &hp;
	r.n_hugepage_limits = 1;
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, 0, &err) < 0)
		fail_msg("create: %s", err.msg);
	assert_ctrl(side, p, "hugetlb.2MB.max", "4194304");
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, false, &err), 0);
	if (mode == CGROUP_MODE_HYBRID && !cg_word_in(root_ctl, "hugetlb")) {
		_cleanup_free_ char *bd = ctrl_dir("unified", base);
		_cleanup_free_ char *bf = xasprintf("%s/cgroup.subtree_control", bd);
		_cleanup_free_ char *rf = xasprintf("%s/cgroup.subtree_control",
						    host->v2_mnt);

		/* Innermost first: a parent cannot drop what a child uses. */
		assert_int_equal(write_file_at(AT_FDCWD, bf, "-hugetlb", &err), 0);
		assert_int_equal(write_file_at(AT_FDCWD, rf, "-hugetlb", &err), 0);
	}
	root_unlock(lock);
}

static void test_hugetlb(void **state)
{
	(void)state;
	if (!hugetlb_testable())
		skip();
	hugetlb();
}

static void cpuset_ancestors(void)
{
	_cleanup_free_ char *p = cg_path("deep/er/c");
	_cleanup_free_ char *mid = cg_path("deep/er");
	_cleanup_free_ char *cpus = read_ctrl("cpuset", "", "cpuset.cpus");
	struct oci_resources r = no_resources();
	struct error err;
	pid_t pid;

	map_counter();
	pid = spawn_counter();
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, pid, &err) < 0)
		fail_msg("create: %s", err.msg);
	assert_ctrl("cpuset", mid, "cpuset.cpus", cpus);
	assert_ctrl("cpuset", p, "cpuset.cpus", cpus);
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err), 0);
	reap(pid, SIGKILL);
	/* Only the container's own directory goes; the parents stay. */
	assert_true(dir_exists("cpuset", mid));
}

static void test_cpuset_ancestors(void **state)
{
	(void)state;
	if (mode == CGROUP_MODE_V2 || !cg1_host_hier(host, CG1_CPUSET))
		skip();
	cpuset_ancestors();
}

/* Hybrid: entering the cgroup2 side fails after the v1 hierarchies took
 * the pid (there, a leaf with controllers enabled for children refuses
 * processes).  The pid is moved out and the v1 directories go. */
static void enable_hugetlb(const char *path, bool on)
{
	_cleanup_free_ char *dir = ctrl_dir("unified", path);
	_cleanup_free_ char *f = xasprintf("%s/cgroup.subtree_control", dir);
	struct error err;

	if (write_file_at(AT_FDCWD, f, on ? "+hugetlb" : "-hugetlb", &err) < 0)
		fail_msg("%s", err.msg);
}

static void partial_enter_undone(void)
{
	_cleanup_free_ char *pf = cg_path("pf"), *p = cg_path("pf/c");
	_cleanup_free_ char *sub = cg_path("pf/c/sub");
	_cleanup_free_ char *subdir = NULL;
	_cleanup_free_ char *root_ctl = NULL;
	const char *chain[] = { "", base, pf, p };
	struct oci_resources r = no_resources();
	struct error err;
	int lock;
	pid_t pid;

	lock = root_lock();
	root_ctl = read_ctrl("unified", "", "cgroup.subtree_control");
	subdir = ctrl_dir("unified", sub);
	for (size_t i = 1; i < 4; i++) {
		_cleanup_free_ char *d = ctrl_dir("unified", chain[i]);

		if (mkdir(d, 0755) < 0 && errno != EEXIST)
			fail_msg("mkdir %s: %s", d, strerror(errno));
	}
	assert_int_equal(mkdir(subdir, 0755), 0);
	for (size_t i = 0; i < 4; i++)
		if (i > 0 || !cg_word_in(root_ctl, "hugetlb"))
			enable_hugetlb(chain[i], true);

	map_counter();
	pid = spawn_counter();
	assert_int_equal(cgroup_create(p, CGROUP_MANAGER_FS, &r, pid, &err), -1);
	fprintf(stderr, "refused as expected: %s\n", err.msg);
	assert_non_null(strstr(err.msg, "cgroup.procs: Device or resource busy"));
	assert_false(pid_in_cgroup(pid, p));
	for (size_t i = 0; i < host->n_hier; i++) {
		_cleanup_free_ char *d = xasprintf("%s%s", host->hier[i].mnt, pf);
		struct stat st;

		if (stat(d, &st) == 0)
			fail_msg("%s left behind", d);
	}
	kill(pid, SIGKILL);
	reap(pid, SIGKILL);
	assert_int_equal(rmdir(subdir), 0);
	for (size_t i = 4; i-- > 0;)
		if (i > 0 || !cg_word_in(root_ctl, "hugetlb"))
			enable_hugetlb(chain[i], false);
	root_unlock(lock);
}

static void test_partial_enter_undone(void **state)
{
	(void)state;
	if (mode != CGROUP_MODE_HYBRID || !hugetlb_testable())
		skip();
	partial_enter_undone();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_born_in_cgroup),
		cmocka_unit_test(test_kill_all_and_force_destroy),
		cmocka_unit_test(test_reuse_refused),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_limit_below_usage),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_device_filter_replace),
		cmocka_unit_test(test_hugetlb),
		cmocka_unit_test(test_cpuset_ancestors),
		cmocka_unit_test(test_partial_enter_undone),
	};

	if (!cg_tests_runnable())
		return 0;
	return cmocka_run_group_tests(tests, cg_group_setup, cg_group_teardown);
}
