/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hooks rule of the policy.  An OCI hook runs on the host as root with
 * every capability, and config.json chooses its binary, its argv and its
 * environment: a hook is a command written by a stranger.  So under enforce
 * a hook runs only when the whole command matches a rule:
 *
 *  - the built-in rule for Docker's own hook (dockerHook: the dockerd
 *    binaries it may come from): `libnetwork-setkey -exec-root=E ID CTRL`
 *    from a dockerd, where ID is this container's id, E is the exec root
 *    of the Docker that made this bundle (the bundle is
 *    E/containerd/daemon/io.containerd.runtime.v2.task/moby/ID; runtime/
 *    locates both), CTRL a controller id in hex, and no environment;
 *  - an operator's hookRules entry: the binary, the kinds, argv element by
 *    element (fnmatch globs, "${id}" standing for this container's id) and
 *    the environment entries it may carry (globs; none when not listed).
 *
 * Whatever a rule says, LD_* and GCONV_PATH-like loader variables are
 * refused (a hook's environment chooses what its binary loads).
 * runtime/ opens each hook path, locates the file (runtime/judge/), judges
 * the command here, and executes the very fd it judged.
 *
 * startContainer hooks are refused whatever their path: the spec has them
 * resolved in the container's namespace, i.e. looked up in the image,
 * which is hostile.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../lib/jsongen.h"
#include "../internal.h"
#include "policy.h"
#include "policy_parse.h"

#define DOCKER_TASK_DIR "/containerd/daemon/io.containerd.runtime.v2.task/moby/"

static bool is_hex(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);

	if (n < min || n > max)
		return false;
	return strspn(s, "0123456789abcdef") == n;
}

/* Variables that choose what a binary loads or runs before main(). */
static bool loader_variable(const char *entry)
{
	static const char *const names[] = {
		"LD_",
		"GCONV_PATH=",
		"GLIBC_TUNABLES=",
		"MALLOC_",
		"HOSTALIASES=",
		"LOCALDOMAIN=",
		"RES_OPTIONS=",
		"NLSPATH=",
		NULL,
	};

	for (size_t i = 0; names[i]; i++)
		if (str_has_prefix(entry, names[i]))
			return true;
	return false;
}

const char *policy_docker_hook_exec_root(const struct oci_hook *hook)
{
	const char *a;

	if (hook->args.len != 4 || strcmp(hook->args.items[0], "libnetwork-setkey"))
		return NULL;
	a = hook->args.items[1];
	if (!str_has_prefix(a, "-exec-root=") || a[strlen("-exec-root=")] != '/')
		return NULL;
	return a + strlen("-exec-root=");
}

static bool docker_rule_matches(const struct policy *p, const struct hook_subject *h)
{
	const struct oci_hook *hook = h->hook;
	_cleanup_free_ char *want = NULL;

	if (h->kind != HOOK_PRESTART && h->kind != HOOK_CREATE_RUNTIME)
		return false;
	if (!policy_bind_allowed(&p->docker_hook, h->real_path) || !h->id || !h->bundle ||
	    !h->exec_root || !policy_docker_hook_exec_root(hook))
		return false;
	if (hook->has_env && hook->env.len)
		return false;
	if (strcmp(hook->args.items[2], h->id) || !is_hex(hook->args.items[3], 12, 64))
		return false;
	/* The exec root named is the Docker whose bundle this is. */
	want = xasprintf("%s" DOCKER_TASK_DIR "%s", h->exec_root, h->id);
	return !strcmp(want, h->bundle);
}

/* pattern with "${id}" replaced by the container's id. */
static bool arg_matches(const char *pattern, const char *arg, const char *id)
{
	const char *at = strstr(pattern, "${id}");
	_cleanup_free_ char *expanded = NULL;

	if (at) {
		if (!id)
			return false;
		expanded = xasprintf("%.*s%s%s", (int)(at - pattern), pattern, id,
				     at + strlen("${id}"));
		pattern = expanded;
	}
	return fnmatch(pattern, arg, 0) == 0;
}

static bool env_allowed(const struct policy_hook_rule *r, const char *entry)
{
	for (size_t i = 0; i < r->env.len; i++)
		if (fnmatch(r->env.items[i], entry, 0) == 0)
			return true;
	return false;
}

static bool operator_rule_matches(const struct policy_hook_rule *r, const struct hook_subject *h)
{
	const struct oci_hook *hook = h->hook;

	if (strcmp(r->path, h->real_path) || !(r->kinds & (1u << h->kind)))
		return false;
	if (hook->args.len != r->args.len)
		return false;
	for (size_t i = 0; i < r->args.len; i++)
		if (!arg_matches(r->args.items[i], hook->args.items[i], h->id))
			return false;
	for (size_t i = 0; hook->has_env && i < hook->env.len; i++)
		if (!env_allowed(r, hook->env.items[i]))
			return false;
	return true;
}

static int refuse(const struct policy *p, const struct hook_subject *h, const char *why,
		  struct error *err)
{
	const char *name = hook_kind_name(h->kind);

	return error_set(err,
			 "policy: hooks.%s[%zu] %s%s%s%s: refused by the hooks rule (%s): %s",
			 name ? name : "unknown", h->index, h->hook->path ? h->hook->path : "(null)",
			 h->real_path ? " (the file " : "", h->real_path ? h->real_path : "",
			 h->real_path ? ")" : "", p->source ? p->source : "policy", why);
}

int policy_hook_judge(const struct policy *p, const struct hook_subject *h, struct error *err)
{
	const struct oci_hook *hook = h->hook;

	if (h->kind == HOOK_START_CONTAINER || !h->real_path)
		return refuse(p, h, "a startContainer hook is looked up in the container's root filesystem and runs with the runtime's capabilities; no rule allows it",
			      err);
	for (size_t i = 0; hook->has_env && i < hook->env.len; i++)
		if (loader_variable(hook->env.items[i]))
			return refuse(p, h, "its environment sets a variable that chooses what the binary loads (LD_*, GCONV_PATH, ...); no rule allows it",
				      err);
	if (docker_rule_matches(p, h))
		return 0;
	for (size_t i = 0; i < p->n_hook_rules; i++)
		if (operator_rule_matches(&p->hook_rules[i], h))
			return 0;
	return refuse(p, h, "a hook runs on the host as root, so its whole command (binary, argv, env) must match a rule: Docker's own libnetwork-setkey hook for this container (dockerHook), or an entry of the policy's hookRules",
		      err);
}

/* ---- hookRules in the policy file ------------------------------------------ */

static const char *const hook_rule_keys[] = { "path", "kinds", "args", "env", NULL };

static int parse_rule_kinds(struct jctx *c, yajl_val v, struct policy_hook_rule *r)
{
	struct str_array kinds = { 0 };
	char q[QUOTE_MAX];
	int ret = 0;

	if (!jmember(v, "kinds")) { /* every kind that runs on the host */
		r->kinds = ~(1u << HOOK_START_CONTAINER) & ((1u << HOOK_KIND_MAX) - 1);
		return 0;
	}
	if (jstr_array(c, v, "kinds", &kinds) < 0)
		return -1;
	for (size_t i = 0; i < kinds.len && !ret; i++) {
		int k = -1;

		for (int j = 0; j < HOOK_KIND_MAX; j++)
			if (!strcmp(kinds.items[i], hook_kind_name((enum hook_kind)j)))
				k = j;
		if (k < 0 || k == HOOK_START_CONTAINER) {
			jpush_key(c, "kinds");
			jpush_index(c, i);
			ret = jfail(c, "%s: not a hook kind that runs on the host (prestart, createRuntime, createContainer, poststart, poststop)",
				    spec_quote(q, kinds.items[i]));
		}
		r->kinds |= k >= 0 ? 1u << k : 0;
	}
	spec_str_array_free(&kinds);
	return ret;
}

static int parse_hook_rule(struct jctx *c, yajl_val v, void *out)
{
	struct policy_hook_rule *r = out;
	char q[QUOTE_MAX];

	if (jcheck_object(c, v) < 0 || policy_check_known_keys(c, v, hook_rule_keys) < 0 ||
	    jreq_string(c, v, "path", &r->path) < 0 || jstr_array(c, v, "args", &r->args) < 0 ||
	    jstr_array(c, v, "env", &r->env) < 0 || parse_rule_kinds(c, v, r) < 0)
		return -1;
	if (!spec_path_is_absolute(r->path) || strstr(r->path, "/..")) {
		jpush_key(c, "path");
		return jfail(c, "must be an absolute path to the hook's binary, got %s",
			     spec_quote(q, r->path));
	}
	if (!jmember(v, "args")) {
		jpush_key(c, "args");
		return jfail(c, "required: the hook's argv, element by element (globs; \"${id}\" is the container's id)");
	}
	return 0;
}

static void rule_free(struct policy_hook_rule *r)
{
	free(r->path);
	spec_str_array_free(&r->args);
	spec_str_array_free(&r->env);
}

void policy_hook_rules_free(struct policy *p)
{
	for (size_t i = 0; i < p->n_hook_rules; i++)
		rule_free(&p->hook_rules[i]);
	free(p->hook_rules);
	p->hook_rules = NULL;
	p->n_hook_rules = 0;
}

int policy_parse_hook_rules(struct jctx *c, yajl_val root, struct policy *p, bool extend)
{
	struct policy_hook_rule *add = NULL;
	size_t n = 0;

	if (!jmember(root, "hookRules"))
		return 0;
	if (JOBJECT_ARRAY(c, root, "hookRules", parse_hook_rule, add, n) < 0) {
		for (size_t i = 0; i < n; i++)
			rule_free(&add[i]);
		free(add);
		return -1;
	}
	if (!extend)
		policy_hook_rules_free(p);
	p->hook_rules = xrealloc(p->hook_rules, (p->n_hook_rules + n + 1) * sizeof(*add));
	if (n)
		memcpy(p->hook_rules + p->n_hook_rules, add, n * sizeof(*add));
	p->n_hook_rules += n;
	free(add);
	return 0;
}

void policy_hook_rules_gen(yajl_gen g, const struct policy *p)
{
	jgen_str(g, "hookRules");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->n_hook_rules; i++) {
		const struct policy_hook_rule *r = &p->hook_rules[i];

		yajl_gen_map_open(g);
		jgen_str(g, "path");
		jgen_str(g, r->path);
		jgen_str(g, "kinds");
		yajl_gen_array_open(g);
		for (int k = 0; k < HOOK_KIND_MAX; k++)
			if (r->kinds & (1u << k))
				jgen_str(g, hook_kind_name((enum hook_kind)k));
		yajl_gen_array_close(g);
		policy_gen_strv(g, "args", &r->args);
		policy_gen_strv(g, "env", &r->env);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}
