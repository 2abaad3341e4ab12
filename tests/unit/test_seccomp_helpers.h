/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the test_seccomp*.c suites (a header, since every
 * tests/unit/test_*.c is a program of its own):
 *  - a small OCI linux.seccomp JSON -> struct oci_seccomp loader, so that
 *    the suites do not depend on spec/'s parser;
 *  - run a function in a forked child under a filter and collect how it
 *    ended, with a message from the child when a check failed.
 */
#ifndef TEST_SECCOMP_HELPERS_H
#define TEST_SECCOMP_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
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

#include <cmocka.h>
#include <yajl/yajl_tree.h>

#include "../../lib/util.h"
#include "../../runtime/seccomp/seccomp.h"

#define TSC_UNUSED __attribute__((unused))

/* ---- JSON -> struct oci_seccomp ------------------------------------------ */

static TSC_UNUSED char *tsc_strdup_or_null(yajl_val v)
{
	return YAJL_IS_STRING(v) ? xstrdup(YAJL_GET_STRING(v)) : NULL;
}

static TSC_UNUSED uint64_t tsc_u64(yajl_val v)
{
	/* yajl's integers are long long: take the raw text for uint64. */
	return YAJL_IS_NUMBER(v) ? strtoull(v->u.number.r, NULL, 0) : 0;
}

static TSC_UNUSED yajl_val tsc_get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

static TSC_UNUSED void tsc_strv(yajl_val v, struct str_array *out)
{
	out->len = YAJL_IS_ARRAY(v) ? v->u.array.len : 0;
	out->items = xcalloc(out->len + 1, sizeof(char *));
	for (size_t i = 0; i < out->len; i++)
		out->items[i] = tsc_strdup_or_null(v->u.array.values[i]);
	if (!out->len) {
		free(out->items);
		out->items = NULL;
	}
}

static TSC_UNUSED void tsc_opt(yajl_val v, struct opt_u64 *o)
{
	o->set = v && YAJL_IS_NUMBER(v);
	o->v = o->set ? tsc_u64(v) : 0;
}

static TSC_UNUSED void tsc_syscall(yajl_val v, struct oci_seccomp_syscall *s)
{
	yajl_val args = tsc_get(v, "args");

	tsc_strv(tsc_get(v, "names"), &s->names);
	s->action = tsc_strdup_or_null(tsc_get(v, "action"));
	tsc_opt(tsc_get(v, "errnoRet"), &s->errno_ret);
	s->n_args = YAJL_IS_ARRAY(args) ? args->u.array.len : 0;
	s->args = s->n_args ? xcalloc(s->n_args, sizeof(*s->args)) : NULL;
	for (size_t i = 0; i < s->n_args; i++) {
		yajl_val a = args->u.array.values[i];
		s->args[i].index = (uint32_t)tsc_u64(tsc_get(a, "index"));
		s->args[i].value = tsc_u64(tsc_get(a, "value"));
		s->args[i].value_two = tsc_u64(tsc_get(a, "valueTwo"));
		s->args[i].op = tsc_strdup_or_null(tsc_get(a, "op"));
	}
}

/* Parse a linux.seccomp object; aborts the test on malformed JSON. */
static TSC_UNUSED void tsc_parse(const char *json, struct oci_seccomp *sc)
{
	char ebuf[256];
	yajl_val root = yajl_tree_parse(json, ebuf, sizeof(ebuf));
	yajl_val calls;

	if (!root)
		fail_msg("bad test JSON: %s", ebuf);
	memset(sc, 0, sizeof(*sc));
	sc->present = true;
	sc->default_action = tsc_strdup_or_null(tsc_get(root, "defaultAction"));
	tsc_opt(tsc_get(root, "defaultErrnoRet"), &sc->default_errno_ret);
	tsc_strv(tsc_get(root, "architectures"), &sc->architectures);
	tsc_strv(tsc_get(root, "flags"), &sc->flags);
	sc->listener_path = tsc_strdup_or_null(tsc_get(root, "listenerPath"));
	sc->listener_metadata =
		tsc_strdup_or_null(tsc_get(root, "listenerMetadata"));
	calls = tsc_get(root, "syscalls");
	sc->n_syscalls = YAJL_IS_ARRAY(calls) ? calls->u.array.len : 0;
	sc->syscalls = sc->n_syscalls ? xcalloc(sc->n_syscalls,
						sizeof(*sc->syscalls))
				      : NULL;
	for (size_t i = 0; i < sc->n_syscalls; i++)
		tsc_syscall(calls->u.array.values[i], &sc->syscalls[i]);
	yajl_tree_free(root);
}

static TSC_UNUSED void tsc_free_strv(struct str_array *a)
{
	for (size_t i = 0; i < a->len; i++)
		free(a->items[i]);
	free(a->items);
}

static TSC_UNUSED void tsc_free(struct oci_seccomp *sc)
{
	free(sc->default_action);
	tsc_free_strv(&sc->architectures);
	tsc_free_strv(&sc->flags);
	free(sc->listener_path);
	free(sc->listener_metadata);
	for (size_t i = 0; i < sc->n_syscalls; i++) {
		struct oci_seccomp_syscall *s = &sc->syscalls[i];
		tsc_free_strv(&s->names);
		free(s->action);
		for (size_t j = 0; j < s->n_args; j++)
			free(s->args[j].op);
		free(s->args);
	}
	free(sc->syscalls);
	memset(sc, 0, sizeof(*sc));
}

/* tests/unit/data/seccomp/NAME, via $SPEC_TESTDATA as `make unit` sets it. */
static TSC_UNUSED char *tsc_read_data(const char *name)
{
	const char *dir = getenv("SPEC_TESTDATA");
	char path[PATH_MAX];
	char *buf = NULL;
	size_t len;
	struct error err;

	snprintf(path, sizeof(path), "%s/seccomp/%s",
		 dir ? dir : "tests/unit/data", name);
	if (read_file_at(AT_FDCWD, path, 1 << 20, &buf, &len, &err) < 0)
		fail_msg("%s", err.msg);
	return buf;
}

static TSC_UNUSED void tsc_load_data(const char *name, struct oci_seccomp *sc)
{
	char *json = tsc_read_data(name);

	tsc_parse(json, sc);
	free(json);
}

/* Prepare JSON text, asserting success. */
static TSC_UNUSED void tsc_prepare(const char *json, const char *cache_dir,
				   struct seccomp_prog *prog)
{
	struct oci_seccomp sc;
	struct error err;

	tsc_parse(json, &sc);
	error_clear(&err);
	if (seccomp_prepare(&sc, cache_dir, prog, &err) < 0)
		fail_msg("seccomp_prepare: %s", err.msg);
	tsc_free(&sc);
}

/* Prepare JSON text expected to be refused; the message must contain want. */
static TSC_UNUSED void tsc_expect_error(const char *json, const char *want)
{
	struct seccomp_prog prog;
	struct oci_seccomp sc;
	struct error err;

	tsc_parse(json, &sc);
	error_clear(&err);
	if (seccomp_prepare(&sc, NULL, &prog, &err) == 0)
		fail_msg("accepted, wanted an error about \"%s\": %s", want,
			 json);
	if (!strstr(err.msg, want))
		fail_msg("error \"%s\" does not mention \"%s\"", err.msg, want);
	tsc_free(&sc);
}

/* ---- children ------------------------------------------------------------ */

/*
 * In the child only raw syscalls, snprintf and write(2): no allocation, no
 * stdio, no cmocka, since the filter may deny what those would need.
 */
static int tsc_report_fd = -1;

static TSC_UNUSED void tsc_child_fail(const char *file, int line,
				      const char *what, long got, int err)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%s:%d: %s (returned %ld, errno %d)",
			 file, line, what, got, err);

	if (write(tsc_report_fd, buf, (size_t)n) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

/* In the child: r must be -1 with errno e. */
#define TSC_EXPECT_ERRNO(call, e)                                              \
	do {                                                                   \
		errno = 0;                                                     \
		long _r = (long)(call);                                        \
		if (_r != -1 || errno != (e))                                  \
			tsc_child_fail(__FILE__, __LINE__,                     \
				       #call " should fail with " #e, _r,      \
				       errno);                                 \
	} while (0)

/* In the child: r must not be -1. */
#define TSC_EXPECT_OK(call)                                                    \
	do {                                                                   \
		errno = 0;                                                     \
		long _r = (long)(call);                                        \
		if (_r == -1)                                                  \
			tsc_child_fail(__FILE__, __LINE__,                     \
				       #call " should succeed", _r, errno);    \
	} while (0)

#define TSC_CHECK(cond)                                                        \
	do {                                                                   \
		if (!(cond))                                                   \
			tsc_child_fail(__FILE__, __LINE__, #cond, 0, errno);   \
	} while (0)

struct tsc_result {
	int status;	/* waitpid() status */
	char msg[1024]; /* what the child reported */
};

struct tsc_child {
	pid_t pid;
	int report; /* read end of the child's report pipe */
};

/*
 * fork; in the child: no_new_privs, seccomp_prog_load(prog), then
 * fn(arg, listener fd or -1), _exit(0).  tsc_wait() collects it.
 */
static TSC_UNUSED void tsc_spawn(const struct seccomp_prog *prog,
				 void (*fn)(void *arg, int listener), void *arg,
				 struct tsc_child *c)
{
	int p[2];

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		struct error err;
		int listener = -1;

		close(p[0]);
		tsc_report_fd = p[1];
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			tsc_child_fail(__FILE__, __LINE__, "NNP", -1, errno);
		if (seccomp_prog_load(prog, &listener, &err) < 0)
			tsc_child_fail(__FILE__, __LINE__, err.msg, -1,
				       err.code);
		fn(arg, listener);
		_exit(0);
	}
	close(p[1]);
	c->report = p[0];
}

static TSC_UNUSED void tsc_wait(struct tsc_child *c, struct tsc_result *res)
{
	ssize_t n;

	memset(res, 0, sizeof(*res));
	n = read(c->report, res->msg, sizeof(res->msg) - 1);
	res->msg[n > 0 ? n : 0] = '\0';
	close(c->report);
	assert_int_equal(waitpid(c->pid, &res->status, 0), c->pid);
}

static TSC_UNUSED void tsc_run(const struct seccomp_prog *prog,
			       void (*fn)(void *arg, int listener), void *arg,
			       struct tsc_result *res)
{
	struct tsc_child c;

	tsc_spawn(prog, fn, arg, &c);
	tsc_wait(&c, res);
}

static TSC_UNUSED void tsc_assert_exited_ok(const struct tsc_result *r)
{
	if (WIFSIGNALED(r->status))
		fail_msg("child killed by signal %d %s", WTERMSIG(r->status),
			 r->msg);
	if (WEXITSTATUS(r->status) != 0)
		fail_msg("child failed: %s", r->msg);
}

static TSC_UNUSED void tsc_assert_killed(const struct tsc_result *r, int sig)
{
	if (!WIFSIGNALED(r->status))
		fail_msg("child exited %d, wanted signal %d: %s",
			 WEXITSTATUS(r->status), sig, r->msg);
	assert_int_equal(WTERMSIG(r->status), sig);
}

static TSC_UNUSED double tsc_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* A fresh private directory under /tmp; removed with tsc_rm_rf(). */
static TSC_UNUSED char *tsc_mkdtemp(void)
{
	char *d = xstrdup("/tmp/agentsbx-seccomp-test.XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static TSC_UNUSED void tsc_rm_rf(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
	free(cmd);
}

#endif
