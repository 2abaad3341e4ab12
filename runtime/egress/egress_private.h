/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_EGRESS_PRIVATE_H
#define AGENTSBX_EGRESS_PRIVATE_H

/* The egress room's own: the proxy's configuration and steps. */
#include <netinet/in.h>
#include <sys/socket.h>

#include "egress.h"

struct egress_route {
	struct sockaddr_storage addr; /* with the port */
	socklen_t len;
	char text[INET6_ADDRSTRLEN];
};

/* resolve.c: name on the host side; -1 with why filled when refused.  A
 * pinned name (egress.hosts) needs no lookup: egress_resolve_pinned is
 * that part alone, 1 when the name is not pinned. */
int egress_resolve_pinned(const struct egress_config *c, const char *name, unsigned port,
			  struct egress_route *out, char *why, size_t why_cap);
int egress_resolve(const struct egress_config *c, const char *name, unsigned port,
		   struct egress_route *out, char *why, size_t why_cap);

/* audit.c: one JSON line per connection or refused lookup, rate-bounded
 * (a container cannot fill the host's disk through its log). */
struct egress_audit_line {
	const char *kind; /* "connection", "dns" */
	const char *name; /* asked for */
	unsigned port;
	const char *address; /* resolved, or NULL */
	bool allowed;
	const char *why; /* refused: the rule and the field that would allow it */
	uint64_t bytes_out, bytes_in;
};
void egress_audit(const struct egress_config *c, const struct egress_audit_line *l);

#endif
