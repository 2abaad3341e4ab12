/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where an allowed name is, found on the host's side: the operator's pins
 * (egress.hosts, "name=address") first, else the host's resolver.  The
 * container's word for the address is never asked: a name that once
 * resolved to an allowed place and now resolves to a denied one (DNS
 * rebinding) is refused now.  An address in denyCidrs (as applied, with
 * the translated IPv6 forms) is refused unless allowCidrs holds it.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include "../../spec/policy/policy.h"
#include "egress_private.h"

static bool address_denied(const struct egress_config *c, const struct sockaddr *sa)
{
	const unsigned char *a;
	bool v6 = sa->sa_family == AF_INET6;

	a = v6 ? ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr :
		 (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
	if (policy_cidrs_hold(&c->allow, v6, a))
		return false;
	return policy_cidrs_hold(&c->deny, v6, a);
}

static void set_port(struct sockaddr_storage *ss, unsigned port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

static void text_of(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	const void *a = ss->ss_family == AF_INET6 ?
				(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
				(const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, out, (socklen_t)cap))
		snprintf(out, cap, "?");
}

/* The pin for name: "name=address" (the first that names it). */
static bool pinned(const struct egress_config *c, const char *name, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < c->hosts.len; i++) {
		const char *h = c->hosts.items[i];
		struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

		if (strncasecmp(h, name, n) || h[n] != '=')
			continue;
		memset(ss, 0, sizeof(*ss));
		if (inet_pton(AF_INET, h + n + 1, &v4->sin_addr) == 1) {
			v4->sin_family = AF_INET;
			*len = sizeof(*v4);
			return true;
		}
		if (inet_pton(AF_INET6, h + n + 1, &v6->sin6_addr) == 1) {
			v6->sin6_family = AF_INET6;
			*len = sizeof(*v6);
			return true;
		}
	}
	return false;
}

int egress_resolve_pinned(const struct egress_config *c, const char *name, unsigned port,
			  struct egress_route *out, char *why, size_t why_cap)
{
	memset(out, 0, sizeof(*out));
	if (!pinned(c, name, &out->addr, &out->len))
		return 1;
	text_of(&out->addr, out->text, sizeof(out->text));
	if (address_denied(c, (struct sockaddr *)&out->addr)) {
		snprintf(why, why_cap, "%s is pinned to %s, which denyCidrs holds", name, out->text);
		return -1;
	}
	set_port(&out->addr, port);
	return 0;
}

int egress_resolve(const struct egress_config *c, const char *name, unsigned port,
		   struct egress_route *out, char *why, size_t why_cap)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *res = NULL;
	bool any_denied = false;
	int r = egress_resolve_pinned(c, name, port, out, why, why_cap);

	if (r <= 0)
		return r;
	r = getaddrinfo(name, NULL, &hints, &res);
	if (r != 0) {
		snprintf(why, why_cap, "%s does not resolve on the host: %s", name, gai_strerror(r));
		return -1;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (address_denied(c, ai->ai_addr)) {
			any_denied = true;
			memcpy(&out->addr, ai->ai_addr, ai->ai_addrlen);
			text_of(&out->addr, out->text, sizeof(out->text));
			continue;
		}
		memcpy(&out->addr, ai->ai_addr, ai->ai_addrlen);
		out->len = ai->ai_addrlen;
		text_of(&out->addr, out->text, sizeof(out->text));
		set_port(&out->addr, port);
		freeaddrinfo(res);
		return 0;
	}
	freeaddrinfo(res);
	if (any_denied)
		snprintf(why, why_cap, "%s resolves to %s, which denyCidrs holds", name, out->text);
	else
		snprintf(why, why_cap, "%s has no IPv4 or IPv6 address", name);
	return -1;
}
