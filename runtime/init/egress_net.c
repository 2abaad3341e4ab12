/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Egress by name, inside the container's own network namespace (the init,
 * still privileged there): a default route to lo, so that a connection to
 * any address has somewhere to go; the redirect of the egress ports and
 * DNS to the proxy's address (netfilter.c); and the proxy's sockets, made
 * here so that they belong to this namespace, handed to the runtime over
 * the sync socket.  The runtime serves them from the host's side
 * (runtime/policy/egress_spawn.c): nothing the container sends leaves the
 * namespace but through them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../internal.h"

/* RTM_NEWROUTE 0.0.0.0/0 dev lo src 127.0.0.1 (scope link: no gateway;
 * the source given, as lo's only address is of host scope, which a link
 * route would not pick). */
static int route_default_to_lo(struct error *err)
{
	struct {
		struct nlmsghdr h;
		struct rtmsg r;
		struct rtattr oif_attr;
		int oif;
		struct rtattr src_attr;
		struct in_addr src;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_NEWROUTE, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL },
		.r = { .rtm_family = AF_INET, .rtm_table = RT_TABLE_MAIN, .rtm_protocol = RTPROT_BOOT, .rtm_scope = RT_SCOPE_LINK, .rtm_type = RTN_UNICAST },
		.oif_attr = { .rta_len = RTA_LENGTH(sizeof(int)), .rta_type = RTA_OIF },
		.src_attr = { .rta_len = RTA_LENGTH(sizeof(struct in_addr)), .rta_type = RTA_PREFSRC },
		.src = { htonl(INADDR_LOOPBACK) },
	};
	_cleanup_close_ int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	char buf[1024];
	ssize_t n;

	req.oif = (int)if_nametoindex("lo");
	if (nl < 0 || !req.oif)
		return error_sys(err, "egress: netlink socket or lo's index");
	if (send(nl, &req, sizeof(req), 0) < 0)
		return error_sys(err, "egress: add the default route to lo");
	n = recv(nl, buf, sizeof(buf), 0);
	if (n < (ssize_t)sizeof(struct nlmsghdr))
		return error_sys(err, "egress: add the default route to lo: no answer");
	if (((struct nlmsghdr *)buf)->nlmsg_type == NLMSG_ERROR) {
		int e = -((struct nlmsgerr *)NLMSG_DATA(buf))->error;
		if (e)
			return error_setc(err, e, "egress: add the default route to lo");
	}
	return 0;
}

static int make_socket(int type, unsigned port, struct error *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;

	inet_pton(AF_INET, POLICY_EGRESS_ADDR, &sa.sin_addr);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 128) < 0)) {
		error_sys(err, "egress: the proxy's socket on %s:%u", POLICY_EGRESS_ADDR, port);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One socket to the parent (value: its port; 0 for DNS over UDP). */
static int send_socket(int sync_fd, int type, unsigned port, struct error *err)
{
	int fd = make_socket(type, port, err);
	int r;

	if (fd < 0)
		return -1;
	r = sync_send_fd_value(sync_fd, SYNC_EGRESS_FD, fd, type == SOCK_DGRAM ? 0 : port, err);
	close(fd);
	return r;
}

int egress_net_setup(const struct policy *p, const char *id, int sync_fd, struct error *err)
{
	if (route_default_to_lo(err) < 0 ||
	    netfilter_install_egress_redirect(p->egress_ports, p->n_egress_ports, id, err) < 0 ||
	    send_socket(sync_fd, SOCK_DGRAM, 53, err) < 0 ||
	    send_socket(sync_fd, SOCK_STREAM, POLICY_EGRESS_PROXY_PORT, err) < 0)
		return -1;
	for (size_t i = 0; i < p->n_egress_ports; i++)
		if (send_socket(sync_fd, SOCK_STREAM, p->egress_ports[i], err) < 0)
			return -1;
	log_debug("egress: %zu sockets handed to the runtime", p->n_egress_ports + 2);
	return 0;
}
