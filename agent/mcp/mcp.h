/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MCP_H
#define AGENTSBX_MCP_H

/*
 * The MCP room (agent/mcp/): `agentsbx mcp`, a Model Context Protocol
 * server on stdin/stdout (the stdio transport: one JSON-RPC 2.0 message per
 * line) for agent frameworks, exposing run_code, which runs a program in a
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

#include <stddef.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "../../runtime/container.h"

#define MCP_PROTOCOL_VERSION "2025-06-18" /* the latest we speak */
#define MCP_LINE_MAX (16u * 1024 * 1024)  /* bytes of one message */
#define MCP_WARM_MAX 16			  /* warm sandboxes per language */
#define MCP_CONCURRENT_DEFAULT 8	  /* sandboxes running calls at once */
#define MCP_CONCURRENT_MAX 256
#define MCP_SESSIONS_DEFAULT 16
#define MCP_SESSIONS_MAX 256
#define MCP_SESSION_IDLE_DEFAULT 600.0	   /* seconds */
#define MCP_FILE_LIMIT_DEFAULT (10u << 20) /* bytes */

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
	int warm;	     /* created, never-used sandboxes kept ready per language */
	int max_concurrent;  /* calls running at once; 0: MCP_CONCURRENT_DEFAULT */
	char *setup_errors;  /* images that could not be resolved, or NULL */
	int max_sessions;    /* open at once; 0: MCP_SESSIONS_DEFAULT */
	double session_idle; /* seconds before an unused session is closed */
	uint64_t file_limit; /* bytes of a file in or out of a session */
	const char *network; /* netns a session may ask to join; NULL: none */
};

/* Serve until stdin ends or a termination signal; 0 then. */
int mcp_serve(const struct global_opts *g, const struct mcp_opts *o, struct error *err);

#endif
