/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MCP_H
#define AGENTSBX_MCP_H

/*
 * The MCP room (agent/mcp/): `agentsbx mcp`, a Model Context Protocol
 * server on stdin/stdout (the stdio transport: one JSON-RPC 2.0 message per
 * line) or, with --listen, over Streamable HTTP for remote agents (tenants
 * with bearer tokens and quotas, TLS, a hardened edge), for agent
 * frameworks, exposing run_code, which runs a program in a
 * one-call sandbox (agent/sandbox/sandbox.h) and returns the sandbox result,
 * and the session tools (session_create, session_run, session_write_file,
 * session_read_file, session_list_files, session_close) on the sandbox's
 * kept workspaces.  Calls run concurrently (up to max_concurrent sandboxes,
 * the rest queue), can be cancelled and report progress; malformed input
 * gets a JSON-RPC error, never a crash, and a sandbox that cannot be set up
 * is a tool error, never the server's exit.  This header is the room's
 * whole interface (cmd/mcp.c its only user); mcp_private.h is the room's
 * own.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "../../runtime/container.h"

#define MCP_PROTOCOL_VERSION "2025-11-25" /* the latest we speak */
#define MCP_LINE_MAX (16u * 1024 * 1024)  /* bytes of one message */
#define MCP_WARM_MAX 16			  /* warm sandboxes per language */
#define MCP_CONCURRENT_DEFAULT 8	  /* sandboxes running calls at once */
#define MCP_CONCURRENT_MAX 256
#define MCP_SESSIONS_DEFAULT 16
#define MCP_SESSIONS_MAX 256
#define MCP_SESSION_IDLE_DEFAULT 600.0	   /* seconds */
#define MCP_FILE_LIMIT_DEFAULT (10u << 20) /* bytes */

#define MCP_LISTEN_MAX 8
#define MCP_HTTP_BODY_DEFAULT (16u * 1024 * 1024) /* bytes of one POST */
#define MCP_HTTP_CONNECTIONS_DEFAULT 1024
#define MCP_HTTP_IDLE_DEFAULT 30       /* seconds a connection may say nothing */
#define MCP_HTTP_QUEUED_DEFAULT 64     /* runs waiting for a slot, all tenants */
#define MCP_HTTP_SESSIONS_DEFAULT 1024 /* Mcp-Session-Ids at once */
#define MCP_HTTP_KEEPALIVE_DEFAULT 15  /* seconds an event stream may be silent */
#define MCP_HTTP_REQUEST_DEFAULT 30    /* seconds to send a request's head, and its body */

/* --listen and what goes with it (agent/mcp/mcp_http*.c). */
struct mcp_http_opts {
	const char *listen[MCP_LISTEN_MAX]; /* 127.0.0.1:PORT, [::1]:PORT, unix:/PATH */
	size_t n_listen;
	const char *tls_cert, *tls_key;		 /* PEM files: HTTPS on every listener */
	bool insecure_listen;			 /* plain HTTP on a non-loopback address */
	const char *tokens_file;		 /* tenants; NULL: none (loopback only) */
	const char *allow_hosts[MCP_LISTEN_MAX]; /* more Host names than the listeners' */
	size_t n_allow_hosts;
	const char *allow_origins[MCP_LISTEN_MAX]; /* Origins allowed (scheme://host[:port]) */
	size_t n_allow_origins;
	size_t max_body;	  /* bytes of a request body */
	unsigned max_connections; /* per listener */
	unsigned max_per_ip;	  /* connections from one address; 0: no bound */
	unsigned idle_timeout;	  /* seconds */
	int max_queued;		  /* runs waiting for a slot; over it: 429 */
	int max_http_sessions;	  /* Mcp-Session-Ids open */
	unsigned sse_keepalive;	  /* seconds of silence before ": keepalive" */
	unsigned request_timeout; /* seconds a request's head (and its body) may take */
};

struct mcp_opts {
	char **images; /* image directories (absolute), in order of preference */
	size_t n_images;
	double timeout;	    /* default per call, seconds */
	double max_timeout; /* what a call may ask for at most */
	uint64_t memory;    /* 0: the policy's */
	uint64_t cpu_quota;
	int64_t pids;
	uint64_t disk;
	size_t output_limit;
	int warm;		   /* created, never-used sandboxes kept ready per language */
	int max_concurrent;	   /* calls running at once; 0: MCP_CONCURRENT_DEFAULT */
	char *setup_errors;	   /* images that could not be resolved, or NULL */
	int max_sessions;	   /* open at once; 0: MCP_SESSIONS_DEFAULT */
	double session_idle;	   /* seconds before an unused session is closed */
	uint64_t file_limit;	   /* bytes of a file in or out of a session */
	const char *network;	   /* netns a session may ask to join; NULL: none */
	bool conformance_fixtures; /* the conformance suite's test tools too */
	struct mcp_http_opts http;
};

/* Serve until stdin ends (stdio) or a termination signal; 0 then.  Over
 * HTTP, SIGHUP reloads the token file. */
int mcp_serve(const struct global_opts *g, const struct mcp_opts *o, struct error *err);

#endif
