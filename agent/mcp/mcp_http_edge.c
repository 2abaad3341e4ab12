/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP edge's pure checks and its sockets: listen addresses (IP
 * literals only: a name would be resolved by whatever DNS says today),
 * which of them are loopback, the Host and Origin a request may carry
 * (the MCP specification's DNS-rebinding protection: a web page whose own
 * name now resolves to 127.0.0.1 still sends its own name), the bearer
 * token, media types, and new session ids.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "mcp_http_private.h"

#define LISTEN_BACKLOG 256

/* ---- addresses -------------------------------------------------------------- */

static int parse_port(const char *p, in_port_t *port)
{
	unsigned long long n;

	if (parse_u64(p, &n) < 0 || n > 65535)
		return -1;
	*port = htons((uint16_t)n);
	return 0;
}

static int listen_unix(const char *path, struct http_listen *l, struct error *err)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&l->addr;

	if (path[0] != '/' || strlen(path) >= sizeof(un->sun_path))
		return error_set(err, "mcp: --listen unix:%s: an absolute path of at most %zu bytes",
				 path, sizeof(un->sun_path) - 1);
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, path);
	l->family = AF_UNIX;
	l->addr_len = sizeof(*un);
	l->loopback = true;
	snprintf(l->host, sizeof(l->host), "localhost");
	return 0;
}

static bool v4_loopback(const struct in_addr *a)
{
	return (ntohl(a->s_addr) >> 24) == 127;
}

int http_listen_parse(const char *spec, struct http_listen *l, struct error *err)
{
	char host[64];
	const char *colon, *port;
	in_port_t p;

	memset(l, 0, sizeof(*l));
	l->spec = spec;
	if (str_has_prefix(spec, "unix:"))
		return listen_unix(spec + 5, l, err);
	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&l->addr;

		if (!end || end[1] != ':' || (size_t)(end - spec - 1) >= sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(end - spec - 1), spec + 1);
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1 || parse_port(end + 2, &p) < 0)
			goto bad;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = p;
		l->family = AF_INET6;
		l->addr_len = sizeof(*a6);
		l->loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		snprintf(l->host, sizeof(l->host), "[%s]", host);
		return 0;
	}
	colon = strrchr(spec, ':');
	port = colon ? colon + 1 : spec;
	snprintf(host, sizeof(host), "%.*s", colon ? (int)(colon - spec) : 0, spec);
	if (!colon || !strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)&l->addr;

		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1 || parse_port(port, &p) < 0)
			goto bad;
		a4->sin_family = AF_INET;
		a4->sin_port = p;
		l->family = AF_INET;
		l->addr_len = sizeof(*a4);
		l->loopback = v4_loopback(&a4->sin_addr);
		snprintf(l->host, sizeof(l->host), "%s", host);
	}
	return 0;
bad:
	return error_set(err,
			 "mcp: --listen %s: expected IP:PORT (127.0.0.1:8080), [IPv6]:PORT "
			 "([::1]:8080), PORT, or unix:/PATH (an address, not a host name)",
			 spec);
}

/* A unix socket left by a server that is gone is replaced; anything else
 * at the path is not touched. */
static int clear_stale_socket(const char *path, struct error *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : error_sys(err, "mcp: --listen unix:%s: lstat", path);
	if (!S_ISSOCK(st.st_mode))
		return error_set(err, "mcp: --listen unix:%s: exists and is not a socket", path);
	if (unlink(path) < 0)
		return error_sys(err, "mcp: --listen unix:%s: remove the old socket", path);
	return 0;
}

int http_listen_open(struct http_listen *l, struct error *err)
{
	int fd, one = 1;
	socklen_t len = l->addr_len;

	if (l->family == AF_UNIX &&
	    clear_stale_socket(((struct sockaddr_un *)&l->addr)->sun_path, err) < 0)
		return -1;
	fd = socket(l->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return error_sys(err, "mcp: --listen %s: socket", l->spec);
	if (l->family != AF_UNIX && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail_sys;
	if (l->family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		goto fail_sys;
	if (bind(fd, (struct sockaddr *)&l->addr, l->addr_len) < 0) {
		error_sys(err, "mcp: --listen %s: bind", l->spec);
		close(fd);
		return -1;
	}
	if (l->family == AF_UNIX && chmod(((struct sockaddr_un *)&l->addr)->sun_path, 0600) < 0)
		goto fail_sys;
	if (listen(fd, LISTEN_BACKLOG) < 0 || getsockname(fd, (struct sockaddr *)&l->addr, &len) < 0)
		goto fail_sys;
	return fd;
fail_sys:
	error_sys(err, "mcp: --listen %s: set up the socket", l->spec);
	close(fd);
	return -1;
}

void http_listen_url(const struct http_listen *l, char *out, size_t n)
{
	unsigned port = 0;

	if (l->family == AF_UNIX) {
		snprintf(out, n, "unix:%s (path /mcp)", ((const struct sockaddr_un *)&l->addr)->sun_path);
		return;
	}
	port = ntohs(l->family == AF_INET ? ((const struct sockaddr_in *)&l->addr)->sin_port :
					    ((const struct sockaddr_in6 *)&l->addr)->sin6_port);
	snprintf(out, n, "%s://%s:%u/mcp", l->tls ? "https" : "http", l->host, port);
}

/* ---- Host and Origin ---------------------------------------------------------- */

/* host[:port] without the port; [v6] keeps its brackets.  false if odd. */
static bool host_part(const char *in, size_t in_len, char *out, size_t n)
{
	size_t len = in_len;
	const char *colon;

	if (!in_len || in_len >= n)
		return false;
	if (in[0] == '[') {
		const char *end = memchr(in, ']', in_len);
		if (!end)
			return false;
		len = (size_t)(end - in) + 1;
		if (len < in_len && in[len] != ':')
			return false;
	} else if ((colon = memchr(in, ':', in_len))) {
		len = (size_t)(colon - in);
	}
	memcpy(out, in, len);
	out[len] = 0;
	return len > 0;
}

static bool is_local_name(const char *h)
{
	return !strcasecmp(h, "localhost") || !strcmp(h, "[::1]") ||
	       (str_has_prefix(h, "127.") && strspn(h, "0123456789.") == strlen(h));
}

static bool name_allowed(const struct mcp_http_opts *o, const struct http_listen *l,
			 const char *h)
{
	if (!strcasecmp(h, l->host) || (l->loopback && is_local_name(h)))
		return true;
	for (size_t i = 0; i < o->n_allow_hosts; i++)
		if (!strcasecmp(h, o->allow_hosts[i]))
			return true;
	return false;
}

bool http_host_allowed(const struct mcp_http_opts *o, const struct http_listen *l,
		       const char *host)
{
	char h[256];

	if (l->family == AF_UNIX)
		return true; /* no browser reaches a unix socket */
	return host && host_part(host, strlen(host), h, sizeof(h)) && name_allowed(o, l, h);
}

bool http_origin_allowed(const struct mcp_http_opts *o, const struct http_listen *l,
			 const char *origin)
{
	const char *rest;
	char h[256];

	if (!origin)
		return true;
	for (size_t i = 0; i < o->n_allow_origins; i++)
		if (!strcasecmp(origin, o->allow_origins[i]))
			return true;
	if (str_has_prefix(origin, "http://"))
		rest = origin + 7;
	else if (str_has_prefix(origin, "https://"))
		rest = origin + 8;
	else
		return false; /* "null", file://, ... */
	return host_part(rest, strlen(rest), h, sizeof(h)) && name_allowed(o, l, h);
}

const char *http_bearer(const char *authorization, size_t *len)
{
	if (!authorization || strncasecmp(authorization, "Bearer ", 7))
		return NULL;
	authorization += 7;
	authorization += strspn(authorization, " ");
	*len = strcspn(authorization, " \t");
	return *len ? authorization : NULL;
}

/* One media range of a header list, parameters ignored, compared whole. */
bool http_accepts(const char *accept, const char *type)
{
	size_t n = strlen(type);

	if (!accept)
		return false;
	for (const char *p = accept; *p;) {
		size_t len;

		p += strspn(p, " \t,");
		len = strcspn(p, ";,");
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if ((len == n && !strncasecmp(p, type, n)) || (len == 3 && !strncmp(p, "*/*", 3)))
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

bool http_is_json(const char *content_type)
{
	size_t len;

	if (!content_type)
		return false;
	len = strcspn(content_type, "; \t");
	return len == 16 && !strncasecmp(content_type, "application/json", 16);
}

void http_new_session_id(char out[HTTP_SESSION_ID_LEN + 1])
{
	unsigned char rnd[HTTP_SESSION_ID_LEN / 2];
	size_t got = 0;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);
		if (n > 0)
			got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(out + 2 * i, 3, "%02x", rnd[i]);
}
