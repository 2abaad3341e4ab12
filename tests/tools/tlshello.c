/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tlshello: a TLS ClientHello naming NAME (SNI), sent to HOST:PORT from
 * inside a container by tests/integration/test_egress_names.py; prints
 * what came back: "answer=tls" when the first byte is a TLS record
 * (handshake or alert: a TLS server got the hello), "answer=none" when the
 * connection was closed without a byte, "error=ERRNO" when it could not
 * connect.  Static, no TLS library: the hello is built by hand.
 *
 *   tlshello HOST PORT NAME
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static size_t hello(unsigned char *b, const char *name)
{
	size_t hl = strlen(name), n = 0, bn;
	unsigned char body[512];

	bn = 0;
	body[bn++] = 3, body[bn++] = 3;
	for (int i = 0; i < 32; i++)
		body[bn++] = (unsigned char)(i * 7);
	body[bn++] = 0;
	/* suites: TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 */
	body[bn++] = 0, body[bn++] = 4, body[bn++] = 0x13, body[bn++] = 1, body[bn++] = 0xc0,
	body[bn++] = 0x2f;
	body[bn++] = 1, body[bn++] = 0;
	size_t ext = 4 + 2 + 1 + 2 + hl;
	body[bn++] = (unsigned char)(ext >> 8), body[bn++] = (unsigned char)ext;
	body[bn++] = 0, body[bn++] = 0;
	body[bn++] = (unsigned char)((ext - 4) >> 8), body[bn++] = (unsigned char)(ext - 4);
	body[bn++] = (unsigned char)((hl + 3) >> 8), body[bn++] = (unsigned char)(hl + 3);
	body[bn++] = 0;
	body[bn++] = (unsigned char)(hl >> 8), body[bn++] = (unsigned char)hl;
	memcpy(body + bn, name, hl), bn += hl;
	b[n++] = 22, b[n++] = 3, b[n++] = 1;
	b[n++] = (unsigned char)((bn + 4) >> 8), b[n++] = (unsigned char)(bn + 4);
	b[n++] = 1, b[n++] = 0, b[n++] = (unsigned char)(bn >> 8), b[n++] = (unsigned char)bn;
	memcpy(b + n, body, bn);
	return n + bn;
}

int main(int argc, char **argv)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
	unsigned char b[1024];
	struct timeval tv = { 5, 0 };
	ssize_t r;
	int fd;

	if (argc != 4 || strlen(argv[3]) > 200) {
		fprintf(stderr, "usage: tlshello HOST PORT NAME\n");
		return 2;
	}
	if (getaddrinfo(argv[1], argv[2], &hints, &res) != 0) {
		printf("error=resolve\n");
		return 1;
	}
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
		printf("error=%s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "E?");
		return 1;
	}
	if (write(fd, b, hello(b, argv[3])) < 0) {
		printf("error=write\n");
		return 1;
	}
	r = read(fd, b, sizeof(b));
	printf("answer=%s\n", r > 0 && (b[0] == 22 || b[0] == 21) ? "tls" : r > 0 ? "other" : "none");
	return 0;
}
