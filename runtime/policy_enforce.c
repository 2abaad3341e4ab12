/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy in the lifecycle: loaded and applied to the spec before
 * anything is created (create and exec), every change logged; in audit
 * mode the changes are computed on a copy and only logged.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "internal.h"

static void log_changes(const struct policy_changes *ch, bool audit)
{
	for (size_t i = 0; i < ch->len; i++) {
		const struct policy_change *c = &ch->items[i];
		log_msg(audit ? LOG_LVL_WARN : LOG_LVL_INFO, "policy%s: %s: %s: %s -> %s",
			audit ? " (audit, not applied)" : "", c->rule, c->field, c->from, c->to);
	}
}

/* Audit: the same transformation on a fresh parse, logged, then dropped. */
static int audit_spec(struct container_ctx *c, struct error *err)
{
	struct oci_spec copy;
	struct policy_changes ch = { 0 };
	struct policy_decision d;
	int r;

	if (!c->config_json)
		return 0; /* exec: the container's own create was audited */
	if (spec_parse(c->config_json, c->config_len, &copy, err) < 0)
		return -1;
	if (c->bundle)
		policy_resolve_bind_sources(&copy, c->bundle);
	r = policy_apply(&c->policy, &copy, &ch, &d, err);
	if (r == 0)
		log_changes(&ch, true);
	else
		log_warn("policy (audit, not applied): would refuse: %s", err->msg);
	policy_changes_free(&ch);
	spec_free(&copy);
	return 0;
}

static int prepare_agent_filter(struct container_ctx *c, unsigned i,
				const char *cache, struct error *err)
{
	struct oci_seccomp sc;
	int r;

	if (policy_agent_seccomp(i, &sc, err) < 0)
		return error_prefix(err, "policy: the agent seccomp profile");
	r = seccomp_prepare(&sc, cache, &c->agent_seccomp[i], err);
	/* The parsed profile is only needed to compile (or find) the BPF. */
	{
		struct oci_spec holder = { 0 };
		holder.linux.seccomp = sc;
		spec_free(&holder);
	}
	if (r < 0)
		return error_prefix(err, "policy: the agent seccomp profile");
	return 0;
}

static int prepare_agent_seccomp(struct container_ctx *c, struct error *err)
{
	for (unsigned i = 0; i < POLICY_AGENT_FILTERS; i++)
		if (prepare_agent_filter(c, i, c->seccomp_cache, err) < 0)
			return -1;
	c->has_agent_seccomp = true;
	return 0;
}

/* docker --network host passes the host's namespace as a path: a
 * container there reaches the host's loopback services, and egress rules
 * would be installed on the host itself. */
static bool joins_host_netns(const struct oci_spec *spec, struct error *err)
{
	const struct oci_namespace *net = spec_find_namespace(spec, NS_NETWORK);
	struct stat theirs, ours;

	if (!net || !net->path)
		return false;
	if (stat(net->path, &theirs) < 0 || stat("/proc/self/ns/net", &ours) < 0)
		return false; /* the join itself reports a bad path */
	if (theirs.st_ino != ours.st_ino || theirs.st_dev != ours.st_dev)
		return false;
	error_set(err, "policy: linux.namespaces[network].path %s is the host's network namespace (docker --network host): not allowed",
		  net->path);
	return true;
}

int policy_enforce(struct container_ctx *c, struct error *err)
{
	struct policy_changes ch = { 0 };

	if (policy_load(c->g->policy_path, &c->policy, err) < 0)
		return -1;
	c->policy_loaded = true;
	switch (c->policy.mode) {
	case POLICY_OFF:
		return 0;
	case POLICY_AUDIT:
		return audit_spec(c, err);
	case POLICY_ENFORCE:
		break;
	}
	if (c->bundle)
		policy_resolve_bind_sources(c->spec, c->bundle);
	if (policy_apply(&c->policy, c->spec, &ch, &c->decision, err) < 0)
		return -1;
	if (c->decision.refuse_host_netns && joins_host_netns(c->spec, err))
		return -1;
	log_changes(&ch, false);
	policy_changes_free(&ch);
	/* What the policy made must still be a valid spec. */
	if (spec_validate(c->spec, err) < 0)
		return error_prefix(err, "after the policy (%s)", c->policy.source);
	if (c->decision.stack_agent_seccomp)
		return prepare_agent_seccomp(c, err);
	return 0;
}
