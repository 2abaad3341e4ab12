/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>

#include "../lib/cleanup.h"
#include "../lib/util.h"
#include "cmd.h"

enum { OPT_PROCESS = 256,
       OPT_PID_FILE,
       OPT_CONSOLE,
       OPT_CWD,
       OPT_GIDS,
       OPT_CAP,
       OPT_NNP,
       OPT_PRESERVE,
       OPT_LABEL,
       OPT_APPARMOR,
       OPT_IGNORE_PAUSED };

static void push(char ***v, size_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof(char *));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

static int run_exec(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "process", required_argument, NULL, OPT_PROCESS },
		{ "detach", no_argument, NULL, 'd' },
		{ "pid-file", required_argument, NULL, OPT_PID_FILE },
		{ "console-socket", required_argument, NULL, OPT_CONSOLE },
		{ "tty", no_argument, NULL, 't' },
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "env", required_argument, NULL, 'e' },
		{ "user", required_argument, NULL, 'u' },
		{ "additional-gids", required_argument, NULL, OPT_GIDS },
		{ "cap", required_argument, NULL, OPT_CAP },
		{ "no-new-privs", no_argument, NULL, OPT_NNP },
		{ "preserve-fds", required_argument, NULL, OPT_PRESERVE },
		{ "process-label", required_argument, NULL, OPT_LABEL },
		{ "apparmor", required_argument, NULL, OPT_APPARMOR },
		{ "ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct exec_opts o = { 0 };
	_cleanup_free_ char *gids = NULL;
	size_t n_env = 0, n_caps = 0;
	unsigned long long n;
	struct error err;
	int c, status = 0, r;

	while ((c = getopt_long(argc, argv, "+dte:u:h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_PROCESS: o.process_file = optarg; break;
		case 'd': o.detach = true; break;
		case OPT_PID_FILE: o.pid_file = optarg; break;
		case OPT_CONSOLE: o.console_socket = optarg; break;
		case 't': o.tty = true; break;
		case OPT_CWD: o.cwd = optarg; break;
		case 'e': push(&o.env, &n_env, optarg); break;
		case 'u': o.user = optarg; break;
		case OPT_GIDS:
			/* Once per group (runc) or a comma list; both add up. */
			if (gids) {
				char *more = xasprintf("%s,%s", gids, optarg);
				free(gids);
				gids = more;
			} else {
				gids = xstrdup(optarg);
			}
			o.additional_gids = gids;
			break;
		case OPT_CAP: push(&o.caps, &n_caps, optarg); break;
		case OPT_NNP: o.no_new_privs = true; break;
		case OPT_IGNORE_PAUSED: break;
		case OPT_PRESERVE:
			if (parse_u64(optarg, &n) < 0 || n > 1000)
				return cmd_usage(&cmd_exec, false);
			o.preserve_fds = (int)n;
			break;
		case OPT_LABEL:
		case OPT_APPARMOR:
			error_set(&err, "exec: --%s: not supported: this build has no SELinux/AppArmor support",
				  c == OPT_LABEL ? "process-label" : "apparmor");
			return cmd_fail(&err);
		case 'h':
			return cmd_usage(&cmd_exec, true);
		default:
			return cmd_usage(&cmd_exec, false);
		}
	}
	if (optind >= argc)
		return cmd_want_args(&cmd_exec, argc, optind, 1) ? 0 : 1;
	o.id = argv[optind];
	o.args = argv + optind + 1;
	if (!o.process_file && !*o.args) {
		error_set(&err, "exec: a command is required without --process");
		return cmd_fail(&err);
	}
	r = container_exec(g, &o, &status, &err);
	free(o.env);
	free(o.caps);
	if (r < 0)
		return cmd_fail(&err);
	return status;
}

const struct command cmd_exec = {
	.name = "exec",
	.summary = "run a new process inside a running container",
	.usage = "[--process FILE] [--detach|-d] [--pid-file F] [--console-socket S] "
		 "[--tty|-t] [--cwd DIR] [--env|-e K=V]... [--user|-u UID[:GID]] "
		 "[--additional-gids G,...] [--cap C]... [--no-new-privs] [--preserve-fds N] "
		 "ID [COMMAND [ARGS...]]",
	.run = run_exec,
};
