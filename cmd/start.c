/* SPDX-License-Identifier: Apache-2.0 */
#include "cmd.h"

static int run_start(const struct global_opts *g, int argc, char **argv)
{
	const char *id;
	struct error err;
	int r = parse_id_only(&cmd_start, argc, argv, &id);

	if (r)
		return r > 0 ? 0 : 1;
	if (container_start(g, id, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_start = {
	.name = "start",
	.summary = "start a created container: run its process",
	.usage = "ID",
	.run = run_start,
};
