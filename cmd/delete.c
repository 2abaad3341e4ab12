/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stddef.h>

#include "cmd.h"

static int run_delete(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool force = false;
	struct error err;
	int c;

	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		if (c == 'f')
			force = true;
		else if (c == 'h')
			return cmd_usage(&cmd_delete, true);
		else
			return cmd_usage(&cmd_delete, false);
	}
	if (!cmd_want_args(&cmd_delete, argc, optind, 1))
		return 1;
	if (container_delete(g, argv[optind], force, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_delete = {
	.name = "delete",
	.summary = "delete a stopped container (--force: kill it first)",
	.usage = "[--force|-f] ID",
	.run = run_delete,
};
