/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Egress rules, an nftables table in the container's own network
 * namespace, installed by the container init before it drops its
 * capabilities (so the process cannot remove it): in a kept pod namespace
 * under the default policy, no new outbound connection at all; with
 * networkAllowed, packets to the policy's denied ranges (link-local and
 * cloud metadata, RFC 1918, the host's loopback through a gateway) but
 * its allowCidrs dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/nsfs.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <nftables/libnftables.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/dynlib.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "../judge/judge.h"

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

/* agentsbx-<id>, or agentsbx_<hash of id> for an id nft cannot name
 * (a '+') or a long one; distinct prefixes, so the two never meet. */
static void egress_table_name(const char *id, char *out, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	if (strlen(id) <= 200 && !id[strcspn(id, "+")]) {
		snprintf(out, n, "agentsbx-%s", id);
		return;
	}
	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	snprintf(out, n, "agentsbx_%016llx", (unsigned long long)h);
}

/* libnftables, opened only by a call that installs or removes egress
 * rules (lib/dynlib.h): most calls never need it. */
static struct {
	__typeof__(nft_ctx_new) *ctx_new;
	__typeof__(nft_ctx_buffer_error) *buffer_error;
	__typeof__(nft_run_cmd_from_buffer) *run_cmd_from_buffer;
	__typeof__(nft_ctx_get_error_buffer) *get_error_buffer;
	__typeof__(nft_ctx_free) *ctx_free;
} nftl;
static void *nftl_handle;

static int nft_load(struct error *err)
{
	const struct dynlib_sym syms[] = {
		{ "nft_ctx_new", (void **)&nftl.ctx_new },
		{ "nft_ctx_buffer_error", (void **)&nftl.buffer_error },
		{ "nft_run_cmd_from_buffer", (void **)&nftl.run_cmd_from_buffer },
		{ "nft_ctx_get_error_buffer", (void **)&nftl.get_error_buffer },
		{ "nft_ctx_free", (void **)&nftl.ctx_free },
	};

	return dynlib_load(&nftl_handle, "libnftables.so.1", "policy: the egress rules (denyCidrs)",
			   "Debian: libnftables1", syms, sizeof(syms) / sizeof(*syms), err);
}

/* Run an nft script in the current network namespace.  The library was
 * opened before: this may run in the container's init, where a dlopen
 * could find the container's files. */
static int nft_run(const char *script, const char *what, struct error *err)
{
	struct nft_ctx *nft;
	int r;

	if (!nftl_handle)
		return error_set(err, "policy: %s: libnftables was not loaded before the container started",
				 what);
	nft = nftl.ctx_new(NFT_CTX_DEFAULT);
	if (!nft)
		return error_set(err, "policy: nftables: cannot create a context");
	nftl.buffer_error(nft);
	r = nftl.run_cmd_from_buffer(nft, script);
	if (r != 0) {
		const char *msg = nftl.get_error_buffer(nft);
		error_set(err, "policy: %s: %s", what, msg && *msg ? msg : "nftables failed");
	}
	nftl.ctx_free(nft);
	return r != 0 ? -1 : 0;
}

static int check_cidrs(const struct str_array *cidrs, const char *field, struct error *err)
{
	for (size_t i = 0; i < cidrs->len; i++)
		if (!valid_cidr(cidrs->items[i]))
			return error_set(err, "policy: %s[%zu]: not an address range: \"%s\"", field,
					 i, cidrs->items[i]);
	return 0;
}

/* "  ip daddr { a, b } VERDICT\n" and its ip6 twin, for the CIDRs given. */
static char *daddr_rules(const struct str_array *cidrs, const char *verdict)
{
	_cleanup_free_ char *v4 = cidr_set(cidrs, false), *v6 = cidr_set(cidrs, true);

	return xasprintf("%s%s%s%s%s%s%s%s", *v4 ? "  ip daddr { " : "", v4,
			 *v4 ? " } " : "", *v4 ? verdict : "", *v6 ? "  ip6 daddr { " : "", v6,
			 *v6 ? " } " : "", *v6 ? verdict : "");
}

/*
 * inbound_only (a kept pod namespace, no network allowed): every new
 * outbound connection dropped; loopback (the pod's containers, and
 * containerd's port-forward, which dials inside), replies to connections
 * that came in (probes, Services) and the IPv6 neighbour discovery those
 * replies need pass.  Otherwise (networkAllowed): denyCidrs dropped,
 * allowCidrs first.
 */
int netfilter_install_egress(const struct policy *p, bool inbound_only, const char *id,
			     struct error *err)
{
	_cleanup_free_ char *allow = NULL, *deny = NULL, *rules = NULL;
	struct str_array denied = { 0 };
	char table[256];

	if (check_cidrs(&p->allow_cidrs, "allowCidrs", err) < 0 ||
	    policy_egress_deny_list(&p->deny_cidrs, &denied, err) < 0)
		return -1;
	if (inbound_only) {
		allow = xstrdup("  icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit } accept\n");
		deny = xstrdup("  drop\n");
	} else {
		allow = daddr_rules(&p->allow_cidrs, "accept\n");
		deny = daddr_rules(&denied, "drop\n");
	}
	for (size_t i = 0; i < denied.len; i++)
		free(denied.items[i]);
	free(denied.items);
	egress_table_name(id, table, sizeof(table));
	/* One batch, applied atomically: the table made (if missing), dropped
	 * and made again, so that a second create under the same id (after a
	 * delete that could not reach the namespace) replaces, not stacks. */
	rules = xasprintf("table inet %s\n"
			  "delete table inet %s\n"
			  "table inet %s {\n"
			  " chain egress {\n"
			  "  type filter hook output priority 0; policy accept;\n"
			  "  oifname \"lo\" accept\n"
			  "  ct state established,related accept\n"
			  "%s%s"
			  " }\n"
			  "}\n",
			  table, table, table, allow, deny);
	if (nft_run(rules, "install egress rules in the container's network namespace", err) < 0)
		return -1;
	log_debug("policy: egress table %s:\n%s", table, rules);
	return 0;
}

#define EGRESS_PORTS_TEXT (POLICY_EGRESS_PORTS_MAX * 8)

/*
 * Egress by name (runtime/egress/): in the container's own namespace,
 * where the only route is to lo, every TCP connection to an egress port
 * and every DNS query, whatever address the program dialled, goes to the
 * proxy's address instead; connections to the namespace's own loopback
 * addresses are the container's.  Nothing else has anywhere to go.
 */
int netfilter_install_egress_redirect(const unsigned *ports, size_t n, const char *id,
				      struct error *err)
{
	char table[256], list[EGRESS_PORTS_TEXT] = "";
	_cleanup_free_ char *rules = NULL;
	size_t len = 0;

	for (size_t i = 0; i < n && len + 8 < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u", i ? ", " : "", ports[i]);
	egress_table_name(id, table, sizeof(table));
	rules = xasprintf("table ip %s {\n"
			  " chain out {\n"
			  "  type nat hook output priority -100; policy accept;\n"
			  "  meta l4proto { tcp, udp } th dport 53 ip daddr != " POLICY_EGRESS_ADDR
			  " dnat to " POLICY_EGRESS_ADDR ":53\n"
			  "  ip daddr != 127.0.0.0/8 tcp dport { %s } dnat to " POLICY_EGRESS_ADDR "\n"
			  " }\n"
			  "}\n",
			  table, list);
	if (nft_run(rules, "install the egress redirect in the container's network namespace",
		    err) < 0)
		return -1;
	log_debug("policy: egress redirect %s:\n%s", table, rules);
	return 0;
}

/* ---- a joined namespace: noted at create, cleaned at delete ---------------- */

#define EGRESS_NETNS_FILE "egress-netns"

int netfilter_note_joined_netns(const struct ctx_decided *d, const struct ctx_handles *h,
				struct error *err)
{
	const struct oci_namespace *net = spec_find_namespace(&d->spec, NS_NETWORK);
	_cleanup_close_ int out = -1;
	_cleanup_free_ char *rec = NULL;
	struct stat st;

	/* Here, before the init is spawned, because the init installs the
	 * rules and must not dlopen (nft_run). */
	if ((d->decision.egress_filter || d->decision.egress_proxy) && nft_load(err) < 0)
		return -1;
	if (!d->decision.egress_filter || !net || !net->path)
		return 0;
	/* The namespace the judge opened (ns_open_joined), not the path again. */
	if (h->ns_fd[NS_NETWORK] < 0 || fstat(h->ns_fd[NS_NETWORK], &st) < 0)
		return error_sys(err, "policy: stat network namespace %s", net->path);
	rec = xasprintf("%llu %llu\n%s", (unsigned long long)st.st_dev,
			(unsigned long long)st.st_ino, net->path);
	out = openat(h->state_dir_fd, EGRESS_NETNS_FILE,
		     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (out < 0 || write_all(out, rec, strlen(rec)) < 0)
		return error_sys(err, "policy: note the joined network namespace of %s", d->id);
	return 0;
}

struct noted_netns {
	unsigned long long dev, ino;
	char *path;
};

/* 1: noted, 0: no joined namespace noted, -1: error. */
static int read_noted(int state_dir_fd, struct noted_netns *n, struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int off = 0;

	if (read_file_at(state_dir_fd, EGRESS_NETNS_FILE, 8192, &buf, &len, err) < 0)
		return err->code == ENOENT ? 0 : -1;
	if (sscanf(buf, "%llu %llu\n%n", &n->dev, &n->ino, &off) != 2 || !off)
		return error_set(err, "policy: %s in the state dir is damaged", EGRESS_NETNS_FILE);
	n->path = xstrdup(buf + off);
	return 1;
}

int netfilter_check_joined_netns(const struct ctx_handles *h, const struct ctx_record *rec,
				 struct error *err)
{
	struct noted_netns n = { 0 };
	char path[64];
	struct stat st;
	int r = read_noted(h->state_dir_fd, &n, err);

	if (r <= 0)
		return r;
	snprintf(path, sizeof(path), "%d/ns/net", rec->pid);
	if (fstatat(h->host_proc_fd, path, &st, 0) < 0)
		r = error_sys(err, "policy: stat /proc/%s", path);
	else if (st.st_dev != n.dev || st.st_ino != n.ino)
		r = error_set(err, "policy: the container joined another network namespace than %s (changed during create)",
			      n.path);
	else
		r = 0;
	free(n.path);
	return r;
}

/* In a child entered into the namespace fd: the table gone (made first,
 * so that a table already gone is not an error). */
static int remove_table_in(int fd, const char *id, const char *path, struct error *err)
{
	char table[256];
	_cleanup_free_ char *cmd = NULL;
	int status;
	pid_t pid;

	egress_table_name(id, table, sizeof(table));
	cmd = xasprintf("table inet %s\ndelete table inet %s\n", table, table);
	if (nft_load(err) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return error_sys(err, "policy: fork to clean network namespace %s", path);
	if (pid == 0) {
		struct error e;
		if (setns(fd, CLONE_NEWNET) < 0) {
			error_sys(&e, "setns into %s", path);
			log_warn("policy: %s", e.msg);
			_exit(1);
		}
		if (nft_run(cmd, "remove the egress table", &e) < 0) {
			log_warn("%s", e.msg);
			_exit(1);
		}
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_sys(err, "policy: wait for the netns cleaner");
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return error_set(err, "policy: egress table %s not removed from network namespace %s",
				 table, path);
	log_debug("policy: egress table %s removed from %s", table, path);
	return 0;
}

int netfilter_remove_egress(int state_dir_fd, const char *id, struct error *err)
{
	struct noted_netns n = { 0 };
	_cleanup_close_ int fd = -1;
	struct stat st;
	int r = read_noted(state_dir_fd, &n, err);

	if (r <= 0)
		return r;
	/* delete is another process: the noted path opened again, and it
	 * must still be the noted namespace.  Gone, or now another one: the
	 * noted one is no longer reachable by it (a namespace with no name
	 * and no process is freed, its table with it). */
	if (judge_ns_open(n.path, CLONE_NEWNET, "net", &fd, err) < 0 || fstat(fd, &st) < 0 ||
	    st.st_dev != n.dev || st.st_ino != n.ino) {
		log_info("policy: network namespace %s is gone or replaced: no egress table to remove",
			 n.path);
		r = 0;
	} else {
		r = remove_table_in(fd, id, n.path, err);
	}
	free(n.path);
	return r;
}

/* ---- only lo --------------------------------------------------------------- */

/* RTM_DELLINK for one interface of the current network namespace. */
static int delete_link(int nl, unsigned index, const char *name, struct error *err)
{
	struct {
		struct nlmsghdr h;
		struct ifinfomsg i;
	} req = {
		.h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_DELLINK, .nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK, .nlmsg_seq = index },
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
