/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What name a connection asks for, read off its first bytes without
 * answering them: a TLS ClientHello's server_name (RFC 8446 4.1.2, RFC 6066
 * 3), or an HTTP/1.x request's Host header, absolute URI, or CONNECT
 * target.  Pure functions over a buffer the proxy filled (every length is
 * checked against what is there: the bytes come from the container).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"

/* ---- TLS ------------------------------------------------------------------------ */

struct reader {
	const unsigned char *p;
	size_t left;
};

static bool take(struct reader *r, size_t n, struct reader *out)
{
	if (r->left < n)
		return false;
	if (out)
		*out = (struct reader){ r->p, n };
	r->p += n;
	r->left -= n;
	return true;
}

static bool take_u8(struct reader *r, unsigned *v)
{
	if (r->left < 1)
		return false;
	*v = r->p[0];
	return take(r, 1, NULL);
}

static bool take_u16(struct reader *r, unsigned *v)
{
	if (r->left < 2)
		return false;
	*v = (unsigned)r->p[0] << 8 | r->p[1];
	return take(r, 2, NULL);
}

static bool take_u24(struct reader *r, unsigned *v)
{
	if (r->left < 3)
		return false;
	*v = (unsigned)r->p[0] << 16 | (unsigned)r->p[1] << 8 | r->p[2];
	return take(r, 3, NULL);
}

/* A vector with an n-byte length prefix. */
static bool take_vec(struct reader *r, int n, struct reader *out)
{
	unsigned len;

	if (!(n == 1 ? take_u8(r, &len) : n == 2 ? take_u16(r, &len) :
						   take_u24(r, &len)))
		return false;
	return take(r, len, out);
}

/* A host name as DNS has it: letters, digits, '-', '.', '_' (no NUL, no
 * '%', no space: nothing that could mean something else further on). */
static bool copy_name(const unsigned char *p, size_t n, char *out, size_t cap)
{
	if (n == 0 || n >= cap || n > EGRESS_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (!(isalnum(c) || c == '-' || c == '.' || c == '_'))
			return false;
		out[i] = (char)tolower(c);
	}
	out[n] = '\0';
	while (n && out[n - 1] == '.') /* the root's dot */
		out[--n] = '\0';
	return n > 0;
}

static enum sniff_result sni_of_extensions(struct reader ext, char *name, size_t cap)
{
	while (ext.left) {
		unsigned type;
		struct reader body, list, host;

		if (!take_u16(&ext, &type) || !take_vec(&ext, 2, &body))
			return SNIFF_BAD;
		if (type != 0) /* server_name */
			continue;
		if (!take_vec(&body, 2, &list))
			return SNIFF_BAD;
		while (list.left) {
			unsigned kind;

			if (!take_u8(&list, &kind) || !take_vec(&list, 2, &host))
				return SNIFF_BAD;
			if (kind == 0) /* host_name */
				return copy_name(host.p, host.left, name, cap) ? SNIFF_NAME : SNIFF_BAD;
		}
		return SNIFF_NO_NAME;
	}
	return SNIFF_NO_NAME;
}

enum sniff_result egress_sniff_tls(const unsigned char *buf, size_t len, char *name, size_t cap)
{
	struct reader r = { buf, len }, rec, hs, skip;
	unsigned type, version, hs_type, rec_len, hs_len;

	if (len < 5)
		return SNIFF_MORE;
	if (!take_u8(&r, &type) || type != 22 || !take_u16(&r, &version) ||
	    (version >> 8) != 3 || !take_u16(&r, &rec_len) || rec_len > 16384)
		return SNIFF_BAD; /* not a TLS handshake record */
	if (!take(&r, rec_len, &rec))
		return SNIFF_MORE;
	/* The ClientHello must be whole in the first record (it is, in every
	 * client that matters: a split hello is refused, not reassembled). */
	if (!take_u8(&rec, &hs_type) || hs_type != 1 || !take_u24(&rec, &hs_len) ||
	    !take(&rec, hs_len, &hs))
		return SNIFF_BAD;
	if (!take(&hs, 2 + 32, NULL) || /* legacy_version, random */
	    !take_vec(&hs, 1, &skip) || /* legacy_session_id */
	    !take_vec(&hs, 2, &skip) || /* cipher_suites */
	    !take_vec(&hs, 1, &skip))	/* legacy_compression_methods */
		return SNIFF_BAD;
	if (!hs.left)
		return SNIFF_NO_NAME; /* no extensions at all */
	if (!take_vec(&hs, 2, &skip))
		return SNIFF_BAD;
	return sni_of_extensions(skip, name, cap);
}

/* ---- HTTP --------------------------------------------------------------------------- */

/* host[:port] (or [v6]:port) into name, port (0: none given). */
static bool split_authority(const char *a, size_t n, char *name, size_t cap, unsigned *port)
{
	const char *colon;
	size_t host_len = n;

	*port = 0;
	if (n && a[0] == '[')
		return false; /* an address, not a name: never allowed by name */
	colon = memchr(a, ':', n);
	if (colon) {
		char digits[8];
		size_t dn = n - (size_t)(colon - a) - 1;
		char *end;
		unsigned long v;

		host_len = (size_t)(colon - a);
		if (dn == 0 || dn >= sizeof(digits))
			return false;
		memcpy(digits, colon + 1, dn);
		digits[dn] = '\0';
		v = strtoul(digits, &end, 10);
		if (*end || v == 0 || v > 65535)
			return false;
		*port = (unsigned)v;
	}
	return copy_name((const unsigned char *)a, host_len, name, cap);
}

static const char *find_crlf(const char *p, const char *end)
{
	for (; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n')
			return p;
	return NULL;
}

/* The Host header's value in the header block [p, end). */
static bool host_header(const char *p, const char *end, const char **v, size_t *n)
{
	while (p < end) {
		const char *eol = find_crlf(p, end);

		if (!eol || eol == p)
			return false;
		if (eol - p > 5 && !strncasecmp(p, "host:", 5)) {
			const char *s = p + 5, *e = eol;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			*v = s;
			*n = (size_t)(e - s);
			return true;
		}
		p = eol + 2;
	}
	return false;
}

enum sniff_result egress_sniff_http(const unsigned char *buf, size_t len,
				    struct http_target *t)
{
	const char *s = (const char *)buf, *end, *line_end, *sp1, *sp2;
	const char *hdr_end = NULL;
	size_t method_len;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i + 3 < len; i++)
		if (!memcmp(s + i, "\r\n\r\n", 4)) {
			hdr_end = s + i;
			break;
		}
	if (!hdr_end)
		return len >= EGRESS_PEEK_MAX ? SNIFF_BAD : SNIFF_MORE;
	end = hdr_end + 2; /* the last header line's CRLF included */
	line_end = find_crlf(s, end);
	sp1 = line_end ? memchr(s, ' ', (size_t)(line_end - s)) : NULL;
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
	if (!sp2 || (size_t)(line_end - sp2 - 1) < 8 || strncmp(sp2 + 1, "HTTP/1.", 7))
		return SNIFF_BAD;
	method_len = (size_t)(sp1 - s);
	if (method_len == 0 || method_len >= sizeof(t->method))
		return SNIFF_BAD;
	for (size_t i = 0; i < method_len; i++)
		if (!isupper((unsigned char)s[i]))
			return SNIFF_BAD;
	memcpy(t->method, s, method_len);
	t->header_len = (size_t)(hdr_end - s) + 4;
	if (!strcmp(t->method, "CONNECT")) {
		t->connect = true;
		if (!split_authority(sp1 + 1, (size_t)(sp2 - sp1 - 1), t->name, sizeof(t->name),
				     &t->port) ||
		    !t->port)
			return SNIFF_BAD;
		return SNIFF_NAME;
	}
	if (!strncmp(sp1 + 1, "http://", 7)) {
		/* absolute-URI (a client told to use a proxy) */
		const char *auth = sp1 + 8, *slash = memchr(auth, '/', (size_t)(sp2 - auth));
		const char *a_end = slash ? slash : sp2;

		t->absolute = true;
		t->path_off = (size_t)(a_end - s);
		t->uri_off = (size_t)(sp1 + 1 - s);
		return split_authority(auth, (size_t)(a_end - auth), t->name, sizeof(t->name),
				       &t->port) ?
			       SNIFF_NAME :
			       SNIFF_BAD;
	}
	{
		const char *v;
		size_t n;

		if (sp1[1] != '/' || !host_header(line_end + 2, end, &v, &n))
			return SNIFF_BAD;
		return split_authority(v, n, t->name, sizeof(t->name), &t->port) ? SNIFF_NAME :
										   SNIFF_BAD;
	}
}
