/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Egress rules for a container whose policy allows networking: packets to
 * the policy's denied ranges (link-local and cloud metadata, RFC 1918,
 * the host's loopback through a gateway) are dropped by an nftables table
 * in the container's own network namespace, installed by the container
 * init before it drops its capabilities (so the process cannot remove it).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <nftables/libnftables.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "internal.h"

/* "a, b, c" of the CIDRs of one family (IPv6 has a ':'). */
static char *cidr_set(const struct str_array *cidrs, bool v6)
{
	size_t cap = 1;
	char *out;

	for (size_t i = 0; i < cidrs->len; i++)
		cap += strlen(cidrs->items[i]) + 2;
	out = xcalloc(1, cap);
	for (size_t i = 0; i < cidrs->len; i++) {
		if ((strchr(cidrs->items[i], ':') != NULL) != v6)
			continue;
		if (*out)
			strcat(out, ", ");
		strcat(out, cidrs->items[i]);
	}
	return out;
}

static bool valid_cidr(const char *s)
{
	for (; *s; s++)
		if (!strchr("0123456789abcdefABCDEF.:/", *s))
			return false;
	return true;
}

int netfilter_install_egress(const struct str_array *cidrs, struct error *err)
{
	_cleanup_free_ char *v4 = NULL, *v6 = NULL, *rules = NULL;
	struct nft_ctx *nft;
	int r;

	for (size_t i = 0; i < cidrs->len; i++)
		if (!valid_cidr(cidrs->items[i]))
			return error_set(err, "policy: denyCidrs[%zu]: not an address range: \"%s\"",
					 i, cidrs->items[i]);
	v4 = cidr_set(cidrs, false);
	v6 = cidr_set(cidrs, true);
	/* One batch, applied atomically: the table made (if missing), dropped
	 * and made again, so that a namespace shared by several containers
	 * (a pod) holds one copy of the rules, not one per container. */
	rules = xasprintf("table inet agentsbx\n"
			  "delete table inet agentsbx\n"
			  "table inet agentsbx {\n"
			  " chain egress {\n"
			  "  type filter hook output priority 0; policy accept;\n"
			  "  oifname \"lo\" accept\n"
			  "%s%s%s"
			  "%s%s%s"
			  " }\n"
			  "}\n",
			  *v4 ? "  ip daddr { " : "", v4, *v4 ? " } drop\n" : "",
			  *v6 ? "  ip6 daddr { " : "", v6, *v6 ? " } drop\n" : "");
	nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft)
		return error_set(err, "policy: nftables: cannot create a context");
	nft_ctx_buffer_error(nft);
	r = nft_run_cmd_from_buffer(nft, rules);
	if (r != 0) {
		const char *msg = nft_ctx_get_error_buffer(nft);
		error_set(err, "policy: install egress rules in the container's network namespace: %s",
			  msg && *msg ? msg : "nftables failed");
		nft_ctx_free(nft);
		return -1;
	}
	nft_ctx_free(nft);
	log_debug("policy: egress to %s%s%s dropped", v4, *v4 && *v6 ? ", " : "", v6);
	return 0;
}

/* ---- only lo --------------------------------------------------------------- */

/* RTM_DELLINK for one interface of the current network namespace. */
static int delete_link(int nl, unsigned index, const char *name, struct error *err)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_DELLINK,
		       .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = index },
		.i = { .ifi_family = AF_UNSPEC, .ifi_index = (int)index },
	};
	char buf[1024];
	ssize_t n;

	if (send(nl, &req, sizeof(req), 0) < 0)
		return error_sys(err, "policy: remove interface %s", name);
	n = recv(nl, buf, sizeof(buf), 0);
	if (n < (ssize_t)sizeof(struct nlmsghdr))
		return error_sys(err, "policy: remove interface %s: no answer", name);
	if (((struct nlmsghdr *)buf)->nlmsg_type == NLMSG_ERROR) {
		int e = -((struct nlmsgerr *)NLMSG_DATA(buf))->error;
		if (e && e != ENODEV)
			return error_setc(err, e, "policy: remove interface %s", name);
	}
	return 0;
}

int netfilter_only_loopback(struct error *err)
{
	struct if_nameindex *ifs = if_nameindex();
	_cleanup_close_ int nl = -1;
	int r = 0;

	if (!ifs)
		return error_sys(err, "policy: list the container's network interfaces");
	for (struct if_nameindex *i = ifs; i->if_index && r == 0; i++) {
		if (!strcmp(i->if_name, "lo"))
			continue;
		if (nl < 0) {
			nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
			if (nl < 0) {
				r = error_sys(err, "policy: netlink socket");
				break;
			}
		}
		/* Put there by a hook (Docker's libnetwork-setkey plumbs its
		 * bridge network into the namespace we made). */
		log_info("policy: network: interface %s removed (no network allowed)", i->if_name);
		r = delete_link(nl, i->if_index, i->if_name, err);
	}
	if_freenameindex(ifs);
	return r;
}
