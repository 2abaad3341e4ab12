/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tcpfill: loopback TCP connections holding unread data, run inside a
 * container by tests/integration/test_policy_kernel.py to see where the
 * kernel charges TCP socket memory (cgroup v1: memory.kmem.tcp.*, once
 * its limit is set).  No traffic leaves the container's loopback.
 *
 *   tcpfill CONNS BYTES SECONDS
 *
 * CONNS connections to a listener on 127.0.0.1 (an ephemeral port); up to
 * BYTES written into each, never read (non-blocking: stops at a full
 * buffer); then prints queued=N (bytes written in all) and holds
 * everything open for SECONDS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void die(const char *what)
{
	printf("error=%s:%s\n", what, strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
	exit(1);
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	static char buf[65536];
	long conns, bytes, secs, queued = 0;
	int l;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4 || (conns = atol(argv[1])) <= 0 || conns > 256 ||
	    (bytes = atol(argv[2])) <= 0 || (secs = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: tcpfill CONNS(1..256) BYTES SECONDS\n");
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(l, (int)conns) < 0 || getsockname(l, (struct sockaddr *)&a, &alen) < 0)
		die("listen");
	for (long i = 0; i < conns; i++) {
		long left = bytes;
		int c = socket(AF_INET, SOCK_STREAM, 0);

		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    accept(l, NULL, NULL) < 0)
			die("connect");
		fcntl(c, F_SETFL, O_NONBLOCK);
		while (left > 0) {
			ssize_t n = write(c, buf, left < (long)sizeof(buf) ? (size_t)left : sizeof(buf));
			if (n <= 0)
				break; /* EAGAIN: both queues full */
			left -= n;
			queued += n;
		}
	}
	printf("queued=%ld\n", queued);
	sleep((unsigned)secs);
	return 0;
}
