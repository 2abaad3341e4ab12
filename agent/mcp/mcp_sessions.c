/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The session tools: session_create, session_run, session_write_file,
 * session_read_file, session_list_files, session_close.  A session is a
 * sandbox workspace kept between runs (sandbox_session.c): the files under
 * /workspace persist, each run is a new container.  At most --max-sessions
 * are open; one unused for --session-idle seconds is closed; all are
 * closed when the server ends (and if it is killed, the watchdog deletes
 * the containers and the workspaces go with the server's mount namespace).
 * Calls on one session take turns; calls on different sessions run
 * concurrently (session_run within --max-concurrent).
 *
 * A session is its tenant's (mcp_tenants.c; "" without tenants): another
 * tenant's session id is "no session", exactly as one never opened, and
 * session_list lists the caller's own.  session_create over the tenant's
 * sessions, memory or cpus quota is a JSON-RPC error naming the quota.
 * session_read_file gives a PNG, JPEG, GIF or WebP as MCP image content and
 * any other binary file as an embedded resource (a blob), besides the
 * base64 in structuredContent: clients that hand a model the content only
 * (Vercel's AI SDK) must still show it the picture.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../../lib/base64.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/utf8.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "../../spec/policy/policy.h"
#include "mcp_private.h"

#define LIST_MAX 1000 /* entries of one session_list_files */

/* ---- tools/list ------------------------------------------------------------- */

static void gen_tool_head(yajl_gen g, const char *name, const char *title, const char *desc)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "name", name);
	jgen_key_str(g, "title", title);
	jgen_key_str(g, "description", desc);
	jgen_str(g, "inputSchema");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
}

static void gen_tool_tail(yajl_gen g, const char *const *required)
{
	yajl_gen_map_close(g); /* properties */
	jgen_str(g, "required");
	yajl_gen_array_open(g);
	for (; *required; required++)
		jgen_str(g, *required);
	yajl_gen_array_close(g);
	jgen_key_bool(g, "additionalProperties", false);
	yajl_gen_map_close(g); /* inputSchema */
	yajl_gen_map_close(g);
}

static void gen_session_id(yajl_gen g)
{
	mcp_gen_prop(g, "session_id", "string", "The id session_create returned.");
}

static void gen_path(yajl_gen g, const char *desc)
{
	mcp_gen_prop(g, "path", "string", desc);
}

static void gen_encoding(yajl_gen g)
{
	jgen_str(g, "encoding");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	jgen_str(g, "enum");
	yajl_gen_array_open(g);
	jgen_str(g, "utf8");
	jgen_str(g, "base64");
	yajl_gen_array_close(g);
	jgen_key_str(g, "description", "utf8 (default) or base64 for binary content.");
	yajl_gen_map_close(g);
}

static void gen_number_prop(yajl_gen g, const char *name, const char *type, bool exclusive,
			    double min, const char *desc)
{
	jgen_str(g, name);
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", type);
	jgen_str(g, exclusive ? "exclusiveMinimum" : "minimum");
	yajl_gen_double(g, min);
	jgen_key_str(g, "description", desc);
	yajl_gen_map_close(g);
}

/* session_create's own limits and network: within the policy's caps. */
static void gen_limit_props(struct mcp_server *s, yajl_gen g)
{
	gen_number_prop(g, "memory_mb", "integer", false, 4,
			"Memory limit of each run in MiB (default: the server's); above the policy's limit is refused.");
	gen_number_prop(g, "cpus", "number", true, 0,
			"CPUs of each run (1.5); above the policy's limit is refused.");
	gen_number_prop(g, "pids", "integer", false, 1,
			"Process limit of each run; above the policy's limit is refused.");
	jgen_str(g, "network");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "boolean");
	jgen_key_str(g, "description", s->o->network ? "Join the network this server offers (if the policy allows networking)." : "This server offers no network: false only.");
	yajl_gen_map_close(g);
	jgen_str(g, "allow_domains");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "array");
	jgen_str(g, "items");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	yajl_gen_map_close(g);
	jgen_key_str(g, "description",
		     "Host names (or *.suffix) the session's runs may reach through the sandbox's egress proxy, within the policy's egress.allowDomains; none: the policy's own list (often: no network).");
	yajl_gen_map_close(g);
}

void mcp_sessions_list_tools(struct mcp_server *s, yajl_gen g)
{
	static const char *const none[] = { NULL }, *const sid[] = { "session_id", NULL },
				 *const run[] = { "session_id", "code", "language", NULL },
				 *const write[] = { "session_id", "path", "content", NULL },
				 *const read[] = { "session_id", "path", NULL };
	char desc[400];

	if (!s->o->max_sessions)
		return;
	snprintf(desc, sizeof(desc),
		 "Open a sandbox session: files under /workspace persist between its runs "
		 "(the rest of the filesystem does not). Closed by session_close, or after "
		 "%g s unused. At most %d sessions are open at once.",
		 s->o->session_idle, s->o->max_sessions);
	gen_tool_head(g, "session_create", "Open a sandbox session", desc);
	mcp_gen_language_prop(s, g);
	gen_limit_props(s, g);
	gen_tool_tail(g, none);

	gen_tool_head(g, "session_run", "Run code in a session",
		      "Run a program in a fresh container of the session, in /workspace; the "
		      "result is run_code's. Runs of one session take turns.");
	gen_session_id(g);
	mcp_gen_prop(g, "code", "string", "The program to run.");
	mcp_gen_language_prop(s, g);
	mcp_gen_timeout_prop(s, g);
	mcp_gen_prop(g, "stdin", "string", "Standard input for the program (default: empty).");
	gen_tool_tail(g, run);

	snprintf(desc, sizeof(desc),
		 "Write a file into the session's /workspace (parent directories are made; "
		 "at most %llu bytes).",
		 (unsigned long long)s->o->file_limit);
	gen_tool_head(g, "session_write_file", "Write a file into a session", desc);
	gen_session_id(g);
	gen_path(g, "/workspace/NAME, or NAME relative to /workspace.");
	mcp_gen_prop(g, "content", "string", "The content, as encoding says.");
	gen_encoding(g);
	gen_tool_tail(g, write);

	snprintf(desc, sizeof(desc),
		 "Read a file of the session's /workspace (at most %llu bytes); binary "
		 "content comes as base64 unless encoding says utf8.",
		 (unsigned long long)s->o->file_limit);
	gen_tool_head(g, "session_read_file", "Read a file from a session", desc);
	gen_session_id(g);
	gen_path(g, "/workspace/NAME, or NAME relative to /workspace.");
	gen_encoding(g);
	gen_tool_tail(g, read);

	gen_tool_head(g, "session_list_files", "List files of a session",
		      "List a directory of the session's /workspace: name, type, size.");
	gen_session_id(g);
	gen_path(g, "A directory; default /workspace.");
	gen_tool_tail(g, sid);

	gen_tool_head(g, "session_close", "Close a session",
		      "Close the session and delete everything in it.");
	gen_session_id(g);
	gen_tool_tail(g, sid);

	gen_tool_head(g, "session_list", "List your open sessions",
		      "The ids of the sessions you have open, with how long each has been unused.");
	gen_tool_tail(g, none);
}

/* ---- arguments ------------------------------------------------------------------ */

static int required_string(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
			   const char *key, char **out, size_t *len)
{
	yajl_val v = args ? jmember(args, key) : NULL;
	_cleanup_free_ char *msg = NULL;

	if (v && YAJL_IS_STRING(v)) {
		*len = strlen(v->u.string);
		*out = xstrndup(v->u.string, *len);
		return 0;
	}
	msg = xasprintf("arguments.%s: required, a string", key);
	return mcp_bad_args(cn, id, msg);
}

static int parse_encoding(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
			  bool *base64, bool *given)
{
	yajl_val v = jmember(args, "encoding");

	*base64 = false;
	*given = v != NULL;
	if (!v)
		return 0;
	if (YAJL_IS_STRING(v) && (!strcmp(v->u.string, "utf8") || !strcmp(v->u.string, "base64"))) {
		*base64 = !strcmp(v->u.string, "base64");
		return 0;
	}
	return mcp_bad_args(cn, id, "arguments.encoding: must be one of utf8, base64");
}

static int parse_content(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
			 struct call_args *a)
{
	const struct mcp_server *s = cn->s;
	_cleanup_free_ char *text = NULL, *msg = NULL;
	bool base64, given;
	size_t len;

	if (parse_encoding(cn, id, args, &base64, &given) < 0 ||
	    required_string(cn, id, args, "content", &text, &len) < 0)
		return -1;
	if (base64 && base64_decode(text, len, &a->content, &a->content_len) < 0)
		return mcp_bad_args(cn, id, "arguments.content: not valid base64");
	if (!base64) {
		a->content = take_ptr(text);
		a->content_len = len;
	}
	if (a->content_len > s->o->file_limit) {
		msg = xasprintf("arguments.content: %zu bytes, over the limit of %llu",
				a->content_len, (unsigned long long)s->o->file_limit);
		return mcp_bad_args(cn, id, msg);
	}
	return 0;
}

static int parse_path(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		      struct call_args *a, bool required)
{
	size_t len;

	if (!required && !jmember(args, "path")) {
		a->path = xstrdup(SANDBOX_SESSION_DIR);
		return 0;
	}
	if (required_string(cn, id, args, "path", &a->path, &len) < 0)
		return -1;
	if (!sandbox_session_rel(a->path))
		return mcp_bad_args(cn, id, "arguments.path: must be under /workspace (or relative to it) or /outputs");
	return 0;
}

/* A number member within [min, max] (integer if asked); absent: 0. */
static int parse_number(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
			const char *key, bool integer, double min, double max, double *out)
{
	yajl_val v = args ? jmember(args, key) : NULL;
	_cleanup_free_ char *msg = NULL;
	double d;

	*out = 0;
	if (!v || YAJL_IS_NULL(v))
		return 0;
	d = YAJL_IS_NUMBER(v) ? strtod(v->u.number.r, NULL) : NAN;
	if ((integer ? YAJL_IS_INTEGER(v) : YAJL_IS_NUMBER(v)) && d >= min && d <= max) {
		*out = d;
		return 0;
	}
	msg = xasprintf("arguments.%s: %s from %g to %g", key, integer ? "an integer" : "a number",
			min, max);
	return mcp_bad_args(cn, id, msg);
}

/* arguments.allow_domains: ["pypi.org", "*.pythonhosted.org"], kept as
 * "a,b" (judged against the tenant's and the policy's lists later). */
static int parse_domains(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
			 struct call_args *a)
{
	yajl_val v = args ? jmember(args, "allow_domains") : NULL;

	if (!v)
		return 0;
	if (!YAJL_IS_ARRAY(v) || !v->u.array.len || v->u.array.len > 64)
		return mcp_bad_args(cn, id, "arguments.allow_domains: an array of 1 to 64 host names");
	for (size_t i = 0; i < v->u.array.len; i++) {
		yajl_val e = v->u.array.values[i];
		if (!YAJL_IS_STRING(e) || !policy_egress_pattern_valid(e->u.string))
			return mcp_bad_args(cn, id, "arguments.allow_domains: each a host name or \"*.suffix\"");
		xappend_comma_list(&a->allow_domains, e->u.string);
	}
	return 0;
}

static int parse_limits(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
			struct call_args *a)
{
	yajl_val net = args ? jmember(args, "network") : NULL;
	double mb, cpus, pids;

	if (parse_number(cn, id, args, "memory_mb", true, 4, 1 << 20, &mb) < 0 ||
	    parse_number(cn, id, args, "cpus", false, 0.01, 1024, &cpus) < 0 ||
	    parse_number(cn, id, args, "pids", true, 1, 1 << 22, &pids) < 0)
		return -1;
	a->memory = (uint64_t)mb << 20;
	a->cpu_quota = (uint64_t)(cpus * 100000 + 0.5);
	a->pids = (int64_t)pids;
	if (net && !YAJL_IS_TRUE(net) && !YAJL_IS_FALSE(net))
		return mcp_bad_args(cn, id, "arguments.network: must be a boolean");
	a->network = net && YAJL_IS_TRUE(net);
	return parse_domains(cn, id, args, a);
}

int mcp_sessions_parse(struct mcp_conn *cn, const struct mcp_id *id, yajl_val args,
		       struct call_args *a)
{
	size_t len;
	bool given;

	switch (a->tool) {
	case TOOL_SESSION_CREATE:
		if (mcp_parse_language(cn, id, args, a, false) < 0)
			return -1;
		return parse_limits(cn, id, args, a);
	case TOOL_SESSION_RUN:
	case TOOL_SESSION_CLOSE:
		return required_string(cn, id, args, "session_id", &a->session_id, &len);
	case TOOL_SESSION_WRITE_FILE:
		if (required_string(cn, id, args, "session_id", &a->session_id, &len) < 0 ||
		    parse_path(cn, id, args, a, true) < 0)
			return -1;
		return parse_content(cn, id, args, a);
	case TOOL_SESSION_READ_FILE:
		if (required_string(cn, id, args, "session_id", &a->session_id, &len) < 0 ||
		    parse_path(cn, id, args, a, true) < 0)
			return -1;
		return parse_encoding(cn, id, args, &a->base64, &given);
	case TOOL_SESSION_LIST_FILES:
		if (required_string(cn, id, args, "session_id", &a->session_id, &len) < 0)
			return -1;
		return parse_path(cn, id, args, a, false);
	case TOOL_SESSION_LIST:
	default:
		return 0;
	}
}

/* ---- the registry ------------------------------------------------------------- */

static void session_free(struct mcp_server *s, struct mcp_session *ms)
{
	sandbox_session_close(s->g, &ms->ss);
	pthread_mutex_destroy(&ms->lock);
	free(ms);
}

/* Drop a reference taken by session_get; the last one of a closed session
 * deletes it. */
static void session_put(struct mcp_server *s, struct mcp_session *ms)
{
	bool last;

	pthread_mutex_lock(&s->lock);
	ms->last_used_ns = sandbox_now_ns();
	last = --ms->refs == 0 && ms->closed;
	pthread_mutex_unlock(&s->lock);
	if (last)
		session_free(s, ms);
}

/* The tenant's session id, or NULL: another tenant's is not there. */
static struct mcp_session *session_get(struct mcp_server *s, const char *id, const char *tenant)
{
	struct mcp_session *ms;

	pthread_mutex_lock(&s->lock);
	for (ms = s->sessions; ms && (strcmp(ms->id, id) || strcmp(ms->tenant, tenant));
	     ms = ms->next)
		;
	if (ms)
		ms->refs++;
	pthread_mutex_unlock(&s->lock);
	return ms;
}

/* Out of the list (under the server's lock); freed by the last put. */
static void session_unlink_locked(struct mcp_server *s, struct mcp_session *ms)
{
	for (struct mcp_session **p = &s->sessions; *p; p = &(*p)->next)
		if (*p == ms) {
			*p = ms->next;
			s->n_sessions--;
			mcp_tenant_use_locked(s, ms->tenant)->sessions--;
			ms->closed = true;
			return;
		}
}

void mcp_sessions_expire(struct mcp_server *s, bool all)
{
	long long idle_ns = (long long)(s->o->session_idle * 1e9), now = sandbox_now_ns();

	for (;;) {
		struct mcp_session *ms, *victim = NULL;

		pthread_mutex_lock(&s->lock);
		for (ms = s->sessions; ms && !victim; ms = ms->next)
			if (all || (ms->refs == 0 && now - ms->last_used_ns > idle_ns))
				victim = ms;
		if (victim) {
			session_unlink_locked(s, victim);
			victim->refs++;
		}
		pthread_mutex_unlock(&s->lock);
		if (!victim)
			return;
		if (!all)
			log_info("mcp: session %s closed after %g s unused", victim->id,
				 s->o->session_idle);
		session_put(s, victim);
	}
}

/* ---- the tools -------------------------------------------------------------- */

static void gen_session(yajl_gen g, void *arg)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "session_id", arg);
	jgen_key_str(g, "workspace", SANDBOX_SESSION_DIR);
	yajl_gen_map_close(g);
}

/* The session's own limits and network over the server's; what the
 * client asked for is judged against the policy's caps (refused with the
 * policy's field), the server's own flags are the policy's to lower. */
static int session_config(struct mcp_server *s, const struct call_args *a,
			  struct sandbox_config *cfg, struct error *err)
{
	struct sandbox_config asked = { .memory = a->memory, .cpu_quota = a->cpu_quota, .pids = a->pids };

	/* The tenant's quota first: what the client asks for replaces it. */

	if (a->memory)
		cfg->memory = a->memory;
	if (a->cpu_quota)
		cfg->cpu_quota = a->cpu_quota;
	if (a->pids)
		cfg->pids = a->pids;
	if (a->network) {
		if (!s->o->network)
			return error_set(err, "this server offers no network (agentsbx mcp --network PATH)");
		cfg->netns = asked.netns = s->o->network;
		if (sandbox_network_needs_annotation(s->g, &cfg->netns_annotate, err) < 0)
			return -1;
	}
	if (a->allow_domains)
		cfg->allow_domains = asked.allow_domains = a->allow_domains;
	return sandbox_check_limits(s->g, &asked, err);
}

/* What a tenant asks for against its quota: the quota it is over, or
 * NULL (why in msg). */
static const char *over_quota(const struct mcp_call *c, char *msg, size_t n)
{
	const struct mcp_quota *q = &c->quota;

	if (q->memory && c->a.memory > q->memory) {
		snprintf(msg, n, "memory: tenant %s may have %llu MiB per run, %llu MiB asked",
			 c->use->tenant, (unsigned long long)(q->memory >> 20),
			 (unsigned long long)(c->a.memory >> 20));
		return "memory";
	}
	if (q->cpu_quota && c->a.cpu_quota > q->cpu_quota) {
		snprintf(msg, n, "cpus: tenant %s may have %g CPUs per run, %g asked", c->use->tenant,
			 q->cpu_quota / 100000.0, c->a.cpu_quota / 100000.0);
		return "cpus";
	}
	if (q->allow_domains[0] && c->a.allow_domains &&
	    !mcp_domains_within(q->allow_domains, c->a.allow_domains)) {
		snprintf(msg, n, "allow_domains: tenant %s may reach only %.60s; %.60s asked", c->use->tenant,
			 q->allow_domains, c->a.allow_domains);
		return "allow_domains";
	}
	return NULL;
}

/* A place for one more session (the server's --max-sessions, the tenant's
 * sessions quota), taken; else the error is out and false. */
static bool session_place(struct mcp_call *c)
{
	struct mcp_server *s = c->s;
	char msg[400];
	bool full, over;

	pthread_mutex_lock(&s->lock);
	full = s->n_sessions >= s->o->max_sessions;
	over = c->quota.sessions && c->use->sessions >= c->quota.sessions;
	if (!full && !over) {
		s->n_sessions++; /* the place is taken while the session is made */
		c->use->sessions++;
	}
	snprintf(msg, sizeof(msg), "sessions: tenant %s may have %d open at once (close one first)",
		 c->use->tenant, c->quota.sessions);
	pthread_mutex_unlock(&s->lock);
	if (over) {
		mcp_reply_call_error(c, RPC_QUOTA_EXCEEDED, "Quota exceeded", msg);
	} else if (full) {
		snprintf(msg, sizeof(msg),
			 "%d sessions are open already (--max-sessions); close one first",
			 s->o->max_sessions);
		mcp_reply_tool_error(c, msg);
	}
	return !full && !over;
}

static void session_place_give(struct mcp_call *c)
{
	pthread_mutex_lock(&c->s->lock);
	c->s->n_sessions--;
	c->use->sessions--;
	pthread_mutex_unlock(&c->s->lock);
}

static void session_create(struct mcp_call *c)
{
	struct mcp_server *s = c->s;
	struct mcp_session *ms;
	struct sandbox_config cfg;
	_cleanup_free_ char *text = NULL;
	unsigned int rnd = 0;
	struct error err;
	char msg[400];
	const char *quota;

	if (s->setup_error) {
		mcp_reply_tool_error(c, s->setup_error);
		return;
	}
	if ((quota = over_quota(c, msg, sizeof(msg)))) {
		mcp_reply_call_error(c, RPC_QUOTA_EXCEEDED, "Quota exceeded", msg);
		return;
	}
	if (!session_place(c))
		return;
	ms = xcalloc(1, sizeof(*ms));
	pthread_mutex_init(&ms->lock, NULL);
	snprintf(ms->tenant, sizeof(ms->tenant), "%s", c->use->tenant);
	mcp_sandbox_config_for(s, c->a.lang, &cfg);
	mcp_config_apply_quota(&c->quota, &cfg);
	if (session_config(s, &c->a, &cfg, &err) < 0 ||
	    sandbox_session_open(s->g, &cfg, &ms->ss, &err) < 0) {
		pthread_mutex_destroy(&ms->lock);
		free(ms);
		session_place_give(c);
		mcp_reply_tool_error(c, err.msg);
		return;
	}
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (unsigned int)sandbox_now_ns();
	snprintf(ms->id, sizeof(ms->id), "%s-%08x", ms->ss.sb.id, rnd);
	ms->last_used_ns = sandbox_now_ns();
	pthread_mutex_lock(&s->lock);
	ms->next = s->sessions;
	s->sessions = ms;
	pthread_mutex_unlock(&s->lock);
	text = xasprintf("session %s opened: files under %s persist between its runs", ms->id,
			 SANDBOX_SESSION_DIR);
	mcp_reply_tool_result(c, text, gen_session, ms->id);
}

static void session_run(struct mcp_call *c, struct mcp_session *ms)
{
	struct mcp_server *s = c->s;
	struct sandbox_input in;
	struct sandbox_result res = { 0 };
	struct error err;
	char note[96];

	mcp_call_input(c, &in);

	mcp_progress_note(c, "started");
	if (sandbox_session_run(s->g, &ms->ss, c->a.lang, &in, &res, &err) < 0) {
		mcp_reply_tool_error(c, err.msg);
		return;
	}
	if (res.cancelled) {
		mcp_reply_tool_error(c, "the server is stopping; the program was killed");
	} else {
		mcp_progress_flush(c);
		snprintf(note, sizeof(note), "finished: exit code %d in %.3f s", res.exit_code,
			 res.seconds);
		mcp_progress_note(c, note);
		mcp_progress_settle(c);
		mcp_reply_run_result(c, &res);
	}
	sandbox_result_free(&res);
}

struct file_out {
	const char *path;
	const char *data;
	size_t len;
	bool base64;
	const char *mime; /* binary content: what it is */
	bool image;
};

static void gen_file(yajl_gen g, void *arg)
{
	struct file_out *f = arg;

	yajl_gen_map_open(g);
	jgen_key_str(g, "path", f->path);
	jgen_str(g, "size");
	yajl_gen_integer(g, (long long)f->len);
	if (f->data) {
		jgen_key_str(g, "encoding", f->base64 ? "base64" : "utf8");
		jgen_str(g, "content");
		yajl_gen_string(g, (const unsigned char *)f->data, strlen(f->data));
	}
	yajl_gen_map_close(g);
}

static void session_write(struct mcp_call *c, struct mcp_session *ms)
{
	struct file_out f = { .path = c->a.path, .len = c->a.content_len };
	_cleanup_free_ char *text = NULL;
	struct error err;

	if (sandbox_session_write_file(&ms->ss, c->a.path, c->a.content, c->a.content_len,
				       &err) < 0) {
		mcp_reply_tool_error(c, err.msg);
		return;
	}
	text = xasprintf("wrote %zu bytes to %s", c->a.content_len, c->a.path);
	mcp_reply_tool_result(c, text, gen_file, &f);
}

/* The image types models take, by their first bytes; NULL for others. */
static const char *image_type(const unsigned char *d, size_t n)
{
	if (n >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8))
		return "image/png";
	if (n >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff)
		return "image/jpeg";
	if (n >= 6 && (!memcmp(d, "GIF87a", 6) || !memcmp(d, "GIF89a", 6)))
		return "image/gif";
	if (n >= 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4))
		return "image/webp";
	return NULL;
}

/* The file's bytes as the content a model sees: an image, or an embedded
 * resource (file:///workspace/..., a blob). */
static void gen_file_item(yajl_gen g, void *arg)
{
	struct file_out *f = arg;
	_cleanup_free_ char *uri = NULL;
	const char *rel = sandbox_session_rel(f->path);

	yajl_gen_map_open(g);
	if (f->image) {
		jgen_key_str(g, "type", "image");
		jgen_key_str(g, "data", f->data);
		jgen_key_str(g, "mimeType", f->mime);
	} else {
		uri = f->path[0] == '/' ? xasprintf("file://%s", f->path) :
					  xasprintf("file://" SANDBOX_SESSION_DIR "/%s", rel ? rel : f->path);
		jgen_key_str(g, "type", "resource");
		jgen_str(g, "resource");
		yajl_gen_map_open(g);
		jgen_key_str(g, "uri", uri);
		jgen_key_str(g, "mimeType", f->mime);
		jgen_key_str(g, "blob", f->data);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

static void session_read(struct mcp_call *c, struct mcp_session *ms)
{
	_cleanup_free_ char *data = NULL, *encoded = NULL, *text = NULL;
	struct file_out f = { .path = c->a.path };
	bool binary;
	struct error err;

	if (sandbox_session_read_file(&ms->ss, c->a.path, c->s->o->file_limit, &data, &f.len,
				      &err) < 0) {
		mcp_reply_tool_error(c, err.msg);
		return;
	}
	/* Text as it is when it can be; anything else as base64. */
	binary = !utf8_is_text(data, f.len);
	f.base64 = c->a.base64 || binary;
	if (f.base64)
		encoded = base64_encode(data, f.len);
	f.data = f.base64 ? encoded : data;
	if (binary) {
		f.mime = image_type((const unsigned char *)data, f.len);
		f.image = f.mime != NULL;
		if (!f.mime)
			f.mime = "application/octet-stream";
		text = xasprintf("%s: %zu bytes of %s, %s (and base64 in structuredContent.content)",
				 c->a.path, f.len, f.mime,
				 f.image ? "shown as image content" : "as an embedded resource");
		mcp_reply_tool_result2(c, text, gen_file, gen_file_item, &f);
		return;
	}
	if (f.base64)
		text = xasprintf("%s: %zu bytes, base64 in structuredContent.content", c->a.path,
				 f.len);
	else
		text = xasprintf("%s: %zu bytes\n%.*s", c->a.path, f.len,
				 f.len > 8192 ? 8192 : (int)f.len, data);
	mcp_reply_tool_result(c, text, gen_file, &f);
}

struct listing {
	struct sandbox_dirent *e;
	size_t n;
	const char *path;
};

static void gen_listing(yajl_gen g, void *arg)
{
	struct listing *l = arg;

	yajl_gen_map_open(g);
	jgen_key_str(g, "path", l->path);
	jgen_str(g, "entries");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < l->n; i++) {
		size_t len;
		_cleanup_free_ char *name = utf8_clean(l->e[i].name, strlen(l->e[i].name),
						       &len);
		yajl_gen_map_open(g);
		jgen_key_str(g, "name", name);
		jgen_key_str(g, "type", l->e[i].type);
		jgen_str(g, "size");
		yajl_gen_integer(g, (long long)l->e[i].size);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

/* One line more of the listing's text: appended in place (an xasprintf of
 * the text so far per line copied all the lines before it each time). */
static void text_add(char **buf, size_t *len, size_t *cap, const char *type, const char *name,
		     unsigned long long size)
{
	int n = snprintf(NULL, 0, "\n%s %s %llu", type, name, size);

	*buf = xgrow(*buf, cap, *len + (size_t)n + 1, 1);
	snprintf(*buf + *len, (size_t)n + 1, "\n%s %s %llu", type, name, size);
	*len += (size_t)n;
}

static void session_list(struct mcp_call *c, struct mcp_session *ms)
{
	struct listing l = { .path = c->a.path };
	char *raw = xasprintf("%s:", c->a.path), *text;
	size_t len = strlen(raw), cap = len + 1;
	struct error err;

	if (sandbox_session_list(&ms->ss, c->a.path, &l.e, &l.n, LIST_MAX, &err) < 0) {
		free(raw);
		mcp_reply_tool_error(c, err.msg);
		return;
	}
	for (size_t i = 0; i < l.n; i++)
		text_add(&raw, &len, &cap, l.e[i].type, l.e[i].name, l.e[i].size);
	text = utf8_clean(raw, len, &(size_t){ 0 });
	free(raw);
	mcp_reply_tool_result(c, text, gen_listing, &l);
	free(text);
	free(l.e);
}

static void session_close(struct mcp_call *c, struct mcp_session *ms)
{
	_cleanup_free_ char *text = xasprintf("session %s closed", ms->id);

	pthread_mutex_lock(&c->s->lock);
	if (!ms->closed)
		session_unlink_locked(c->s, ms);
	pthread_mutex_unlock(&c->s->lock);
	mcp_reply_tool_result(c, text, NULL, NULL);
}

struct own_sessions {
	char (*ids)[48];
	double *unused;
	size_t n;
};

static void gen_own_sessions(yajl_gen g, void *arg)
{
	struct own_sessions *o = arg;

	yajl_gen_map_open(g);
	jgen_str(g, "sessions");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < o->n; i++) {
		yajl_gen_map_open(g);
		jgen_key_str(g, "session_id", o->ids[i]);
		jgen_str(g, "unused_seconds");
		yajl_gen_double(g, o->unused[i]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

/* The caller's tenant's sessions, nobody else's. */
static void session_list_own(struct mcp_call *c)
{
	struct mcp_server *s = c->s;
	struct own_sessions o = { 0 };
	long long now = sandbox_now_ns();
	char *text, *old;

	pthread_mutex_lock(&s->lock);
	o.ids = xcalloc((size_t)s->n_sessions + 1, sizeof(*o.ids));
	o.unused = xcalloc((size_t)s->n_sessions + 1, sizeof(*o.unused));
	for (struct mcp_session *ms = s->sessions; ms && o.n < (size_t)s->n_sessions; ms = ms->next)
		if (!strcmp(ms->tenant, c->use->tenant)) {
			memcpy(o.ids[o.n], ms->id, sizeof(ms->id));
			o.unused[o.n++] = (double)(now - ms->last_used_ns) / 1e9;
		}
	pthread_mutex_unlock(&s->lock);
	text = xasprintf("%zu open session%s", o.n, o.n == 1 ? "" : "s");
	for (size_t i = 0; i < o.n; i++) {
		old = text;
		text = xasprintf("%s\n%s (unused %.0f s)", old, o.ids[i], o.unused[i]);
		free(old);
	}
	mcp_reply_tool_result(c, text, gen_own_sessions, &o);
	free(text);
	free(o.ids);
	free(o.unused);
}

void mcp_sessions_run(struct mcp_call *c)
{
	struct mcp_session *ms;
	_cleanup_free_ char *msg = NULL;

	if (c->a.tool == TOOL_SESSION_CREATE) {
		session_create(c);
		return;
	}
	if (c->a.tool == TOOL_SESSION_LIST) {
		session_list_own(c);
		return;
	}
	ms = session_get(c->s, c->a.session_id, c->use->tenant);
	if (!ms) {
		msg = xasprintf("no session %.64s (closed, expired, or never opened)",
				c->a.session_id);
		mcp_reply_tool_error(c, msg);
		return;
	}
	pthread_mutex_lock(&ms->lock);
	if (ms->closed)
		mcp_reply_tool_error(c, "the session was closed");
	else if (c->a.tool == TOOL_SESSION_RUN)
		session_run(c, ms);
	else if (c->a.tool == TOOL_SESSION_WRITE_FILE)
		session_write(c, ms);
	else if (c->a.tool == TOOL_SESSION_READ_FILE)
		session_read(c, ms);
	else if (c->a.tool == TOOL_SESSION_LIST_FILES)
		session_list(c, ms);
	else if (c->a.tool == TOOL_SESSION_CLOSE)
		session_close(c, ms);
	pthread_mutex_unlock(&ms->lock);
	session_put(c->s, ms);
}
