/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One Streamable HTTP request (MCP 2025-11-25, and the 2025-03-26 and
 * 2025-06-18 clients it still takes), judged from its method, path,
 * headers and body, with no socket in sight (libmicrohttpd's glue is
 * mcp_http.c; the fuzz target drives these directly):
 *
 *   GET /health         200 {"status":"ok"}: for load balancers, no token
 *   POST /mcp           one JSON-RPC message: 202 for a notification or a
 *                       response, application/json for what is answered at
 *                       once, text/event-stream for tools/call (progress
 *                       and the result on one stream)
 *   DELETE /mcp         the end of the Mcp-Session-Id
 *   GET /mcp            405: this server sends nothing unasked
 *
 * Refused, in this order, before a byte of the body is read: another path
 * (404), a Host that is not this server or an Origin that is not allowed
 * (403: DNS rebinding), no or a wrong bearer token when there are tenants
 * (401 with WWW-Authenticate), a body over --max-body by its
 * Content-Length (413), not JSON (415), an Accept without both
 * application/json and text/event-stream (406), an unknown
 * MCP-Protocol-Version (400), an unknown session, or another tenant's
 * (404, never 403: its existence is not told); then a request without a
 * session that is not initialize (400).  A run over the server's queue is
 * 429 with Retry-After.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "mcp_http_private.h"

#define MCP_PATH "/mcp"
#define HEALTH_PATH "/health"

static const char *header(const struct http_req *r, const char *name)
{
	return r->in.header(r->in.arg, name);
}

/* A body of {"jsonrpc":"2.0","error":{code,message},"id":null}. */
static int answer(struct http_out *out, int status, int code, const char *msg)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_key_str(g, "jsonrpc", "2.0");
	jgen_str(g, "error");
	yajl_gen_map_open(g);
	jgen_key_int(g, "code", code);
	jgen_key_str(g, "message", msg);
	yajl_gen_map_close(g);
	jgen_str(g, "id");
	yajl_gen_null(g);
	yajl_gen_map_close(g);
	out->status = status;
	out->content_type = "application/json";
	out->body = jgen_finish(g, &out->len);
	return 1;
}

static int answer_health(struct mcp_server *s, struct http_out *out)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_key_str(g, "status", s->http->stopping ? "stopping" : "ok");
	jgen_key_str(g, "version", AGENTSBX_VERSION);
	yajl_gen_map_close(g);
	out->status = s->http->stopping ? 503 : 200;
	out->content_type = "application/json";
	out->body = jgen_finish(g, &out->len);
	return 1;
}

/* The tenant the bearer token names, into r->tenant; without tenants
 * (loopback only) everyone is the one unnamed tenant. */
static int authenticate(struct mcp_server *s, struct http_req *r, struct http_out *out)
{
	const char *auth = header(r, "Authorization"), *token;
	size_t len = 0;

	r->tenant[0] = 0;
	if (!s->tenants)
		return 0;
	token = http_bearer(auth, &len);
	if (token && mcp_tenants_auth(s, token, len, r->tenant))
		return 0;
	out->www_authenticate = token ? "Bearer realm=\"agentsbx\", error=\"invalid_token\"" :
					"Bearer realm=\"agentsbx\"";
	return answer(out, 401, -32001,
		      token ? "Unauthorized: the bearer token is not a tenant's" :
			      "Unauthorized: Authorization: Bearer TOKEN is required");
}

static int check_edge(struct mcp_server *s, struct http_req *r, struct http_out *out)
{
	const struct mcp_http_opts *o = &s->o->http;

	if (!http_host_allowed(o, r->in.listen, header(r, "Host")))
		return answer(out, 403, -32000, "Forbidden: the Host header does not name this server");
	if (!http_origin_allowed(o, r->in.listen, header(r, "Origin")))
		return answer(out, 403, -32000, "Forbidden: the Origin is not allowed");
	return 0;
}

static int check_post_head(struct mcp_server *s, struct http_req *r, struct http_out *out)
{
	const char *cl = header(r, "Content-Length"), *accept = header(r, "Accept");
	size_t max = s->o->http.max_body ? s->o->http.max_body : MCP_HTTP_BODY_DEFAULT;
	unsigned long long n;

	if (cl && (parse_u64(cl, &n) < 0 || n > max))
		return answer(out, 413, -32600, "Payload Too Large: over --max-body");
	if (!http_is_json(header(r, "Content-Type")))
		return answer(out, 415, -32600, "Unsupported Media Type: Content-Type must be application/json");
	if (!http_accepts(accept, "application/json") || !http_accepts(accept, "text/event-stream"))
		return answer(out, 406, -32600,
			      "Not Acceptable: Accept must list application/json and text/event-stream");
	return 0;
}

/* MCP-Protocol-Version and Mcp-Session-Id. */
static int check_session(struct mcp_server *s, struct http_req *r, struct http_out *out)
{
	const char *version = header(r, "MCP-Protocol-Version");
	const char *sid = header(r, "Mcp-Session-Id");

	if (version && !mcp_protocol_supported(version))
		return answer(out, 400, -32600, "Bad Request: unsupported MCP-Protocol-Version");
	if (!sid)
		return 0;
	r->peer = http_peer_get(s, sid, r->tenant);
	if (!r->peer)
		return answer(out, 404, -32001, "Session not found");
	return 0;
}

int http_request_head(struct mcp_server *s, struct http_req *r, struct http_out *out)
{
	const char *m = r->in.method;

	memset(out, 0, sizeof(*out));
	if (!strcmp(r->in.path, HEALTH_PATH) && (!strcmp(m, "GET") || !strcmp(m, "HEAD")))
		return answer_health(s, out);
	if (strcmp(r->in.path, MCP_PATH))
		return answer(out, 404, -32000, "Not Found: the MCP endpoint is /mcp");
	if (check_edge(s, r, out) || authenticate(s, r, out))
		return 1;
	if (s->http->stopping)
		return answer(out, 503, -32000, "Service Unavailable: the server is stopping");
	r->post = !strcmp(m, "POST");
	if (!r->post && strcmp(m, "DELETE") && strcmp(m, "GET")) {
		out->allow = "POST, DELETE";
		return answer(out, 405, -32000, "Method Not Allowed");
	}
	if (r->post && check_post_head(s, r, out))
		return 1;
	if (check_session(s, r, out))
		return 1;
	if (!r->post && !r->peer)
		return answer(out, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
	if (!strcmp(m, "GET")) {
		/* No stream of its own: every message answers a POST. */
		out->allow = "POST, DELETE";
		return answer(out, 405, -32000, "Method Not Allowed: this server sends nothing unasked");
	}
	if (!r->post) {
		http_peer_close(s, r->peer);
		out->status = 200;
		return 1;
	}
	return 0;
}

bool http_request_data(struct mcp_server *s, struct http_req *r, const char *data, size_t n)
{
	size_t max = s->o->http.max_body ? s->o->http.max_body : MCP_HTTP_BODY_DEFAULT;

	if (r->too_big || n > max - r->len) {
		r->too_big = true;
		return false;
	}
	if (!n)
		return true;
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2 > max ? max : (r->len + n) * 2;
		r->body = xrealloc(r->body, r->cap + 1);
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	return true;
}

static bool is_initialize(yajl_val msg)
{
	yajl_val m = YAJL_IS_OBJECT(msg) ? jmember(msg, "method") : NULL;

	return m && YAJL_IS_STRING(m) && !strcmp(m->u.string, "initialize");
}

static bool is_request(yajl_val msg)
{
	return YAJL_IS_OBJECT(msg) && jmember(msg, "method") && jmember(msg, "id");
}

/* The dispatch over, what the stream holds becomes the answer. */
static void settle(struct mcp_server *s, struct http_stream *st, void *mhd, bool request,
		   struct http_out *out)
{
	char *msg = NULL;
	size_t len = 0;
	bool busy;

	if (http_stream_settle(st, mhd, &msg, &len, &busy)) {
		out->status = 200;
		out->content_type = "text/event-stream";
		out->stream = st;
		return;
	}
	(void)s;
	if (!msg) {
		out->status = 202;
		return;
	}
	out->status = busy ? 429 : request ? 200 :
					     400;
	out->retry_after = busy;
	out->content_type = "application/json";
	out->body = msg;
	out->len = len;
}

void http_request_body(struct mcp_server *s, struct http_req *r, void *mhd, struct http_out *out)
{
	struct http_peer *fresh = NULL;
	struct http_stream *st;
	yajl_val msg = NULL;
	struct error e;
	bool init;

	memset(out, 0, sizeof(*out));
	if (r->too_big) {
		answer(out, 413, -32600, "Payload Too Large: over --max-body");
		return;
	}
	if (spec_json_load(r->body ? r->body : "", r->len, "message", &msg, &e) < 0) {
		_cleanup_free_ char *m = xasprintf("Parse error: %s", e.msg);
		answer(out, 400, RPC_PARSE_ERROR, m);
		return;
	}
	init = is_initialize(msg);
	if (init && r->peer) {
		answer(out, 400, -32600, "Bad Request: this session is initialized already");
	} else if (!init && !r->peer) {
		answer(out, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
	} else {
		if (init)
			r->peer = fresh = http_peer_new(s, r->tenant);
		st = http_stream_new(s, r->peer);
		mcp_dispatch(http_stream_conn(st), msg);
		settle(s, st, mhd, is_request(msg), out);
		/* initialize answered: the session exists from now on. */
		if (fresh && fresh->p.version[0] && out->status == 200) {
			if (http_peer_register(s, fresh))
				memcpy(out->session_id, fresh->id, sizeof(out->session_id));
			else {
				http_out_free(out);
				answer(out, 429, RPC_SERVER_BUSY,
				       "Too Many Requests: every HTTP session is busy");
				out->retry_after = true;
			}
		}
	}
	yajl_tree_free(msg);
}

void http_request_free(struct mcp_server *s, struct http_req *r)
{
	http_peer_put(s, r->peer);
	r->peer = NULL;
	free(r->body);
	r->body = NULL;
}

void http_out_free(struct http_out *out)
{
	free(out->body);
	out->body = NULL;
}
