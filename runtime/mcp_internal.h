/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MCP_INTERNAL_H
#define AGENTSBX_MCP_INTERNAL_H

/* Shared by mcp.c (transport, JSON-RPC) and mcp_tools.c (the tool). */

#include <stdbool.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "mcp.h"
#include "sandbox.h"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603

struct mcp_pool {
	struct sandbox items[MCP_WARM_MAX];
	int n;
};

struct mcp_server {
	const struct global_opts *g;
	const struct mcp_opts *o;
	int sigfd;
	int stop_signal;  /* a termination signal arrived */
	bool output_gone; /* stdout is closed: stop */
	const char *image_for[SANDBOX_LANG_MAX]; /* NULL: language not offered */
	struct mcp_pool pools[SANDBOX_LANG_MAX];
	bool warm_off[SANDBOX_LANG_MAX]; /* making a warm one failed: stop */
};

/* A reply being built: {"jsonrpc":"2.0","id":ID, then the caller's
 * "result" or "error" member; mcp_reply_send() closes and writes it. */
yajl_gen mcp_reply_begin(yajl_val id);
void mcp_reply_send(struct mcp_server *s, yajl_gen g);
void mcp_reply_error(struct mcp_server *s, yajl_val id, int code,
		     const char *message, const char *data);

void mcp_gstr(yajl_gen g, const char *str);
void mcp_gkey_str(yajl_gen g, const char *key, const char *value);
void mcp_gkey_bool(yajl_gen g, const char *key, bool value);

/* mcp_tools.c */
int mcp_tools_init(struct mcp_server *s, struct error *err);
void mcp_tools_list(struct mcp_server *s, yajl_val id);
void mcp_tools_call(struct mcp_server *s, yajl_val id, yajl_val params);
/* Make one more warm sandbox if a pool is short; false if none is. */
bool mcp_pool_refill_one(struct mcp_server *s);
void mcp_pools_drain(struct mcp_server *s);

#endif
