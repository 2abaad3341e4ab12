/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sockproto: socket() of each family/type/protocol the strict agent
 * profile judges (spec/policy/agent-seccomp.json), run inside a container by
 * tests/integration/test_policy_net.py.  No traffic: each socket is
 * created and closed.
 *
 *   sockproto [NAME...]     (no NAME: every kind)
 *
 * Output, one line per kind: NAME=OK or NAME=ERRNO_NAME (EPERM from the
 * profile's default, EPROTONOSUPPORT for MPTCP; EACCES for a ping socket
 * means the profile let it through and net.ipv4.ping_group_range refused).
 * Exit status 0, 2 on an unknown NAME.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct kind {
	const char *name;
	int domain, type, proto;
} kinds[] = {
	{ "unix_stream", AF_UNIX, SOCK_STREAM, 0 },
	{ "unix_dgram", AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0 },
	{ "tcp4", AF_INET, SOCK_STREAM, 0 },
	{ "tcp4_proto", AF_INET, SOCK_STREAM, 6 },
	{ "tcp4_flags", AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 6 },
	{ "tcp6", AF_INET6, SOCK_STREAM, 0 },
	{ "tcp6_proto", AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 6 },
	{ "udp4", AF_INET, SOCK_DGRAM, 0 },
	{ "udp4_proto", AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 17 },
	{ "udp6", AF_INET6, SOCK_DGRAM, 17 },
	{ "ping4", AF_INET, SOCK_DGRAM, 1 },
	{ "ping6", AF_INET6, SOCK_DGRAM, 58 },
	{ "netlink_route", AF_NETLINK, SOCK_RAW, 0 },
	{ "sctp4", AF_INET, SOCK_STREAM, 132 },
	{ "sctp4_seqpacket", AF_INET, SOCK_SEQPACKET, 132 },
	{ "sctp6", AF_INET6, SOCK_STREAM, 132 },
	{ "mptcp4", AF_INET, SOCK_STREAM, 262 },
	{ "mptcp6", AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 262 },
	{ "udplite4", AF_INET, SOCK_DGRAM, 136 },
	{ "udplite6", AF_INET6, SOCK_DGRAM, 136 },
	{ "tcp4_as_dgram", AF_INET, SOCK_DGRAM, 6 },
	{ "udp4_as_stream", AF_INET, SOCK_STREAM, 17 },
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static void try(const struct kind *k)
{
	int fd = socket(k->domain, k->type, k->proto);
	int e = errno;

	if (fd >= 0) {
		printf("%s=OK\n", k->name);
		close(fd);
		return;
	}
	printf("%s=%s\n", k->name, strerrorname_np(e) ? strerrorname_np(e) : "E?");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 1) {
		for (size_t i = 0; i < N_KINDS; i++)
			try(&kinds[i]);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		size_t i;
		for (i = 0; i < N_KINDS && strcmp(kinds[i].name, argv[a]); i++)
			;
		if (i == N_KINDS) {
			fprintf(stderr, "sockproto: unknown kind %s\n", argv[a]);
			return 2;
		}
		try(&kinds[i]);
	}
	return 0;
}
