/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MCP_PRIVATE_H
#define AGENTSBX_MCP_PRIVATE_H

/*
 * The MCP room's own, shared by agent/mcp/'s files only (cmd/ includes
 * mcp.h, the room's interface), each calling only those below it:
 * mcp.c (the main loop: reading, dispatch) -> mcp_calls.c (the calls in
 * flight: threads, the concurrency limit, cancellation) -> mcp_tools.c (the
 * tool list, run_code, warm pools) -> mcp_sessions.c (the session tools) ->
 * mcp_tool_common.c (schema pieces, arguments, results) -> mcp_progress.c
 * (progress notifications) -> mcp_wire.c (ids, one line per message).
 *
 * Threads: the main thread reads stdin and answers everything but
 * tools/call at once; each tools/call gets a thread of its own, which
 * waits for one of --max-concurrent slots, runs, replies; one more thread
 * keeps the warm pools full.  Everything mutable is under mcp_server.lock
 * but stdout, which has its own lock (one whole line per message).
 */

#include <pthread.h>
#include <stdbool.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../../lib/jsongen.h"
#include "mcp.h"
#include "../sandbox/sandbox.h"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603

/* A JSON-RPC id or a progress token: a string, or a number kept as its
 * JSON text.  text NULL: null. */
struct mcp_id {
	char *text;
	bool is_string;
};

struct mcp_pool {
	struct sandbox items[MCP_WARM_MAX];
	int n;
};

enum mcp_tool {
	TOOL_RUN_CODE,
	TOOL_SESSION_CREATE,
	TOOL_SESSION_RUN,
	TOOL_SESSION_WRITE_FILE,
	TOOL_SESSION_READ_FILE,
	TOOL_SESSION_LIST_FILES,
	TOOL_SESSION_CLOSE,
	TOOL_MAX,
};

/* The arguments of a call (owned copies). */
struct call_args {
	enum mcp_tool tool;
	enum sandbox_lang lang;
	char *code;
	size_t code_len;
	char *stdin_data; /* NULL: none */
	size_t stdin_len;
	double timeout;
	char *session_id; /* the session tools */
	char *path;
	char *content; /* write_file: decoded */
	size_t content_len;
	bool base64; /* read_file: encoding */
	/* session_create: its own limits (0: the server's) and network */
	uint64_t memory, cpu_quota;
	int64_t pids;
	bool network;
};

/* A session (mcp_sessions.c): used by one call at a time (lock), freed
 * when closed and no call holds a reference. */
struct mcp_session {
	struct mcp_session *next;
	char id[48];
	struct sandbox_session ss;
	pthread_mutex_t lock; /* one operation at a time */
	int refs;	      /* under the server's lock */
	bool closed;
	long long last_used_ns;
};

/* One tools/call in flight: queued for a slot, or running. */
struct mcp_call {
	struct mcp_call *next;
	struct mcp_server *s;
	struct mcp_id id;
	struct mcp_id progress_token; /* text NULL: no progress wanted */
	struct call_args a;
	int cancel_fd;		/* eventfd: written to kill the run */
	bool cancelled;		/* by the client: no reply at all */
	bool replied;		/* the reply is out (or going): too late to cancel */
	struct mcp_call *qnext; /* waiting for a slot: in mcp_server.queue */
	bool queued;
	/* progress, touched by the call's thread only */
	unsigned progress;
	long long last_progress_ns;
	char *pending[3]; /* output of streams 1 and 2 not yet notified */
	size_t pending_len[3];
	unsigned long long pending_dropped[3];
};

struct mcp_server {
	const struct global_opts *g;
	const struct mcp_opts *o;
	int sigfd;
	const char *image_for[SANDBOX_LANG_MAX]; /* NULL: language not offered */
	char *setup_error;			 /* no language at all: why (each call says it) */

	pthread_mutex_t out_lock; /* stdout */
	bool output_gone;	  /* stdout is closed: stop */

	pthread_mutex_t lock; /* all below */
	pthread_cond_t cond;  /* slots, cancellations, pools, the end */
	int stop_signal;      /* a termination signal arrived: kill all */
	bool stopping;	      /* no more work for the pool thread */
	int running;	      /* calls holding a slot */
	int threads;	      /* call threads not finished */
	struct mcp_call *calls;
	struct mcp_call *queue; /* runs waiting for a slot, in arrival order */
	struct mcp_pool pools[SANDBOX_LANG_MAX];
	bool warm_off[SANDBOX_LANG_MAX]; /* making a warm one failed: stop */
	pthread_t pool_thread;
	bool pool_thread_started;
	struct mcp_session *sessions;
	int n_sessions;
};

/* ---- mcp_calls.c ------------------------------------------------------------- */

/* Start a thread for a checked call (takes *a and *token). */
void mcp_calls_start(struct mcp_server *s, const struct mcp_id *id, struct call_args *a,
		     struct mcp_id *token);
/* notifications/cancelled for requestId. */
void mcp_calls_cancel(struct mcp_server *s, const struct mcp_id *request_id);
/* Kill every run (a termination signal, or stdout gone). */
void mcp_calls_kill_all(struct mcp_server *s);
/* Wait for every call thread to end; kills them all if a signal comes. */
void mcp_calls_wait_all(struct mcp_server *s);

/* ---- mcp_tools.c ------------------------------------------------------------- */

int mcp_tools_init(struct mcp_server *s, struct error *err);
void mcp_tools_list(struct mcp_server *s, const struct mcp_id *id);
/* Check tools/call's params; on a problem an error reply is sent and -1
 * returned.  *a and *token are the caller's to free. */
int mcp_tools_parse_call(struct mcp_server *s, const struct mcp_id *id, yajl_val params,
			 struct call_args *a, struct mcp_id *token);
void mcp_call_args_free(struct call_args *a);
/* In a call's thread: get a sandbox, run, reply (unless cancelled). */
void mcp_tools_run(struct mcp_call *c);
/* The warm pools' thread and its end. */
int mcp_pool_start(struct mcp_server *s, struct error *err);
void mcp_pools_stop(struct mcp_server *s);

/* ---- mcp_sessions.c ---------------------------------------------------------- */

/* The session tools' entries of tools/list. */
void mcp_sessions_list_tools(struct mcp_server *s, yajl_gen g);
/* The tool's own arguments, after the common checks. */
int mcp_sessions_parse(struct mcp_server *s, const struct mcp_id *id, yajl_val args,
		       struct call_args *a);
void mcp_sessions_run(struct mcp_call *c);
/* Close sessions idle for longer than --session-idle; all with all. */
void mcp_sessions_expire(struct mcp_server *s, bool all);

/* ---- mcp_tool_common.c ------------------------------------------------------- */

/* The sandbox input of a run of call c (code, stdin, limits, progress). */
void mcp_call_input(struct mcp_call *c, struct sandbox_input *in);
void mcp_reply_run_result(struct mcp_call *c, const struct sandbox_result *res);
void mcp_reply_tool_error(struct mcp_call *c, const char *msg);
/* A tool result: text, and structuredContent made by gen (may be NULL). */
void mcp_reply_tool_result(struct mcp_call *c, const char *text,
			   void (*gen)(yajl_gen g, void *arg), void *arg);
void mcp_sandbox_config_for(const struct mcp_server *s, enum sandbox_lang lang,
			    struct sandbox_config *cfg);
void mcp_gen_prop(yajl_gen g, const char *name, const char *type, const char *desc);
void mcp_gen_language_prop(const struct mcp_server *s, yajl_gen g);
void mcp_gen_timeout_prop(const struct mcp_server *s, yajl_gen g);
int mcp_parse_language(struct mcp_server *s, const struct mcp_id *id, yajl_val args,
		       struct call_args *a, bool required);
int mcp_parse_timeout(struct mcp_server *s, const struct mcp_id *id, yajl_val args,
		      struct call_args *a);
int mcp_bad_args(struct mcp_server *s, const struct mcp_id *id, const char *msg);

/* ---- mcp_progress.c ---------------------------------------------------------- */

/* Whether the reply may go out (not cancelled); marks it replied. */
bool mcp_call_may_reply(struct mcp_call *c);
/* Progress for c (nothing without a token): a notice, and the output. */
void mcp_progress_note(struct mcp_call *c, const char *message);
void mcp_progress_output(void *call, int stream, const char *buf, size_t n);
void mcp_progress_tick(void *call);
void mcp_progress_flush(struct mcp_call *c);
/* Before the response, after notifications: see PROGRESS_SETTLE_US. */
void mcp_progress_settle(struct mcp_call *c);

/* ---- mcp_wire.c -------------------------------------------------------------- */

void mcp_id_from(struct mcp_id *out, yajl_val v);
void mcp_id_free(struct mcp_id *id);
bool mcp_id_equal(const struct mcp_id *a, const struct mcp_id *b);
void mcp_id_gen(yajl_gen g, const struct mcp_id *id);

/* A reply being built: {"jsonrpc":"2.0","id":ID, then the caller's
 * "result" or "error" member; mcp_reply_send() closes and writes it. */
yajl_gen mcp_reply_begin(const struct mcp_id *id);
/* Close the outer object of g and write it as one line. */
void mcp_reply_send(struct mcp_server *s, yajl_gen g);
/* message is the JSON-RPC message; with data it becomes "message: data"
 * (what SDKs show) and data is kept in error.data too. */
void mcp_reply_error(struct mcp_server *s, const struct mcp_id *id, int code,
		     const char *message, const char *data);

#endif
