/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../spec/spec.h"
#include "cmd.h"

static int run_spec(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bundle", required_argument, NULL, 'b' },
		{ "rootless", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *bundle = ".";
	bool rootless = false;
	char *json, *path;
	int c, fd;

	(void)g;
	while ((c = getopt_long(argc, argv, "b:h", opts, NULL)) != -1) {
		if (c == 'b')
			bundle = optarg;
		else if (c == 'r')
			rootless = true;
		else if (c == 'h')
			return cmd_usage(&cmd_spec, true);
		else
			return cmd_usage(&cmd_spec, false);
	}
	if (!cmd_want_args(&cmd_spec, argc, optind, 0))
		return 1;
	path = xasprintf("%s/config.json", bundle);
	/* Never overwrite: runc refuses too. */
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("spec: create %s: %s", path,
			  errno == EEXIST ? "File exists" : strerror(errno));
		free(path);
		return 1;
	}
	/* Rootless: container root is the caller (runc does the same). */
	json = spec_default_json(rootless, (uint32_t)geteuid(), (uint32_t)getegid());
	if (write_all(fd, json, strlen(json)) < 0 || write_all(fd, "\n", 1) < 0) {
		log_error("spec: write %s: %s", path, strerror(errno));
		close(fd);
		free(json);
		free(path);
		return 1;
	}
	close(fd);
	free(json);
	free(path);
	return 0;
}

const struct command cmd_spec = {
	.name = "spec",
	.summary = "write a default config.json into a bundle",
	.usage = "[--bundle|-b DIR] [--rootless]",
	.run = run_spec,
};
