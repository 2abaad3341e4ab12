/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names a container may reach: egress.allowDomains (exact names and
 * "*.suffix", which is every name below suffix, never suffix itself), and
 * egress.denyDomains, which wins.  A name is compared as DNS compares it:
 * case-insensitively, without the root's trailing dot.  Pure functions,
 * for the policy (a narrowing must stay within the list) and the proxy.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../lib/jsongen.h"
#include "../internal.h"
#include "policy_parse.h"

static bool one_matches(const char *pattern, const char *name)
{
	size_t pn, nn;

	if (pattern[0] == '*' && pattern[1] == '.') {
		pn = strlen(pattern + 1); /* ".suffix" */
		nn = strlen(name);
		return nn > pn && !strcasecmp(name + nn - pn, pattern + 1);
	}
	return !strcasecmp(pattern, name);
}

static bool any_matches(const struct str_array *list, const char *name)
{
	for (size_t i = 0; i < list->len; i++)
		if (one_matches(list->items[i], name))
			return true;
	return false;
}

enum egress_verdict policy_egress_name(const struct policy_egress_names *n, const char *name)
{
	if (any_matches(&n->deny, name))
		return EGRESS_DENIED;
	return any_matches(&n->allow, name) ? EGRESS_ALLOWED : EGRESS_NOT_LISTED;
}

bool policy_egress_pattern_valid(const char *p)
{
	const char *s = p[0] == '*' && p[1] == '.' ? p + 2 : p;
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > POLICY_EGRESS_NAME_MAX || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (; *s; s++) {
		if (*s == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*s) || *s == '-' || *s == '_') || ++label > 63)
			return false;
	}
	return true;
}

bool policy_egress_pattern_within(const struct policy_egress_names *n, const char *p)
{
	if (p[0] == '*' && p[1] == '.') {
		/* a wildcard is within the list only under one of its wildcards */
		for (size_t i = 0; i < n->allow.len; i++) {
			const char *a = n->allow.items[i];
			if (a[0] == '*' && a[1] == '.' &&
			    (!strcasecmp(a, p) || one_matches(a, p + 2)))
				return true;
		}
		return false;
	}
	return policy_egress_name(n, p) == EGRESS_ALLOWED;
}

/* ---- the policy file's "egress" ----------------------------------------------------- */

static const char *const egress_keys[] = { "allowDomains", "denyDomains", "ports", "hosts", NULL };

static int parse_patterns(struct jctx *c, yajl_val e, const char *key, struct str_array *out)
{
	struct str_array a = { 0 };

	if (!jmember(e, key))
		return 0;
	if (jstr_array(c, e, key, &a) < 0)
		return -1;
	for (size_t i = 0; i < a.len; i++)
		if (!policy_egress_pattern_valid(a.items[i])) {
			jfail(c, "%s[%zu]: \"%s\" is not a host name or \"*.suffix\"", key, i,
			      a.items[i]);
			spec_str_array_free(&a);
			return -1;
		}
	spec_str_array_free(out);
	*out = a;
	return 0;
}

static int parse_ports(struct jctx *c, yajl_val e, struct policy *p)
{
	uint32_t *ports = NULL;
	size_t n = 0;

	if (!jmember(e, "ports"))
		return 0;
	if (ju32_array(c, e, "ports", &ports, &n) < 0)
		return -1;
	if (n == 0 || n > POLICY_EGRESS_PORTS_MAX) {
		free(ports);
		return jfail(c, "ports: 1 to %d ports", POLICY_EGRESS_PORTS_MAX);
	}
	for (size_t i = 0; i < n; i++) {
		if (ports[i] == 0 || ports[i] > 65535 || ports[i] == 53) {
			unsigned bad = ports[i];
			free(ports);
			return jfail(c, "ports[%zu]: %u is not a TCP port the proxy can serve (1-65535, not 53)",
				     i, bad);
		}
		p->egress_ports[i] = ports[i];
	}
	p->n_egress_ports = n;
	free(ports);
	return 0;
}

/* "hosts": {"name": "address"}: the operator's pins, kept as "name=address". */
static int parse_hosts(struct jctx *c, yajl_val e, struct policy *p)
{
	struct str_map m = { 0 };

	if (!jmember(e, "hosts"))
		return 0;
	if (jstr_map(c, e, "hosts", &m) < 0)
		return -1;
	spec_str_array_free(&p->egress_hosts);
	for (size_t i = 0; i < m.len; i++) {
		unsigned char buf[16];
		_cleanup_free_ char *pin = NULL;

		if (!policy_egress_pattern_valid(m.keys[i]) || m.keys[i][0] == '*' ||
		    (inet_pton(AF_INET, m.values[i], buf) != 1 &&
		     inet_pton(AF_INET6, m.values[i], buf) != 1)) {
			jfail(c, "hosts: \"%s\": \"%s\" is not a host name and an IP address", m.keys[i],
			      m.values[i]);
			spec_str_map_free(&m);
			return -1;
		}
		pin = xasprintf("%s=%s", m.keys[i], m.values[i]);
		policy_strv_add(&p->egress_hosts, pin);
	}
	spec_str_map_free(&m);
	return 0;
}

int policy_parse_egress(struct jctx *c, yajl_val root, struct policy *p)
{
	yajl_val e = jmember(root, "egress");
	size_t mark;

	if (!e)
		return 0;
	mark = jpush_key(c, "egress");
	if (jcheck_object(c, e) < 0 || policy_check_known_keys(c, e, egress_keys) < 0 ||
	    parse_patterns(c, e, "allowDomains", &p->egress.allow) < 0 ||
	    parse_patterns(c, e, "denyDomains", &p->egress.deny) < 0 || parse_ports(c, e, p) < 0 ||
	    parse_hosts(c, e, p) < 0)
		return -1;
	jpop(c, mark);
	return 0;
}

void policy_egress_gen(yajl_gen g, const struct policy *p)
{
	jgen_str(g, "egress");
	yajl_gen_map_open(g);
	policy_gen_strv(g, "allowDomains", &p->egress.allow);
	policy_gen_strv(g, "denyDomains", &p->egress.deny);
	jgen_str(g, "ports");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < p->n_egress_ports; i++)
		yajl_gen_integer(g, p->egress_ports[i]);
	yajl_gen_array_close(g);
	jgen_str(g, "hosts");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < p->egress_hosts.len; i++) {
		const char *eq = strchr(p->egress_hosts.items[i], '=');
		_cleanup_free_ char *name = xstrndup(p->egress_hosts.items[i],
						     (size_t)(eq - p->egress_hosts.items[i]));
		jgen_key_str(g, name, eq + 1);
	}
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

/* ---- the rule ------------------------------------------------------------------------ */

#define EGRESS_ANNOTATION "agentsbx.egress.allow"

/* The container's own request (agentsbx.egress.allow=a,b: what
 * `sandbox --allow-domain` and the engines' annotations carry), each name
 * within the policy's list; into out.  No request: the policy's list. */
static int asked_names(const struct policy *p, const struct oci_spec *s, struct str_array *out,
		       struct error *err)
{
	const char *v = NULL;
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;

	for (size_t i = 0; i < s->annotations.len; i++)
		if (!strcmp(s->annotations.keys[i], EGRESS_ANNOTATION))
			v = s->annotations.values[i];
	if (!v) {
		for (size_t i = 0; i < p->egress.allow.len; i++)
			policy_strv_add(out, p->egress.allow.items[i]);
		return 0;
	}
	copy = xstrdup(v);
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!policy_egress_pattern_valid(t))
			return error_set(err, "policy: annotation %s: \"%s\" is not a host name or \"*.suffix\"",
					 EGRESS_ANNOTATION, t);
		if (!policy_egress_pattern_within(&p->egress, t))
			return error_set(err, "policy: the container asks to reach %s (annotation %s) [rule egress; the policy field egress.allowDomains (list %s) would allow it] (%s)",
					 t, EGRESS_ANNOTATION, t, p->source);
		policy_strv_add(out, t);
	}
	if (!out->len)
		return error_set(err, "policy: annotation %s names no host", EGRESS_ANNOTATION);
	return 0;
}

/* Clients that honour the proxy variables go through its HTTP proxy port
 * (CONNECT); the rest are redirected there by the namespace's rules. */
static void add_proxy_env(struct oci_spec *s, struct policy_changes *ch)
{
	static const char *const vars[] = {
		"HTTP_PROXY=http://" POLICY_EGRESS_ADDR ":3128",
		"HTTPS_PROXY=http://" POLICY_EGRESS_ADDR ":3128",
		"http_proxy=http://" POLICY_EGRESS_ADDR ":3128",
		"https_proxy=http://" POLICY_EGRESS_ADDR ":3128",
		"NO_PROXY=localhost,127.0.0.1,::1",
		"no_proxy=localhost,127.0.0.1,::1",
		NULL,
	};
	struct str_array *env = &s->process.env;

	for (size_t i = 0; vars[i]; i++) {
		size_t n = strcspn(vars[i], "=") + 1;
		bool set = false;

		for (size_t j = 0; j < env->len && !set; j++)
			set = !strncmp(env->items[j], vars[i], n);
		if (set)
			continue; /* the spec's own proxy: it meets the redirect anyway */
		policy_strv_add(env, vars[i]);
		policy_change_add(ch, "egress", "process.env", NULL, vars[i]);
	}
}

int policy_rule_egress(const struct policy *p, struct oci_spec *s, struct policy_changes *ch,
		       struct policy_decision *d, struct error *err)
{
	const struct oci_namespace *net = spec_find_namespace(s, NS_NETWORK);
	_cleanup_free_ char *list = NULL, *to = NULL;

	if (asked_names(p, s, &d->egress_allow, err) < 0)
		return -1;
	if (!d->egress_allow.len)
		return 0;
	list = policy_strv_join(&d->egress_allow);
	if (net && net->path) {
		/* a namespace the engine made and others share (a pod's): the
		 * names are per container, the namespace is not */
		spec_str_array_free(&d->egress_allow);
		if (str_map_get(&s->annotations, EGRESS_ANNOTATION))
			return error_set(err, "policy: egress by name (annotation %s) needs a network namespace of the container's own; linux.namespaces[network].path %s joins one (a pod's or another container's) [rule egress] (%s)",
					 EGRESS_ANNOTATION, net->path, p->source);
		policy_change_add(ch, "egress", "network", "(names)",
				  "not in a joined namespace: every new outbound connection dropped instead");
		return 0;
	}
	to = xasprintf("only %s, through the runtime's proxy (names resolved on the host, denyCidrs after resolution)",
		       list);
	policy_change_add(ch, "egress", "network", "(open)", to);
	d->egress_proxy = true;
	d->egress_filter = d->inbound_only = false;
	d->only_loopback = true;
	add_proxy_env(s, ch);
	return 0;
}
