/* SPDX-License-Identifier: Apache-2.0 */
#include "cmd.h"

static int run_pause(const struct global_opts *g, int argc, char **argv)
{
	const char *id;
	struct error err;
	int r = parse_id_only(&cmd_pause, argc, argv, &id);

	if (r)
		return r > 0 ? 0 : 1;
	if (container_pause(g, id, true, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

static int run_resume(const struct global_opts *g, int argc, char **argv)
{
	const char *id;
	struct error err;
	int r = parse_id_only(&cmd_resume, argc, argv, &id);

	if (r)
		return r > 0 ? 0 : 1;
	if (container_pause(g, id, false, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_pause = {
	.name = "pause",
	.summary = "freeze every process of a container",
	.usage = "ID",
	.run = run_pause,
};

const struct command cmd_resume = {
	.name = "resume",
	.summary = "thaw a paused container",
	.usage = "ID",
	.run = run_resume,
};
