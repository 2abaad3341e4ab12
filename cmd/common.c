/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/jsongen.h"
#include "../lib/log.h"
#include "../lib/utf8.h"
#include "cmd.h"

int cmd_fail(const struct error *err)
{
	log_error("%s", err->msg);
	/* With --log the line went to the file; callers such as containerd's
	 * shim show the user only our stderr for most commands, as runc's. */
	if (log_get_fd() != STDERR_FILENO)
		fprintf(stderr, "agentsbx: %s\n", err->msg);
	return 1;
}

int cmd_usage(const struct command *c, bool help)
{
	fprintf(help ? stdout : stderr, "usage: agentsbx %s %s\n\n%s\n", c->name,
		c->usage, c->summary);
	return help ? 0 : 1;
}

bool cmd_want_args(const struct command *c, int argc, int optind_, int n)
{
	if (argc - optind_ == n)
		return true;
	log_error("%s: expected %d argument%s, got %d (usage: agentsbx %s %s)", c->name,
		  n, n == 1 ? "" : "s", argc - optind_, c->name, c->usage);
	return false;
}

int parse_id_only(const struct command *cmd, int argc, char **argv,
		  const char **id)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cmd_usage(cmd, true);
			return 1;
		}
	if (argc >= 2 && argv[1][0] == '-' && strcmp(argv[1], "--")) {
		log_error("%s: unknown option %s", cmd->name, argv[1]);
		return -1;
	}
	int first = argc >= 2 && !strcmp(argv[1], "--") ? 2 : 1;
	if (!cmd_want_args(cmd, argc, first, 1))
		return -1;
	*id = argv[first];
	return 0;
}

void cmd_print_json_error(const char *msg)
{
	yajl_gen g = jgen_new(false);
	size_t clean_len;
	_cleanup_free_ char *clean = utf8_clean(msg, strlen(msg), &clean_len);
	_cleanup_free_ char *line = NULL;

	yajl_gen_map_open(g);
	jgen_str(g, "error");
	yajl_gen_map_open(g);
	jgen_key_str(g, "message", clean);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	line = jgen_finish(g, NULL);
	printf("%s\n", line);
	fflush(stdout);
}
