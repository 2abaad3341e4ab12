/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "cmd.h"

enum { OPT_PID_FILE = 256,
       OPT_CONSOLE,
       OPT_NO_PIVOT,
       OPT_NO_KEYRING,
       OPT_PRESERVE };

/* create and run share their flags; run adds --detach. */
int parse_create_flags(const struct command *cmd, int argc, char **argv,
		       struct create_opts *o, bool is_run)
{
	static const struct option opts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "pid-file", required_argument, NULL, OPT_PID_FILE },
		{ "console-socket", required_argument, NULL, OPT_CONSOLE },
		{ "no-pivot", no_argument, NULL, OPT_NO_PIVOT },
		{ "no-new-keyring", no_argument, NULL, OPT_NO_KEYRING },
		{ "preserve-fds", required_argument, NULL, OPT_PRESERVE },
		{ "detach", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned long long n;
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, is_run ? "b:dh" : "b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			o->bundle = optarg;
			break;
		case OPT_PID_FILE:
			o->pid_file = optarg;
			break;
		case OPT_CONSOLE:
			o->console_socket = optarg;
			break;
		case OPT_NO_PIVOT:
			o->no_pivot = true;
			break;
		case OPT_NO_KEYRING:
			o->no_new_keyring = true;
			break;
		case OPT_PRESERVE:
			if (parse_u64(optarg, &n) < 0 || n > 1000)
				return -cmd_usage(cmd, false);
			o->preserve_fds = (int)n;
			break;
		case 'd':
			if (!is_run)
				return -cmd_usage(cmd, false);
			o->detach = true;
			break;
		case 'h':
			cmd_usage(cmd, true);
			return 1;
		default:
			return -cmd_usage(cmd, false);
		}
	}
	if (!cmd_want_args(cmd, argc, optind, 1))
		return -1;
	o->id = argv[optind];
	return 0;
}

static int run_create(const struct global_opts *g, int argc, char **argv)
{
	struct create_opts o;
	struct error err;
	int r = parse_create_flags(&cmd_create, argc, argv, &o, false);

	if (r)
		return r > 0 ? 0 : 1;
	if (container_create(g, &o, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_create = {
	.name = "create",
	.summary = "create a container from a bundle; it waits for `start`",
	.usage = "[--bundle|-b DIR] [--pid-file F] [--console-socket S] [--no-pivot] "
		 "[--no-new-keyring] [--preserve-fds N] ID",
	.run = run_create,
};
