/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The resolver a container with egress by name is given: it answers from
 * the list alone and never asks anyone else, so a name off the list leaves
 * no trace outside the host (no exfiltration by subdomain).  An allowed
 * name's A record is the proxy's address inside the container's network
 * namespace; AAAA gets no record (the proxy listens on IPv4); anything else
 * is NXDOMAIN, a malformed query FORMERR, a query we do not do (several
 * questions, an opcode other than QUERY) NOTIMP.  Pure functions over one
 * datagram (RFC 1035 4.1), every length checked.
 */
#include <ctype.h>
#include <string.h>

#include "egress.h"

#define DNS_HEADER 12
#define TYPE_A 1
#define TYPE_AAAA 28
#define CLASS_IN 1

/* QNAME at q[0..) into name (lowercase, dots), its wire length in *used.
 * No compression pointers in a question. */
static bool read_qname(const unsigned char *q, size_t left, char *name, size_t cap,
		       size_t *used)
{
	size_t at = 0, out = 0;

	for (;;) {
		unsigned n;

		if (at >= left)
			return false;
		n = q[at++];
		if (n == 0)
			break;
		if (n > 63 || at + n > left || out + n + 1 >= cap)
			return false;
		if (out)
			name[out++] = '.';
		for (unsigned i = 0; i < n; i++) {
			unsigned char c = q[at + i];
			if (!(isalnum(c) || c == '-' || c == '_'))
				return false;
			name[out++] = (char)tolower(c);
		}
		at += n;
	}
	name[out] = '\0';
	*used = at;
	return out > 0 && out <= EGRESS_NAME_MAX;
}

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* The header of an answer to the query hdr, with rcode and counts. */
static void answer_header(unsigned char *out, const unsigned char *hdr, unsigned rcode,
			  unsigned qd, unsigned an)
{
	memcpy(out, hdr, 2); /* id */
	/* QR, the query's opcode and RD, AA; RA 0 (we recurse for no one) */
	out[2] = (unsigned char)(0x80 | (hdr[2] & 0x79) | 0x04);
	out[3] = (unsigned char)(rcode & 0x0f);
	put16(out + 4, qd);
	put16(out + 6, an);
	put16(out + 8, 0);
	put16(out + 10, 0);
}

size_t egress_dns_answer(const unsigned char *q, size_t len, const struct policy_egress_names *names,
			 const unsigned char proxy_v4[4], unsigned char *out, size_t cap,
			 char *asked, size_t asked_cap)
{
	size_t qname_len, qlen, n;
	unsigned qtype, qclass;

	asked[0] = '\0';
	if (len < DNS_HEADER || cap < 512 || (q[2] & 0x80))
		return 0; /* too short to answer, or a response: dropped */
	if (((q[2] >> 3) & 0x0f) != 0 || get16(q + 4) != 1) {
		answer_header(out, q, 4 /* NOTIMP */, 0, 0);
		return DNS_HEADER;
	}
	if (!read_qname(q + DNS_HEADER, len - DNS_HEADER, asked, asked_cap, &qname_len) ||
	    len < DNS_HEADER + qname_len + 4) {
		asked[0] = '\0';
		answer_header(out, q, 1 /* FORMERR */, 0, 0);
		return DNS_HEADER;
	}
	qlen = qname_len + 4;
	qtype = get16(q + DNS_HEADER + qname_len);
	qclass = get16(q + DNS_HEADER + qname_len + 2);
	if (DNS_HEADER + qlen + 16 > cap)
		return 0;
	memcpy(out + DNS_HEADER, q + DNS_HEADER, qlen); /* the question, echoed */
	n = DNS_HEADER + qlen;
	if (qclass != CLASS_IN || policy_egress_name(names, asked) != EGRESS_ALLOWED) {
		answer_header(out, q, 3 /* NXDOMAIN */, 1, 0);
		return n;
	}
	if (qtype != TYPE_A) { /* AAAA and the rest: the name is there, no record */
		answer_header(out, q, 0, 1, 0);
		return n;
	}
	answer_header(out, q, 0, 1, 1);
	put16(out + n, 0xc000 | DNS_HEADER); /* the name: a pointer to the question's */
	put16(out + n + 2, TYPE_A);
	put16(out + n + 4, CLASS_IN);
	out[n + 6] = out[n + 7] = out[n + 8] = 0;
	out[n + 9] = 5; /* TTL 5 s: the list may change with the next container */
	put16(out + n + 10, 4);
	memcpy(out + n + 12, proxy_v4, 4);
	return n + 16;
}
