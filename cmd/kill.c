/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stddef.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "cmd.h"

/* "TERM", "SIGTERM", "15", "RTMIN+2": what runc accepts. */
static int parse_signal(const char *s)
{
	unsigned long long n;
	const char *name = strncasecmp(s, "SIG", 3) ? s : s + 3;

	if (parse_u64(s, &n) == 0)
		return n > 0 && n < (unsigned long long)NSIG ? (int)n : -1;
	for (int sig = 1; sig < SIGRTMIN; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && !strcasecmp(abbrev, name))
			return sig;
	}
	if (!strncasecmp(name, "RTMIN", 5)) {
		long long off = 0;
		if (name[5] && (name[5] != '+' || parse_i64(name + 6, &off) < 0))
			return -1;
		return SIGRTMIN + off <= SIGRTMAX ? SIGRTMIN + (int)off : -1;
	}
	if (!strncasecmp(name, "RTMAX", 5)) {
		long long off = 0;
		if (name[5] && (name[5] != '-' || parse_i64(name + 6, &off) < 0))
			return -1;
		return SIGRTMAX - off >= SIGRTMIN ? SIGRTMAX - (int)off : -1;
	}
	return -1;
}

static int run_kill(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool all = false;
	struct error err;
	int c, sig = SIGTERM;

	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		if (c == 'a')
			all = true;
		else if (c == 'h')
			return cmd_usage(&cmd_kill, true);
		else
			return cmd_usage(&cmd_kill, false);
	}
	if (argc - optind != 1 && argc - optind != 2)
		return cmd_want_args(&cmd_kill, argc, optind, 1) ? 0 : 1;
	if (argc - optind == 2) {
		sig = parse_signal(argv[optind + 1]);
		if (sig < 0) {
			log_error("kill: invalid signal \"%s\"", argv[optind + 1]);
			return 1;
		}
	}
	if (container_kill(g, argv[optind], sig, all, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_kill = {
	.name = "kill",
	.summary = "send a signal to a container's init (or, with --all, to every process)",
	.usage = "[--all|-a] ID [SIGNAL]",
	.run = run_kill,
};
