/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CMD_H
#define AGENTSBX_CMD_H

/* The command line: one file per command, argument handling only. */

#include <stdbool.h>

#include "../lib/error.h"
#include "../runtime/container.h"

struct command {
	const char *name;
	const char *summary;
	const char *usage;
	/* argv[0] is the command name.  Returns the process exit status. */
	int (*run)(const struct global_opts *g, int argc, char **argv);
};

extern const struct command cmd_create, cmd_start, cmd_run, cmd_state,
	cmd_kill, cmd_delete, cmd_list, cmd_spec, cmd_features, cmd_ps,
	cmd_pause, cmd_resume, cmd_exec, cmd_update, cmd_policy, cmd_events;
extern const struct command cmd_sandbox, cmd_mcp, cmd_session;

/* create and run share their flags (run adds --detach).  0: parsed;
 * 1: --help was printed; -1: bad usage (logged). */
int parse_create_flags(const struct command *cmd, int argc, char **argv,
		       struct create_opts *o, bool is_run);

/* Parse a command that takes only --help and one container id. */
int parse_id_only(const struct command *cmd, int argc, char **argv,
		  const char **id);

/* policy log [--follow] [--container ID] (policy_log.c); argv[0] is "log". */
int policy_log_run(const struct global_opts *g, const struct command *cmd, int argc,
		   char **argv);

/* Log err (the json log's last "error" line is what callers show) and
 * return 1. */
int cmd_fail(const struct error *err);
/* Print "usage: ..." for a command to stderr and return 1 (or 0 for
 * --help). */
int cmd_usage(const struct command *c, bool help);
/* --json: the sandbox itself failed; one line {"error":{"message"}}. */
void cmd_print_json_error(const char *msg);
/* Exactly n positional arguments left after option parsing? */
bool cmd_want_args(const struct command *c, int argc, int optind_, int n);

#endif
