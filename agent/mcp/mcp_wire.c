/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MCP server's wire: JSON-RPC ids (a string or a number, kept as its
 * text) and the messages, each handed whole to the connection it answers
 * (struct mcp_conn: a line on stdout, or an HTTP response).  Everything
 * that replies (the dispatcher, the calls, the tools) writes through these.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "mcp_private.h"

void mcp_id_from(struct mcp_id *out, yajl_val v)
{
	out->text = NULL;
	out->is_string = false;
	if (v && YAJL_IS_STRING(v)) {
		out->text = xstrdup(v->u.string);
		out->is_string = true;
	} else if (v && YAJL_IS_NUMBER(v)) {
		out->text = xstrdup(v->u.number.r);
	}
}

void mcp_id_free(struct mcp_id *id)
{
	free(id->text);
	id->text = NULL;
}

bool mcp_id_equal(const struct mcp_id *a, const struct mcp_id *b)
{
	return a->text && b->text && a->is_string == b->is_string && !strcmp(a->text, b->text);
}

void mcp_id_gen(yajl_gen g, const struct mcp_id *id)
{
	if (id && id->text && id->is_string)
		jgen_str(g, id->text);
	else if (id && id->text) /* the loader's own text of a number */
		yajl_gen_number(g, id->text, strlen(id->text));
	else
		yajl_gen_null(g);
}

yajl_gen mcp_reply_begin(const struct mcp_id *id)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_key_str(g, "jsonrpc", "2.0");
	jgen_str(g, "id");
	mcp_id_gen(g, id);
	return g;
}

yajl_gen mcp_notification_begin(const char *method)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_key_str(g, "jsonrpc", "2.0");
	jgen_key_str(g, "method", method);
	return g;
}

void mcp_reply_send(struct mcp_conn *conn, yajl_gen g)
{
	_cleanup_free_ char *msg = NULL;
	size_t len;

	yajl_gen_map_close(g);
	msg = jgen_finish(g, &len);
	conn->ops->send(conn, msg, len);
}

void mcp_reply_error(struct mcp_conn *conn, const struct mcp_id *id, int code,
		     const char *message, const char *data)
{
	_cleanup_free_ char *full = data ? xasprintf("%s: %s", message, data) : NULL;
	yajl_gen g = mcp_reply_begin(id);

	jgen_str(g, "error");
	yajl_gen_map_open(g);
	jgen_str(g, "code");
	yajl_gen_integer(g, code);
	jgen_key_str(g, "message", full ? full : message);
	if (data)
		jgen_key_str(g, "data", data);
	yajl_gen_map_close(g);
	mcp_reply_send(conn, g);
}
