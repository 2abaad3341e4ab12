/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address ranges egress never reaches (denyCidrs), as the packet
 * filter and the egress proxy apply them: the list the policy names, each
 * range parsed (a bad one is an error naming it), plus every IPv6 form
 * through which the network would deliver a packet to a denied IPv4
 * address — NAT64 (64:ff9b::/96 with the IPv4 address in the last 32
 * bits, RFC 6052), 6to4 (2002:AABB:CCDD::/48, RFC 3056) — and the
 * translation prefixes whose embedding the host cannot read off the
 * address (NAT64's local-use 64:ff9b:1::/48, Teredo 2001::/32) and the
 * forms never legitimate on the wire (IPv4-mapped ::ffff:0:0/96 and
 * IPv4-compatible ::/96).  A range inside another is dropped, so the set
 * given to nftables has no overlapping intervals.  Pure data.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "policy.h"

struct cidr {
	bool v6;
	unsigned char addr[16];
	unsigned bits;
};

static const char *const always_v6[] = {
	"64:ff9b:1::/48", /* NAT64 local use: the embedding varies */
	"2001::/32",	  /* Teredo: the client's address is obfuscated */
	"::ffff:0:0/96",  /* IPv4-mapped */
	"::/96",	  /* IPv4-compatible (deprecated) */
	NULL,
};

static int parse_cidr(const char *s, struct cidr *c)
{
	char host[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long long bits;

	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	memset(c, 0, sizeof(*c));
	c->v6 = strchr(host, ':') != NULL;
	if (inet_pton(c->v6 ? AF_INET6 : AF_INET, host, c->addr) != 1)
		return -1;
	if (!slash) {
		c->bits = c->v6 ? 128 : 32;
		return 0;
	}
	if (parse_u64(slash + 1, &bits) < 0 || bits > (c->v6 ? 128u : 32u))
		return -1;
	c->bits = (unsigned)bits;
	return 0;
}

static bool prefix_equal(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return false;
	return !rest || ((a[whole] ^ b[whole]) & (unsigned char)(0xff << (8 - rest))) == 0;
}

/* outer holds inner. */
static bool cidr_holds(const struct cidr *outer, const struct cidr *inner)
{
	return outer->v6 == inner->v6 && outer->bits <= inner->bits &&
	       prefix_equal(outer->addr, inner->addr, outer->bits);
}

static char *cidr_text(const struct cidr *c)
{
	char host[INET6_ADDRSTRLEN];
	unsigned char masked[16] = { 0 };
	unsigned whole = c->bits / 8, rest = c->bits % 8;

	memcpy(masked, c->addr, whole);
	if (rest)
		masked[whole] = c->addr[whole] & (unsigned char)(0xff << (8 - rest));
	inet_ntop(c->v6 ? AF_INET6 : AF_INET, masked, host, sizeof(host));
	return xasprintf("%s/%u", host, c->bits);
}

/* The IPv6 ranges that reach the IPv4 range v4 through a translator. */
static size_t translations(const struct cidr *v4, struct cidr out[2])
{
	/* NAT64, well-known prefix: 64:ff9b::/96 + the 32 bits. */
	memset(&out[0], 0, sizeof(out[0]));
	out[0].v6 = true;
	out[0].addr[0] = 0x00;
	out[0].addr[1] = 0x64;
	out[0].addr[2] = 0xff;
	out[0].addr[3] = 0x9b;
	memcpy(out[0].addr + 12, v4->addr, 4);
	out[0].bits = 96 + v4->bits;
	/* 6to4: 2002: + the 32 bits + the site's 80. */
	memset(&out[1], 0, sizeof(out[1]));
	out[1].v6 = true;
	out[1].addr[0] = 0x20;
	out[1].addr[1] = 0x02;
	memcpy(out[1].addr + 2, v4->addr, 4);
	out[1].bits = 16 + v4->bits;
	return 2;
}

static void add(struct cidr **list, size_t *n, const struct cidr *c)
{
	*list = xrealloc(*list, (*n + 1) * sizeof(**list));
	(*list)[(*n)++] = *c;
}

int policy_egress_deny_list(const struct str_array *deny, struct str_array *out,
			    struct error *err)
{
	struct cidr *all = NULL, c, t[2];
	size_t n = 0;

	for (size_t i = 0; i < deny->len; i++) {
		if (parse_cidr(deny->items[i], &c) < 0) {
			free(all);
			return error_set(err, "policy: denyCidrs[%zu]: not an address range: \"%s\"",
					 i, deny->items[i]);
		}
		add(&all, &n, &c);
		if (!c.v6)
			for (size_t k = 0, m = translations(&c, t); k < m; k++)
				add(&all, &n, &t[k]);
	}
	if (deny->len)
		for (size_t i = 0; always_v6[i]; i++) {
			parse_cidr(always_v6[i], &c);
			add(&all, &n, &c);
		}
	for (size_t i = 0; i < n; i++) {
		bool inside = false;

		/* Held by another (the first of two equal ones is kept). */
		for (size_t j = 0; j < n && !inside; j++)
			inside = j != i && cidr_holds(&all[j], &all[i]) &&
				 (all[j].bits < all[i].bits || j < i);
		if (!inside) {
			_cleanup_free_ char *text = cidr_text(&all[i]);
			policy_strv_add(out, text);
		}
	}
	free(all);
	return 0;
}

bool policy_cidrs_hold(const struct str_array *cidrs, bool v6, const unsigned char *addr)
{
	struct cidr c, a = { .v6 = v6, .bits = v6 ? 128 : 32 };

	memcpy(a.addr, addr, v6 ? 16 : 4);
	for (size_t i = 0; i < cidrs->len; i++)
		if (parse_cidr(cidrs->items[i], &c) == 0 && cidr_holds(&c, &a))
			return true;
	return false;
}
