/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MCP stdio transport and JSON-RPC 2.0: read newline-delimited
 * messages from stdin (each at most MCP_LINE_MAX bytes; a longer one is
 * dropped with a parse error), load each with the same hardened loader as
 * config.json (strict UTF-8, bounded depth and size, no duplicate keys),
 * dispatch initialize, ping, tools/list and tools/call, and write one reply
 * per request as one line on stdout.  Notifications get no reply (but
 * notifications/cancelled kills the run it names); batches are refused
 * (MCP 2025-06-18 has none).  tools/call runs in a thread of its own
 * (mcp_calls.c); everything else is answered at once by this thread.
 */
#include <errno.h>
#include <pthread.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "mcp_private.h"

#define READ_CHUNK (256 * 1024)
#define SESSION_CHECK_MS 1000 /* idle sessions are looked for while idle */

static const char *const protocol_versions[] = {
	MCP_PROTOCOL_VERSION,
	"2025-03-26",
	"2024-11-05",
	NULL,
};

/* ---- replies ------------------------------------------------------------- */

/* ---- methods ---------------------------------------------------------------- */

static const char *negotiate_version(yajl_val params)
{
	yajl_val v = params ? jmember(params, "protocolVersion") : NULL;

	for (const char *const *p = protocol_versions; v && YAJL_IS_STRING(v) && *p; p++)
		if (!strcmp(*p, v->u.string))
			return *p;
	return MCP_PROTOCOL_VERSION;
}

static void handle_initialize(struct mcp_server *s, const struct mcp_id *id, yajl_val params)
{
	yajl_gen g = mcp_reply_begin(id);

	jgen_str(g, "result");
	yajl_gen_map_open(g);
	jgen_key_str(g, "protocolVersion", negotiate_version(params));
	jgen_str(g, "capabilities");
	yajl_gen_map_open(g);
	jgen_str(g, "tools");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "listChanged", false);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
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
		     "program is killed.");
	yajl_gen_map_close(g);
	mcp_reply_send(s, g);
}

static void handle_ping(struct mcp_server *s, const struct mcp_id *id)
{
	yajl_gen g = mcp_reply_begin(id);

	jgen_str(g, "result");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	mcp_reply_send(s, g);
}

static void tools_call(struct mcp_server *s, const struct mcp_id *id, yajl_val params)
{
	struct call_args a;
	struct mcp_id token;

	if (mcp_tools_parse_call(s, id, params, &a, &token) == 0)
		mcp_calls_start(s, id, &a, &token);
}

static void dispatch_method(struct mcp_server *s, const struct mcp_id *id, const char *method,
			    yajl_val params)
{
	if (!strcmp(method, "initialize"))
		handle_initialize(s, id, params);
	else if (!strcmp(method, "ping"))
		handle_ping(s, id);
	else if (!strcmp(method, "tools/list"))
		mcp_tools_list(s, id);
	else if (!strcmp(method, "tools/call"))
		tools_call(s, id, params);
	else
		mcp_reply_error(s, id, RPC_METHOD_NOT_FOUND, "Method not found", method);
}

/* notifications/cancelled {requestId, reason?}: kill that run. */
static void dispatch_notification(struct mcp_server *s, const char *method, yajl_val params)
{
	struct mcp_id rid;

	if (strcmp(method, "notifications/cancelled") || !params || !YAJL_IS_OBJECT(params))
		return;
	mcp_id_from(&rid, jmember(params, "requestId"));
	if (rid.text)
		mcp_calls_cancel(s, &rid);
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

static void handle_message(struct mcp_server *s, yajl_val msg)
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
		mcp_reply_error(s, &mid, re.code, re.message, re.data);
	else if (r == 0)
		dispatch_method(s, &mid, method->u.string, params);
	else if (r == 2)
		dispatch_notification(s, method->u.string, params);
	mcp_id_free(&mid);
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

static void handle_line(struct mcp_server *s, const char *line, size_t len)
{
	yajl_val msg = NULL;
	struct error e;

	if (blank(line, len))
		return;
	if (spec_json_load(line, len, "message", &msg, &e) < 0) {
		mcp_reply_error(s, NULL, RPC_PARSE_ERROR, "Parse error", e.msg);
		return;
	}
	handle_message(s, msg);
	yajl_tree_free(msg);
}

/* ---- the input ---------------------------------------------------------------- */

/* The unread input is buf[start, len): lines are taken by moving start,
 * and what is left moves to the front once per read, never once per line
 * (a client's megabyte of blank lines costs a megabyte of work). */
struct line_reader {
	char *buf;
	size_t start, len, cap;
	size_t scanned;	 /* no newline in buf[start, scanned) */
	bool discarding; /* in an over-long line: drop up to its newline */
	bool eof;
};

struct line {
	const char *text;
	size_t len;  /* without the newline */
	size_t used; /* bytes it takes in the buffer, newline included */
	bool skip;   /* the end of an over-long line: not a message */
};

static void reply_too_long(struct mcp_server *s)
{
	mcp_reply_error(s, NULL, RPC_PARSE_ERROR, "Parse error", "message longer than 16 MiB");
}

/* 1: the next complete line is in *l; 0: more input is needed.  An
 * over-long line is answered with one parse error and dropped. */
static int next_line(struct mcp_server *s, struct line_reader *r, struct line *l)
{
	size_t from = r->scanned > r->start ? r->scanned : r->start;
	char *nl = from < r->len ? memchr(r->buf + from, '\n', r->len - from) : NULL;

	if (!nl) {
		r->scanned = r->len;
		if (r->len - r->start > MCP_LINE_MAX) {
			if (!r->discarding)
				reply_too_long(s);
			r->discarding = true;
			r->start = r->len = r->scanned = 0;
		}
		return 0;
	}
	l->text = r->buf + r->start;
	l->len = (size_t)(nl - l->text);
	l->used = l->len + 1;
	l->skip = r->discarding || l->len > MCP_LINE_MAX;
	if (l->skip && !r->discarding)
		reply_too_long(s);
	r->discarding = false;
	return 1;
}

static void consume_line(struct line_reader *r, const struct line *l)
{
	r->start += l->used;
	r->scanned = r->start;
	if (r->start == r->len)
		r->start = r->len = r->scanned = 0;
}

static int read_more(struct line_reader *r, struct error *err)
{
	ssize_t n;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->scanned -= r->start;
		r->start = 0;
	}
	if (r->cap - r->len < READ_CHUNK) {
		r->cap = r->len + READ_CHUNK;
		r->buf = xrealloc(r->buf, r->cap);
	}
	n = read(STDIN_FILENO, r->buf + r->len, r->cap - r->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n < 0)
		return error_sys(err, "mcp: read stdin");
	if (n == 0)
		r->eof = true;
	r->len += (size_t)n;
	return 0;
}

/* ---- the loop ------------------------------------------------------------------- */

static void take_signals(struct mcp_server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		pthread_mutex_lock(&s->lock);
		s->stop_signal = (int)si.ssi_signo;
		pthread_mutex_unlock(&s->lock);
	}
}

static bool must_stop(struct mcp_server *s)
{
	bool stop;

	pthread_mutex_lock(&s->lock);
	stop = s->stop_signal != 0;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->out_lock);
	stop = stop || s->output_gone;
	pthread_mutex_unlock(&s->out_lock);
	return stop;
}

/* Wait for input or a signal. */
static int wait_input(struct mcp_server *s, struct line_reader *r, struct error *err)
{
	struct pollfd p[2] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = s->sigfd, .events = POLLIN },
	};

	int n = poll(p, 2, SESSION_CHECK_MS);

	if (n == 0)
		mcp_sessions_expire(s, false);
	if (n <= 0)
		return n < 0 && errno != EINTR ? error_sys(err, "mcp: poll") : 0;
	if (p[1].revents)
		take_signals(s);
	if (p[0].revents && !must_stop(s))
		return read_more(r, err);
	return 0;
}

static int serve(struct mcp_server *s, struct error *err)
{
	struct line_reader r = { 0 };
	int ret = 0;

	while (!must_stop(s)) {
		struct line l;

		if (next_line(s, &r, &l)) {
			if (!l.skip)
				handle_line(s, l.text, l.len);
			consume_line(&r, &l);
			continue;
		}
		if (r.eof) {
			/* A last message without its newline. */
			if (r.len > r.start && !r.discarding && r.len - r.start <= MCP_LINE_MAX)
				handle_line(s, r.buf + r.start, r.len - r.start);
			break;
		}
		if ((ret = wait_input(s, &r, err)) < 0)
			break;
	}
	free(r.buf);
	return ret;
}

static int server_init(struct mcp_server *s, struct error *err)
{
	pthread_mutex_init(&s->out_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	if (mcp_tools_init(s, err) < 0 || sandbox_env_init(s->g, &s->sigfd, err) < 0)
		return -1;
	/* Before the first thread: see sandbox_creator.c. */
	if (sandbox_creator_start(s->g, err) < 0)
		return -1;
	return mcp_pool_start(s, err);
}

int mcp_serve(const struct global_opts *g, const struct mcp_opts *o, struct error *err)
{
	struct mcp_server s = { .g = g, .o = o, .sigfd = -1 };
	int r;

	r = server_init(&s, err);
	if (r == 0) {
		log_debug("mcp: serving on stdin/stdout");
		r = serve(&s, err);
		/* At EOF the calls in flight finish and reply; on a signal, or
		 * with stdout gone, they are killed. */
		if (must_stop(&s))
			mcp_calls_kill_all(&s);
		mcp_calls_wait_all(&s);
	}
	mcp_sessions_expire(&s, true);
	mcp_pools_stop(&s);
	sandbox_creator_stop();
	sandbox_env_fini();
	if (s.sigfd >= 0)
		close(s.sigfd);
	free(s.setup_error);
	if (r == 0 && s.stop_signal)
		log_info("mcp: stopped by signal %d", s.stop_signal);
	return r;
}
