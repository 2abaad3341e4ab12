/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The limits hold: a process put in its cgroup by cgroup_create (fork +
 * create on the child, as the lifecycle does) is OOM-killed past its memory
 * limit, a fork bomb stops at pids.max and is cleaned up by a forced
 * destroy, a busy loop under a 20% quota is throttled.  Needs root.
 */
#include "test_cgroup_helpers.h"

/* A child that waits for a byte, then runs fn. */
static pid_t spawn_waiting(int *go, void (*fn)(void))
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;

		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(100);
		fn();
		_exit(0);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void release(int go)
{
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
}

static void allocate_64m(void)
{
	volatile char *m = malloc(64 << 20);

	if (!m)
		_exit(101);
	for (size_t i = 0; i < (64u << 20); i += 4096)
		m[i] = 1;
	_exit(0); /* survived: the limit did not hold */
}

static void test_oom_kill(void **state)
{
	_cleanup_free_ char *p = cg_path("oom");
	_cleanup_free_ char *memsw = read_ctrl("memory", "",
					       "memory.memsw.limit_in_bytes");
	struct oci_resources r = no_resources();
	struct error err;
	int go, status;
	pid_t pid;

	(void)state;
	r.has_memory = true;
	r.memory.limit = (struct opt_i64){ true, 32 << 20 };
	/* No swapping out of it either, where swap is accounted. */
	if (mode == CGROUP_MODE_V2 || memsw)
		r.memory.swap = (struct opt_i64){ true, 32 << 20 };
	pid = spawn_waiting(&go, allocate_64m);
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, pid, &err) < 0)
		fail_msg("create: %s", err.msg);
	release(go);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("64 MiB under a 32 MiB limit: status 0x%x, not SIGKILL",
			 status);
	if (mode == CGROUP_MODE_V2)
		assert_true(ctrl_keyed("memory", p, "memory.events", "oom_kill") >= 1);
	else
		assert_true(ctrl_keyed("memory", p, "memory.oom_control", "oom_kill") >= 1);
	fprintf(stderr, "64 MiB allocation under 32 MiB: killed by SIGKILL (oom_kill)\n");
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, false, &err), 0);
}

static void fork_bomb(void)
{
	for (;;)
		fork();
}

static void test_fork_bomb(void **state)
{
	_cleanup_free_ char *p = cg_path("bomb");
	struct oci_resources r = no_resources();
	long long peak = 0;
	struct error err;
	int go;
	pid_t pid;

	(void)state;
	r.pids_limit = (struct opt_i64){ true, 16 };
	pid = spawn_waiting(&go, fork_bomb);
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, pid, &err) < 0)
		fail_msg("create: %s", err.msg);
	release(go);
	for (int i = 0; i < 20; i++) {
		_cleanup_free_ char *cur = read_ctrl("pids", p, "pids.current");
		long long v = cur ? atoll(cur) : 0;

		if (v > peak)
			peak = v;
		sleep_ms(25);
	}
	fprintf(stderr, "fork bomb under pids.max 16: peak pids.current %lld, "
		"pids.events max %lld\n", peak,
		ctrl_keyed("pids", p, "pids.events", "max"));
	assert_true(peak <= 16);
	assert_true(peak >= 8);
	assert_true(ctrl_keyed("pids", p, "pids.events", "max") > 0);
	/* kill --all with SIGTERM: frozen while signalled, none escapes. */
	if (cgroup_kill(p, CGROUP_MANAGER_FS, SIGTERM, &err) < 0)
		fail_msg("kill: %s", err.msg);
	reap(pid, SIGTERM); /* a zombie still counts in pids.current */
	for (int i = 0; i < 200; i++) {
		_cleanup_free_ char *cur = read_ctrl("pids", p, "pids.current");

		if (cur && atoll(cur) == 0)
			break;
		sleep_ms(10);
	}
	assert_ctrl("pids", p, "pids.current", "0");
	/* And a forced destroy of a fresh bomb: SIGKILL, then removal. */
	pid = spawn_waiting(&go, fork_bomb);
	if (cgroup_enter(p, CGROUP_MANAGER_FS, pid, &err) < 0)
		fail_msg("enter: %s", err.msg);
	release(go);
	sleep_ms(100);
	if (cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err) < 0)
		fail_msg("destroy --force: %s", err.msg);
	reap(pid, SIGKILL);
	assert_gone(p);
}

static void busy_loop(void)
{
	for (volatile unsigned long i = 0;; i++)
		;
}

static long long cpu_usage_usec(const char *p)
{
	_cleanup_free_ char *ns = NULL;

	if (mode == CGROUP_MODE_V2)
		return ctrl_keyed("cpu", p, "cpu.stat", "usage_usec");
	ns = read_ctrl("cpuacct", p, "cpuacct.usage");
	assert_non_null(ns);
	return atoll(ns) / 1000;
}

static void test_cpu_quota(void **state)
{
	_cleanup_free_ char *p = cg_path("cpu");
	struct oci_resources r = no_resources();
	struct timespec t0, t1;
	long long wall, used, throttled;
	struct error err;
	int go;
	pid_t pid;

	(void)state;
	r.has_cpu = true;
	r.cpu.quota = (struct opt_i64){ true, 20000 };
	r.cpu.period = (struct opt_u64){ true, 100000 };
	pid = spawn_waiting(&go, busy_loop);
	if (cgroup_create(p, CGROUP_MANAGER_FS, &r, pid, &err) < 0)
		fail_msg("create: %s", err.msg);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	release(go);
	sleep_ms(1000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	used = cpu_usage_usec(p);
	throttled = ctrl_keyed("cpu", p, "cpu.stat", "nr_throttled");
	wall = (t1.tv_sec - t0.tv_sec) * 1000000LL + (t1.tv_nsec - t0.tv_nsec) / 1000;
	fprintf(stderr, "busy loop under 20%% quota: %lld us of CPU in %lld us, "
		"nr_throttled %lld\n", used, wall, throttled);
	assert_true(throttled > 0);
	assert_true(used < wall * 35 / 100);
	assert_int_equal(cgroup_destroy(p, CGROUP_MANAGER_FS, true, &err), 0);
	reap(pid, SIGKILL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oom_kill),
		cmocka_unit_test(test_fork_bomb),
		cmocka_unit_test(test_cpu_quota),
	};

	if (!cg_tests_runnable())
		return 0;
	return cmocka_run_group_tests(tests, cg_group_setup, cg_group_teardown);
}
