/* SPDX-License-Identifier: Apache-2.0 */
/* agentsbx sandbox: one call, one throwaway container, one result. */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "../lib/cleanup.h"
#include "../lib/jsongen.h"
#include "../lib/utf8.h"
#include "../lib/util.h"
#include "../agent/sandbox/sandbox.h"
#include "cmd.h"

#define CODE_MAX (16u * 1024 * 1024)
#define EXIT_SANDBOX_FAILED 125 /* as docker run: the runner, not the code */
#define EXIT_TIMED_OUT 124	/* as timeout(1) */

enum { OPT_ROOTFS = 256,
       OPT_IMAGE,
       OPT_IMAGE_ROOT,
       OPT_TIMEOUT,
       OPT_MEMORY,
       OPT_CPUS,
       OPT_PIDS,
       OPT_NETWORK,
       OPT_ALLOW_DOMAIN,
       OPT_JSON,
       OPT_STDIN,
       OPT_CODE,
       OPT_LANG,
       OPT_CWD,
       OPT_OUTPUT_LIMIT,
       OPT_DISK };

struct sandbox_flags {
	const char *rootfs, *image, *image_root, *network, *stdin_path, *code_path, *lang;
	char *allow_domains; /* --allow-domain, joined by commas */
	bool json;
	char **env;
	size_t n_env;
	struct sandbox_config cfg;
	struct sandbox_input in;
};

static const char help_text[] =
	"Runs COMMAND (or, with --code and --lang, a program in python, sh or node)\n"
	"in a new container made from an image directory, under the policy in force:\n"
	"no network, a read-only root over a private overlay (the image never\n"
	"changes), a writable /tmp, no capabilities, limits.  Everything is deleted\n"
	"at the end.  With --json the result is one line of JSON:\n"
	"  {\"stdout\",\"stderr\",\"exit_code\",\"timed_out\",\"seconds\",\"truncated\",\"oom_killed\"}\n"
	"  and \"outputs\" (the files written in /outputs, with their content, base64),\n"
	"  for Python \"value\" (repr() of the last expression) and \"error\" (an uncaught\n"
	"  exception: name, value, traceback);\n"
	"and when the sandbox itself fails (a missing image, a bad flag), the one line\n"
	"is {\"error\": {\"message\": ...}} with exit status 125;\n"
	"otherwise the output is passed on and the exit status is the command's\n"
	"(124 when it timed out, 125 when the sandbox itself failed).\n\n"
	"  --image NAME        the directory NAME under the image root\n"
	"                      (--image-root DIR, $" SANDBOX_IMAGE_ROOT_ENV ", default\n"
	"                      " SANDBOX_IMAGE_ROOT "; not root:\n"
	"                      $XDG_DATA_HOME/agentsbx/images)\n"
	"  --rootfs DIR        an image directory given by path\n"
	"  --timeout S         wall-clock limit in seconds (default 30)\n"
	"  --memory M          memory limit (256m, 1g); the policy's is the most\n"
	"  --cpus N            CPUs (1.5); --pids N  process limit\n"
	"  --network none|PATH no network (default), or join the network namespace\n"
	"                      at PATH if the policy allows it\n"
	"  --allow-domain D    reach only these names (repeat it; D or *.suffix),\n"
	"                      within the policy's egress.allowDomains\n"
	"  --stdin FILE|-      the command's standard input (default: empty)\n"
	"  --code FILE|-       the program, run by the interpreter of --lang\n"
	"  --lang python|sh|node\n"
	"  -e, --env K=V       an environment variable; --cwd DIR (default /tmp)\n"
	"  --output-limit N    bytes kept of stdout and of stderr (default 1m)\n"
	"  --disk N            size of the writable layer (default 256m)\n"
	"  --json              print the result as JSON\n\n"
	"Set up a Python image once (Debian's debootstrap):\n"
	"  debootstrap --variant=minbase --include=python3 bookworm " SANDBOX_IMAGE_ROOT "/python\n"
	"then:  agentsbx sandbox --image python -- python3 -c 'print(1)'\n";

static int bad_flag(const char *flag, const char *value, const char *want)
{
	fprintf(stderr, "agentsbx: sandbox: %s %s: %s\n", flag, value, want);
	return -1;
}

static void push_env(struct sandbox_flags *f, char *kv)
{
	f->env = xrealloc(f->env, (f->n_env + 2) * sizeof(char *));
	f->env[f->n_env++] = kv;
	f->env[f->n_env] = NULL;
}

/* One flag with its value into f; -1 on a bad value. */
static int take_flag(struct sandbox_flags *f, int c, char *arg)
{
	unsigned long long n;
	uint64_t size;

	switch (c) {
	case OPT_ROOTFS: f->rootfs = arg; return 0;
	case OPT_IMAGE: f->image = arg; return 0;
	case OPT_IMAGE_ROOT: f->image_root = arg; return 0;
	case OPT_NETWORK: f->network = arg; return 0;
	case OPT_ALLOW_DOMAIN:
		if (!*arg || strchr(arg, ','))
			return bad_flag("--allow-domain", arg, "one name or *.suffix per flag");
		xappend_comma_list(&f->allow_domains, arg);
		f->cfg.allow_domains = f->allow_domains;
		return 0;
	case OPT_STDIN: f->stdin_path = arg; return 0;
	case OPT_CODE: f->code_path = arg; return 0;
	case OPT_LANG: f->lang = arg; return 0;
	case OPT_CWD: f->cfg.cwd = arg; return 0;
	case OPT_JSON: f->json = true; return 0;
	case 'e':
		if (!strchr(arg, '=') || arg[0] == '=')
			return bad_flag("--env", arg, "expected KEY=VALUE");
		push_env(f, arg);
		return 0;
	case OPT_TIMEOUT:
		return sandbox_parse_seconds(arg, &f->in.timeout) < 0 ?
			       bad_flag("--timeout", arg, "expected seconds (0 < S <= 86400)") :
			       0;
	case OPT_MEMORY:
		return sandbox_parse_size(arg, &f->cfg.memory) < 0 || f->cfg.memory < (4u << 20) ?
			       bad_flag("--memory", arg, "expected a size of at least 4m") :
			       0;
	case OPT_CPUS:
		return sandbox_parse_cpus(arg, &f->cfg.cpu_quota) < 0 ?
			       bad_flag("--cpus", arg, "expected a number of CPUs (0.01 to 1024)") :
			       0;
	case OPT_PIDS:
		if (parse_u64(arg, &n) < 0 || n < 1 || n > (1u << 22))
			return bad_flag("--pids", arg, "expected a number of processes");
		f->cfg.pids = (int64_t)n;
		return 0;
	case OPT_OUTPUT_LIMIT:
		if (sandbox_parse_size(arg, &size) < 0 || !size || size > (1ull << 30))
			return bad_flag("--output-limit", arg, "expected a size from 1 to 1g");
		f->in.output_limit = (size_t)size;
		return 0;
	case OPT_DISK:
		return sandbox_parse_size(arg, &f->cfg.disk) < 0 || f->cfg.disk < (1u << 20) ?
			       bad_flag("--disk", arg, "expected a size of at least 1m") :
			       0;
	}
	return -1;
}

/* 0: parsed; 1: --help printed; -1: bad usage. */
static int parse_flags(int argc, char **argv, struct sandbox_flags *f)
{
	static const struct option opts[] = {
		{ "rootfs", required_argument, NULL, OPT_ROOTFS },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "image-root", required_argument, NULL, OPT_IMAGE_ROOT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "pids", required_argument, NULL, OPT_PIDS },
		{ "network", required_argument, NULL, OPT_NETWORK },
		{ "allow-domain", required_argument, NULL, OPT_ALLOW_DOMAIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "stdin", required_argument, NULL, OPT_STDIN },
		{ "code", required_argument, NULL, OPT_CODE },
		{ "lang", required_argument, NULL, OPT_LANG },
		{ "env", required_argument, NULL, 'e' },
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
		{ "disk", required_argument, NULL, OPT_DISK },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+e:h", opts, NULL)) != -1) {
		if (c == 'h') {
			cmd_usage(&cmd_sandbox, true);
			printf("\n%s", help_text);
			return 1;
		}
		if (c == '?' || take_flag(f, c, optarg) < 0)
			return -1;
	}
	f->cfg.args = argv + optind;
	f->cfg.env = f->env;
	return 0;
}

/* ---- from flags to a call ------------------------------------------------------ */

static int resolve_image(struct sandbox_flags *f, char **rootfs, struct error *err)
{
	if (!!f->rootfs == !!f->image)
		return error_set(err, "sandbox: give exactly one of --rootfs DIR and --image NAME");
	if (f->rootfs)
		return sandbox_rootfs_path(f->rootfs, rootfs, err);
	return sandbox_image_path(f->image_root, f->image, rootfs, err);
}

static int read_code(const char *path, char **code, size_t *len, struct error *err)
{
	if (!strcmp(path, "-"))
		return read_all_fd(STDIN_FILENO, CODE_MAX, code, len, err) < 0 ?
			       error_prefix(err, "sandbox: --code -") :
			       0;
	return read_file_at(AT_FDCWD, path, CODE_MAX, code, len, err) < 0 ?
		       error_prefix(err, "sandbox: --code") :
		       0;
}

static int resolve_lang(struct sandbox_flags *f, char **code, struct error *err)
{
	int lang;

	if (!f->lang && !f->code_path) {
		if (!f->cfg.args[0])
			return error_set(err, "sandbox: a command is required (after --), or --code and --lang");
		return 0;
	}
	if (!f->lang || !f->code_path)
		return error_set(err, "sandbox: --code and --lang go together");
	lang = sandbox_lang_from_name(f->lang);
	if (lang < 0)
		return error_set(err, "sandbox: --lang %s: expected python, sh or node", f->lang);
	if (f->stdin_path && !strcmp(f->stdin_path, "-") && !strcmp(f->code_path, "-"))
		return error_set(err, "sandbox: --code - and --stdin - cannot both read stdin");
	f->cfg.lang = (enum sandbox_lang)lang;
	if (read_code(f->code_path, code, &f->in.code_len, err) < 0)
		return -1;
	f->in.code = *code;
	return 0;
}

static int resolve_network(const struct global_opts *g, struct sandbox_flags *f,
			   struct error *err)
{
	if (!f->network || !strcmp(f->network, "none"))
		return 0;
	if (f->network[0] != '/')
		return error_set(err, "sandbox: --network %s: expected none, or the path of a network namespace (/var/run/netns/NAME)",
				 f->network);
	f->cfg.netns = f->network;
	return sandbox_network_needs_annotation(g, &f->cfg.netns_annotate, err);
}

static int open_stdin(struct sandbox_flags *f, struct error *err)
{
	f->cfg.stdin_fd = -1;
	if (!f->stdin_path)
		return 0;
	if (!strcmp(f->stdin_path, "-")) {
		f->cfg.stdin_fd = STDIN_FILENO;
		return 0;
	}
	f->cfg.stdin_fd = open(f->stdin_path, O_RDONLY | O_CLOEXEC);
	if (f->cfg.stdin_fd < 0)
		return error_sys(err, "sandbox: --stdin %s", f->stdin_path);
	return 0;
}

/* ---- the result --------------------------------------------------------------- */

static int print_result(const struct sandbox_flags *f, const struct sandbox_result *res)
{
	if (f->json) {
		_cleanup_free_ char *json = sandbox_result_json(res);
		printf("%s\n", json);
		fflush(stdout);
		return 0;
	}
	if (write_all(STDOUT_FILENO, res->out, res->out_len) < 0 ||
	    write_all(STDERR_FILENO, res->err, res->err_len) < 0)
		return EXIT_SANDBOX_FAILED;
	if (res->timed_out)
		fprintf(stderr, "agentsbx: sandbox: timed out after %.3f s\n", res->seconds);
	if (res->oom_killed)
		fprintf(stderr, "agentsbx: sandbox: killed: out of memory\n");
	return res->timed_out ? EXIT_TIMED_OUT : res->exit_code;
}

static int fail(const struct sandbox_flags *f, struct error *err, int status)
{
	if (f->json)
		cmd_print_json_error(err->msg);
	free(f->env);
	free(f->allow_domains);
	cmd_fail(err);
	return status;
}

static int run_sandbox(const struct global_opts *g, int argc, char **argv)
{
	struct sandbox_flags f = { .in.cancel_fd = -1 };
	_cleanup_free_ char *rootfs = NULL, *code = NULL;
	struct sandbox_result res;
	struct error err;
	int r, sigfd = -1, status;

	r = parse_flags(argc, argv, &f);
	if (r > 0)
		return 0;
	if (r < 0 && f.json) {
		error_set(&err, "sandbox: bad usage (see agentsbx sandbox --help)");
		cmd_print_json_error(err.msg);
	}
	if (r < 0)
		return cmd_usage(&cmd_sandbox, false);
	if (resolve_image(&f, &rootfs, &err) < 0 || resolve_lang(&f, &code, &err) < 0 ||
	    resolve_network(g, &f, &err) < 0 || open_stdin(&f, &err) < 0)
		goto fail;
	f.cfg.rootfs = rootfs;
	if (sandbox_env_init(g, &sigfd, &err) < 0)
		goto fail;
	r = sandbox_call(g, &f.cfg, &f.in, sigfd, &res, &err);
	sandbox_env_fini();
	if (r < 0)
		goto fail;
	if (res.signal) {
		int sig = res.signal;
		sandbox_result_free(&res);
		error_set(&err, "sandbox: stopped by signal %d; the container was removed", sig);
		return fail(&f, &err, 128 + sig);
	}
	status = print_result(&f, &res);
	sandbox_result_free(&res);
	free(f.env);
	free(f.allow_domains);
	return status;
fail:
	return fail(&f, &err, EXIT_SANDBOX_FAILED);
}

const struct command cmd_sandbox = {
	.name = "sandbox",
	.summary = "run a command or a program in a throwaway container and report the result",
	.usage = "[--image NAME | --rootfs DIR] [--timeout S] [--memory M] [--cpus N] "
		 "[--network none|PATH] [--json] [--stdin FILE|-] [--code FILE|- --lang python|sh|node] "
		 "[-e K=V]... [-- COMMAND [ARGS...]]",
	.run = run_sandbox,
};
