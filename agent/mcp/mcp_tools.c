/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run_code tool: its schema (tools/list), a call's arguments checked
 * against that schema as published (types, the language enum, the
 * timeout's maximum, no unknown argument), a run in a call's thread (a
 * warm sandbox or a new one), the result, and the warm pools: per
 * language, up to --warm sandboxes whose interpreter is started and waits
 * for its program (agent/sandbox/sandbox_pool.c), kept full by a thread of
 * each pool's own.  A warm sandbox runs one program and is deleted after it.
 * The pieces every tool shares (schema, arguments, the result) are in
 * mcp_tool_common.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/utf8.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "mcp_private.h"

#define TOOL_NAME "run_code"

static const char *const tool_names[TOOL_MAX] = {
	[TOOL_RUN_CODE] = TOOL_NAME,
	[TOOL_SESSION_CREATE] = "session_create",
	[TOOL_SESSION_RUN] = "session_run",
	[TOOL_SESSION_WRITE_FILE] = "session_write_file",
	[TOOL_SESSION_READ_FILE] = "session_read_file",
	[TOOL_SESSION_LIST_FILES] = "session_list_files",
	[TOOL_SESSION_CLOSE] = "session_close",
	[TOOL_SESSION_LIST] = "session_list",
};

/* Each tool's arguments (its schema's properties), as a list for errors. */
static const char *const tool_args[TOOL_MAX] = {
	[TOOL_RUN_CODE] = "code, language, timeout_seconds, stdin",
	[TOOL_SESSION_CREATE] = "language, memory_mb, cpus, pids, network, allow_domains",
	[TOOL_SESSION_RUN] = "session_id, code, language, timeout_seconds, stdin",
	[TOOL_SESSION_WRITE_FILE] = "session_id, path, content, encoding",
	[TOOL_SESSION_READ_FILE] = "session_id, path, encoding",
	[TOOL_SESSION_LIST_FILES] = "session_id, path",
	[TOOL_SESSION_CLOSE] = "session_id",
	[TOOL_SESSION_LIST] = "",
};

/* ---- set-up ---------------------------------------------------------------- */

/* Each language is offered by the first image that has its interpreter.
 * With none at all the server still serves: each call is a tool error
 * that says why (the client should not just see its server vanish). */
int mcp_tools_init(struct mcp_server *s, struct error *err)
{
	bool any = false;

	(void)err;
	for (int lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX; lang++)
		for (size_t i = 0; i < s->o->n_images && !s->image_for[lang]; i++) {
			_cleanup_free_ char *interp = NULL;
			struct error ignored;

			if (!s->o->images[i])
				continue;
			if (sandbox_find_interpreter(s->o->images[i], (enum sandbox_lang)lang,
						     &interp, &ignored) == 0) {
				s->image_for[lang] = s->o->images[i];
				any = true;
			}
		}
	if (!any) {
		s->setup_error = xasprintf("no image has an interpreter for python (python3), sh or node%s%s",
					   s->o->setup_errors ? ": " : "",
					   s->o->setup_errors ? s->o->setup_errors : "");
		log_warn("mcp: %s; every call will fail", s->setup_error);
	}
	return 0;
}

/* ---- tools/list -------------------------------------------------------------- */

static void gen_required(yajl_gen g, const char *const *names)
{
	jgen_str(g, "required");
	yajl_gen_array_open(g);
	for (; *names; names++)
		jgen_str(g, *names);
	yajl_gen_array_close(g);
}

static void gen_input_schema(const struct mcp_server *s, yajl_gen g)
{
	static const char *const required[] = { "code", "language", NULL };

	jgen_str(g, "inputSchema");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	mcp_gen_prop(g, "code", "string", "The program to run.");
	mcp_gen_language_prop(s, g);
	mcp_gen_timeout_prop(s, g);
	mcp_gen_prop(g, "stdin", "string", "Standard input for the program (default: empty).");
	yajl_gen_map_close(g);
	gen_required(g, required);
	jgen_key_bool(g, "additionalProperties", false);
	yajl_gen_map_close(g);
}

static void gen_output_schema(yajl_gen g)
{
	static const char *const required[] = { "stdout", "stderr", "exit_code", "timed_out",
						"seconds", "truncated", "oom_killed", NULL };

	jgen_str(g, "outputSchema");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	mcp_gen_prop(g, "stdout", "string", "the whole standard output, up to the output limit");
	mcp_gen_prop(g, "stderr", "string", "the whole standard error, up to the output limit");
	mcp_gen_prop(g, "exit_code", "integer", "128+N when killed by signal N");
	mcp_gen_prop(g, "timed_out", "boolean", NULL);
	mcp_gen_prop(g, "seconds", "number", "from start to exit");
	mcp_gen_prop(g, "truncated", "boolean", "stdout or stderr was over the limit and trimmed");
	mcp_gen_prop(g, "oom_killed", "boolean", "the memory limit was hit");
	mcp_gen_prop(g, "value", "string",
		     "Python only: repr() of the value of the last expression, as a REPL shows it");
	jgen_str(g, "outputs");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "array");
	jgen_key_str(g, "description",
		     "files the program wrote in /outputs (a session's: those this run created "
		     "or changed, read them with session_read_file; run_code's: with their "
		     "content, as base64, up to 4 MiB in all)");
	jgen_str(g, "items");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	mcp_gen_prop(g, "path", "string", NULL);
	mcp_gen_prop(g, "size", "integer", NULL);
	mcp_gen_prop(g, "content_base64", "string", NULL);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	jgen_str(g, "error");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_key_str(g, "description",
		     "Python only: the uncaught exception, parsed from stderr (name, value, traceback)");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	mcp_gen_prop(g, "name", "string", NULL);
	mcp_gen_prop(g, "value", "string", NULL);
	mcp_gen_prop(g, "traceback", "string", NULL);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	gen_required(g, required);
	yajl_gen_map_close(g);
}

void mcp_tools_list(struct mcp_conn *cn, const struct mcp_id *id,
		    void (*more)(struct mcp_server *s, yajl_gen g))
{
	struct mcp_server *s = cn->s;
	yajl_gen g = mcp_reply_begin(id);

	jgen_str(g, "result");
	yajl_gen_map_open(g);
	jgen_str(g, "tools");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	jgen_key_str(g, "name", TOOL_NAME);
	jgen_key_str(g, "title", "Run code in a sandbox");
	jgen_key_str(g, "description",
		     "Run a program in a fresh, isolated sandbox (no network, read-only "
		     "filesystem except /tmp, limited memory and CPU, a time limit) and get its "
		     "stdout, stderr, exit code, whether it timed out or ran out of memory, and "
		     "how long it took. Nothing persists between calls. A program that ran and "
		     "failed (a non-zero exit code, an exception, a timeout, out of memory) is a "
		     "normal result whose fields say so; isError is true only when the sandbox "
		     "could not run the program.");
	gen_input_schema(s, g);
	gen_output_schema(g);
	jgen_str(g, "annotations");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "readOnlyHint", true);
	jgen_key_bool(g, "openWorldHint", false);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	mcp_sessions_list_tools(s, g);
	if (more)
		more(s, g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	mcp_reply_send(cn, g);
}

/* ---- warm pools ------------------------------------------------------------------- */

int mcp_pool_start(struct mcp_server *s, struct error *err)
{
	if (s->o->warm <= 0 || s->setup_error)
		return 0;
	for (int lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX; lang++) {
		if (!s->image_for[lang])
			continue;
		mcp_sandbox_config_for(s, (enum sandbox_lang)lang, &s->pool_cfg[lang]);
		if (sandbox_pool_start(s->g, &s->pool_cfg[lang], s->o->warm, &s->pools[lang], err) <
		    0)
			return -1;
	}
	return 0;
}

void mcp_pools_stop(struct mcp_server *s)
{
	for (int lang = 0; lang < SANDBOX_LANG_MAX; lang++) {
		sandbox_pool_stop(s->pools[lang]);
		s->pools[lang] = NULL;
	}
}

/* ---- tools/call: the arguments ------------------------------------------------------ */

static char *string_copy(yajl_val v, size_t *len)
{
	*len = strlen(v->u.string); /* the loader refused NUL and \u0000 */
	return xstrndup(v->u.string, *len);
}

/* key is one of the names of list ("a, b, c"), compared whole. */
static bool arg_listed(const char *list, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && n && !strncmp(p, key, n))
			return true;
		p += len;
		p += strspn(p, ", ");
	}
	return false;
}

/* additionalProperties: false. */
static int check_known(struct mcp_conn *cn, const struct mcp_id *id, enum mcp_tool tool,
		       yajl_val args)
{
	for (size_t i = 0; i < args->u.object.len; i++) {
		const char *key = args->u.object.keys[i], *list = tool_args[tool];
		_cleanup_free_ char *msg = NULL;

		if (arg_listed(list, key))
			continue;
		msg = xasprintf("arguments.%.64s: unknown argument (%s takes %s)", key,
				tool_names[tool], *list ? list : "none");
		return mcp_bad_args(cn, id, msg);
	}
	return 0;
}

static void progress_token(yajl_val params, struct mcp_id *token)
{
	yajl_val meta = jmember(params, "_meta");

	mcp_id_from(token, meta && YAJL_IS_OBJECT(meta) ? jmember(meta, "progressToken") : NULL);
}

/* run_code's arguments, and session_run's but for session_id. */
static int parse_run(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		     struct call_args *a)
{
	yajl_val v = jmember(args, "code");

	if (!v || !YAJL_IS_STRING(v))
		return mcp_bad_args(cn, id, "arguments.code: required, a string");
	v = jmember(args, "stdin");
	if (v && !YAJL_IS_NULL(v) && !YAJL_IS_STRING(v))
		return mcp_bad_args(cn, id, "arguments.stdin: must be a string");
	if (mcp_parse_language(cn, id, args, a, true) < 0 || mcp_parse_timeout(cn, id, args, a) < 0)
		return -1;
	a->code = string_copy(jmember(args, "code"), &a->code_len);
	if (v && YAJL_IS_STRING(v))
		a->stdin_data = string_copy(v, &a->stdin_len);
	return 0;
}

int mcp_tools_parse_call(struct mcp_conn *cn, const struct mcp_id *id, yajl_val params,
			 struct call_args *a, struct mcp_id *token)
{
	struct mcp_server *s = cn->s;
	yajl_val name = params ? jmember(params, "name") : NULL, args;
	int tool = 0;
	struct error e;
	struct jctx c;

	memset(a, 0, sizeof(*a));
	token->text = NULL;
	if (!name || !YAJL_IS_STRING(name))
		return mcp_bad_args(cn, id, "params.name: required, a string");
	while (tool < TOOL_MAX && strcmp(name->u.string, tool_names[tool]))
		tool++;
	if (tool == TOOL_MAX || (tool != TOOL_RUN_CODE && !s->o->max_sessions))
		return mcp_bad_args(cn, id, "params.name: unknown tool (see tools/list)");
	a->tool = (enum mcp_tool)tool;
	args = jmember(params, "arguments");
	jctx_init(&c, "arguments", &e);
	/* session_create and session_list need no arguments at all. */
	if ((args || (tool != TOOL_SESSION_CREATE && tool != TOOL_SESSION_LIST)) &&
	    (!args || !YAJL_IS_OBJECT(args)))
		return mcp_bad_args(cn, id, "params.arguments: required, an object");
	if (args && (jcheck_object(&c, args) < 0))
		return mcp_bad_args(cn, id, e.msg);
	if (args && check_known(cn, id, a->tool, args) < 0)
		return -1;
	if (tool == TOOL_RUN_CODE && parse_run(cn, id, args, a) < 0)
		return -1;
	if (tool == TOOL_SESSION_RUN && parse_run(cn, id, args, a) < 0)
		return -1;
	if (tool != TOOL_RUN_CODE && mcp_sessions_parse(cn, id, args, a) < 0) {
		mcp_call_args_free(a);
		return -1;
	}
	progress_token(params, token);
	return 0;
}

void mcp_call_args_free(struct call_args *a)
{
	free(a->code);
	free(a->allow_domains);
	free(a->stdin_data);
	free(a->session_id);
	free(a->path);
	free(a->content);
	free(a->fixture_arg);
	memset(a, 0, sizeof(*a));
}

/* ---- tools/call: the run ------------------------------------------------------------------ */

/* A warm sandbox of the language (made with the server's limits: only
 * for a tenant without limits of its own), or a new one.  *pool: the pool
 * it came from, to tell when it is done with. */
static int get_sandbox(struct mcp_call *c, const struct sandbox_input *in, struct sandbox *sb,
		       struct sandbox_pool **pool, struct error *err)
{
	struct mcp_server *s = c->s;
	struct sandbox_config cfg;

	*pool = NULL;
	if (!c->quota.memory && !c->quota.cpu_quota && !c->quota.allow_domains[0] &&
	    sandbox_pool_take(s->pools[c->a.lang], sb)) {
		*pool = s->pools[c->a.lang];
		return 0;
	}
	mcp_sandbox_config_for(s, c->a.lang, &cfg);
	mcp_config_apply_quota(&c->quota, &cfg);
	/* Cold: started by its create; sandbox_run then only waits. */
	return sandbox_prepare_started(s->g, &cfg, in, sb, err);
}

static bool cancelled(struct mcp_call *c)
{
	bool r;

	pthread_mutex_lock(&c->s->lock);
	r = c->cancelled || c->s->stop_signal;
	pthread_mutex_unlock(&c->s->lock);
	return r;
}

static void finish(struct mcp_call *c, const struct sandbox_result *res)
{
	char note[96];

	if (res->cancelled) {
		/* By the client: no reply.  Else the server is stopping. */
		mcp_reply_tool_error(c, "the server is stopping; the program was killed");
		return;
	}
	mcp_progress_flush(c);
	snprintf(note, sizeof(note), "finished: exit code %d in %.3f s%s", res->exit_code,
		 res->seconds, res->timed_out ? " (timed out)" : "");
	mcp_progress_note(c, note);
	mcp_progress_settle(c);
	mcp_reply_run_result(c, res);
}

/* The reply goes out before the sandbox is deleted: the deletion is not
 * part of the caller's wait. */
void mcp_tools_run(struct mcp_call *c)
{
	struct mcp_server *s = c->s;
	struct sandbox_input in;
	struct sandbox_result res = { 0 };
	struct sandbox_pool *pool = NULL;
	struct sandbox sb;
	struct error err;

	if (c->a.fixture_run) {
		c->a.fixture_run(c);
		return;
	}
	if (c->a.tool != TOOL_RUN_CODE) {
		mcp_sessions_run(c);
		return;
	}
	mcp_call_input(c, &in);
	if (s->setup_error) {
		mcp_reply_tool_error(c, s->setup_error);
		return;
	}
	if (cancelled(c)) {
		mcp_reply_tool_error(c, "the server is stopping; the program did not run");
		return;
	}
	if (get_sandbox(c, &in, &sb, &pool, &err) < 0) {
		log_warn("mcp: run_code: %s", err.msg);
		mcp_reply_tool_error(c, err.msg);
		return;
	}
	/* A cold sandbox's program runs already: a cancel is the run's
	 * (killed, said by finish). */
	if (!sb.run_started_ns && cancelled(c)) {
		mcp_reply_tool_error(c, "the server is stopping; the program did not run");
	} else {
		mcp_progress_note(c, "started");
		if (sandbox_run(s->g, &sb, &in, -1, &res, &err) < 0) {
			log_warn("mcp: run_code: %s", err.msg);
			mcp_reply_tool_error(c, err.msg);
		} else {
			finish(c, &res);
		}
	}
	sandbox_destroy(s->g, &sb);
	sandbox_pool_done(pool);
	sandbox_result_free(&res);
}
