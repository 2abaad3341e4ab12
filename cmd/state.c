/* SPDX-License-Identifier: Apache-2.0 */
#include "cmd.h"

static int run_state(const struct global_opts *g, int argc, char **argv)
{
	const char *id;
	struct error err;
	int r = parse_id_only(&cmd_state, argc, argv, &id);

	if (r)
		return r > 0 ? 0 : 1;
	if (container_state(g, id, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_state = {
	.name = "state",
	.summary = "print the state of a container as JSON",
	.usage = "ID",
	.run = run_state,
};
