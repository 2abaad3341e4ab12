/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/init/sync.c: the parent <-> init handshake over a SOCK_SEQPACKET pair.
 * Messages are fixed-size; anything else (short, oversized, garbled, an
 * error without its NUL) must give a clear error, never a misread message
 * or a leaked fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/fdpass.h"
#include "../../runtime/init/sync.h"

struct pair {
	int parent, child;
};

static int setup(void **state)
{
	static struct pair p;
	int fds[2];
	struct error err;

	if (sync_pair(fds, &err) < 0)
		return -1;
	p.parent = fds[0];
	p.child = fds[1];
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	close(p->parent);
	close(p->child);
	return 0;
}

static bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_pair_is_cloexec(void **state)
{
	struct pair *p = *state;

	assert_true(fcntl(p->parent, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(p->child, F_GETFD) & FD_CLOEXEC);
}

static void test_value_round_trip(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	long long v = 0;

	assert_int_equal(sync_send_value(p->parent, SYNC_GO, 1234567890123LL, &err), 0);
	assert_int_equal(sync_expect_value(p->child, SYNC_GO, &v, &err), 0);
	assert_int_equal(v, 1234567890123LL);
	assert_int_equal(sync_send(p->child, SYNC_READY, NULL, &err), 0);
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &err), 0);
}

static void test_unexpected_type(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };

	assert_int_equal(sync_send(p->child, SYNC_RUN_HOOKS, NULL, &err), 0);
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &err), -1);
	assert_string_equal(err.msg, "unexpected sync message 2 (wanted 4)");
}

static void test_error_crosses_intact(void **state)
{
	struct pair *p = *state;
	struct error sent, got = { 0 }, err;

	error_setc(&sent, EPERM, "mount %s", "/proc");
	assert_int_equal(sync_send(p->child, SYNC_ERROR, &sent, &err), 0);
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &got), -1);
	assert_int_equal(got.code, EPERM);
	assert_string_equal(got.msg, "mount /proc: Operation not permitted");
}

/* A message is a raw struct: an error payload without its NUL must come
 * out terminated, not read past the buffer. */
static void test_error_without_nul(void **state)
{
	struct pair *p = *state;
	struct sync_msg m;
	struct error got = { 0 };

	memset(&m, 'A', sizeof(m));
	m.type = SYNC_ERROR;
	assert_int_equal(send(p->child, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &got), -1);
	assert_int_equal(strlen(got.msg), sizeof(got.msg) - 1);
}

static void test_short_message(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	int type = SYNC_READY;

	assert_int_equal(send(p->child, &type, sizeof(type), 0), (ssize_t)sizeof(type));
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &err), -1);
	assert_non_null(strstr(err.msg, "bad sync message: 4 bytes"));
}

/* Bigger than a message: refused, not read as its first sizeof(msg) bytes. */
static void test_oversized_message(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	char big[sizeof(struct sync_msg) + 64];
	struct sync_msg *m = (struct sync_msg *)big;

	memset(big, 0, sizeof(big));
	m->type = SYNC_READY;
	assert_int_equal(send(p->child, big, sizeof(big), 0), (ssize_t)sizeof(big));
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &err), -1);
	assert_non_null(strstr(err.msg, "bad sync message"));
	/* The next, well-formed message is read normally. */
	assert_int_equal(sync_send(p->child, SYNC_READY, NULL, &err), 0);
	assert_int_equal(sync_expect(p->parent, SYNC_READY, &err), 0);
}

static void test_eof(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	struct sync_msg m;
	int passed = 7;

	close(p->child);
	p->child = open("/dev/null", O_RDONLY | O_CLOEXEC); /* for teardown */
	assert_int_equal(sync_expect(p->parent, SYNC_GO, &err), -1);
	assert_string_equal(err.msg, "container init exited during setup");
	assert_int_equal(sync_recv(p->parent, &m, &passed, &err), -1);
	assert_string_equal(err.msg, "container init exited during setup");
	assert_int_equal(passed, -1);
}

static void test_fd_round_trip(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	struct sync_msg m;
	struct stat a, b;
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC), passed = -1;

	assert_true(nul >= 0);
	assert_int_equal(sync_send_fd(p->child, SYNC_SECCOMP_FD, nul, &err), 0);
	assert_int_equal(sync_recv(p->parent, &m, &passed, &err), 0);
	assert_int_equal(m.type, SYNC_SECCOMP_FD);
	assert_true(passed >= 0);
	assert_true(fcntl(passed, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fstat(nul, &a), 0);
	assert_int_equal(fstat(passed, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(passed);
	close(nul);
}

/* A short or oversized message carrying an fd: refused, and the fd that
 * came with it closed (no leak into the runtime). */
static void test_bad_message_with_fd_closes_it(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	struct sync_msg m;
	char big[sizeof(struct sync_msg) + 1] = { 0 };
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC), passed = -1;
	int before;

	assert_true(nul >= 0);
	/* The lowest free fd is where a received fd would land. */
	before = dup(nul);
	close(before);

	assert_int_equal(fd_send(p->child, big, 3, nul), 3);
	assert_int_equal(sync_recv(p->parent, &m, &passed, &err), -1);
	assert_non_null(strstr(err.msg, "bad sync message: 3 bytes"));
	assert_int_equal(passed, -1);
	assert_false(fd_is_open(before));

	assert_int_equal(fd_send(p->child, big, sizeof(big), nul), (ssize_t)sizeof(big));
	assert_int_equal(sync_recv(p->parent, &m, &passed, &err), -1);
	assert_non_null(strstr(err.msg, "bad sync message"));
	assert_int_equal(passed, -1);
	assert_false(fd_is_open(before));
	close(nul);
}

/* SYNC_ERROR with an fd: the error comes through, the fd is closed. */
static void test_error_with_fd_closes_it(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	struct sync_msg m, out;
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC), passed = -1;
	int before;

	assert_true(nul >= 0);
	before = dup(nul);
	close(before);
	memset(&out, 0, sizeof(out));
	out.type = SYNC_ERROR;
	error_set(&out.err, "seccomp: load filter");
	assert_int_equal(fd_send(p->child, &out, sizeof(out), nul), (ssize_t)sizeof(out));
	assert_int_equal(sync_recv(p->parent, &m, &passed, &err), -1);
	assert_string_equal(err.msg, "seccomp: load filter");
	assert_int_equal(passed, -1);
	assert_false(fd_is_open(before));
	close(nul);
}

/* Garbled bytes of the right size: an unknown type is refused by name. */
static void test_garbled(void **state)
{
	struct pair *p = *state;
	struct error err = { 0 };
	struct sync_msg m;

	memset(&m, 0xff, sizeof(m));
	assert_int_equal(send(p->child, &m, sizeof(m), 0), (ssize_t)sizeof(m));
	assert_int_equal(sync_expect(p->parent, SYNC_GO, &err), -1);
	assert_string_equal(err.msg, "unexpected sync message -1 (wanted 1)");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_pair_is_cloexec),
		T(test_value_round_trip),
		T(test_unexpected_type),
		T(test_error_crosses_intact),
		T(test_error_without_nul),
		T(test_short_message),
		T(test_oversized_message),
		T(test_eof),
		T(test_fd_round_trip),
		T(test_bad_message_with_fd_closes_it),
		T(test_error_with_fd_closes_it),
		T(test_garbled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
