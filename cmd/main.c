/* SPDX-License-Identifier: Apache-2.0 */
/* agentsbx: global flags, then one command, as runc's command line. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/fds.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../spec/policy/policy.h"
#include "../spec/spec.h"
#include "cmd.h"

static const struct command *const commands[] = {
	&cmd_create,
	&cmd_start,
	&cmd_run,
	&cmd_state,
	&cmd_kill,
	&cmd_delete,
	&cmd_list,
	&cmd_spec,
	&cmd_features,
	&cmd_ps,
	&cmd_pause,
	&cmd_resume,
	&cmd_exec,
	&cmd_update,
	&cmd_policy,
	&cmd_events,
	&cmd_sandbox,
	&cmd_mcp,
	&cmd_session,
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_version(void)
{
	printf("agentsbx version " AGENTSBX_VERSION "\ncommit: " AGENTSBX_COMMIT
	       "\nspec: " OCI_VERSION_MAX "\n");
}

static void print_help(FILE *f)
{
	fprintf(f, "usage: agentsbx [global options] COMMAND [options] [args]\n\n"
		   "An OCI container runtime for untrusted (agent-written) code.\n\n"
		   "Global options:\n"
		   "  --root DIR          state directory (default " DEFAULT_STATE_ROOT ";\n"
		   "                      not root: $XDG_RUNTIME_DIR/agentsbx)\n"
		   "  --policy FILE       sandbox policy (default " POLICY_DEFAULT_PATH ",\n"
		   "                      the built-in default when that is missing)\n"
		   "  --log FILE          write the log here (default stderr)\n"
		   "  --log-format FMT    text or json\n"
		   "  --debug             log debug messages\n"
		   "  --systemd-cgroup    manage cgroups through systemd\n"
		   "  --version, -v       print the version\n"
		   "  --help, -h          this help\n\nCommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
}

enum { OPT_POLICY = 300 };
enum { OPT_ROOT = 256,
       OPT_LOG,
       OPT_LOG_FORMAT,
       OPT_DEBUG,
       OPT_SYSTEMD,
       OPT_LOG_LEVEL,
       OPT_CRIU,
       OPT_ROOTLESS };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "debug", no_argument, NULL, OPT_DEBUG },
		{ "systemd-cgroup", no_argument, NULL, OPT_SYSTEMD },
		{ "criu", required_argument, NULL, OPT_CRIU },
		{ "rootless", required_argument, NULL, OPT_ROOTLESS },
		{ "version", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct global_opts g = { .root = NULL };
	const char *log_path = NULL, *log_format = "text";
	_cleanup_free_ char *user_root = NULL;
	int c;

	/* Before anything of ours takes an fd number. */
	fds_snapshot();
	while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
		switch (c) {
		case OPT_ROOT:
			g.root = optarg;
			break;
		case OPT_POLICY:
			g.policy_path = optarg;
			break;
		case OPT_LOG:
			log_path = optarg;
			break;
		case OPT_LOG_FORMAT:
			log_format = optarg;
			break;
		case OPT_LOG_LEVEL:
			g.debug = g.debug || !strcmp(optarg, "debug");
			break;
		case OPT_DEBUG:
			g.debug = true;
			break;
		case OPT_SYSTEMD:
			g.systemd_cgroup = true;
			break;
		case OPT_CRIU:
		case OPT_ROOTLESS:
			break; /* accepted for runc compatibility; no effect */
		case 'v':
			print_version();
			return 0;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return 1;
		}
	}
	/* Not root: the caller's own runtime directory, as runc and crun. */
	if (!g.root && geteuid() != 0 && getenv("XDG_RUNTIME_DIR") &&
	    getenv("XDG_RUNTIME_DIR")[0] == '/')
		g.root = user_root = xasprintf("%s/agentsbx", getenv("XDG_RUNTIME_DIR"));
	if (!g.root)
		g.root = DEFAULT_STATE_ROOT;
	if (strcmp(log_format, "text") && strcmp(log_format, "json")) {
		fprintf(stderr, "agentsbx: --log-format: unknown format \"%s\"\n", log_format);
		return 1;
	}
	if (log_init(log_path, !strcmp(log_format, "json"), g.debug) < 0)
		return 1;
	if (optind >= argc) {
		print_help(stderr);
		return 1;
	}
	int first = optind;
	for (size_t i = 0; i < N_COMMANDS; i++) {
		if (strcmp(commands[i]->name, argv[first]))
			continue;
		optind = 0; /* reset getopt for the command's own flags */
		return commands[i]->run(&g, argc - first, argv + first);
	}
	log_error("unknown command \"%s\"", argv[optind]);
	return 1;
}
