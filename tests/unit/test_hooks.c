/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hooks_run() with real processes: /bin/sh scripts written into a temp dir.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../hooks/hooks.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../spec/policy/policy.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[] = "/tmp/agentsbx-hooks-XXXXXX";

/* ---- helpers ---------------------------------------------------------- */

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

static void write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, text, strlen(text)), 0);
	assert_int_equal(close(fd), 0);
}

/* A #!/bin/sh script in the temp dir; returns its path. */
static char *script(const char *name, const char *body)
{
	char *path = tmp_path(name);
	_cleanup_free_ char *text = xasprintf("#!/bin/sh\n%s\n", body);

	write_text(path, text, 0755);
	return path;
}

static char *read_text(const char *path)
{
	struct error err;
	char *buf = NULL;
	size_t len;

	if (read_file_at(AT_FDCWD, path, 64u << 20, &buf, &len, &err) < 0)
		fail_msg("%s", err.msg);
	return buf;
}

static char *log_text(void)
{
	_cleanup_free_ char *path = tmp_path("hooks.log");

	return read_text(path);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("\"%s\" not found in:\n%s", needle, hay);
}

static struct oci_hook mk_hook(char *path, char **args, size_t nargs,
			       char **env, size_t nenv, int64_t timeout)
{
	return (struct oci_hook){
		.path = path,
		.args = { nargs ? args : NULL, nargs },
		.env = { nenv ? env : NULL, nenv },
		.has_env = env != NULL, /* NULL: no "env" (the runtime's) */
		.timeout = { timeout > 0, timeout },
	};
}

static int run1(struct oci_hook *h, const char *state, struct error *err)
{
	struct oci_hook_list list = { h, 1 };

	error_clear(err);
	return hooks_run(&list, HOOK_CREATE_RUNTIME, state, err);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *big_state(size_t n)
{
	char *s = xmalloc(n + 16);

	strcpy(s, "{\"id\":\"");
	memset(s + 7, 'x', n);
	strcpy(s + 7 + n, "\"}");
	return s;
}

/* Gone or a zombie nobody reaped yet: either way, not running. */
static bool pid_dead(pid_t pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp && (rp[2] == 'Z' || rp[2] == 'X');
}

static bool wait_dead(pid_t pid, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		if (pid_dead(pid))
			return true;
		usleep(10000);
	}
	return pid_dead(pid);
}

static pid_t read_pid(const char *path)
{
	_cleanup_free_ char *s = read_text(path);
	long long v;

	s[strcspn(s, "\n")] = '\0';
	assert_int_equal(parse_i64(s, &v), 0);
	return (pid_t)v;
}

/* ---- fixtures --------------------------------------------------------- */

static int group_setup(void **state)
{
	_cleanup_free_ char *log = NULL;

	if (!mkdtemp(tmpdir))
		return -1;
	log = tmp_path("hooks.log");
	return log_init(log, false, false);
}

static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	return remove(path);
}

static int group_teardown(void **state)
{
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int test_setup(void **state)
{
	return ftruncate(log_get_fd(), 0);
}

/* ---- argv, env, stdin ------------------------------------------------- */

static void test_args_exact(void **state)
{
	_cleanup_free_ char *out = tmp_path("args.out");
	_cleanup_free_ char *outenv = xasprintf("OUT=%s", out);
	_cleanup_free_ char *got = NULL;
	char *cmd = "tr '\\0' '\\n' < /proc/$$/cmdline > \"$OUT\"; exit 0";
	char *args[] = { "custom-argv0", "-c", cmd, "a b", "" };
	char *env[] = { outenv };
	struct oci_hook h = mk_hook("/bin/sh", args, ARRAY_LEN(args), env,
				    ARRAY_LEN(env), 0);
	_cleanup_free_ char *want = xasprintf("custom-argv0\n-c\n%s\na b\n\n",
					      cmd);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), 0);
	got = read_text(out);
	assert_string_equal(got, want);
}

static void test_default_argv0_is_path(void **state)
{
	_cleanup_free_ char *out = tmp_path("argv0.out");
	_cleanup_free_ char *got = NULL;
	/* No args: sh reads its commands from stdin, i.e. the "state". */
	_cleanup_free_ char *cmds = xasprintf(
		"tr '\\0' '\\n' < /proc/$$/cmdline > %s; exit 3\n", out);
	struct oci_hook h = mk_hook("/bin/sh", NULL, 0, NULL, 0, 0);
	struct error err;

	assert_int_equal(run1(&h, cmds, &err), -1);
	assert_contains(err.msg, "exited with status 3");
	got = read_text(out);
	assert_string_equal(got, "/bin/sh\n");
}

static void test_env_exact_not_inherited(void **state)
{
	char *args[] = { "env" };
	char *env[] = { "A=1", "B=two words" };
	struct oci_hook h = mk_hook("/usr/bin/env", args, 1, env, 2, 0);
	_cleanup_free_ char *log = NULL;
	struct error err;

	setenv("AGENTSBX_TEST_LEAK", "leaked", 1);
	assert_int_equal(run1(&h, "{}", &err), 0);
	unsetenv("AGENTSBX_TEST_LEAK");
	log = log_text();
	assert_contains(log, "hook createRuntime[0] /usr/bin/env: stdout: A=1\n");
	assert_contains(log,
			"hook createRuntime[0] /usr/bin/env: stdout: B=two words\n");
	assert_int_equal(count(log, "stdout:"), 2);
	assert_null(strstr(log, "LEAK"));
}

/* No "env": the runtime's environment, as runc and crun give it. */
static void test_env_inherited_when_absent(void **state)
{
	struct oci_hook h = mk_hook("/usr/bin/env", NULL, 0, NULL, 0, 0);
	_cleanup_free_ char *log = NULL;
	struct error err;

	(void)state;
	setenv("AGENTSBX_TEST_INHERIT", "yes", 1);
	assert_int_equal(run1(&h, "{}", &err), 0);
	unsetenv("AGENTSBX_TEST_INHERIT");
	log = log_text();
	assert_contains(log, "stdout: AGENTSBX_TEST_INHERIT=yes\n");
}

/* "env": []: an empty environment. */
static void test_env_empty_when_empty(void **state)
{
	char *none[] = { NULL };
	struct oci_hook h = mk_hook("/usr/bin/env", NULL, 0, none, 0, 0);
	_cleanup_free_ char *log = NULL;
	struct error err;

	(void)state;
	assert_int_equal(run1(&h, "{}", &err), 0);
	log = log_text();
	assert_int_equal(count(log, "stdout:"), 0);
}

static void test_state_on_stdin(void **state)
{
	_cleanup_free_ char *sh = script("cat.sh", "cat > \"$1\"");
	_cleanup_free_ char *out = tmp_path("state.out");
	_cleanup_free_ char *got = NULL;
	char *args[] = { sh, out };
	struct oci_hook h = mk_hook(sh, args, 2, NULL, 0, 0);
	const char *json = "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\","
			   "\"status\":\"creating\",\"pid\":42,"
			   "\"bundle\":\"/b\"}";
	struct error err;

	assert_int_equal(run1(&h, json, &err), 0);
	got = read_text(out);
	assert_string_equal(got, json);
}

static void test_large_state_read_fully(void **state)
{
	_cleanup_free_ char *sh = script("catbig.sh", "cat > \"$1\"");
	_cleanup_free_ char *out = tmp_path("big.out");
	_cleanup_free_ char *json = big_state(1u << 20);
	_cleanup_free_ char *got = NULL;
	char *args[] = { sh, out };
	struct oci_hook h = mk_hook(sh, args, 2, NULL, 0, 10);
	struct error err;

	assert_int_equal(run1(&h, json, &err), 0);
	got = read_text(out);
	assert_int_equal(strlen(got), strlen(json));
	assert_string_equal(got, json);
}

/* ---- SIGPIPE ---------------------------------------------------------- */

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	sigpipes++;
}

static void assert_no_sigpipe_pending(void)
{
	sigset_t pending;

	assert_int_equal(sigpending(&pending), 0);
	assert_int_equal(sigismember(&pending, SIGPIPE), 0);
}

static void test_hook_ignores_large_state(void **state)
{
	_cleanup_free_ char *quick = script("quick.sh", "exit 0");
	_cleanup_free_ char *closer =
		script("closer.sh", "exec 0<&-; sleep 0.3; exit 0");
	_cleanup_free_ char *lazy = script("lazy.sh", "sleep 0.3; exit 5");
	_cleanup_free_ char *json = big_state(1u << 20);
	struct oci_hook hooks[] = {
		mk_hook(quick, NULL, 0, NULL, 0, 10),
		mk_hook(closer, NULL, 0, NULL, 0, 10),
		mk_hook(lazy, NULL, 0, NULL, 0, 10),
	};
	struct sigaction sa = { .sa_handler = on_sigpipe }, old;
	struct error err;
	double t0;

	/* With the default action, a stray SIGPIPE would kill the test. */
	assert_int_equal(run1(&hooks[0], json, &err), 0);
	assert_int_equal(run1(&hooks[1], json, &err), 0);
	assert_no_sigpipe_pending();

	/* With a handler, it must not be delivered either. */
	sigpipes = 0;
	assert_int_equal(sigaction(SIGPIPE, &sa, &old), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(run1(&hooks[0], json, &err), 0);
	t0 = now_s();
	assert_int_equal(run1(&hooks[2], json, &err), -1);
	assert_true(now_s() - t0 < 3.0);
	assert_contains(err.msg, "exited with status 5");
	assert_int_equal(sigaction(SIGPIPE, &old, NULL), 0);
	assert_int_equal(sigpipes, 0);
	assert_no_sigpipe_pending();
}

/* ---- failures --------------------------------------------------------- */

static void test_nonzero_exit(void **state)
{
	_cleanup_free_ char *sh = script(
		"fail.sh",
		"echo 'first line' >&2\necho >&2\necho 'bad thing happened' >&2\nexit 3");
	_cleanup_free_ char *want = xasprintf(
		"createRuntime hook %s (#0) exited with status 3: first line; bad thing happened",
		sh);
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 0);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_string_equal(err.msg, want);
	assert_int_equal(err.code, 0);
}

static void test_exit_127_is_not_exec_failure(void **state)
{
	_cleanup_free_ char *sh = script("e127.sh", "exit 127");
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 0);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_contains(err.msg, "exited with status 127");
	assert_null(strstr(err.msg, "could not be executed"));
}

static void test_killed_by_signal(void **state)
{
	_cleanup_free_ char *sh = script("kill.sh", "echo dying >&2; kill -9 $$");
	_cleanup_free_ char *want = xasprintf(
		"createRuntime hook %s (#0) killed by signal 9: dying", sh);
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 0);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_string_equal(err.msg, want);
}

static void test_exec_missing(void **state)
{
	struct oci_hook h = mk_hook("/nonexistent/hook", NULL, 0, NULL, 0, 0);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_string_equal(err.msg,
			    "createRuntime hook /nonexistent/hook (#0) could not be executed: No such file or directory");
	assert_int_equal(err.code, ENOENT);
}

static void test_exec_not_executable(void **state)
{
	_cleanup_free_ char *path = tmp_path("noexec.sh");
	struct oci_hook h = mk_hook(path, NULL, 0, NULL, 0, 0);
	struct error err;

	write_text(path, "#!/bin/sh\nexit 0\n", 0644);
	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_contains(err.msg, "could not be executed: Permission denied");
	assert_int_equal(err.code, EACCES);
}

static void test_relative_path_refused(void **state)
{
	struct oci_hook h = mk_hook("bin/true", NULL, 0, NULL, 0, 0);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_contains(err.msg, "path is not absolute");
}

static void test_stderr_tail_bounded(void **state)
{
	_cleanup_free_ char *sh = script(
		"noisy.sh",
		"i=0; while [ $i -lt 500 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done\n"
		"printf 'esc\\033[31m last\\n' >&2; exit 1");
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 10);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), -1);
	assert_contains(err.msg, "exited with status 1: ... noise line ");
	assert_contains(err.msg, "noise line 499; esc?[31m last");
	assert_null(strstr(err.msg, "noise line 1;"));
	assert_true(strlen(err.msg) < 3 * HOOK_STDERR_TAIL);
	assert_null(strchr(err.msg, '\033'));
}

/* ---- timeout ---------------------------------------------------------- */

static void test_timeout_kills_group(void **state)
{
	_cleanup_free_ char *sh = script(
		"slow.sh", "sleep 30 & echo $! > \"$1\"; echo waiting >&2; sleep 30");
	_cleanup_free_ char *pidfile = tmp_path("grandchild.pid");
	_cleanup_free_ char *want = xasprintf(
		"createRuntime hook %s (#0) timed out after 1 s and was killed: waiting",
		sh);
	char *args[] = { sh, pidfile };
	struct oci_hook h = mk_hook(sh, args, 2, NULL, 0, 1);
	struct error err;
	double t0, dt;

	t0 = now_s();
	assert_int_equal(run1(&h, "{}", &err), -1);
	dt = now_s() - t0;
	if (dt < 0.9 || dt >= 1.5)
		fail_msg("hooks_run took %.3f s", dt);
	assert_string_equal(err.msg, want);
	assert_true(wait_dead(read_pid(pidfile), 1000));
}

static void test_timeout_not_reached(void **state)
{
	_cleanup_free_ char *sh = script("fast.sh", "cat >/dev/null; exit 0");
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 5);
	struct error err;
	double t0 = now_s();

	assert_int_equal(run1(&h, "{}", &err), 0);
	assert_true(now_s() - t0 < 1.0);
}

/* A daemon holding stdout open must not keep us waiting. */
static void test_background_child_does_not_block(void **state)
{
	_cleanup_free_ char *sh = script(
		"daemon.sh", "echo $$ > \"$1\"; (sleep 3; echo late) & echo early");
	_cleanup_free_ char *pidfile = tmp_path("daemon.pgid");
	_cleanup_free_ char *log = NULL;
	char *args[] = { sh, pidfile };
	struct oci_hook h = mk_hook(sh, args, 2, NULL, 0, 0);
	struct error err;
	double t0 = now_s();

	assert_int_equal(run1(&h, "{}", &err), 0);
	assert_true(now_s() - t0 < 1.0);
	log = log_text();
	assert_contains(log, "stdout: early");
	assert_null(strstr(log, "late"));
	kill(-read_pid(pidfile), SIGKILL);
}

/* ---- lists ------------------------------------------------------------ */

struct three {
	char *sh, *fail, *out;
	char *a1[3], *a2[3], *a3[3];
	struct oci_hook h[3];
};

static void three_init(struct three *t, bool middle_fails)
{
	t->sh = script("append.sh", "echo \"$2\" >> \"$1\"");
	t->fail = script("append_fail.sh", "echo nope >&2; exit 4");
	t->out = tmp_path("order.out");
	unlink(t->out);
	t->a1[0] = t->a2[0] = t->a3[0] = t->sh;
	t->a1[1] = t->a2[1] = t->a3[1] = t->out;
	t->a1[2] = "1";
	t->a2[2] = "2";
	t->a3[2] = "3";
	t->h[0] = mk_hook(t->sh, t->a1, 3, NULL, 0, 0);
	t->h[1] = mk_hook(middle_fails ? t->fail : t->sh, t->a2, 3, NULL, 0, 0);
	t->h[2] = mk_hook(t->sh, t->a3, 3, NULL, 0, 0);
}

static void three_free(struct three *t)
{
	free(t->sh);
	free(t->fail);
	free(t->out);
}

static void test_runs_in_order(void **state)
{
	struct three t;
	struct oci_hook_list list = { t.h, 3 };
	_cleanup_free_ char *got = NULL;
	struct error err;

	three_init(&t, false);
	assert_int_equal(hooks_run(&list, HOOK_PRESTART, "{}", &err), 0);
	got = read_text(t.out);
	assert_string_equal(got, "1\n2\n3\n");
	three_free(&t);
}

static void test_first_failure_stops(void **state)
{
	struct three t;
	struct oci_hook_list list = { t.h, 3 };
	_cleanup_free_ char *got = NULL, *want = NULL;
	struct error err;

	three_init(&t, true);
	assert_int_equal(hooks_run(&list, HOOK_START_CONTAINER, "{}", &err), -1);
	want = xasprintf("startContainer hook %s (#1) exited with status 4: nope",
			 t.fail);
	assert_string_equal(err.msg, want);
	got = read_text(t.out);
	assert_string_equal(got, "1\n");
	three_free(&t);
}

static void test_warn_continues(void **state)
{
	struct three t;
	struct oci_hook_list list = { t.h, 3 };
	_cleanup_free_ char *got = NULL, *log = NULL, *want = NULL;

	three_init(&t, true);
	hooks_run_warn(&list, HOOK_POSTSTOP, "{}");
	got = read_text(t.out);
	assert_string_equal(got, "1\n3\n");
	log = log_text();
	want = xasprintf("warning: poststop hook %s (#1) exited with status 4: nope",
			 t.fail);
	assert_contains(log, want);
	three_free(&t);
}

static void test_empty_list(void **state)
{
	struct oci_hook_list list = { NULL, 0 };
	struct error err;

	assert_int_equal(hooks_run(&list, HOOK_POSTSTART, "{}", &err), 0);
	assert_int_equal(hooks_run(NULL, HOOK_POSTSTART, "{}", &err), 0);
	hooks_run_warn(NULL, HOOK_POSTSTOP, "{}");
}

/* ---- output and process hygiene --------------------------------------- */

static void test_output_goes_to_log(void **state)
{
	_cleanup_free_ char *sh = script(
		"talk.sh", "echo marker-out-123; printf 'no newline' ; echo marker-err-456 >&2");
	_cleanup_free_ char *ours = tmp_path("our-stdout");
	_cleanup_free_ char *got = NULL, *log = NULL, *want = NULL;
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 0);
	struct error err;
	int saved, fd, ret;

	fflush(stdout);
	fd = open(ours, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	saved = dup(STDOUT_FILENO);
	assert_true(fd >= 0 && saved >= 0);
	dup2(fd, STDOUT_FILENO);
	ret = run1(&h, "{}", &err);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	assert_int_equal(ret, 0);

	got = read_text(ours);
	assert_string_equal(got, "");
	log = log_text();
	want = xasprintf("agentsbx: info: hook createRuntime[0] %s: stdout: marker-out-123\n",
			 sh);
	assert_contains(log, want);
	assert_contains(log, ": stdout: no newline\n");
	assert_contains(log, ": stderr: marker-err-456\n");
}

static void test_output_sanitized_and_split(void **state)
{
	_cleanup_free_ char *sh = script(
		"odd.sh",
		"printf 'a\\033[31mred\\r\\n'\n"
		"head -c 5000 /dev/zero | tr '\\0' 'y'");
	_cleanup_free_ char *log = NULL;
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 10);
	struct error err;

	assert_int_equal(run1(&h, "{}", &err), 0);
	log = log_text();
	assert_contains(log, ": stdout: a?[31mred\n");
	assert_null(strchr(log, '\033'));
	assert_int_equal(count(log, "stdout: "), 4); /* 2048 + 2048 + 904 */
}

static void test_no_fd_leak(void **state)
{
	char *args[] = { "ls", "/proc/self/fd" };
	struct oci_hook h = mk_hook("/bin/ls", args, 2, NULL, 0, 0);
	_cleanup_free_ char *log = NULL;
	struct error err;
	int fd = open("/dev/null", O_RDONLY); /* deliberately not CLOEXEC */

	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, 57), 57);
	assert_int_equal(run1(&h, "{}", &err), 0);
	close(57);
	close(fd);
	log = log_text();
	/* 0, 1, 2 and the directory ls is reading. */
	assert_int_equal(count(log, ": stdout: "), 4);
	assert_null(strstr(log, ": stdout: 57\n"));
}

/* The runtime may run with 0..2 closed (or inside init with odd fds). */
static void test_std_fds_closed(void **state)
{
	_cleanup_free_ char *sh = script(
		"stdfds.sh", "cat > \"$1\"; echo to-out; echo to-err >&2; exit 2");
	_cleanup_free_ char *out = tmp_path("stdfds.out");
	_cleanup_free_ char *got = NULL, *log = NULL;
	char *args[] = { sh, out };
	struct oci_hook h = mk_hook(sh, args, 2, NULL, 0, 10);
	struct error err;
	int saved[3], ret;

	fflush(stdout);
	fflush(stderr);
	for (int i = 0; i < 3; i++) {
		saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 20);
		close(i);
	}
	ret = run1(&h, "{\"x\":1}", &err);
	for (int i = 0; i < 3; i++) {
		dup2(saved[i], i);
		close(saved[i]);
	}
	assert_int_equal(ret, -1);
	assert_contains(err.msg, "exited with status 2: to-err");
	got = read_text(out);
	assert_string_equal(got, "{\"x\":1}");
	log = log_text();
	assert_contains(log, ": stdout: to-out\n");
}

/* The hook starts with no signal blocked or ignored, whatever we had. */
static void test_signals_reset(void **state)
{
	char *args[] = { "grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status" };
	struct oci_hook h = mk_hook("/bin/grep", args, 4, NULL, 0, 0);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	_cleanup_free_ char *log = NULL;
	sigset_t usr1, saved;
	struct error err;
	int ret;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &saved);
	sigaction(SIGUSR2, &ign, &old);
	ret = run1(&h, "{}", &err);
	sigaction(SIGUSR2, &old, NULL);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	assert_int_equal(ret, 0);
	log = log_text();
	assert_contains(log, ": stdout: SigBlk:\t0000000000000000\n");
	assert_contains(log, ": stdout: SigIgn:\t0000000000000000\n");
}

static void test_other_children_not_reaped(void **state)
{
	_cleanup_free_ char *sh = script("ok.sh", "exit 0");
	struct oci_hook h = mk_hook(sh, NULL, 0, NULL, 0, 0);
	struct error err;
	int status;
	pid_t other = fork();

	if (other == 0)
		_exit(42);
	assert_true(other > 0);
	usleep(50000); /* let it become a zombie first */
	assert_int_equal(run1(&h, "{}", &err), 0);
	assert_int_equal(waitpid(other, &status, 0), other);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
}

static void test_sigchld_ignored_refused(void **state)
{
	struct oci_hook h = mk_hook("/bin/true", NULL, 0, NULL, 0, 0);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct error err;
	int ret;

	sigaction(SIGCHLD, &ign, &old);
	ret = run1(&h, "{}", &err);
	sigaction(SIGCHLD, &old, NULL);
	assert_int_equal(ret, -1);
	assert_contains(err.msg, "SIGCHLD is ignored");
}

/* Make pidfd_open() fail with ENOSYS, as under an old kernel or seccomp. */
static int deny_pidfd_open(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { ARRAY_LEN(f), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* In a child: the results go out through the exit status. */
static int nopidfd_checks(void)
{
	_cleanup_free_ char *slow = script(
		"slow2.sh", "sleep 30 & echo $! > \"$1\"; sleep 30");
	_cleanup_free_ char *sh = script("cat2.sh", "cat > \"$1\"; exit 6");
	_cleanup_free_ char *pidfile = tmp_path("grandchild2.pid");
	_cleanup_free_ char *out = tmp_path("nopidfd.out");
	_cleanup_free_ char *json = big_state(256u << 10);
	_cleanup_free_ char *got = NULL;
	char *slow_args[] = { slow, pidfile }, *args[] = { sh, out };
	struct oci_hook h1 = mk_hook(slow, slow_args, 2, NULL, 0, 1);
	struct oci_hook h2 = mk_hook(sh, args, 2, NULL, 0, 10);
	struct error err;
	double t0, dt;

	if (deny_pidfd_open() < 0 || syscall(SYS_pidfd_open, getpid(), 0) >= 0)
		return 10;
	t0 = now_s();
	if (run1(&h1, "{}", &err) != -1 || !strstr(err.msg, "timed out after 1 s"))
		return 11;
	dt = now_s() - t0;
	if (dt < 0.9 || dt >= 1.5)
		return 12;
	if (!wait_dead(read_pid(pidfile), 1000))
		return 13;
	if (run1(&h2, json, &err) != -1 || !strstr(err.msg, "status 6"))
		return 14;
	got = read_text(out);
	if (strcmp(got, json) != 0)
		return 15;
	return 0;
}

static void test_without_pidfd(void **state)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(nopidfd_checks());
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_supported_names(void **state)
{
	const char *const *n = hook_kind_names();
	const char *want[] = { "prestart",	  "createRuntime",
			       "createContainer", "startContainer",
			       "poststart",	  "poststop" };

	for (size_t i = 0; i < ARRAY_LEN(want); i++) {
		assert_non_null(n[i]);
		assert_string_equal(n[i], want[i]);
	}
	assert_null(n[ARRAY_LEN(want)]);
	for (int k = 0; k < HOOK_KIND_MAX; k++)
		assert_string_equal(n[k], hook_kind_name((enum hook_kind)k));
}

/* ---- the policy's hooks rule: a hook is a command --------------------------- */

#define DID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DBUNDLE "/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/" DID

/* A policy whose one hook rule is path with no argv (the rest: built-in). */
static void guard_only(const char *path)
{
	struct policy p;

	policy_default(&p);
	p.hook_rules = xcalloc(1, sizeof(*p.hook_rules));
	p.hook_rules[0].path = xstrdup(path);
	p.hook_rules[0].kinds = ~0u;
	p.n_hook_rules = 1;
	hooks_guard_set(&p);
	policy_free(&p);
}

static int judge_docker(const struct policy *p, enum hook_kind kind, char **args, size_t n,
			char **env, size_t n_env, const char *id, const char *exec_root,
			struct error *err)
{
	struct oci_hook h = mk_hook("/proc/1/exe", args, n, env, n_env, 0);
	struct hook_subject s = { .kind = kind, .hook = &h, .real_path = "/usr/bin/dockerd",
				  .id = id, .bundle = DBUNDLE, .exec_root = exec_root };

	return policy_hook_judge(p, &s, err);
}

static void test_rule_docker_hook(void **state)
{
	char *ok[] = { "libnetwork-setkey", "-exec-root=/run/docker", DID, "0123456789ab" };
	char *other[] = { "libnetwork-setkey", "-exec-root=/run/docker", "abc", "0123456789ab" };
	char *extra[] = { "libnetwork-setkey", "-exec-root=/run/docker", DID, "0123456789ab", "x" };
	char *cfg[] = { "--config-file", "/etc/shadow", DID, "0123456789ab" };
	char *preload[] = { "LD_PRELOAD=/x.so" };
	char *path[] = { "PATH=/bin" };
	struct policy p;
	struct error err;

	policy_default(&p);
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, ok, 4, NULL, 0, DID, "/run/docker", &err), 0);
	/* another container's id, another Docker's exec root, more argv,
	 * another command of the same binary, any environment */
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, other, 4, NULL, 0, DID, "/run/docker", &err), -1);
	assert_contains(err.msg, "hookRules");
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, ok, 4, NULL, 0, DID, "/srv/other", &err), -1);
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, ok, 4, NULL, 0, DID, NULL, &err), -1);
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, extra, 5, NULL, 0, DID, "/run/docker", &err), -1);
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, cfg, 4, NULL, 0, DID, "/run/docker", &err), -1);
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, ok, 4, preload, 1, DID, "/run/docker", &err), -1);
	assert_contains(err.msg, "LD_");
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, ok, 4, path, 1, DID, "/run/docker", &err), -1);
	assert_int_equal(judge_docker(&p, HOOK_POSTSTOP, ok, 4, NULL, 0, DID, "/run/docker", &err), -1);
	/* dockerHook: [] turns the built-in rule off */
	p.docker_hook.len = 0;
	assert_int_equal(judge_docker(&p, HOOK_PRESTART, ok, 4, NULL, 0, DID, "/run/docker", &err), -1);
	policy_free(&p);
}

static void test_rule_operator_globs(void **state)
{
	char *good[] = { "nvidia-hook", "prestart", "--id=" DID };
	char *bad[] = { "nvidia-hook", "prestart", "--id=other" };
	char *env_ok[] = { "NVIDIA_VISIBLE_DEVICES=all" };
	char *env_bad[] = { "HOME=/root" };
	char *env_ld[] = { "LD_LIBRARY_PATH=/x" };
	struct oci_hook h;
	struct hook_subject s = { .kind = HOOK_PRESTART, .hook = &h,
				  .real_path = "/usr/bin/nvidia-hook", .id = DID };
	struct policy p;
	struct error err;

	policy_default(&p);
	p.hook_rules = xcalloc(1, sizeof(*p.hook_rules));
	p.hook_rules[0].path = xstrdup("/usr/bin/nvidia-hook");
	p.hook_rules[0].kinds = 1u << HOOK_PRESTART;
	p.hook_rules[0].args.items = xcalloc(4, sizeof(char *));
	p.hook_rules[0].args.items[0] = xstrdup("nvidia-hook");
	p.hook_rules[0].args.items[1] = xstrdup("prestart");
	p.hook_rules[0].args.items[2] = xstrdup("--id=${id}");
	p.hook_rules[0].args.len = 3;
	p.hook_rules[0].env.items = xcalloc(3, sizeof(char *));
	p.hook_rules[0].env.items[0] = xstrdup("NVIDIA_*");
	p.hook_rules[0].env.items[1] = xstrdup("LD_*");
	p.hook_rules[0].env.len = 2;
	p.n_hook_rules = 1;
	h = mk_hook("/usr/bin/nvidia-hook", good, 3, env_ok, 1, 0);
	assert_int_equal(policy_hook_judge(&p, &s, &err), 0);
	h = mk_hook("/usr/bin/nvidia-hook", bad, 3, NULL, 0, 0);
	assert_int_equal(policy_hook_judge(&p, &s, &err), -1);
	h = mk_hook("/usr/bin/nvidia-hook", good, 3, env_bad, 1, 0);
	assert_int_equal(policy_hook_judge(&p, &s, &err), -1);
	/* a loader variable, even where the rule's globs would take it */
	h = mk_hook("/usr/bin/nvidia-hook", good, 3, env_ld, 1, 0);
	assert_int_equal(policy_hook_judge(&p, &s, &err), -1);
	assert_contains(err.msg, "LD_");
	s.kind = HOOK_POSTSTOP;
	h = mk_hook("/usr/bin/nvidia-hook", good, 3, env_ok, 1, 0);
	assert_int_equal(policy_hook_judge(&p, &s, &err), -1);
	s.kind = HOOK_PRESTART;
	s.real_path = "/bin/sh";
	assert_int_equal(policy_hook_judge(&p, &s, &err), -1);
	policy_free(&p);
}

static void test_guard_refuses_outside(void **state)
{
	char *args[] = { "sh", "-c", "exit 0" };
	struct oci_hook h = mk_hook("/bin/sh", args, 3, NULL, 0, 0);
	struct error err;

	guard_only("/bin/true");
	assert_int_equal(run1(&h, "{}", &err), -1);
	hooks_guard_set(NULL);
	assert_contains(err.msg, "hooks.createRuntime[0] /bin/sh");
	assert_contains(err.msg, "hookRules");
}

/* Judged on the file, not the string: a symlink in the allowed dir to a
 * shell outside it is refused. */
static void test_guard_symlink_judged_on_target(void **state)
{
	_cleanup_free_ char *link = tmp_path("sh-link");
	char *args[] = { "sh", "-c", "exit 0" };
	struct oci_hook h = mk_hook(link, args, 3, NULL, 0, 0);
	struct error err;

	assert_int_equal(symlink("/bin/sh", link), 0);
	guard_only(link);
	assert_int_equal(run1(&h, "{}", &err), -1);
	hooks_guard_set(NULL);
	assert_contains(err.msg, "(the file /");
}

/* An allowed script runs from its fd (its interpreter reads /dev/fd/4)
 * and makes files with umask 022. */
static void test_guard_runs_allowed_script_umask(void **state)
{
	_cleanup_free_ char *out = tmp_path("guard.out");
	_cleanup_free_ char *body = xasprintf("touch '%s'", out);
	_cleanup_free_ char *path = script("guarded.sh", body);
	struct oci_hook h = mk_hook(path, NULL, 0, NULL, 0, 0);
	struct error err;
	struct stat st;
	mode_t old = umask(0);

	guard_only(path);
	assert_int_equal(run1(&h, "{}", &err), 0);
	hooks_guard_set(NULL);
	umask(old);
	assert_int_equal(stat(out, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
}

static void test_judge_all_refuses_start_container(void **state)
{
	struct oci_hook h = mk_hook("/bin/true", NULL, 0, NULL, 0, 0);
	struct oci_spec spec;
	struct policy p;
	struct error err;

	memset(&spec, 0, sizeof(spec));
	spec.hooks[HOOK_START_CONTAINER] = (struct oci_hook_list){ &h, 1 };
	policy_default(&p);
	error_clear(&err);
	assert_int_equal(hooks_judge_all(&p, &spec, false, &err), -1);
	assert_contains(err.msg, "hooks.startContainer[0] /bin/true");
	policy_free(&p);
}

#define T(f) cmocka_unit_test_setup(f, test_setup)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_args_exact),
		T(test_default_argv0_is_path),
		T(test_env_exact_not_inherited),
		T(test_env_inherited_when_absent),
		T(test_env_empty_when_empty),
		T(test_state_on_stdin),
		T(test_large_state_read_fully),
		T(test_hook_ignores_large_state),
		T(test_nonzero_exit),
		T(test_exit_127_is_not_exec_failure),
		T(test_killed_by_signal),
		T(test_exec_missing),
		T(test_exec_not_executable),
		T(test_relative_path_refused),
		T(test_stderr_tail_bounded),
		T(test_timeout_kills_group),
		T(test_timeout_not_reached),
		T(test_background_child_does_not_block),
		T(test_runs_in_order),
		T(test_first_failure_stops),
		T(test_warn_continues),
		T(test_empty_list),
		T(test_output_goes_to_log),
		T(test_output_sanitized_and_split),
		T(test_no_fd_leak),
		T(test_std_fds_closed),
		T(test_signals_reset),
		T(test_other_children_not_reaped),
		T(test_sigchld_ignored_refused),
		T(test_without_pidfd),
		T(test_supported_names),
		T(test_rule_docker_hook),
		T(test_rule_operator_globs),
		T(test_guard_refuses_outside),
		T(test_guard_symlink_judged_on_target),
		T(test_guard_runs_allowed_script_umask),
		T(test_judge_all_refuses_start_container),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
