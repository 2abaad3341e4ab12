/* SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "cmd.h"

/* "5s", "500ms", "2m", "1": a Go-style duration, as runc takes it. */
static int parse_duration_ms(const char *s, unsigned *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v <= 0)
		return -1;
	if (!*end || !strcmp(end, "s"))
		v *= 1000;
	else if (!strcmp(end, "m"))
		v *= 60000;
	else if (strcmp(end, "ms"))
		return -1;
	if (v < 1 || v > 86400000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int run_events(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "stats", no_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned interval = 5000;
	bool stats = false;
	struct error err;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 's') {
			stats = true;
		} else if (c == 'i') {
			if (parse_duration_ms(optarg, &interval) < 0) {
				log_error("events: --interval: invalid duration \"%s\"", optarg);
				return 1;
			}
		} else {
			return cmd_usage(&cmd_events, c == 'h');
		}
	}
	if (!cmd_want_args(&cmd_events, argc, optind, 1))
		return 1;
	if (container_events(g, argv[optind], stats, interval, &err) < 0)
		return cmd_fail(&err);
	return 0;
}

const struct command cmd_events = {
	.name = "events",
	.summary = "print a container's resource usage and OOM events as JSON lines",
	.usage = "[--stats] [--interval DURATION] ID",
	.run = run_events,
};
