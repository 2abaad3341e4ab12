/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON-RPC 2.0 for MCP, whatever the transport: each message, loaded with
 * the same hardened loader as config.json (strict UTF-8, bounded depth and
 * size, no duplicate keys) by the transport or by mcp_dispatch_text(), has
 * its envelope checked, and initialize, ping, tools/list and tools/call are
 * dispatched; the reply goes to the connection the message came on (stdout,
 * or the response of its HTTP POST).  Notifications get no reply (but
 * notifications/cancelled kills the run it names, of the same peer only);
 * batches are refused (MCP 2025-06-18 and later have none).  tools/call
 * runs in a thread of its own (mcp_calls.c); everything else is answered at
 * once by the caller's thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "mcp_private.h"

const char *const mcp_protocol_versions[] = {
	MCP_PROTOCOL_VERSION,
	"2025-06-18",
	"2025-03-26",
	"2024-11-05",
	NULL,
};

bool mcp_protocol_supported(const char *version)
{
	for (const char *const *p = mcp_protocol_versions; *p; p++)
		if (!strcmp(*p, version))
			return true;
	return false;
}

/* ---- methods ---------------------------------------------------------------- */

static const char *negotiate_version(yajl_val params)
{
	yajl_val v = params ? jmember(params, "protocolVersion") : NULL;

	for (const char *const *p = mcp_protocol_versions; v && YAJL_IS_STRING(v) && *p; p++)
		if (!strcmp(*p, v->u.string))
			return *p;
	return MCP_PROTOCOL_VERSION;
}

static void gen_capabilities(struct mcp_server *s, yajl_gen g)
{
	jgen_str(g, "capabilities");
	yajl_gen_map_open(g);
	jgen_str(g, "tools");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "listChanged", false);
	yajl_gen_map_close(g);
	if (s->o->conformance_fixtures)
		mcp_fixtures_capabilities(s, g);
	yajl_gen_map_close(g);
}

static void handle_initialize(struct mcp_conn *conn, const struct mcp_id *id, yajl_val params)
{
	const char *version = negotiate_version(params);
	yajl_gen g = mcp_reply_begin(id);

	snprintf(conn->peer->version, sizeof(conn->peer->version), "%s", version);
	jgen_str(g, "result");
	yajl_gen_map_open(g);
	jgen_key_str(g, "protocolVersion", version);
	gen_capabilities(conn->s, g);
	jgen_str(g, "serverInfo");
	yajl_gen_map_open(g);
	jgen_key_str(g, "name", "agentsbx");
	jgen_key_str(g, "title", "agentsbx code sandbox");
	jgen_key_str(g, "version", AGENTSBX_VERSION);
	yajl_gen_map_close(g);
	jgen_key_str(g, "instructions",
		     "run_code runs a program in a new, isolated sandbox: no network, a "
		     "read-only filesystem but for /tmp, limited memory, CPU and time. "
		     "Nothing persists between calls: pass everything a program needs "
		     "in its code or stdin.  Calls run concurrently; a cancelled call's "
		     "program is killed.  A program that fails (an exit code, an "
		     "exception, a timeout, out of memory) is a result whose fields say "
		     "so; isError means the sandbox could not run it.");
	yajl_gen_map_close(g);
	mcp_reply_send(conn, g);
}

static void handle_ping(struct mcp_conn *conn, const struct mcp_id *id)
{
	yajl_gen g = mcp_reply_begin(id);

	jgen_str(g, "result");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	mcp_reply_send(conn, g);
}

static void tools_call(struct mcp_conn *conn, const struct mcp_id *id, yajl_val params)
{
	struct call_args a;
	struct mcp_id token;

	if (conn->s->o->conformance_fixtures && mcp_fixtures_call(conn, id, params))
		return;
	if (mcp_tools_parse_call(conn, id, params, &a, &token) == 0)
		mcp_calls_start(conn, id, &a, &token);
}

static void dispatch_method(struct mcp_conn *conn, const struct mcp_id *id, const char *method,
			    yajl_val params)
{
	if (!strcmp(method, "initialize"))
		handle_initialize(conn, id, params);
	else if (!strcmp(method, "ping"))
		handle_ping(conn, id);
	else if (!strcmp(method, "tools/list"))
		mcp_tools_list(conn, id,
			       conn->s->o->conformance_fixtures ? mcp_fixtures_list_tools : NULL);
	else if (!strcmp(method, "tools/call"))
		tools_call(conn, id, params);
	else if (!conn->s->o->conformance_fixtures ||
		 !mcp_fixtures_method(conn, id, method, params))
		mcp_reply_error(conn, id, RPC_METHOD_NOT_FOUND, "Method not found", method);
}

/* notifications/cancelled {requestId, reason?}: kill that run. */
static void dispatch_notification(struct mcp_conn *conn, const char *method, yajl_val params)
{
	struct mcp_id rid;

	if (strcmp(method, "notifications/cancelled") || !params || !YAJL_IS_OBJECT(params))
		return;
	mcp_id_from(&rid, jmember(params, "requestId"));
	if (rid.text)
		mcp_calls_cancel(conn, &rid);
	mcp_id_free(&rid);
}

/* ---- one message ------------------------------------------------------------ */

static bool valid_id(yajl_val id)
{
	return id && (YAJL_IS_STRING(id) || YAJL_IS_NUMBER(id));
}

/* obj.key even when it is null (jmember() takes null for absent). */
static yajl_val member_or_null(yajl_val obj, const char *key, bool *present)
{
	*present = false;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (!strcmp(obj->u.object.keys[i], key)) {
			*present = true;
			return obj->u.object.values[i];
		}
	return NULL;
}

struct rpc_error {
	int code;
	const char *message;
	const char *data;
};

static int rpc_fail(struct rpc_error *e, int code, const char *data)
{
	e->code = code;
	e->message = code == RPC_INVALID_PARAMS ? "Invalid params" : "Invalid Request";
	e->data = data;
	return -1;
}

/* The envelope of one message.  0: a request to dispatch; 1: nothing to
 * answer (a response to us); 2: a notification; -1: answer with *e (to
 * *id once it is known to be valid, else to null). */
static int check_envelope(yajl_val msg, struct jctx *c, yajl_val *id, yajl_val *method,
			  yajl_val *params, struct rpc_error *e)
{
	yajl_val version, maybe_id;
	bool has_id;

	*id = NULL;
	if (YAJL_IS_ARRAY(msg))
		return rpc_fail(e, RPC_INVALID_REQUEST, "batch requests are not supported");
	if (!YAJL_IS_OBJECT(msg))
		return rpc_fail(e, RPC_INVALID_REQUEST, "a message is a JSON object");
	if (jcheck_object(c, msg) < 0)
		return rpc_fail(e, RPC_INVALID_REQUEST, c->err->msg);
	maybe_id = member_or_null(msg, "id", &has_id);
	if (has_id && !valid_id(maybe_id))
		return rpc_fail(e, RPC_INVALID_REQUEST, "id: must be a string or a number");
	*id = maybe_id;
	version = jmember(msg, "jsonrpc");
	if (!version || !YAJL_IS_STRING(version) || strcmp(version->u.string, "2.0"))
		return rpc_fail(e, RPC_INVALID_REQUEST, "jsonrpc: must be \"2.0\"");
	*method = jmember(msg, "method");
	if (!*method && (jmember(msg, "result") || jmember(msg, "error")))
		return 1;
	if (!*method || !YAJL_IS_STRING(*method))
		return rpc_fail(e, RPC_INVALID_REQUEST, "method: must be a string");
	*params = jmember(msg, "params");
	if (!*id)
		return 2; /* notifications/initialized, cancelled, ...: nothing to say */
	if (*params && !YAJL_IS_OBJECT(*params))
		return rpc_fail(e, RPC_INVALID_PARAMS, "params: must be an object");
	if (*params && jcheck_object(c, *params) < 0)
		return rpc_fail(e, RPC_INVALID_PARAMS, c->err->msg);
	return 0;
}

void mcp_dispatch(struct mcp_conn *conn, yajl_val msg)
{
	yajl_val id, method = NULL, params = NULL;
	struct rpc_error re;
	struct mcp_id mid;
	struct error err;
	struct jctx c;
	int r;

	jctx_init(&c, "message", &err);
	r = check_envelope(msg, &c, &id, &method, &params, &re);
	mcp_id_from(&mid, id);
	if (r < 0)
		mcp_reply_error(conn, &mid, re.code, re.message, re.data);
	else if (r == 0)
		dispatch_method(conn, &mid, method->u.string, params);
	else if (r == 2)
		dispatch_notification(conn, method->u.string, params);
	else if (r == 1 && mid.text)
		mcp_calls_answer(conn, msg);
	mcp_id_free(&mid);
}

void mcp_dispatch_text(struct mcp_conn *conn, const char *text, size_t len)
{
	yajl_val msg = NULL;
	struct error e;

	if (spec_json_load(text, len, "message", &msg, &e) < 0) {
		mcp_reply_error(conn, NULL, RPC_PARSE_ERROR, "Parse error", e.msg);
		return;
	}
	mcp_dispatch(conn, msg);
	yajl_tree_free(msg);
}
