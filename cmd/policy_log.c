/* SPDX-License-Identifier: Apache-2.0 */
/* policy log [--follow] [--container ID]: flags only (runtime/policy/audit_read.c). */
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "cmd.h"

int policy_log_run(const struct global_opts *g, const struct command *cmd, int argc,
		   char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "container", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *container = NULL;
	bool follow = false;
	struct error err;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fc:h", opts, NULL)) != -1) {
		if (c == 'f')
			follow = true;
		else if (c == 'c')
			container = optarg;
		else
			return cmd_usage(cmd, c == 'h');
	}
	if (!cmd_want_args(cmd, argc, optind, 0))
		return 1;
	if (container_policy_log(g, follow, container, &err) < 0)
		return cmd_fail(&err);
	return 0;
}
