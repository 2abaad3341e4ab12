/* SPDX-License-Identifier: Apache-2.0 */
#include "cmd.h"

static int run_run(const struct global_opts *g, int argc, char **argv)
{
	struct create_opts o;
	struct error err;
	int status = 0;
	int r = parse_create_flags(&cmd_run, argc, argv, &o, true);

	if (r)
		return r > 0 ? 0 : 1;
	if (container_run(g, &o, &status, &err) < 0)
		return cmd_fail(&err);
	return status;
}

const struct command cmd_run = {
	.name = "run",
	.summary = "create and start a container, wait for it, and delete it",
	.usage = "[--bundle|-b DIR] [--detach|-d] [--pid-file F] [--console-socket S] "
		 "[--no-pivot] [--no-new-keyring] [--preserve-fds N] ID",
	.run = run_run,
};
