/* SPDX-License-Identifier: Apache-2.0 */
#include "cmd.h"

static int run_features(const struct global_opts *g, int argc, char **argv)
{
	struct error err;

	if (argc > 1)
		return cmd_usage(&cmd_features, argc == 2 && argv[1][0] == '-' &&
							(argv[1][1] == 'h' || argv[1][2] == 'h'));
	if (runtime_features(&err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_features = {
	.name = "features",
	.summary = "print the features this build implements, as JSON",
	.usage = "",
	.run = run_features,
};
