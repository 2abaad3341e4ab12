/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_EGRESS_H
#define AGENTSBX_EGRESS_H

/*
 * Egress by name (the policy's egress.allowDomains): a container may reach
 * the names the policy lists and nothing else.  Its network namespace
 * routes only to its own loopback; a proxy of the runtime's listens there
 * (sockets made inside that namespace, served from the host's), answers
 * DNS from the list, reads the name each connection asks for (TLS SNI, the
 * HTTP Host, CONNECT, an absolute URI), resolves it on the host side
 * (never an address the container gave), refuses what denyCidrs holds,
 * and splices the bytes.  Every connection is a line in the audit log.
 * This room uses lib/ and the policy's pure data only.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/error.h"
#include "../../spec/policy/policy.h"

#define EGRESS_NAME_MAX POLICY_EGRESS_NAME_MAX
#define EGRESS_PEEK_MAX 16384 /* bytes read before the name must be known */
#define EGRESS_PORTS_MAX POLICY_EGRESS_PORTS_MAX
/* The proxy's address in the container's namespace (on its lo), and the
 * port of its HTTP proxy (HTTP_PROXY/HTTPS_PROXY). */
#define EGRESS_ADDR POLICY_EGRESS_ADDR
#define EGRESS_PROXY_PORT POLICY_EGRESS_PROXY_PORT

/* What a container's proxy serves (from the policy in force, narrowed by
 * the container's own request). */
struct egress_config {
	const char *id;		   /* the container, for the audit log */
	const char *policy_source; /* for the audit log */
	struct policy_egress_names names;
	unsigned ports[EGRESS_PORTS_MAX]; /* egress.ports (default 80, 443) */
	size_t n_ports;
	struct str_array hosts; /* egress.hosts: "name=address" pins */
	struct str_array deny;	/* denyCidrs as applied (policy_egress_deny_list) */
	struct str_array allow; /* allowCidrs */
	int audit_fd;		/* the audit log, O_APPEND; -1: none */
};

/* The proxy's sockets, made inside the container's network namespace on
 * EGRESS_ADDR: DNS (UDP), the HTTP proxy port, and one per egress port. */
struct egress_listeners {
	int dns;
	int proxy;
	int port_fd[EGRESS_PORTS_MAX];
	unsigned port[EGRESS_PORTS_MAX];
	size_t n;
};

/* proxy.c: serve until SIGTERM (or SIGKILL); the fds are the caller's
 * until then.  Returns 0, or -1 with err when it could not start. */
int egress_serve(const struct egress_config *c, const struct egress_listeners *l,
		 struct error *err);

/* sniff.c: the name a connection's first bytes ask for. */
enum sniff_result {
	SNIFF_MORE,    /* not enough bytes yet */
	SNIFF_NAME,    /* the name (and for HTTP, the target) found */
	SNIFF_NO_NAME, /* a ClientHello without server_name */
	SNIFF_BAD,     /* not what this port speaks */
};
enum sniff_result egress_sniff_tls(const unsigned char *buf, size_t len, char *name, size_t cap);

struct http_target {
	char name[EGRESS_NAME_MAX + 1];
	unsigned port; /* 0: none given */
	char method[16];
	bool connect;	   /* CONNECT name:port */
	bool absolute;	   /* GET http://name[:port]/path: a proxy request */
	size_t uri_off;	   /* absolute: where the URI starts in the request */
	size_t path_off;   /* absolute: where its path starts */
	size_t header_len; /* the request line and headers, CRLFCRLF included */
};
enum sniff_result egress_sniff_http(const unsigned char *buf, size_t len,
				    struct http_target *t);

/* dns.c: the answer to one query datagram (0: none to send); asked gets the
 * name asked for ("" if unreadable). */
size_t egress_dns_answer(const unsigned char *q, size_t len, const struct policy_egress_names *names,
			 const unsigned char proxy_v4[4], unsigned char *out, size_t cap,
			 char *asked, size_t asked_cap);

#endif
