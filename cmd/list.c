/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stddef.h>
#include <string.h>

#include "../lib/log.h"
#include "cmd.h"

static int run_list(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false, quiet = false;
	struct error err;
	int c;

	while ((c = getopt_long(argc, argv, "f:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "json") && strcmp(optarg, "table")) {
				log_error("list: --format: unknown format \"%s\"", optarg);
				return 1;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			return cmd_usage(&cmd_list, true);
		default:
			return cmd_usage(&cmd_list, false);
		}
	}
	if (!cmd_want_args(&cmd_list, argc, optind, 0))
		return 1;
	if (container_list(g, json, quiet, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_list = {
	.name = "list",
	.summary = "list the containers under --root",
	.usage = "[--format|-f table|json] [--quiet|-q]",
	.run = run_list,
};
