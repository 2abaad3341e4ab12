/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every MCP tool shares (run_code in mcp_tools.c, the session tools
 * in mcp_sessions.c): the schema's pieces, the language and timeout
 * arguments checked as published, a call's stdin, and its result.
 *
 * The result: structuredContent has the whole streams (each up to the
 * output limit) and the facts; the text content is a short summary with
 * at most TEXT_STREAM_MAX bytes of each stream (head and tail), for the
 * clients that show a model only the text -- so a big output is sent once,
 * not twice.  isError is true only when the sandbox could not run the
 * program (it could not be set up, the server is stopping).  A program
 * that ran and failed -- a non-zero exit, an exception, a timeout, an OOM
 * kill -- is a normal result whose fields (and the text's first line) say
 * so: the frameworks throw on isError (LangChain's adapter does), and an
 * agent's loop must see a timed-out program as an answer, not die of it.
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
#include "../../spec/policy/policy.h"
#include "mcp_private.h"

#define TEXT_STREAM_MAX 8192 /* bytes of a stream in the text summary */

static bool offered(const struct mcp_server *s, int lang)
{
	return s->setup_error || s->image_for[lang];
}

void mcp_sandbox_config_for(const struct mcp_server *s, enum sandbox_lang lang,
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

void mcp_config_apply_quota(const struct mcp_quota *q, struct sandbox_config *cfg)
{
	if (q->memory && (!cfg->memory || q->memory < cfg->memory))
		cfg->memory = q->memory;
	if (q->cpu_quota && (!cfg->cpu_quota || q->cpu_quota < cfg->cpu_quota))
		cfg->cpu_quota = q->cpu_quota;
	/* the tenant's names, unless the call narrows them (checked within) */
	if (q->allow_domains[0] && !cfg->allow_domains)
		cfg->allow_domains = q->allow_domains;
}

bool mcp_domains_within(const char *list, const char *asked)
{
	_cleanup_free_ char *l = xstrdup(list), *a = xstrdup(asked);
	struct policy_egress_names names = { 0 };
	char *save = NULL;
	bool ok = true;

	for (char *t = strtok_r(l, ",", &save); t; t = strtok_r(NULL, ",", &save))
		policy_strv_add(&names.allow, t);
	save = NULL;
	for (char *t = strtok_r(a, ",", &save); t && ok; t = strtok_r(NULL, ",", &save))
		ok = policy_egress_pattern_within(&names, t);
	for (size_t i = 0; i < names.allow.len; i++)
		free(names.allow.items[i]);
	free(names.allow.items);
	return ok;
}

void mcp_gen_prop(yajl_gen g, const char *name, const char *type, const char *desc)
{
	jgen_str(g, name);
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", type);
	if (desc)
		jgen_key_str(g, "description", desc);
	yajl_gen_map_close(g);
}

/* "python (python3), sh or node": the languages offered, as the schema's
 * enum has them. */
static void offered_names(const struct mcp_server *s, char *out, size_t n)
{
	static const char *const shown[SANDBOX_LANG_MAX] = {
		[SANDBOX_LANG_PYTHON] = "python (python3)",
		[SANDBOX_LANG_SH] = "sh",
		[SANDBOX_LANG_NODE] = "node (JavaScript)",
	};
	int count = 0, seen = 0;

	*out = 0;
	for (int l = SANDBOX_LANG_PYTHON; l < SANDBOX_LANG_MAX; l++)
		count += offered(s, l);
	for (int l = SANDBOX_LANG_PYTHON; l < SANDBOX_LANG_MAX; l++) {
		if (!offered(s, l))
			continue;
		seen++;
		snprintf(out + strlen(out), n - strlen(out), "%s%s",
			 seen == 1 ? "" : (seen == count ? " or " : ", "), shown[l]);
	}
}

void mcp_gen_language_prop(const struct mcp_server *s, yajl_gen g)
{
	char names[96], desc[160];

	offered_names(s, names, sizeof(names));
	snprintf(desc, sizeof(desc), "The language of code: %s.", names);
	jgen_str(g, "language");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	jgen_str(g, "enum");
	yajl_gen_array_open(g);
	for (int lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX; lang++)
		if (offered(s, lang))
			jgen_str(g, sandbox_lang_name((enum sandbox_lang)lang));
	yajl_gen_array_close(g);
	jgen_key_str(g, "description", desc);
	yajl_gen_map_close(g);
}

void mcp_gen_timeout_prop(const struct mcp_server *s, yajl_gen g)
{
	char desc[160];

	snprintf(desc, sizeof(desc),
		 "Wall-clock limit in seconds (default %g, at most %g); the program is killed when it runs over.",
		 s->o->timeout, s->o->max_timeout);
	jgen_str(g, "timeout_seconds");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "number");
	jgen_str(g, "exclusiveMinimum");
	yajl_gen_integer(g, 0);
	jgen_str(g, "maximum");
	yajl_gen_double(g, s->o->max_timeout);
	jgen_key_str(g, "description", desc);
	yajl_gen_map_close(g);
}

int mcp_bad_args(struct mcp_conn *cn, const struct mcp_id *id, const char *msg)
{
	mcp_reply_error(cn, id, RPC_INVALID_PARAMS, "Invalid params", msg);
	return -1;
}

int mcp_parse_language(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		       struct call_args *a, bool required)
{
	const struct mcp_server *s = cn->s;
	yajl_val v = args ? jmember(args, "language") : NULL;
	_cleanup_free_ char *msg = NULL;
	char names[64] = "";
	int lang;

	if (!v && !required) {
		for (lang = SANDBOX_LANG_PYTHON; lang < SANDBOX_LANG_MAX && !offered(s, lang); lang++)
			;
		a->lang = lang < SANDBOX_LANG_MAX ? (enum sandbox_lang)lang : SANDBOX_LANG_PYTHON;
		return 0;
	}
	if (!v || !YAJL_IS_STRING(v))
		return mcp_bad_args(cn, id, "arguments.language: required, a string");
	lang = sandbox_lang_from_name(v->u.string);
	if (lang >= 0 && offered(s, lang)) {
		a->lang = (enum sandbox_lang)lang;
		return 0;
	}
	for (int l = SANDBOX_LANG_PYTHON; l < SANDBOX_LANG_MAX; l++)
		if (offered(s, l))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 *names ? ", " : "", sandbox_lang_name((enum sandbox_lang)l));
	msg = xasprintf("arguments.language: must be one of %s (this server has no image for \"%.40s\")",
			names, v->u.string);
	return mcp_bad_args(cn, id, msg);
}

int mcp_parse_timeout(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		      struct call_args *a)
{
	const struct mcp_server *s = cn->s;
	yajl_val v = jmember(args, "timeout_seconds");
	_cleanup_free_ char *msg = NULL;
	double t;

	a->timeout = s->o->timeout;
	if (!v || YAJL_IS_NULL(v))
		return 0;
	if (!YAJL_IS_NUMBER(v))
		return mcp_bad_args(cn, id, "arguments.timeout_seconds: must be a number");
	t = strtod(v->u.number.r, NULL);
	if (!isfinite(t) || t <= 0)
		return mcp_bad_args(cn, id, "arguments.timeout_seconds: must be above 0");
	if (t > s->o->max_timeout) {
		msg = xasprintf("arguments.timeout_seconds: at most %g (the schema's maximum)",
				s->o->max_timeout);
		return mcp_bad_args(cn, id, msg);
	}
	a->timeout = t;
	return 0;
}

/* A stream for the text summary: all of it, or its head and tail. */
static void append_stream(char **text, const char *name, const char *buf, size_t len)
{
	size_t half = TEXT_STREAM_MAX / 2;
	char *old = *text;

	if (!len)
		return;
	if (len <= TEXT_STREAM_MAX)
		*text = xasprintf("%s\n--- %s ---\n%.*s", old, name, (int)len, buf);
	else
		*text = xasprintf("%s\n--- %s (%zu bytes; the middle is left out here, "
				  "structuredContent.%s has it all) ---\n%.*s\n[...]\n%.*s",
				  old, name, len, name, (int)half, buf, (int)half, buf + len - half);
	free(old);
}

/* The files in /outputs, by name (their content is in structuredContent). */
static void append_outputs(char **text, const struct sandbox_result *res)
{
	char *old;

	for (size_t i = 0; i < res->n_outputs; i++) {
		old = *text;
		*text = xasprintf("%s%s%s (%llu bytes)", old, i ? "\n" : "\n--- outputs ---\n",
				  res->outputs[i].path, res->outputs[i].size);
		free(old);
	}
}

static char *summary_text(const struct sandbox_result *res)
{
	_cleanup_free_ char *raw = NULL;
	char *text;
	size_t len;

	if (res->timed_out)
		text = xasprintf("timed out after %.3f s: the program was killed (exit code %d; "
				 "a result, not a sandbox failure)",
				 res->seconds, res->exit_code);
	else if (res->oom_killed)
		text = xasprintf("out of memory: the program was killed (exit code %d, %.3f s; "
				 "a result, not a sandbox failure)",
				 res->exit_code, res->seconds);
	else
		text = xasprintf("exit code %d, %.3f s%s", res->exit_code, res->seconds,
				 res->truncated ? ", output over the limit trimmed" : "");
	append_stream(&text, "stdout", res->out, res->out_len);
	append_stream(&text, "stderr", res->err, res->err_len);
	append_stream(&text, "value", res->value, res->value_len);
	append_outputs(&text, res);
	/* The streams may cut a UTF-8 sequence: the text is JSON too. */
	raw = text;
	return utf8_clean(raw, strlen(raw), &len);
}

/* {content: [{type: text, text}, item(arg) if item], structuredContent:
 * gen(arg) if gen, isError}: every tools/call reply has this shape. */
static void reply_content(struct mcp_call *c, const char *text,
			  void (*gen)(yajl_gen g, void *arg), void (*item)(yajl_gen g, void *arg),
			  void *arg, bool is_error)
{
	yajl_gen g;

	if (!mcp_call_may_reply(c))
		return;
	g = mcp_reply_begin(&c->id);
	jgen_str(g, "result");
	yajl_gen_map_open(g);
	jgen_str(g, "content");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "text");
	jgen_key_str(g, "text", text);
	yajl_gen_map_close(g);
	if (item)
		item(g, arg);
	yajl_gen_array_close(g);
	if (gen) {
		jgen_str(g, "structuredContent");
		gen(g, arg);
	}
	jgen_key_bool(g, "isError", is_error);
	yajl_gen_map_close(g);
	mcp_reply_send(c->conn, g);
}

static void gen_run_result(yajl_gen g, void *res)
{
	sandbox_result_gen(g, res);
}

/* The program ran: a result, whatever became of it. */
void mcp_reply_run_result(struct mcp_call *c, const struct sandbox_result *res)
{
	_cleanup_free_ char *text = summary_text(res);

	reply_content(c, text, gen_run_result, NULL, (void *)res, false);
}

/* The sandbox itself failed: a tool error the model can read. */
void mcp_reply_tool_error(struct mcp_call *c, const char *msg)
{
	_cleanup_free_ char *text = xasprintf("sandbox error: %s", msg);

	reply_content(c, text, NULL, NULL, NULL, true);
}

void mcp_reply_call_error(struct mcp_call *c, int code, const char *message, const char *data)
{
	if (mcp_call_may_reply(c))
		mcp_reply_error(c->conn, &c->id, code, message, data);
}

void mcp_reply_tool_result(struct mcp_call *c, const char *text,
			   void (*gen)(yajl_gen g, void *arg), void *arg)
{
	reply_content(c, text, gen, NULL, arg, false);
}

void mcp_reply_tool_result2(struct mcp_call *c, const char *text,
			    void (*gen)(yajl_gen g, void *arg), void (*item)(yajl_gen g, void *arg),
			    void *arg)
{
	reply_content(c, text, gen, item, arg, false);
}

/* What a run of call c gives the sandbox: its code, stdin, limits, and the
 * progress callbacks. */
void mcp_call_input(struct mcp_call *c, struct sandbox_input *in)
{
	*in = (struct sandbox_input){
		.code = c->a.code,
		.code_len = c->a.code_len,
		.stdin_data = c->a.stdin_data,
		.stdin_len = c->a.stdin_len,
		.timeout = c->a.timeout,
		.output_limit = c->s->o->output_limit,
		.cancel_fd = c->cancel_fd,
		.on_output = mcp_progress_output,
		.on_tick = mcp_progress_tick,
		.cb_arg = c,
	};
}
