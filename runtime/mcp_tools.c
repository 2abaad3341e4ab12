/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run_code tool: its schema (tools/list), a call (tools/call: check
 * the arguments, take a warm sandbox or make one, run, reply with the
 * result as text and as structured content, isError when the exit code is
 * not 0), and the warm pools: per language, up to --warm created sandboxes
 * whose init waits for start.  A warm sandbox runs at most one program and
 * is deleted after it; the pool makes a fresh one while the server idles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../spec/internal.h"
#include "mcp_internal.h"

#define TOOL_NAME "run_code"

/* ---- set-up ---------------------------------------------------------------- */

/* Each language is offered by the first image that has its interpreter. */
int mcp_tools_init(struct mcp_server *s, struct error *err)
{
	bool any = false;

	for (int lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX; lang++)
		for (size_t i = 0; i < s->o->n_images && !s->image_for[lang]; i++) {
			_cleanup_free_ char *interp = NULL;
			struct error ignored;

			if (sandbox_find_interpreter(s->o->images[i], (enum sandbox_lang)lang,
						     &interp, &ignored) == 0) {
				s->image_for[lang] = s->o->images[i];
				any = true;
			}
		}
	if (!any)
		return error_set(err, "mcp: no image has an interpreter for python (python3), sh or node");
	return 0;
}

static void sandbox_config_for(const struct mcp_server *s, enum sandbox_lang lang,
			       struct sandbox_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rootfs = s->image_for[lang];
	cfg->lang = lang;
	cfg->memory = s->o->memory;
	cfg->cpu_quota = s->o->cpu_quota;
	cfg->pids = s->o->pids;
	cfg->disk = s->o->disk;
	cfg->stdin_fd = -1;
}

/* ---- tools/list -------------------------------------------------------------- */

static void gen_prop(yajl_gen g, const char *name, const char *type, const char *desc)
{
	mcp_gstr(g, name);
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", type);
	if (desc)
		mcp_gkey_str(g, "description", desc);
	yajl_gen_map_close(g);
}

static void gen_required(yajl_gen g, const char *const *names)
{
	mcp_gstr(g, "required");
	yajl_gen_array_open(g);
	for (; *names; names++)
		mcp_gstr(g, *names);
	yajl_gen_array_close(g);
}

static void gen_language_prop(const struct mcp_server *s, yajl_gen g)
{
	mcp_gstr(g, "language");
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", "string");
	mcp_gstr(g, "enum");
	yajl_gen_array_open(g);
	for (int lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX; lang++)
		if (s->image_for[lang])
			mcp_gstr(g, sandbox_lang_name((enum sandbox_lang)lang));
	yajl_gen_array_close(g);
	mcp_gkey_str(g, "description", "The language of code: python (python3), sh or node.");
	yajl_gen_map_close(g);
}

static void gen_timeout_prop(const struct mcp_server *s, yajl_gen g)
{
	char desc[160];

	snprintf(desc, sizeof(desc),
		 "Wall-clock limit in seconds (default %g, at most %g); the program is killed when it runs over.",
		 s->o->timeout, s->o->max_timeout);
	mcp_gstr(g, "timeout_seconds");
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", "number");
	mcp_gstr(g, "exclusiveMinimum");
	yajl_gen_integer(g, 0);
	mcp_gstr(g, "maximum");
	yajl_gen_double(g, s->o->max_timeout);
	mcp_gkey_str(g, "description", desc);
	yajl_gen_map_close(g);
}

static void gen_input_schema(const struct mcp_server *s, yajl_gen g)
{
	static const char *const required[] = { "code", "language", NULL };

	mcp_gstr(g, "inputSchema");
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", "object");
	mcp_gstr(g, "properties");
	yajl_gen_map_open(g);
	gen_prop(g, "code", "string", "The program to run.");
	gen_language_prop(s, g);
	gen_timeout_prop(s, g);
	gen_prop(g, "stdin", "string", "Standard input for the program (default: empty).");
	yajl_gen_map_close(g);
	gen_required(g, required);
	mcp_gkey_bool(g, "additionalProperties", false);
	yajl_gen_map_close(g);
}

static void gen_output_schema(yajl_gen g)
{
	static const char *const required[] = { "stdout", "stderr", "exit_code", "timed_out",
						"seconds", "truncated", "oom_killed", NULL };

	mcp_gstr(g, "outputSchema");
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", "object");
	mcp_gstr(g, "properties");
	yajl_gen_map_open(g);
	gen_prop(g, "stdout", "string", NULL);
	gen_prop(g, "stderr", "string", NULL);
	gen_prop(g, "exit_code", "integer", "128+N when killed by signal N");
	gen_prop(g, "timed_out", "boolean", NULL);
	gen_prop(g, "seconds", "number", "from start to exit");
	gen_prop(g, "truncated", "boolean", "stdout or stderr was over the limit and trimmed");
	gen_prop(g, "oom_killed", "boolean", "the memory limit was hit");
	yajl_gen_map_close(g);
	gen_required(g, required);
	yajl_gen_map_close(g);
}

void mcp_tools_list(struct mcp_server *s, yajl_val id)
{
	yajl_gen g = mcp_reply_begin(id);

	mcp_gstr(g, "result");
	yajl_gen_map_open(g);
	mcp_gstr(g, "tools");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "name", TOOL_NAME);
	mcp_gkey_str(g, "title", "Run code in a sandbox");
	mcp_gkey_str(g, "description",
		     "Run a program in a fresh, isolated sandbox (no network, read-only "
		     "filesystem except /tmp, limited memory and CPU, a time limit) and get its "
		     "stdout, stderr, exit code, whether it timed out or ran out of memory, and "
		     "how long it took. Nothing persists between calls.");
	gen_input_schema(s, g);
	gen_output_schema(g);
	mcp_gstr(g, "annotations");
	yajl_gen_map_open(g);
	mcp_gkey_bool(g, "readOnlyHint", true);
	mcp_gkey_bool(g, "openWorldHint", false);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	mcp_reply_send(s, g);
}

/* ---- warm pools ------------------------------------------------------------------- */

bool mcp_pool_refill_one(struct mcp_server *s)
{
	for (int lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX; lang++) {
		struct mcp_pool *p = &s->pools[lang];
		struct sandbox_config cfg;
		struct error err;

		if (!s->image_for[lang] || s->warm_off[lang] || p->n >= s->o->warm ||
		    p->n >= MCP_WARM_MAX)
			continue;
		sandbox_config_for(s, (enum sandbox_lang)lang, &cfg);
		if (sandbox_prepare(s->g, &cfg, &p->items[p->n], &err) < 0) {
			/* Not fatal: calls make their own; stop warming this one. */
			log_warn("mcp: warm %s sandbox: %s", sandbox_lang_name((enum sandbox_lang)lang),
				 err.msg);
			s->warm_off[lang] = true;
			return false;
		}
		p->n++;
		return true;
	}
	return false;
}

/* The oldest warm sandbox that is still waiting; false if there is none. */
static bool pool_take(struct mcp_server *s, enum sandbox_lang lang, struct sandbox *out)
{
	struct mcp_pool *p = &s->pools[lang];

	while (p->n > 0) {
		struct sandbox sb = p->items[0];

		memmove(&p->items[0], &p->items[1], (size_t)(p->n - 1) * sizeof(p->items[0]));
		p->n--;
		if (sandbox_is_alive(&sb)) {
			*out = sb;
			return true;
		}
		sandbox_destroy(s->g, &sb);
	}
	return false;
}

void mcp_pools_drain(struct mcp_server *s)
{
	for (int lang = 0; lang < SANDBOX_LANG_MAX; lang++) {
		struct mcp_pool *p = &s->pools[lang];
		for (int i = 0; i < p->n; i++)
			sandbox_destroy(s->g, &p->items[i]);
		p->n = 0;
	}
}

/* ---- tools/call -------------------------------------------------------------------- */

struct call_args {
	enum sandbox_lang lang;
	struct sandbox_input in;
};

static int bad_args(struct mcp_server *s, yajl_val id, const char *msg)
{
	mcp_reply_error(s, id, RPC_INVALID_PARAMS, "Invalid params", msg);
	return -1;
}

static const char *string_member(yajl_val obj, const char *key, size_t *len)
{
	yajl_val v = jmember(obj, key);

	if (!v || !YAJL_IS_STRING(v))
		return NULL;
	*len = strlen(v->u.string); /* the loader refused NUL and \u0000 */
	return v->u.string;
}

static int parse_language(struct mcp_server *s, yajl_val id, yajl_val args,
			  struct call_args *a)
{
	yajl_val v = jmember(args, "language");
	int lang;

	if (!v || !YAJL_IS_STRING(v))
		return bad_args(s, id, "arguments.language: required, a string");
	lang = sandbox_lang_from_name(v->u.string);
	if (lang < 0 || !s->image_for[lang])
		return bad_args(s, id, "arguments.language: not offered by this server (see tools/list)");
	a->lang = (enum sandbox_lang)lang;
	return 0;
}

static int parse_timeout(struct mcp_server *s, yajl_val id, yajl_val args,
			 struct call_args *a)
{
	yajl_val v = jmember(args, "timeout_seconds");
	double t;

	a->in.timeout = s->o->timeout;
	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_NUMBER(v))
		return bad_args(s, id, "arguments.timeout_seconds: must be a number");
	t = strtod(v->u.number.r, NULL);
	if (!isfinite(t) || t <= 0)
		return bad_args(s, id, "arguments.timeout_seconds: must be above 0");
	a->in.timeout = t < s->o->max_timeout ? t : s->o->max_timeout;
	return 0;
}

static int parse_call(struct mcp_server *s, yajl_val id, yajl_val params,
		      struct call_args *a)
{
	yajl_val name = params ? jmember(params, "name") : NULL, args;
	struct error e;
	struct jctx c;

	memset(a, 0, sizeof(*a));
	if (!name || !YAJL_IS_STRING(name))
		return bad_args(s, id, "params.name: required, a string");
	if (strcmp(name->u.string, TOOL_NAME))
		return bad_args(s, id, "params.name: unknown tool (this server has run_code)");
	args = jmember(params, "arguments");
	jctx_init(&c, "arguments", &e);
	if (!args || !YAJL_IS_OBJECT(args))
		return bad_args(s, id, "params.arguments: required, an object");
	if (jcheck_object(&c, args) < 0)
		return bad_args(s, id, e.msg);
	a->in.code = string_member(args, "code", &a->in.code_len);
	if (!a->in.code)
		return bad_args(s, id, "arguments.code: required, a string");
	if (jmember(args, "stdin") && !YAJL_IS_NULL(jmember(args, "stdin")) &&
	    !(a->in.stdin_data = string_member(args, "stdin", &a->in.stdin_len)))
		return bad_args(s, id, "arguments.stdin: must be a string");
	a->in.output_limit = s->o->output_limit;
	if (parse_language(s, id, args, a) < 0 || parse_timeout(s, id, args, a) < 0)
		return -1;
	return 0;
}

static void reply_result(struct mcp_server *s, yajl_val id, const struct sandbox_result *res)
{
	_cleanup_free_ char *text = sandbox_result_json(res);
	yajl_gen g = mcp_reply_begin(id);

	mcp_gstr(g, "result");
	yajl_gen_map_open(g);
	mcp_gstr(g, "content");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", "text");
	mcp_gkey_str(g, "text", text);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	mcp_gstr(g, "structuredContent");
	sandbox_result_gen(g, res);
	mcp_gkey_bool(g, "isError", res->exit_code != 0);
	yajl_gen_map_close(g);
	mcp_reply_send(s, g);
}

/* The sandbox itself failed: a tool error the model can read. */
static void reply_tool_error(struct mcp_server *s, yajl_val id, const char *msg)
{
	_cleanup_free_ char *text = xasprintf("sandbox error: %s", msg);
	yajl_gen g = mcp_reply_begin(id);

	mcp_gstr(g, "result");
	yajl_gen_map_open(g);
	mcp_gstr(g, "content");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	mcp_gkey_str(g, "type", "text");
	mcp_gkey_str(g, "text", text);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	mcp_gkey_bool(g, "isError", true);
	yajl_gen_map_close(g);
	mcp_reply_send(s, g);
}

/* A warm sandbox of the language, or a new one. */
static int get_sandbox(struct mcp_server *s, enum sandbox_lang lang, struct sandbox *sb,
		       struct error *err)
{
	struct sandbox_config cfg;

	if (pool_take(s, lang, sb))
		return 0;
	sandbox_config_for(s, lang, &cfg);
	return sandbox_prepare(s->g, &cfg, sb, err);
}

static void reply_run(struct mcp_server *s, yajl_val id, int r,
		      const struct sandbox_result *res, const struct error *err)
{
	if (r < 0) {
		log_warn("mcp: run_code: %s", err->msg);
		reply_tool_error(s, id, err->msg);
	} else if (res->signal) {
		s->stop_signal = res->signal;
		reply_tool_error(s, id, "the server is stopping (signal); the program was killed");
	} else {
		reply_result(s, id, res);
	}
}

/* The reply goes out before the sandbox is deleted: the deletion is not
 * part of the caller's wait. */
void mcp_tools_call(struct mcp_server *s, yajl_val id, yajl_val params)
{
	struct call_args a;
	struct sandbox sb;
	struct sandbox_result res = { 0 };
	struct error err;
	int r;

	if (parse_call(s, id, params, &a) < 0)
		return;
	r = get_sandbox(s, a.lang, &sb, &err);
	if (r == 0) {
		r = sandbox_run(s->g, &sb, &a.in, s->sigfd, &res, &err);
		reply_run(s, id, r, &res, &err);
		sandbox_destroy(s->g, &sb);
	} else {
		reply_run(s, id, r, &res, &err);
	}
	sandbox_result_free(&res);
}
