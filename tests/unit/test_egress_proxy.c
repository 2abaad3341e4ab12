/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/egress/proxy.c end to end on this host's loopback: the proxy
 * (a forked child running egress_serve) listens on 127.0.0.2, a fake
 * upstream on 127.0.0.1 stands for "allowed.test" (pinned by egress.hosts,
 * 127.0.0.1 let through by allowCidrs), and a client speaks HTTP, TLS,
 * CONNECT and DNS to the proxy.  Every connection is an audit line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../runtime/egress/egress.h"
#include "../../spec/policy/policy.h"

static int listen_on(const char *addr, unsigned port, int type)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0), one = 1;

	inet_pton(AF_INET, addr, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 16) < 0))
		fail_msg("bind %s:%u: %s", addr, port, strerror(errno));
	return fd;
}

static unsigned port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t l = sizeof(sa);

	getsockname(fd, (struct sockaddr *)&sa, &l);
	return ntohs(sa.sin_port);
}

static int dial(const char *addr, unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 5, 0 };

	inet_pton(AF_INET, addr, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		fail_msg("connect %s:%u: %s", addr, port, strerror(errno));
	return fd;
}

static size_t read_all_until_eof(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;

	while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/* The fake upstream: one connection at a time, it reads what arrives
 * within a moment, writes "upstream saw N bytes: <first line>\n", closes. */
static pid_t upstream(int lfd)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	for (;;) {
		char buf[4096], line[256];
		int c = accept(lfd, NULL, NULL);
		struct timeval tv = { 0, 300000 };
		ssize_t n;

		if (c < 0)
			_exit(0);
		setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = read(c, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (n > 0 && buf[0] == 22)
			snprintf(line, sizeof(line), "upstream saw %zd bytes: (tls)\n", n);
		else
			snprintf(line, sizeof(line), "upstream saw %zd bytes: %.*s\n", n,
				 (int)strcspn(buf, "\r\n"), buf);
		if (write(c, line, strlen(line)) < 0)
			_exit(1);
		close(c);
	}
}

struct world {
	int up_fd, audit[2];
	unsigned port, proxy_port;
	pid_t up_pid, proxy_pid;
};

static struct world w;

static int setup(void **state)
{
	static char *allow[] = { "allowed.test", NULL }, *deny[] = { "denied.allowed.test", NULL };
	static char *hosts_items[2], *allow_cidrs[] = { "127.0.0.1/32", NULL };
	static struct egress_config c;
	struct egress_listeners l = { 0 };
	struct policy p;
	struct error err;
	(void)state;

	w.up_fd = listen_on("127.0.0.1", 0, SOCK_STREAM);
	w.port = port_of(w.up_fd);
	w.up_pid = upstream(w.up_fd);
	l.port_fd[0] = listen_on(EGRESS_ADDR, w.port, SOCK_STREAM);
	l.port[0] = w.port;
	l.n = 1;
	l.proxy = listen_on(EGRESS_ADDR, 0, SOCK_STREAM);
	w.proxy_port = port_of(l.proxy);
	l.dns = listen_on(EGRESS_ADDR, 0, SOCK_DGRAM);
	if (pipe(w.audit) < 0)
		return -1;
	hosts_items[0] = "allowed.test=127.0.0.1";
	policy_default(&p);
	c = (struct egress_config){
		.id = "unit",
		.policy_source = "unit",
		.names = { { allow, 1 }, { deny, 1 } },
		.ports = { w.port },
		.n_ports = 1,
		.hosts = { hosts_items, 1 },
		.allow = { allow_cidrs, 1 },
		.audit_fd = w.audit[1],
	};
	if (policy_egress_deny_list(&p.deny_cidrs, &c.deny, &err) < 0)
		fail_msg("%s", err.msg);
	w.proxy_pid = fork();
	if (w.proxy_pid == 0) {
		close(w.audit[0]);
		_exit(egress_serve(&c, &l, &err) < 0 ? 1 : 0);
	}
	close(w.audit[1]);
	/* the DNS port for the test */
	setenv("EGRESS_TEST_DNS_PORT", xasprintf("%u", port_of(l.dns)), 1);
	return 0;
}

static int teardown(void **state)
{
	int st;
	(void)state;

	kill(w.proxy_pid, SIGTERM);
	waitpid(w.proxy_pid, &st, 0);
	kill(w.up_pid, SIGKILL);
	waitpid(w.up_pid, NULL, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void send_str(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		fail_msg("write: %s", strerror(errno));
}

static void test_http_allowed_and_refused(void **state)
{
	char buf[2048];
	int fd;
	(void)state;

	fd = dial(EGRESS_ADDR, w.port);
	send_str(fd, "GET /simple/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_non_null(strstr(buf, "upstream saw"));
	assert_non_null(strstr(buf, "GET /simple/ HTTP/1.1"));

	fd = dial(EGRESS_ADDR, w.port);
	send_str(fd, "GET / HTTP/1.1\r\nHost: github.com\r\n\r\n");
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_non_null(strstr(buf, "HTTP/1.1 403"));
	assert_non_null(strstr(buf, "egress.allowDomains"));
	assert_null(strstr(buf, "upstream saw"));

	fd = dial(EGRESS_ADDR, w.port);
	send_str(fd, "GET / HTTP/1.1\r\nHost: denied.allowed.test\r\n\r\n");
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_non_null(strstr(buf, "egress.denyDomains"));
}

static void test_proxy_port_connect_and_absolute(void **state)
{
	char buf[2048], req[256];
	int fd;
	(void)state;

	fd = dial(EGRESS_ADDR, w.proxy_port);
	snprintf(req, sizeof(req), "CONNECT allowed.test:%u HTTP/1.1\r\n\r\nhello", w.port);
	send_str(fd, req);
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_true(str_has_prefix(buf, "HTTP/1.1 200 Connection established\r\n\r\n"));
	assert_non_null(strstr(buf, "upstream saw 5 bytes: hello"));

	fd = dial(EGRESS_ADDR, w.proxy_port);
	snprintf(req, sizeof(req), "GET http://allowed.test:%u/x?y HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		 w.port);
	send_str(fd, req);
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_non_null(strstr(buf, "upstream saw"));
	assert_non_null(strstr(buf, ": GET /x?y HTTP/1.1")); /* origin form upstream */

	/* CONNECT to a port off the list */
	fd = dial(EGRESS_ADDR, w.proxy_port);
	send_str(fd, "CONNECT allowed.test:22 HTTP/1.1\r\n\r\n");
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_non_null(strstr(buf, "egress.ports"));
}

static void test_tls_by_sni(void **state)
{
	/* a minimal ClientHello naming allowed.test, then one naming none */
	static const unsigned char head[] = { 3, 3 };
	unsigned char hello[256], body[200];
	char buf[512];
	size_t n = 0, bn = 0;
	const char *host = "allowed.test";
	size_t hl = strlen(host);
	int fd;
	(void)state;

	memcpy(body, head, 2), bn = 2;
	memset(body + bn, 7, 32), bn += 32;
	body[bn++] = 0;
	body[bn++] = 0, body[bn++] = 2, body[bn++] = 0x13, body[bn++] = 1;
	body[bn++] = 1, body[bn++] = 0;
	body[bn++] = 0, body[bn++] = (unsigned char)(hl + 9);
	body[bn++] = 0, body[bn++] = 0, body[bn++] = 0, body[bn++] = (unsigned char)(hl + 5);
	body[bn++] = 0, body[bn++] = (unsigned char)(hl + 3), body[bn++] = 0;
	body[bn++] = 0, body[bn++] = (unsigned char)hl;
	memcpy(body + bn, host, hl), bn += hl;
	hello[n++] = 22, hello[n++] = 3, hello[n++] = 1, hello[n++] = 0,
	hello[n++] = (unsigned char)(bn + 4);
	hello[n++] = 1, hello[n++] = 0, hello[n++] = 0, hello[n++] = (unsigned char)bn;
	memcpy(hello + n, body, bn), n += bn;

	fd = dial(EGRESS_ADDR, w.port);
	if (write(fd, hello, n) < 0)
		fail();
	read_all_until_eof(fd, buf, sizeof(buf));
	close(fd);
	assert_non_null(strstr(buf, "upstream saw"));
	assert_non_null(strstr(buf, "(tls)"));
}

static void test_dns(void **state)
{
	unsigned char q[64] = { 0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 }, a[512];
	size_t n = 12;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { 5, 0 };
	ssize_t r;
	(void)state;

	q[n++] = 7, memcpy(q + n, "allowed", 7), n += 7;
	q[n++] = 4, memcpy(q + n, "test", 4), n += 4;
	q[n++] = 0, q[n++] = 0, q[n++] = 1, q[n++] = 0, q[n++] = 1;
	sa.sin_port = htons((uint16_t)atoi(getenv("EGRESS_TEST_DNS_PORT")));
	inet_pton(AF_INET, EGRESS_ADDR, &sa.sin_addr);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sendto(fd, q, n, 0, (struct sockaddr *)&sa, sizeof(sa));
	r = recv(fd, a, sizeof(a), 0);
	assert_int_equal(r, (ssize_t)n + 16);
	assert_int_equal(a[3] & 0xf, 0);
	assert_int_equal(a[r - 4], 127);
	assert_int_equal(a[r - 1], 2);
	close(fd);
}

/* Last: every connection above is a line, allowed or refused. */
static void test_audit_lines(void **state)
{
	char buf[65536];
	size_t n;
	(void)state;

	kill(w.proxy_pid, SIGTERM);
	n = read_all_until_eof(w.audit[0], buf, sizeof(buf));
	assert_true(n > 0);
	assert_non_null(strstr(buf, "\"action\":\"allowed\",\"rule\":\"egress\""));
	assert_non_null(strstr(buf, "\"name\":\"github.com\""));
	assert_non_null(strstr(buf, "\"address\":\"127.0.0.1\""));
	assert_non_null(strstr(buf, "\"bytesOut\":"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_allowed_and_refused),
		cmocka_unit_test(test_proxy_port_connect_and_absolute),
		cmocka_unit_test(test_tls_by_sni),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_audit_lines),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
