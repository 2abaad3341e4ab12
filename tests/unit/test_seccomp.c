/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/seccomp/seccomp.c: profiles compiled, loaded in a forked child, and the
 * syscalls' fate checked from inside.
 */
#include "test_seccomp_helpers.h"

#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/socket.h>

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a SECCOMP_RET_TRAP SIGSYS */
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif

/* What every child needs to report and exit, on top of a test's rules;
 * the second line is for the ASan runtime (the `make asan` build). */
#define BASE_ALLOW                                                             \
	"\"write\", \"exit\", \"exit_group\", \"rt_sigreturn\","              \
	"\"sigaltstack\", \"mmap\", \"munmap\", \"madvise\", \"futex\""

static const char allowlist_json[] =
	"{\"defaultAction\": \"SCMP_ACT_ERRNO\","
	" \"architectures\": [\"SCMP_ARCH_X86_64\"],"
	" \"syscalls\": [{\"names\": [" BASE_ALLOW ", \"getpid\"],"
	"                 \"action\": \"SCMP_ACT_ALLOW\"}]}";

static void child_allowlist(void *arg, int listener)
{
	TSC_EXPECT_OK(syscall(SYS_getpid));
	TSC_EXPECT_ERRNO(syscall(SYS_getppid), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_getuid), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_mount, "none", "/mnt", "tmpfs", 0, NULL),
			 EPERM);
}

static void test_errno_allowlist(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare(allowlist_json, NULL, &prog);
	assert_true(prog.len > 0);
	assert_false(prog.needs_listener);
	assert_int_equal(prog.flags, 0);
	tsc_run(&prog, child_allowlist, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void child_errno_ret(void *arg, int listener)
{
	TSC_EXPECT_ERRNO(syscall(SYS_getppid), EOPNOTSUPP); /* errnoRet */
	TSC_EXPECT_ERRNO(syscall(SYS_getuid), EPERM);	      /* no errnoRet */
	TSC_EXPECT_ERRNO(syscall(SYS_getgid), EACCES);      /* default */
	/* ERRNO(0): "succeeds" without running */
	TSC_CHECK(syscall(SYS_chdir, "/nonexistent-agentsbx") == 0);
}

static void test_errno_ret(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ERRNO\","
		    " \"defaultErrnoRet\": 13,"
		    " \"syscalls\": ["
		    "  {\"names\": [" BASE_ALLOW "], \"action\": \"SCMP_ACT_ALLOW\"},"
		    "  {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_ERRNO\","
		    "   \"errnoRet\": 95},"
		    "  {\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ERRNO\"},"
		    "  {\"names\": [\"chdir\"], \"action\": \"SCMP_ACT_ERRNO\","
		    "   \"errnoRet\": 0}]}",
		    NULL, &prog);
	tsc_run(&prog, child_errno_ret, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void child_getppid(void *arg, int listener)
{
	syscall(SYS_getppid);
}

static void run_kill(const char *action)
{
	char *json = xasprintf("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
			       " \"syscalls\": [{\"names\": [\"getppid\"],"
			       " \"action\": \"%s\"}]}", action);
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare(json, NULL, &prog);
	tsc_run(&prog, child_getppid, NULL, &r);
	tsc_assert_killed(&r, SIGSYS);
	seccomp_prog_free(&prog);
	free(json);
}

static void test_kill_process(void **state)
{
	run_kill("SCMP_ACT_KILL_PROCESS");
}

static void test_kill_thread(void **state)
{
	run_kill("SCMP_ACT_KILL");
	run_kill("SCMP_ACT_KILL_THREAD");
}

static volatile sig_atomic_t trapped_nr = -1;

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	if (si->si_code == SYS_SECCOMP)
		trapped_nr = si->si_syscall;
}

static void child_trap(void *arg, int listener)
{
	TSC_CHECK(trapped_nr == -1);
	syscall(SYS_getppid);
	TSC_CHECK(trapped_nr == SYS_getppid);
	TSC_EXPECT_OK(syscall(SYS_getpid)); /* LOG: runs */
}

static void test_trap_and_log(void **state)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO };
	struct sigaction old;
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
		    " {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_TRAP\"},"
		    " {\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_LOG\"}]}",
		    NULL, &prog);
	/* Installed before the fork, inherited by the child. */
	assert_int_equal(sigaction(SIGSYS, &sa, &old), 0);
	tsc_run(&prog, child_trap, NULL, &r);
	sigaction(SIGSYS, &old, NULL);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void child_masked_eq(void *arg, int listener)
{
	/* 0xffffffff only queries the persona. */
	TSC_EXPECT_OK(syscall(SYS_personality, 0xffffffffUL));
	TSC_EXPECT_ERRNO(syscall(SYS_personality, (unsigned long)PER_LINUX32),
			 EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_personality, 0xfffffffeUL), EPERM);
}

static void test_masked_eq(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": ["
		    " {\"names\": [" BASE_ALLOW "], \"action\": \"SCMP_ACT_ALLOW\"},"
		    " {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\","
		    "  \"args\": [{\"index\": 0, \"value\": 4294967295,"
		    "   \"valueTwo\": 4294967295, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}]}",
		    NULL, &prog);
	tsc_run(&prog, child_masked_eq, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void child_args_and(void *arg, int listener)
{
	TSC_EXPECT_OK(syscall(SYS_getpriority, PRIO_PROCESS, 0));
	TSC_EXPECT_ERRNO(syscall(SYS_getpriority, PRIO_PROCESS, 1), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_getpriority, PRIO_PGRP, 0), EPERM);
}

/* Conditions on different arguments: all must hold. */
static void test_args_and(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": ["
		    " {\"names\": [" BASE_ALLOW "], \"action\": \"SCMP_ACT_ALLOW\"},"
		    " {\"names\": [\"getpriority\"], \"action\": \"SCMP_ACT_ALLOW\","
		    "  \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"},"
		    "            {\"index\": 1, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]}",
		    NULL, &prog);
	tsc_run(&prog, child_args_and, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void child_same_index(void *arg, int listener)
{
	TSC_EXPECT_OK(syscall(SYS_personality, 0xffffffffUL));
	TSC_EXPECT_OK(syscall(SYS_personality, (unsigned long)PER_LINUX));
	TSC_EXPECT_ERRNO(syscall(SYS_personality, (unsigned long)PER_BSD),
			 EPERM);
	/* getpriority: a0 == PROCESS || a0 == PGRP || a1 == 0 (runc's OR) */
	TSC_EXPECT_OK(syscall(SYS_getpriority, PRIO_PROCESS, 0));
	TSC_EXPECT_OK(syscall(SYS_getpriority, PRIO_PGRP, 0));
	TSC_EXPECT_OK(syscall(SYS_getpriority, PRIO_USER, 0));
	TSC_EXPECT_ERRNO(syscall(SYS_getpriority, PRIO_USER, 12345), EPERM);
}

/*
 * The same index twice: libseccomp cannot put both in one rule; each
 * condition becomes its own rule, as runc does.
 */
static void test_same_index_twice(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": ["
		    " {\"names\": [" BASE_ALLOW "], \"action\": \"SCMP_ACT_ALLOW\"},"
		    " {\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\","
		    "  \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"},"
		    "   {\"index\": 0, \"value\": 4294967295, \"op\": \"SCMP_CMP_EQ\"}]},"
		    " {\"names\": [\"getpriority\"], \"action\": \"SCMP_ACT_ALLOW\","
		    "  \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"},"
		    "   {\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"},"
		    "   {\"index\": 1, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]}",
		    NULL, &prog);
	tsc_run(&prog, child_same_index, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

/* ---- ENOSYS -------------------------------------------------------------- */

/* Highest named: openat2 (437).  clone3 (435) and 440 are below it. */
static const char enosys_json[] =
	"{\"defaultAction\": \"%s\", \"syscalls\": ["
	" {\"names\": [" BASE_ALLOW ", \"getpid\"], \"action\": \"SCMP_ACT_ALLOW\"},"
	" {\"names\": [\"openat2\"], \"action\": \"SCMP_ACT_ERRNO\","
	"  \"errnoRet\": 13}]}";

static void child_enosys(void *arg, int listener)
{
	/* unnamed, libcs fall back on ENOSYS: explicit rule */
	TSC_EXPECT_ERRNO(syscall(__NR_clone3, NULL, 0), ENOSYS);
	/* above the highest named syscall: the stub */
	TSC_EXPECT_ERRNO(syscall(441), ENOSYS);
	TSC_EXPECT_ERRNO(syscall(470), ENOSYS);
	TSC_EXPECT_ERRNO(syscall(1000), ENOSYS);
	/* named ones keep their action */
	TSC_EXPECT_ERRNO(syscall(SYS_openat2, -1, "x", NULL, 0), EACCES);
	TSC_EXPECT_OK(syscall(SYS_getpid));
}

static void child_enosys_errno(void *arg, int listener)
{
	child_enosys(arg, listener);
	/* below the highest named, not a fallback syscall: default */
	TSC_EXPECT_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM); /* 425 */
	TSC_EXPECT_ERRNO(syscall(SYS_getuid), EPERM);
	/* past the stub's range: default, not ENOSYS */
	TSC_EXPECT_ERRNO(syscall(5000), EPERM);
}

static void test_enosys_errno_default(void **state)
{
	char *json = xasprintf(enosys_json, "SCMP_ACT_ERRNO");
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare(json, NULL, &prog);
	tsc_run(&prog, child_enosys_errno, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
	free(json);
}

static void child_getuid(void *arg, int listener)
{
	syscall(SYS_getuid);
}

static void child_x32(void *arg, int listener)
{
	syscall(0x40000000 | SYS_getpid); /* x32 ABI bit, x32 not listed */
}

static void test_enosys_kill_default(void **state)
{
	char *json = xasprintf(enosys_json, "SCMP_ACT_KILL_PROCESS");
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare(json, NULL, &prog);
	/* ENOSYS, not death, for what the profile cannot have meant */
	tsc_run(&prog, child_enosys, NULL, &r);
	tsc_assert_exited_ok(&r);
	/* named-by-omission old syscalls still kill */
	tsc_run(&prog, child_getuid, NULL, &r);
	tsc_assert_killed(&r, SIGSYS);
	/* the stub leaves the x32 bit to libseccomp's bad-arch action */
	tsc_run(&prog, child_x32, NULL, &r);
	tsc_assert_killed(&r, SIGSYS);
	seccomp_prog_free(&prog);
	free(json);
}

static void child_allow_default(void *arg, int listener)
{
	/* reaches the kernel, which rejects the size */
	TSC_EXPECT_ERRNO(syscall(__NR_clone3, NULL, 0), EINVAL);
	TSC_EXPECT_ERRNO(syscall(SYS_getuid), EPERM);
}

/* Allow-by-default profiles get no stub and no ENOSYS rules. */
static void test_no_enosys_allow_default(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
		    " {\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ERRNO\"}]}",
		    NULL, &prog);
	tsc_run(&prog, child_allow_default, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void child_clone_filtered(void *arg, int listener)
{
	long r;

	TSC_EXPECT_ERRNO(syscall(__NR_clone3, NULL, 0), ENOSYS);
	r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (r == 0)
		_exit(0); /* the filter let it through: fail below */
	TSC_CHECK(r == -1 && errno == EPERM);
	r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); /* plain fork */
	if (r == 0)
		_exit(0);
	TSC_CHECK(r > 0 && waitpid((pid_t)r, NULL, 0) == r);
}

/* Allow-by-default, clone checked by flags: clone3 must not go around it. */
static void test_clone3_hardening(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
		    " {\"names\": [\"clone\"], \"action\": \"SCMP_ACT_ERRNO\","
		    "  \"args\": [{\"index\": 0, \"value\": 268435456,"
		    "   \"valueTwo\": 268435456, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}]}",
		    NULL, &prog);
	tsc_run(&prog, child_clone_filtered, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

/* ---- the Docker-like profile --------------------------------------------- */

static void child_docker(void *arg, int listener)
{
	int fd;

	TSC_EXPECT_ERRNO(syscall(__NR_clone3, NULL, 0), ENOSYS); /* named */
	TSC_EXPECT_ERRNO(mount("none", "/nonexistent", "tmpfs", 0, NULL), EPERM);
	TSC_EXPECT_ERRNO(umount2("/nonexistent", 0), EPERM);
	TSC_EXPECT_ERRNO(unshare(CLONE_NEWUSER), EPERM);
	TSC_EXPECT_ERRNO(unshare(CLONE_NEWNS), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_kexec_load, 0, 0, NULL, 0), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_open_by_handle_at, -1, NULL, 0), EPERM);
	TSC_EXPECT_ERRNO(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0), EPERM);
	TSC_EXPECT_ERRNO(syscall(SYS_personality, 0x0400000UL), EPERM);
	TSC_EXPECT_OK(syscall(SYS_personality, 0xffffffffUL));
	TSC_EXPECT_ERRNO(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0),
			 EPERM);
	TSC_EXPECT_ERRNO(syscall(1000), ENOSYS);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	TSC_CHECK(fd >= 0);
	close(fd);
	TSC_EXPECT_OK(syscall(SYS_getppid));
}

static void test_docker_profile(void **state)
{
	struct seccomp_prog prog;
	struct oci_seccomp sc;
	struct tsc_result r;
	struct error err;

	tsc_load_data("docker-default.json", &sc);
	assert_int_equal(seccomp_prepare(&sc, NULL, &prog, &err), 0);
	tsc_run(&prog, child_docker, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
	tsc_free(&sc);
}

/* The probe, if built: its view from inside the Docker-like profile. */
static const char *probe_path(void)
{
	static char path[PATH_MAX];
	const char *tools = getenv("TOOLS");
	const char *env = getenv("SECCOMP_PROBE");

	if (env)
		return access(env, X_OK) == 0 ? env : NULL;
	snprintf(path, sizeof(path), "%s/syscall_probe",
		 tools ? tools : "build/tests/tools");
	return access(path, X_OK) == 0 ? path : NULL;
}

struct probe_run {
	const char *probe;
	char out[PATH_MAX];
};

static void child_exec_probe(void *arg, int listener)
{
	const struct probe_run *pr = arg;
	int fd = open(pr->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	TSC_CHECK(fd >= 0);
	TSC_CHECK(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	execl(pr->probe, pr->probe, (char *)NULL);
	tsc_child_fail(__FILE__, __LINE__, "exec probe", -1, errno);
}

static void expect_line(const char *out, const char *line)
{
	char *want = xasprintf("\n%s\n", line);
	char *hay = xasprintf("\n%s", out);

	if (!strstr(hay, want))
		fail_msg("probe output lacks \"%s\"", line);
	free(want);
	free(hay);
}

static void test_probe_docker_profile(void **state)
{
	const char *path = probe_path();
	struct probe_run pr = { .probe = path };
	struct seccomp_prog prog;
	struct oci_seccomp sc;
	struct tsc_result r;
	struct error err;
	char *out = NULL;
	size_t len;

	if (!path)
		skip(); /* build/tests/tools/syscall_probe: `make tools` */
	tsc_load_data("docker-default.json", &sc);
	assert_int_equal(seccomp_prepare(&sc, NULL, &prog, &err), 0);
	snprintf(pr.out, sizeof(pr.out), "/tmp/agentsbx-probe.%d.out",
		 (int)getpid());
	tsc_run(&prog, child_exec_probe, &pr, &r);
	tsc_assert_exited_ok(&r);
	assert_int_equal(read_file_at(AT_FDCWD, pr.out, 1 << 20, &out, &len,
				      &err), 0);
	unlink(pr.out);
	print_message("%s", out);
	expect_line(out, "mount EPERM");
	expect_line(out, "unshare(CLONE_NEWUSER) EPERM");
	expect_line(out, "bpf EPERM");
	expect_line(out, "clone3 ENOSYS");
	expect_line(out, "clone3(CLONE_NEWUSER) ENOSYS");
	expect_line(out, "syscall(1000) ENOSYS");
	expect_line(out, "socket(AF_PACKET) ok");
	free(out);
	seccomp_prog_free(&prog);
	tsc_free(&sc);
}

/* ---- /proc, flags, validation -------------------------------------------- */

static void child_status(void *arg, int listener)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY);
	ssize_t n;

	TSC_CHECK(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	TSC_CHECK(n > 0);
	buf[n] = '\0';
	TSC_CHECK(strstr(buf, "\nSeccomp:\t2\n") != NULL);
	TSC_CHECK(strstr(buf, "\nSeccomp_filters:\t1\n") != NULL);
	TSC_CHECK(strstr(buf, "\nNoNewPrivs:\t1\n") != NULL);
}

static void test_proc_status(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
		    " {\"names\": [\"kexec_load\"], \"action\": \"SCMP_ACT_ERRNO\"}]}",
		    NULL, &prog);
	tsc_run(&prog, child_status, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void test_flags(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
		    " \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\","
		    "  \"SECCOMP_FILTER_FLAG_SPEC_ALLOW\", \"SECCOMP_FILTER_FLAG_TSYNC\","
		    "  \"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],"
		    " \"syscalls\": [{\"names\": [\"getuid\"],"
		    "  \"action\": \"SCMP_ACT_ERRNO\"}]}",
		    NULL, &prog);
	/* This kernel (6.x) has them all; WAIT_KILLABLE_RECV needs a listener
	 * and is dropped. */
	assert_int_equal(prog.flags, SECCOMP_FILTER_FLAG_LOG |
					     SECCOMP_FILTER_FLAG_SPEC_ALLOW |
					     SECCOMP_FILTER_FLAG_TSYNC);
	tsc_run(&prog, child_allow_default, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void test_unknown_syscall_skipped(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": ["
		    " {\"names\": [" BASE_ALLOW ", \"getpid\", \"no_such_syscall\","
		    "  \"socketcall\"], \"action\": \"SCMP_ACT_ALLOW\"}]}",
		    NULL, &prog);
	tsc_run(&prog, child_allowlist, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

static void test_empty(void **state)
{
	struct oci_seccomp sc = { .present = false };
	struct seccomp_prog prog;
	struct error err;
	int listener = 7;

	assert_int_equal(seccomp_prepare(&sc, NULL, &prog, &err), 0);
	assert_int_equal(prog.len, 0);
	assert_null(prog.insns);
	assert_int_equal(seccomp_prog_load(&prog, &listener, &err), 0);
	assert_int_equal(listener, -1);
	seccomp_prog_free(&prog);
}

#define RULE(x) "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [" x "]}"

static void test_validation(void **state)
{
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_BOGUS\"}",
			 "unknown action");
	tsc_expect_error("{}", "no action");
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_NOTIFY\"}",
			 "cannot be the default");
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
			 " \"defaultErrnoRet\": 1}", "errnoRet is not valid");
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_ERRNO\","
			 " \"defaultErrnoRet\": 5000}", "out of range");
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
			 " \"architectures\": [\"SCMP_ARCH_VAX\"]}",
			 "unknown architecture");
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
			 " \"flags\": [\"SECCOMP_FILTER_FLAG_NEW_LISTENER\"]}",
			 "unknown flag");
	tsc_expect_error("{\"defaultAction\": \"SCMP_ACT_ALLOW\","
			 " \"listenerMetadata\": \"m\"}", "needs listenerPath");
	tsc_expect_error(RULE("{\"names\": [\"getpid\"], \"action\": \"X\"}"),
			 "syscalls[0]: unknown action");
	tsc_expect_error(RULE("{\"names\": [\"getpid\"],"
			      " \"action\": \"SCMP_ACT_ALLOW\", \"errnoRet\": 1}"),
			 "errnoRet is not valid with SCMP_ACT_ALLOW");
	tsc_expect_error(RULE("{\"names\": [],"
			      " \"action\": \"SCMP_ACT_ALLOW\"}"), "names is empty");
	tsc_expect_error(RULE("{\"names\": [\"getpid\"],"
			      " \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 6,"
			      " \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}]}"),
			 "index 6 out of range");
	tsc_expect_error(RULE("{\"names\": [\"getpid\"],"
			      " \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0,"
			      " \"value\": 0, \"op\": \"SCMP_CMP_XX\"}]}"),
			 "unknown operator");
	tsc_expect_error(RULE("{\"names\": [\"read\", \"write\"],"
			      " \"action\": \"SCMP_ACT_NOTIFY\"}"),
			 "SCMP_ACT_NOTIFY cannot be used for write");
	tsc_expect_error(RULE("{\"names\": [\"sendmsg\"],"
			      " \"action\": \"SCMP_ACT_NOTIFY\"}"),
			 "cannot be used for sendmsg");
}

/* A rule with the default action is dropped, not an error. */
static void test_rule_same_as_default(void **state)
{
	struct seccomp_prog prog;
	struct tsc_result r;

	tsc_prepare("{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": ["
		    " {\"names\": [" BASE_ALLOW ", \"getpid\"], \"action\": \"SCMP_ACT_ALLOW\"},"
		    " {\"names\": [\"getppid\", \"getuid\"], \"action\": \"SCMP_ACT_ERRNO\","
		    "  \"errnoRet\": 1}]}",
		    NULL, &prog);
	tsc_run(&prog, child_allowlist, NULL, &r);
	tsc_assert_exited_ok(&r);
	seccomp_prog_free(&prog);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errno_allowlist),
		cmocka_unit_test(test_errno_ret),
		cmocka_unit_test(test_kill_process),
		cmocka_unit_test(test_kill_thread),
		cmocka_unit_test(test_trap_and_log),
		cmocka_unit_test(test_masked_eq),
		cmocka_unit_test(test_args_and),
		cmocka_unit_test(test_same_index_twice),
		cmocka_unit_test(test_enosys_errno_default),
		cmocka_unit_test(test_enosys_kill_default),
		cmocka_unit_test(test_no_enosys_allow_default),
		cmocka_unit_test(test_clone3_hardening),
		cmocka_unit_test(test_docker_profile),
		cmocka_unit_test(test_probe_docker_profile),
		cmocka_unit_test(test_proc_status),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_unknown_syscall_skipped),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_rule_same_as_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
