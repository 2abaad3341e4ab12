/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MCP_PRIVATE_H
#define AGENTSBX_MCP_PRIVATE_H

/*
 * The MCP room's own, shared by agent/mcp/'s files only (cmd/ includes
 * mcp.h, the room's interface), each calling only those below it:
 * mcp.c (mcp_serve: set-up, the transport, the end) -> mcp_stdio.c (the
 * stdio transport: lines on stdin and stdout) and mcp_http.c (Streamable
 * HTTP through libmicrohttpd: listeners, TLS, signals) -> mcp_http_request.c
 * (one HTTP request judged and answered, without sockets) ->
 * mcp_http_stream.c (a POST's response: JSON or an event stream) and
 * mcp_http_edge.c (addresses, Host and Origin, tokens in headers) ->
 * mcp_dispatch.c (JSON-RPC: the envelope, the methods; both transports
 * feed it) -> mcp_fixtures.c (the conformance suite's fixtures) ->
 * mcp_calls.c (the calls in flight: threads, the concurrency limit and the
 * tenants' quotas, cancellation) -> mcp_tools.c (the tool list, run_code,
 * warm pools) -> mcp_sessions.c (the session tools) -> mcp_tool_common.c
 * (schema pieces, arguments, results) -> mcp_progress.c (progress
 * notifications) -> mcp_tenants.c (the token file, quotas) -> mcp_wire.c
 * (ids, messages handed to a connection).
 *
 * A message is answered on the connection it came on (struct mcp_conn):
 * stdout for stdio, the response of its POST for HTTP.  Threads: the
 * transport's thread reads and answers everything but tools/call at once;
 * each tools/call gets a thread of its own, which waits for one of
 * --max-concurrent slots, runs, replies; a thread per warm pool
 * (agent/sandbox/sandbox_pool.c) keeps it full.  Everything mutable is under mcp_server.lock but each
 * connection's output, which has its own lock.
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
#define RPC_QUOTA_EXCEEDED -32000 /* a tenant's quota: the message names it */
#define RPC_SERVER_BUSY -32001	  /* a server-wide bound: HTTP answers 429 */

#define MCP_TENANT_NAME_MAX 64

/* A tenant's quotas (mcp_tenants.c); 0: no limit of the tenant's own. */
struct mcp_quota {
	int sessions;	     /* session_create: open at once */
	int concurrent_runs; /* runs holding a slot at once */
	int queued_runs;     /* runs waiting beyond those */
	uint64_t memory;     /* bytes per run (the server's and the policy's cap) */
	uint64_t cpu_quota;  /* per 100000 us, per run */
	/* the names its runs may reach ("a,b", within the policy's
	 * egress.allowDomains); "": the policy's */
	char allow_domains[1024];
};

/* Who is on the other end: the stdio client, or one HTTP session
 * (Mcp-Session-Id) of a tenant. */
struct mcp_peer {
	char tenant[MCP_TENANT_NAME_MAX]; /* "": no tenants (stdio, or no --tokens) */
	char version[16];		  /* the protocol version initialize agreed */
	int log_level;			  /* logging/setLevel (fixtures) */
};

struct mcp_conn;
struct mcp_conn_ops {
	/* One whole JSON-RPC message (len bytes, no newline). */
	void (*send)(struct mcp_conn *c, const char *msg, size_t len);
	/* A call thread keeps the connection until its reply is out. */
	void (*hold)(struct mcp_conn *c);
	void (*release)(struct mcp_conn *c);
};

/* Where the messages about a request go (stdout; an HTTP response). */
struct mcp_conn {
	struct mcp_server *s;
	const struct mcp_conn_ops *ops;
	struct mcp_peer *peer;
	bool busy; /* a server-wide bound was hit (RPC_SERVER_BUSY) */
};

/* A JSON-RPC id or a progress token: a string, or a number kept as its
 * JSON text.  text NULL: null. */
struct mcp_id {
	char *text;
	bool is_string;
};

enum mcp_tool {
	TOOL_RUN_CODE,
	TOOL_SESSION_CREATE,
	TOOL_SESSION_RUN,
	TOOL_SESSION_WRITE_FILE,
	TOOL_SESSION_READ_FILE,
	TOOL_SESSION_LIST_FILES,
	TOOL_SESSION_CLOSE,
	TOOL_SESSION_LIST,
	TOOL_MAX,
};

struct mcp_call;

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
	bool base64;				 /* read_file: encoding */
	int fixture;				 /* --conformance-fixtures: which (mcp_fixtures.c) */
	char *fixture_arg;			 /* its one string argument, or NULL */
	void (*fixture_run)(struct mcp_call *c); /* handed down: no call back up */
	/* session_create: its own limits (0: the server's) and network */
	uint64_t memory, cpu_quota;
	int64_t pids;
	bool network;
	char *allow_domains; /* "a,b": egress by name, narrowed; NULL: none asked */
};

/* A session (mcp_sessions.c): used by one call at a time (lock), freed
 * when closed and no call holds a reference. */
struct mcp_session {
	struct mcp_session *next;
	char id[48];
	char tenant[MCP_TENANT_NAME_MAX]; /* whose: only that tenant sees it */
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
	struct mcp_conn *conn;	/* held until the call ends */
	struct mcp_quota quota; /* its tenant's, as the call came */
	struct mcp_tenant_use *use;
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
	/* a request of ours to the client (sampling, elicitation: fixtures) */
	char ask_id[32];
	char *answer; /* its response, as JSON text */
	bool answered;
};

struct mcp_server {
	const struct global_opts *g;
	const struct mcp_opts *o;
	int sigfd;
	const char *image_for[SANDBOX_LANG_MAX]; /* NULL: language not offered */
	char *setup_error;			 /* no language at all: why (each call says it) */

	pthread_mutex_t out_lock; /* stdout */
	bool output_gone;	  /* stdout is closed: stop */
	struct mcp_conn stdio;	  /* the stdio transport's one connection */
	struct mcp_peer stdio_peer;

	pthread_rwlock_t tenants_lock; /* the token table, swapped by a reload */
	struct mcp_tenants *tenants;   /* NULL: no --tokens */

	pthread_mutex_t lock; /* all below */
	pthread_cond_t cond;  /* slots, cancellations, pools, the end */
	int stop_signal;      /* a termination signal arrived: kill all */
	bool stopping;	      /* no more work for the pool thread */
	int running;	      /* calls holding a slot */
	int threads;	      /* call threads not finished */
	struct mcp_call *calls;
	struct mcp_call *queue; /* runs waiting for a slot, in arrival order */
	/* --warm: per language, warm sandboxes (sandbox_pool.c: interpreters
	 * started, each refilled by the pool's own thread) */
	struct sandbox_pool *pools[SANDBOX_LANG_MAX];
	struct sandbox_config pool_cfg[SANDBOX_LANG_MAX];
	struct mcp_session *sessions;
	int n_sessions;
	int queued;		     /* runs waiting for a slot, all tenants */
	struct mcp_tenant_use *uses; /* per tenant: runs and sessions */
	struct mcp_http *http;	     /* --listen: the HTTP transport's */
};

/* What a tenant uses now (under the server's lock). */
struct mcp_tenant_use {
	struct mcp_tenant_use *next;
	char tenant[MCP_TENANT_NAME_MAX];
	int running, queued, sessions;
};

/* ---- the transports: mcp_stdio.c, mcp_http.c ---------------------------------- */

/* Serve until the input ends or a termination signal; 0 then. */
int mcp_stdio_serve(struct mcp_server *s, struct error *err);
/* A stop signal came or the client's output is gone (mcp_stdio.c). */
bool mcp_stopping(struct mcp_server *s);
int mcp_http_serve(struct mcp_server *s, struct error *err);
extern const struct mcp_conn_ops mcp_stdio_ops;

/* ---- mcp_dispatch.c ---------------------------------------------------------- */

/* One message (loaded by spec_json_load) from conn's peer: answered on
 * conn, now or by a call's thread. */
void mcp_dispatch(struct mcp_conn *conn, yajl_val msg);
/* One message as text: a parse error is answered too. */
void mcp_dispatch_text(struct mcp_conn *conn, const char *text, size_t len);
/* The protocol versions this server speaks, newest first, NULL-ended. */
extern const char *const mcp_protocol_versions[];
bool mcp_protocol_supported(const char *version);

/* ---- mcp_fixtures.c ----------------------------------------------------------- */

/* --conformance-fixtures: the suite's own tools, resources and prompts. */
void mcp_fixtures_list_tools(struct mcp_server *s, yajl_gen g);
/* tools/call of a fixture tool: 1 (started or answered), 0 not one. */
int mcp_fixtures_call(struct mcp_conn *conn, const struct mcp_id *id, yajl_val params);
/* resources/..., prompts/..., completion/..., logging/...: 1 if answered. */
int mcp_fixtures_method(struct mcp_conn *conn, const struct mcp_id *id, const char *method,
			yajl_val params);
void mcp_fixtures_capabilities(struct mcp_server *s, yajl_gen g);

/* ---- mcp_calls.c ------------------------------------------------------------- */

/* Start a thread for a checked call (takes *a and *token); a run over the
 * tenant's quota or the server's queue is refused here. */
void mcp_calls_start(struct mcp_conn *conn, const struct mcp_id *id, struct call_args *a,
		     struct mcp_id *token);
/* notifications/cancelled for requestId, from conn's peer. */
void mcp_calls_cancel(struct mcp_conn *conn, const struct mcp_id *request_id);
/* Cancel every call of a peer (its HTTP session ended). */
void mcp_calls_cancel_peer(struct mcp_server *s, const struct mcp_peer *peer);
/* From a call's thread: a request to the client on the call's connection
 * (params made by gen), and its response as JSON text (heap), or NULL if
 * none came in seconds. */
char *mcp_calls_ask(struct mcp_call *c, const char *method, void (*gen)(yajl_gen g, void *arg),
		    void *arg, double seconds);
/* A response from the client (a message with result or error). */
void mcp_calls_answer(struct mcp_conn *conn, yajl_val msg);
/* Kill every run (a termination signal, or stdout gone). */
void mcp_calls_kill_all(struct mcp_server *s);
/* Wait for every call thread to end; kills them all if a signal comes. */
void mcp_calls_wait_all(struct mcp_server *s);

/* ---- mcp_tools.c ------------------------------------------------------------- */

int mcp_tools_init(struct mcp_server *s, struct error *err);
/* tools/list; more(s, g) adds entries (the fixtures: handed down, as
 * mcp_tools.c is below mcp_fixtures.c). */
void mcp_tools_list(struct mcp_conn *cn, const struct mcp_id *id,
		    void (*more)(struct mcp_server *s, yajl_gen g));
/* Check tools/call's params; on a problem an error reply is sent and -1
 * returned.  *a and *token are the caller's to free. */
int mcp_tools_parse_call(struct mcp_conn *cn, const struct mcp_id *id, yajl_val params,
			 struct call_args *a, struct mcp_id *token);
void mcp_call_args_free(struct call_args *a);
/* In a call's thread: get a sandbox, run, reply (unless cancelled). */
void mcp_tools_run(struct mcp_call *c);
/* The warm pools (one per language offered) and their end. */
int mcp_pool_start(struct mcp_server *s, struct error *err);
void mcp_pools_stop(struct mcp_server *s);

/* ---- mcp_sessions.c ---------------------------------------------------------- */

/* The session tools' entries of tools/list. */
void mcp_sessions_list_tools(struct mcp_server *s, yajl_gen g);
/* The tool's own arguments, after the common checks. */
int mcp_sessions_parse(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		       struct call_args *a);
void mcp_sessions_run(struct mcp_call *c);
/* Close sessions idle for longer than --session-idle; all with all. */
void mcp_sessions_expire(struct mcp_server *s, bool all);

/* ---- mcp_tool_common.c ------------------------------------------------------- */

/* The sandbox input of a run of call c (code, stdin, limits, progress). */
void mcp_call_input(struct mcp_call *c, struct sandbox_input *in);
void mcp_reply_run_result(struct mcp_call *c, const struct sandbox_result *res);
void mcp_reply_tool_error(struct mcp_call *c, const char *msg);
/* A JSON-RPC error for call c (a quota), unless it was cancelled. */
void mcp_reply_call_error(struct mcp_call *c, int code, const char *message, const char *data);
/* A tool result: text, and structuredContent made by gen (may be NULL). */
void mcp_reply_tool_result(struct mcp_call *c, const char *text,
			   void (*gen)(yajl_gen g, void *arg), void *arg);
/* The same with one more content item (an image, a resource) made by item. */
void mcp_reply_tool_result2(struct mcp_call *c, const char *text,
			    void (*gen)(yajl_gen g, void *arg), void (*item)(yajl_gen g, void *arg),
			    void *arg);
/* The server's limits for a run, lowered to the call's tenant's quota. */
void mcp_sandbox_config_for(const struct mcp_server *s, enum sandbox_lang lang,
			    struct sandbox_config *cfg);
void mcp_config_apply_quota(const struct mcp_quota *q, struct sandbox_config *cfg);
/* Every name of "a,b" asked is within the list "c,d" (a tenant's). */
bool mcp_domains_within(const char *list, const char *asked);
void mcp_gen_prop(yajl_gen g, const char *name, const char *type, const char *desc);
void mcp_gen_language_prop(const struct mcp_server *s, yajl_gen g);
void mcp_gen_timeout_prop(const struct mcp_server *s, yajl_gen g);
int mcp_parse_language(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		       struct call_args *a, bool required);
int mcp_parse_timeout(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		      struct call_args *a);
int mcp_bad_args(struct mcp_conn *cn, const struct mcp_id *id, const char *msg);

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
/* A progress notification with progress/total (the fixtures). */
void mcp_progress_value(struct mcp_call *c, double progress, double total);

/* ---- mcp_tenants.c ----------------------------------------------------------- */

struct mcp_tenants;
/* The token file: operator-owned, no access for group or others, every
 * tenant's quotas within the policy's caps; refused whole otherwise. */
int mcp_tenants_load(const struct global_opts *g, const char *path, struct mcp_tenants **out,
		     struct error *err);
void mcp_tenants_free(struct mcp_tenants *t);
size_t mcp_tenants_count(const struct mcp_tenants *t);
/* The tenant whose token this is (compared in constant time), into name;
 * false if none. */
bool mcp_tenants_auth(struct mcp_server *s, const char *token, size_t len,
		      char name[MCP_TENANT_NAME_MAX]);
/* The tenant's quotas now (all 0 without tenants, or for a tenant a
 * reload removed: its calls are refused by auth from then on). */
void mcp_tenants_quota(struct mcp_server *s, const char *tenant, struct mcp_quota *q);
/* Swap in a reloaded table (SIGHUP); sessions and calls stay. */
void mcp_tenants_swap(struct mcp_server *s, struct mcp_tenants *t);
/* What tenant uses now, made on first use (under the server's lock). */
struct mcp_tenant_use *mcp_tenant_use_locked(struct mcp_server *s, const char *tenant);
void mcp_tenant_uses_free(struct mcp_server *s);

/* ---- mcp_wire.c -------------------------------------------------------------- */

void mcp_id_from(struct mcp_id *out, yajl_val v);
void mcp_id_free(struct mcp_id *id);
bool mcp_id_equal(const struct mcp_id *a, const struct mcp_id *b);
void mcp_id_gen(yajl_gen g, const struct mcp_id *id);

/* A reply being built: {"jsonrpc":"2.0","id":ID, then the caller's
 * "result" or "error" member; mcp_reply_send() closes and writes it. */
yajl_gen mcp_reply_begin(const struct mcp_id *id);
/* Close the outer object of g and hand it to conn. */
void mcp_reply_send(struct mcp_conn *conn, yajl_gen g);
/* message is the JSON-RPC message; with data it becomes "message: data"
 * (what SDKs show) and data is kept in error.data too. */
void mcp_reply_error(struct mcp_conn *conn, const struct mcp_id *id, int code,
		     const char *message, const char *data);
/* A message of its own, not a reply (a notification). */
yajl_gen mcp_notification_begin(const char *method);

#endif
