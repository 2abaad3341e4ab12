/* SPDX-License-Identifier: Apache-2.0 */
/* policy show | policy explain [--bundle DIR] | policy fields | policy log [--follow] [--container ID] */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../spec/policy/policy.h"
#include "cmd.h"

static int policy_show(const struct global_opts *g)
{
	struct policy p;
	struct error err;
	char *json;

	if (policy_load(g->policy_path, &p, &err) < 0)
		return cmd_fail(&err);
	json = policy_to_json(&p);
	printf("%s\n", json);
	free(json);
	policy_free(&p);
	return 0;
}

/* What the policy would change in a bundle's spec, creating nothing. */
static int policy_explain(const struct global_opts *g, const char *bundle)
{
	static const char *const modes[] = { "enforce", "audit", "off" };
	struct policy p;
	struct oci_spec spec;
	struct policy_changes ch = { 0 };
	struct policy_decision d = { 0 };
	struct error err;
	char *path = xasprintf("%s/config.json", bundle);
	int r;

	if (policy_load(g->policy_path, &p, &err) < 0) {
		free(path);
		return cmd_fail(&err);
	}
	r = spec_load_file(path, &spec, &err);
	free(path);
	if (r < 0 || spec_validate(&spec, &err) < 0) {
		policy_free(&p);
		return cmd_fail(&err);
	}
	printf("policy: %s (mode %s)%s\n", p.source, modes[p.mode],
	       p.mode == POLICY_ENFORCE ? "" : ": these changes would NOT be applied");
	{
		/* Relative bind sources are judged where they land. */
		char *abs = realpath(bundle, NULL);
		policy_resolve_bind_sources(&spec, abs ? abs : bundle);
		free(abs);
	}
	{
		/* Requests above the floor: the bundle directory's name is the
		 * container id (Docker's, containerd's, podman's bundles). */
		char *abs = realpath(bundle, NULL);
		const char *slash = abs ? strrchr(abs, '/') : NULL;
		struct policy_requests req;

		policy_requests(&p, &spec, slash ? slash + 1 : bundle, false, &req);
		if (req.len && p.on_request == ON_REQUEST_REFUSE) {
			policy_requests_refuse(&p, &req, &err);
			printf("refused: %s\n", err.msg);
			r = -1;
		}
		for (size_t i = 0; i < req.len && p.on_request == ON_REQUEST_CLAMP; i++)
			printf("asked for %s: clamped to the floor (onRequestAboveFloor: clamp)\n",
			       req.items[i].what);
		policy_requests_free(&req);
		free(abs);
	}
	if (r == 0 && (r = policy_apply(&p, &spec, &ch, &d, &err)) < 0) {
		printf("refused: %s\n", err.msg);
	} else if (r == 0) {
		printf("%-13s %-40s %-30s %s\n", "RULE", "FIELD", "FROM", "TO");
		for (size_t i = 0; i < ch.len; i++)
			printf("%-13s %-40s %-30s %s\n", ch.items[i].rule, ch.items[i].field,
			       ch.items[i].from, ch.items[i].to);
		if (!ch.len)
			printf("(no change: the spec is already within the policy)\n");
	}
	policy_changes_free(&ch);
	policy_decision_free(&d);
	spec_free(&spec);
	policy_free(&p);
	return r < 0 ? 1 : 0;
}

static int run_policy(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *bundle = ".";
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_usage(&cmd_policy, argc >= 2);
	if (!strcmp(argv[1], "show")) {
		if (argc != 2)
			return cmd_usage(&cmd_policy, false);
		return policy_show(g);
	}
	if (!strcmp(argv[1], "fields")) {
		char *md;

		if (argc != 2)
			return cmd_usage(&cmd_policy, false);
		md = policy_fields_markdown();
		fputs(md, stdout);
		free(md);
		return 0;
	}
	if (!strcmp(argv[1], "log"))
		return policy_log_run(g, &cmd_policy, argc - 1, argv + 1);
	if (strcmp(argv[1], "explain")) {
		log_error("policy: unknown subcommand \"%s\" (show, explain, fields or log)", argv[1]);
		return 1;
	}
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "b:h", opts, NULL)) != -1) {
		if (c == 'b')
			bundle = optarg;
		else
			return cmd_usage(&cmd_policy, c == 'h');
	}
	if (!cmd_want_args(&cmd_policy, argc - 1, optind, 0))
		return 1;
	return policy_explain(g, bundle);
}

const struct command cmd_policy = {
	.name = "policy",
	.summary = "show the sandbox policy in force, explain what it changes in a bundle, list its fields, or read its audit log",
	.usage = "show | explain [--bundle|-b DIR] | fields | log [--follow|-f] [--container|-c ID]",
	.run = run_policy,
};
