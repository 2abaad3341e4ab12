/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stddef.h>
#include <string.h>

#include "../lib/log.h"
#include "cmd.h"

static int run_ps(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false;
	struct error err;
	int c;

	while ((c = getopt_long(argc, argv, "+f:h", opts, NULL)) != -1) {
		if (c == 'f') {
			if (strcmp(optarg, "json") && strcmp(optarg, "table")) {
				log_error("ps: --format: unknown format \"%s\"", optarg);
				return 1;
			}
			json = !strcmp(optarg, "json");
		} else if (c == 'h') {
			return cmd_usage(&cmd_ps, true);
		} else {
			return cmd_usage(&cmd_ps, false);
		}
	}
	if (argc - optind < 1)
		return cmd_want_args(&cmd_ps, argc, optind, 1) ? 0 : 1;
	/* Anything after the id is passed to ps(1), as runc does. */
	if (container_ps(g, argv[optind], json, argv + optind + 1, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_ps = {
	.name = "ps",
	.summary = "list the processes of a container",
	.usage = "[--format|-f table|json] ID [ps options]",
	.run = run_ps,
};
