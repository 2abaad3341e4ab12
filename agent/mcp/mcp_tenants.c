/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tenants: `agentsbx mcp --listen ... --tokens FILE`.  The file is the
 * operator's (owned by the user the server runs as, no access for group or
 * others, a regular file reached without a symlink) and holds
 *
 *   {"tenants": [{"name": "a", "token": "...", "sessions": 4,
 *                 "concurrent_runs": 2, "queued_runs": 4,
 *                 "memory": "128m", "cpus": 0.5}]}
 *
 * Each bearer token names its tenant (compared in constant time: every
 * tenant's token is compared, whole, whatever matched); each quota is
 * optional (absent: the server's own bound), memory and cpus are each run's
 * and may not be above the policy's caps (the file is refused, naming the
 * rule), and an unknown member is refused rather than ignored: a field an
 * operator believes enforced must be.  "allow_domains" (["pypi.org",
 * "*.pythonhosted.org"]) are the names the tenant's runs may reach through
 * the egress proxy, within the policy's egress.allowDomains (the file is
 * refused otherwise); a call may narrow them further.  A reload
 * (SIGHUP) swaps the table whole, or keeps the old one if the new file is
 * refused; sessions and calls in flight are untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "../../spec/policy/policy.h"
#include "mcp_private.h"

#define TOKENS_FILE_MAX (1u << 20)
#define TENANTS_MAX 1024
#define TOKEN_MIN 16
#define TOKEN_MAX 512

struct mcp_tenant {
	char name[MCP_TENANT_NAME_MAX];
	char *token;
	size_t token_len;
	struct mcp_quota q;
};

struct mcp_tenants {
	struct mcp_tenant *t;
	size_t n;
};

void mcp_tenants_free(struct mcp_tenants *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		if (t->t[i].token)
			explicit_bzero(t->t[i].token, t->t[i].token_len);
		free(t->t[i].token);
	}
	free(t->t);
	free(t);
}

size_t mcp_tenants_count(const struct mcp_tenants *t)
{
	return t ? t->n : 0;
}

/* ---- the file -------------------------------------------------------------- */

/* Operator-owned, 0600 or stricter, a regular file, no symlink. */
static int open_tokens_file(const char *path, char **buf, size_t *len, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return error_sys(err, "mcp: --tokens %s: open", path);
	if (fstat(fd, &st) < 0)
		return error_sys(err, "mcp: --tokens %s: fstat", path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, "mcp: --tokens %s: not a regular file", path);
	if (st.st_uid != geteuid())
		return error_set(err,
				 "mcp: --tokens %s: owned by uid %u, not by the server's user (uid %u): "
				 "refused (the operator's file only)",
				 path, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return error_set(err,
				 "mcp: --tokens %s: mode %04o lets group or others at the tokens: "
				 "refused (chmod 600 %s)",
				 path, (unsigned)(st.st_mode & 07777), path);
	return read_regular_fd(fd, path, TOKENS_FILE_MAX, buf, len, err);
}

static const char *const tenant_keys[] = {
	"name",
	"token",
	"sessions",
	"concurrent_runs",
	"queued_runs",
	"memory",
	"cpus",
	"allow_domains",
	NULL,
};

static int check_keys(struct jctx *c, yajl_val t)
{
	for (size_t i = 0; i < t->u.object.len; i++) {
		const char *k = t->u.object.keys[i];
		bool known = false;

		for (const char *const *p = tenant_keys; *p && !known; p++)
			known = !strcmp(*p, k);
		if (!known)
			return jfail(c, "%.64s: unknown member (a tenant has name, token, sessions, "
					"concurrent_runs, queued_runs, memory, cpus, allow_domains)",
				     k);
	}
	return 0;
}

static bool valid_name(const char *n)
{
	size_t len = strlen(n);

	if (!len || len >= MCP_TENANT_NAME_MAX)
		return false;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' || *n == '.'))
			return false;
	return true;
}

static int count_member(struct jctx *c, yajl_val t, const char *key, int *out)
{
	struct opt_i64 v = { 0 };

	if (jopt_i64(c, t, key, 0, 100000, &v) < 0)
		return -1;
	*out = v.set ? (int)v.v : 0;
	return 0;
}

static int memory_member(struct jctx *c, yajl_val t, uint64_t *out)
{
	yajl_val v = jmember(t, "memory");
	char num[32];

	*out = 0;
	if (!v)
		return 0;
	if (YAJL_IS_INTEGER(v))
		snprintf(num, sizeof(num), "%lld", YAJL_GET_INTEGER(v));
	else if (YAJL_IS_STRING(v))
		snprintf(num, sizeof(num), "%.30s", v->u.string);
	else
		return jfail(c, "memory: a size (\"128m\", or bytes)");
	if (sandbox_parse_size(num, out) < 0 || *out < (4u << 20))
		return jfail(c, "memory: %.30s: a size of at least 4m", num);
	return 0;
}

/* ["a", "*.b"] into "a,*.b" (the policy judges them with the rest). */
static int domains_member(struct jctx *c, yajl_val t, char *out, size_t cap)
{
	struct str_array a = { 0 };
	size_t n = 0;
	int r = 0;

	out[0] = '\0';
	if (!jmember(t, "allow_domains"))
		return 0;
	if (jstr_array(c, t, "allow_domains", &a) < 0)
		return -1;
	if (!a.len)
		r = jfail(c, "allow_domains: at least one name (leave it out for the policy's list)");
	for (size_t i = 0; i < a.len && r == 0; i++) {
		size_t l = strlen(a.items[i]);
		if (!policy_egress_pattern_valid(a.items[i]))
			r = jfail(c, "allow_domains[%zu]: \"%.64s\" is not a host name or \"*.suffix\"", i,
				  a.items[i]);
		else if (n + l + 2 > cap)
			r = jfail(c, "allow_domains: longer than %zu characters in all", cap - 1);
		else
			n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "," : "", a.items[i]);
	}
	for (size_t i = 0; i < a.len; i++)
		free(a.items[i]);
	free(a.items);
	return r;
}

static int cpus_member(struct jctx *c, yajl_val t, uint64_t *out)
{
	yajl_val v = jmember(t, "cpus");
	double d;

	*out = 0;
	if (!v)
		return 0;
	d = YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN;
	if (!isfinite(d) || d < 0.01 || d > 1024)
		return jfail(c, "cpus: a number from 0.01 to 1024");
	*out = (uint64_t)(d * 100000 + 0.5);
	return 0;
}

/* One tenant: its members, its limits against the policy's caps. */
static int parse_tenant(const struct global_opts *g, struct jctx *c, yajl_val v,
			struct mcp_tenant *t)
{
	_cleanup_free_ char *name = NULL;
	struct sandbox_config asked = { 0 };
	struct error perr;

	if (jcheck_object(c, v) < 0 || check_keys(c, v) < 0 ||
	    jreq_string(c, v, "name", &name) < 0 || jreq_string(c, v, "token", &t->token) < 0)
		return -1;
	if (!valid_name(name))
		return jfail(c, "name: 1 to 63 of A-Z a-z 0-9 . _ -");
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->token_len = strlen(t->token);
	if (t->token_len < TOKEN_MIN || t->token_len > TOKEN_MAX)
		return jfail(c, "token: %d to %d characters (a random one: openssl rand -hex 32)",
			     TOKEN_MIN, TOKEN_MAX);
	if (count_member(c, v, "sessions", &t->q.sessions) < 0 ||
	    count_member(c, v, "concurrent_runs", &t->q.concurrent_runs) < 0 ||
	    count_member(c, v, "queued_runs", &t->q.queued_runs) < 0 ||
	    memory_member(c, v, &t->q.memory) < 0 || cpus_member(c, v, &t->q.cpu_quota) < 0 ||
	    domains_member(c, v, t->q.allow_domains, sizeof(t->q.allow_domains)) < 0)
		return -1;
	asked.memory = t->q.memory;
	asked.cpu_quota = t->q.cpu_quota;
	asked.allow_domains = t->q.allow_domains[0] ? t->q.allow_domains : NULL;
	if (sandbox_check_limits(g, &asked, &perr) < 0)
		return jfail(c, "%s", perr.msg);
	return 0;
}

static int check_unique(struct jctx *c, const struct mcp_tenants *ts, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (!strcmp(ts->t[j].name, ts->t[i].name))
			return jfail(c, "name: \"%s\" is there twice", ts->t[i].name);
		if (!strcmp(ts->t[j].token, ts->t[i].token))
			return jfail(c, "token: the same as tenant %s's", ts->t[j].name);
	}
	return 0;
}

static int parse_tenants(const struct global_opts *g, struct jctx *c, yajl_val root,
			 struct mcp_tenants *ts)
{
	yajl_val list;
	size_t mark;

	if (jcheck_object(c, root) < 0)
		return -1;
	list = jmember(root, "tenants");
	mark = jpush_key(c, "tenants");
	if (!list || !YAJL_IS_ARRAY(list) || !list->u.array.len)
		return jfail(c, "required, a non-empty array");
	if (list->u.array.len > TENANTS_MAX)
		return jfail(c, "at most %d tenants", TENANTS_MAX);
	ts->t = xcalloc(list->u.array.len, sizeof(*ts->t));
	for (size_t i = 0; i < list->u.array.len; i++) {
		size_t m = jpush_index(c, i);

		ts->n = i + 1;
		if (parse_tenant(g, c, list->u.array.values[i], &ts->t[i]) < 0 ||
		    check_unique(c, ts, i) < 0)
			return -1;
		jpop(c, m);
	}
	jpop(c, mark);
	return 0;
}

int mcp_tenants_load(const struct global_opts *g, const char *path, struct mcp_tenants **out,
		     struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	struct mcp_tenants *ts;
	yajl_val root = NULL;
	struct jctx c;
	size_t len;
	int r;

	if (open_tokens_file(path, &buf, &len, err) < 0 ||
	    spec_json_load(buf, len, path, &root, err) < 0) {
		if (buf)
			explicit_bzero(buf, len);
		return -1;
	}
	ts = xcalloc(1, sizeof(*ts));
	jctx_init(&c, path, err);
	r = parse_tenants(g, &c, root, ts);
	yajl_tree_free(root);
	explicit_bzero(buf, len);
	if (r < 0) {
		mcp_tenants_free(ts);
		return error_prefix(err, "mcp: --tokens");
	}
	*out = ts;
	return 0;
}

/* ---- use ------------------------------------------------------------------- */

/* Equal bytes, in a time that depends on the stored token's length only. */
static bool same_token(const char *given, size_t n, const struct mcp_tenant *t)
{
	unsigned char d = n != t->token_len;

	for (size_t i = 0; i < t->token_len; i++)
		d |= (unsigned char)((i < n ? given[i] : 0) ^ t->token[i]);
	return d == 0;
}

bool mcp_tenants_auth(struct mcp_server *s, const char *token, size_t len,
		      char name[MCP_TENANT_NAME_MAX])
{
	const struct mcp_tenant *found = NULL;

	pthread_rwlock_rdlock(&s->tenants_lock);
	for (size_t i = 0; s->tenants && i < s->tenants->n; i++)
		if (same_token(token, len, &s->tenants->t[i]) && !found)
			found = &s->tenants->t[i];
	if (found)
		snprintf(name, MCP_TENANT_NAME_MAX, "%s", found->name);
	pthread_rwlock_unlock(&s->tenants_lock);
	return found != NULL;
}

void mcp_tenants_quota(struct mcp_server *s, const char *tenant, struct mcp_quota *q)
{
	memset(q, 0, sizeof(*q));
	pthread_rwlock_rdlock(&s->tenants_lock);
	for (size_t i = 0; *tenant && s->tenants && i < s->tenants->n; i++)
		if (!strcmp(s->tenants->t[i].name, tenant))
			*q = s->tenants->t[i].q;
	pthread_rwlock_unlock(&s->tenants_lock);
}

void mcp_tenants_swap(struct mcp_server *s, struct mcp_tenants *t)
{
	struct mcp_tenants *old;

	pthread_rwlock_wrlock(&s->tenants_lock);
	old = s->tenants;
	s->tenants = t;
	pthread_rwlock_unlock(&s->tenants_lock);
	mcp_tenants_free(old);
}

struct mcp_tenant_use *mcp_tenant_use_locked(struct mcp_server *s, const char *tenant)
{
	struct mcp_tenant_use *u;

	for (u = s->uses; u; u = u->next)
		if (!strcmp(u->tenant, tenant))
			return u;
	u = xcalloc(1, sizeof(*u));
	snprintf(u->tenant, sizeof(u->tenant), "%s", tenant);
	u->next = s->uses;
	s->uses = u;
	return u;
}

void mcp_tenant_uses_free(struct mcp_server *s)
{
	while (s->uses) {
		struct mcp_tenant_use *u = s->uses;

		s->uses = u->next;
		free(u);
	}
}
