/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MCP_HTTP_PRIVATE_H
#define AGENTSBX_MCP_HTTP_PRIVATE_H

/*
 * The Streamable HTTP transport's own (agent/mcp/mcp_http*.c), in layers:
 * mcp_http.c (libmicrohttpd, loaded with dlopen: listeners, TLS, the
 * callbacks, signals and the end) -> mcp_http_request.c (one request
 * judged and answered from its method, path, headers and body, with no
 * socket: what the fuzz target drives) -> mcp_http_stream.c (the response
 * of a POST: one JSON message, or an event stream the calls write to) and
 * mcp_http_edge.c (listen addresses, Host and Origin, bearer tokens,
 * sessions' ids).
 */

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "mcp_private.h"

#define HTTP_SESSION_ID_LEN 32		    /* hex characters of an Mcp-Session-Id */
#define HTTP_STREAM_BUFFERED_MAX (4u << 20) /* notifications kept for a slow reader */

/* ---- mcp_http_edge.c ------------------------------------------------------- */

struct http_listen {
	const char *spec; /* as given */
	int family;	  /* AF_INET, AF_INET6, AF_UNIX */
	struct sockaddr_storage addr;
	socklen_t addr_len;
	char host[72]; /* the address as a Host header names it: 127.0.0.1, [::1] */
	bool loopback; /* loopback, or a unix socket */
	bool tls;
};

/* "127.0.0.1:PORT", "[::1]:PORT", "localhost:PORT", "PORT", "unix:/PATH". */
int http_listen_parse(const char *spec, struct http_listen *l, struct error *err);
/* Bound and listening (a unix socket: a stale one replaced, mode 0600);
 * the port a PORT of 0 got is in l->addr after. */
int http_listen_open(struct http_listen *l, struct error *err);
/* "http://127.0.0.1:8080/mcp" */
void http_listen_url(const struct http_listen *l, char *out, size_t n);

/* The Host header names this server (DNS rebinding: a page that made its
 * own name resolve to us sends its own name). */
bool http_host_allowed(const struct mcp_http_opts *o, const struct http_listen *l,
		       const char *host);
/* An Origin header (absent: not a browser) is this server or one allowed. */
bool http_origin_allowed(const struct mcp_http_opts *o, const struct http_listen *l,
			 const char *origin);
/* "Bearer TOKEN": the token (not NUL-ended), or NULL. */
const char *http_bearer(const char *authorization, size_t *len);
/* The media type is in an Accept header (or it takes * / *). */
bool http_accepts(const char *accept, const char *type);
/* A Content-Type of application/json (parameters allowed). */
bool http_is_json(const char *content_type);
/* A new session id: HTTP_SESSION_ID_LEN hex characters of getrandom. */
void http_new_session_id(char out[HTTP_SESSION_ID_LEN + 1]);

/* ---- mcp_http_stream.c -------------------------------------------------------- */

/* An HTTP session (Mcp-Session-Id): a peer of the dispatcher's. */
struct http_peer {
	struct mcp_peer p; /* first: calls see &p */
	struct http_peer *next;
	char id[HTTP_SESSION_ID_LEN + 1];
	int refs;    /* requests and streams using it */
	bool closed; /* DELETE, expired or evicted: no more requests */
	bool listed; /* in the registry (initialize answered) */
	long long last_used_ns;
};

/* The HTTP transport's state (mcp_server.http). */
struct mcp_http {
	pthread_mutex_t lock; /* the peers */
	struct http_peer *peers;
	int n_peers;
	bool stopping;
	/* libmicrohttpd's resume, for the streams (NULL in the fuzz target) */
	void (*resume)(void *mhd_connection);
	void (*suspend)(void *mhd_connection);
	struct http_stream *streams; /* the event streams being read (keep-alives) */
};

struct http_stream;

struct http_stream *http_stream_new(struct mcp_server *s, struct http_peer *peer);
struct mcp_conn *http_stream_conn(struct http_stream *st);
/* The request's own reference, after the dispatch: 0: complete (*msg the
 * first message or NULL, the caller's to free; the stream is gone);
 * 1: calls still hold it: it is answered as an event stream, read by
 * http_stream_read() on mhd_connection. */
int http_stream_settle(struct http_stream *st, void *mhd_connection, char **msg, size_t *len,
		       bool *busy);
/* Every event stream silent for --sse-keepalive seconds gets a comment line: a
 * proxy or balancer with an idle timeout must not cut a long quiet run. */
void http_streams_keepalive(struct mcp_server *s);
/* libmicrohttpd's content reader and its end. */
ssize_t http_stream_read(void *st, uint64_t pos, char *buf, size_t max);
void http_stream_reader_done(void *st);

struct http_peer *http_peer_new(struct mcp_server *s, const char *tenant);
/* The tenant's session by id, held; NULL if closed, unknown or another's. */
struct http_peer *http_peer_get(struct mcp_server *s, const char *id, const char *tenant);
void http_peer_put(struct mcp_server *s, struct http_peer *hp);
/* Into the registry (over --max-http-sessions: the longest unused idle one
 * is closed, or false if every one is busy). */
bool http_peer_register(struct mcp_server *s, struct http_peer *hp);
/* DELETE: out of the registry, its calls cancelled. */
void http_peer_close(struct mcp_server *s, struct http_peer *hp);
/* Sessions unused for --session-idle seconds (all with all) closed. */
void http_peers_expire(struct mcp_server *s, bool all);

/* ---- mcp_http_request.c -------------------------------------------------------- */

struct http_in {
	const char *method, *path;
	const char *(*header)(void *arg, const char *name); /* case-insensitive */
	void *arg;
	const struct http_listen *listen;
};

struct http_out {
	int status;
	const char *content_type; /* NULL: no body */
	char *body;		  /* owned */
	size_t len;
	char session_id[HTTP_SESSION_ID_LEN + 1]; /* Mcp-Session-Id to send, or "" */
	const char *www_authenticate;
	const char *allow;
	bool retry_after;
	struct http_stream *stream; /* an event stream: the body comes from it */
};

/* One request's state between its head and its body. */
struct http_req {
	struct http_in in;
	char tenant[MCP_TENANT_NAME_MAX];
	struct http_peer *peer; /* its Mcp-Session-Id's, held */
	bool post;
	char *body;
	size_t len, cap;
	bool too_big;
};

/* The head: 0 to read the body, 1 answered (*out). */
int http_request_head(struct mcp_server *s, struct http_req *r, struct http_out *out);
/* Some of the body; false once it is over --max-body. */
bool http_request_data(struct mcp_server *s, struct http_req *r, const char *data, size_t n);
/* The whole body is in: answer. */
void http_request_body(struct mcp_server *s, struct http_req *r, void *mhd_connection,
		       struct http_out *out);
void http_request_free(struct mcp_server *s, struct http_req *r);
void http_out_free(struct http_out *out);

#endif
