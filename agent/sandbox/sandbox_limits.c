/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A session's (or a call's) own limits and network, asked for by the
 * caller, judged against the policy in force before anything is made.  The
 * policy would lower a limit over its cap without a word (its rule for
 * any config.json); a caller that asked for more must know it will not
 * get it, so here it is refused, and the error says which rule and which
 * policy field would allow it.  The network namespace itself is judged
 * again at each create, on the namespace the runtime opens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../spec/policy/policy.h"
#include "sandbox.h"

static char *human(uint64_t v)
{
	if (v && !(v % (1ull << 30)))
		return xasprintf("%llug", (unsigned long long)(v >> 30));
	if (v && !(v % (1ull << 20)))
		return xasprintf("%llum", (unsigned long long)(v >> 20));
	return xasprintf("%llu", (unsigned long long)v);
}

static int over(struct error *err, const char *what, uint64_t asked, uint64_t cap,
		const char *field, const char *source)
{
	char *a = human(asked), *c = human(cap);

	error_set(err, "%s %s is over the policy's limit of %s (rule limits; a larger limits.%s in the policy, %s, would allow it)",
		  what, a, c, field, source);
	free(a);
	free(c);
	return -1;
}

/* Each of "a,b" a name or *.suffix within the policy's egress.allowDomains
 * (the runtime judges it again at every create). */
static int check_domains(const struct policy *p, const char *list, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(list);
	char *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!policy_egress_pattern_valid(t))
			return error_set(err, "allow domain \"%s\": not a host name or *.suffix", t);
		if (!policy_egress_pattern_within(&p->egress, t))
			return error_set(err, "allow domain %s is not within the policy's names (rule egress; the policy field egress.allowDomains (list %s), in the policy, %s, would allow it)",
					 t, t, p->source);
	}
	return 0;
}

static int check(const struct policy *p, const struct sandbox_config *cfg, struct error *err)
{
	/* audit and off lower nothing: what is asked is what is set. */
	if (p->mode != POLICY_ENFORCE)
		return 0;
	if (cfg->memory > p->memory)
		return over(err, "memory", cfg->memory, p->memory, "memory", p->source);
	if (cfg->pids > 0 && (uint64_t)cfg->pids > (uint64_t)p->pids)
		return over(err, "pids", (uint64_t)cfg->pids, (uint64_t)p->pids, "pids", p->source);
	/* quota per 100000 us against the policy's quota per its period. */
	if (cfg->cpu_quota &&
	    (unsigned __int128)cfg->cpu_quota * p->cpu_period > (unsigned __int128)p->cpu_quota * 100000)
		return error_set(err, "cpus %.2f is over the policy's limit of %.2f (rule limits; a larger limits.cpuQuota in the policy, %s, would allow it)",
				 (double)cfg->cpu_quota / 100000,
				 (double)p->cpu_quota / (double)p->cpu_period, p->source);
	if (cfg->allow_domains && check_domains(p, cfg->allow_domains, err) < 0)
		return -1;
	if (cfg->netns && !p->network_allowed && !(p->relaxable & RELAX_NETWORK))
		return error_set(err, "network %s: the policy allows no network (rule network; \"networkAllowed\": true, or \"network\" in \"relaxable\", in the policy, %s, would allow it)",
				 cfg->netns, p->source);
	return 0;
}

int sandbox_check_limits(const struct global_opts *g, const struct sandbox_config *cfg,
			 struct error *err)
{
	struct policy p;
	int r;

	if (policy_load(g->policy_path, &p, err) < 0)
		return -1;
	r = check(&p, cfg, err);
	policy_free(&p);
	return r;
}
