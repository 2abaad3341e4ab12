/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agentsbx session: sandbox sessions for agents that drive a shell, as
 * E2B's `e2b sandbox spawn|list|kill` and Modal's `modal container
 * list|exec|stop`: one noun, a verb each.  The files under /workspace
 * persist between runs and invocations until `session close` or the idle
 * time (agent/session/session.h).
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "../agent/session/session.h"
#include "../lib/base64.h"
#include "../lib/cleanup.h"
#include "../lib/jsongen.h"
#include "../lib/util.h"
#include "../spec/json.h"
#include "cmd.h"

#define EXIT_SANDBOX_FAILED 125
#define EXIT_TIMED_OUT 124
#define CODE_MAX (16u * 1024 * 1024)

enum { OPT_ROOTFS = 256,
       OPT_IMAGE,
       OPT_IMAGE_ROOT,
       OPT_MEMORY,
       OPT_CPUS,
       OPT_PIDS,
       OPT_NETWORK,
       OPT_ALLOW_DOMAIN,
       OPT_DISK,
       OPT_IDLE,
       OPT_LANG,
       OPT_JSON,
       OPT_CODE,
       OPT_STDIN,
       OPT_TIMEOUT,
       OPT_OUTPUT_LIMIT,
       OPT_CWD };

static const char help_text[] =
	"  create [NAME] [--image NAME | --rootfs DIR] [--image-root DIR]\n"
	"         [--lang python|sh|node] [--memory M] [--cpus N] [--pids N] [--disk N]\n"
	"         [--network none|PATH] [--allow-domain D]... [--idle S] [-e K=V]...\n"
	"         [--cwd DIR]\n"
	"      open a session (a name is made up without NAME) and print its name.\n"
	"      Limits above the policy's are refused, as is a network the policy does\n"
	"      not allow.  It closes itself after --idle seconds unused (default 600).\n"
	"  run NAME [--code FILE|- [--lang L]] [--timeout S] [--stdin FILE|-]\n"
	"         [--output-limit N] [--json] [-- COMMAND [ARGS...]]\n"
	"      run a program (in the session's language unless --lang) or a command in\n"
	"      a new container of the session, in /workspace; exit status as sandbox's\n"
	"  write NAME PATH [FILE|-]   a file into /workspace (from stdin by default)\n"
	"  read NAME PATH             a file of /workspace to stdout\n"
	"  ls NAME [PATH]             a directory of /workspace\n"
	"  list                       the sessions, live or dead\n"
	"  close NAME...              stop and delete; a dead one's leftovers removed\n\n"
	"--json (any verb): one line of JSON; a failure is {\"error\": {\"message\"}}\n"
	"with exit status 125.  Paths are /workspace/REL or REL, resolved inside the\n"
	"session's /workspace only.\n";

struct flags {
	const char *rootfs, *image, *image_root, *network, *lang, *code, *stdin_path;
	char *allow_domains; /* --allow-domain, joined by commas */
	bool json;
	char **env;
	size_t n_env;
	struct session_create_opts o;
	double timeout;
	uint64_t output_limit;
};

static int bad(const char *flag, const char *value, const char *want)
{
	fprintf(stderr, "agentsbx: session: %s %s: %s\n", flag, value, want);
	return -1;
}

static int take_flag(struct flags *f, int c, char *arg)
{
	unsigned long long n;

	switch (c) {
	case OPT_ROOTFS: f->rootfs = arg; return 0;
	case OPT_IMAGE: f->image = arg; return 0;
	case OPT_IMAGE_ROOT: f->image_root = arg; return 0;
	case OPT_NETWORK: f->network = arg; return 0;
	case OPT_ALLOW_DOMAIN:
		if (!*arg || strchr(arg, ','))
			return bad("--allow-domain", arg, "one name or *.suffix per flag");
		xappend_comma_list(&f->allow_domains, arg);
		f->o.cfg.allow_domains = f->allow_domains;
		return 0;
	case OPT_LANG: f->lang = arg; return 0;
	case OPT_JSON: f->json = true; return 0;
	case OPT_CODE: f->code = arg; return 0;
	case OPT_STDIN: f->stdin_path = arg; return 0;
	case OPT_CWD: f->o.cfg.cwd = arg; return 0;
	case 'e':
		if (!strchr(arg, '=') || arg[0] == '=')
			return bad("--env", arg, "expected KEY=VALUE");
		f->env = xrealloc(f->env, (f->n_env + 2) * sizeof(char *));
		f->env[f->n_env++] = arg;
		f->env[f->n_env] = NULL;
		return 0;
	case OPT_MEMORY:
		return sandbox_parse_size(arg, &f->o.cfg.memory) < 0 || f->o.cfg.memory < (4u << 20) ?
			       bad("--memory", arg, "expected a size of at least 4m") :
			       0;
	case OPT_CPUS:
		return sandbox_parse_cpus(arg, &f->o.cfg.cpu_quota) < 0 ?
			       bad("--cpus", arg, "expected a number of CPUs (0.01 to 1024)") :
			       0;
	case OPT_PIDS:
		if (parse_u64(arg, &n) < 0 || n < 1 || n > (1u << 22))
			return bad("--pids", arg, "expected a number of processes");
		f->o.cfg.pids = (int64_t)n;
		return 0;
	case OPT_DISK:
		return sandbox_parse_size(arg, &f->o.cfg.disk) < 0 || f->o.cfg.disk < (1u << 20) ?
			       bad("--disk", arg, "expected a size of at least 1m") :
			       0;
	case OPT_IDLE:
		return sandbox_parse_seconds(arg, &f->o.idle) < 0 ?
			       bad("--idle", arg, "expected seconds (0 < S <= 86400)") :
			       0;
	case OPT_TIMEOUT:
		return sandbox_parse_seconds(arg, &f->timeout) < 0 ?
			       bad("--timeout", arg, "expected seconds (0 < S <= 86400)") :
			       0;
	case OPT_OUTPUT_LIMIT:
		return sandbox_parse_size(arg, &f->output_limit) < 0 || !f->output_limit ||
				       f->output_limit > (16u << 20) ?
			       bad("--output-limit", arg, "expected a size from 1 to 16m") :
			       0;
	}
	return -1;
}

/* Flags from argv[1] on (argv[0] is skipped, as getopt does); *first gets
 * the index of the first argument left.  1: --help. */
static int parse(int argc, char **argv, struct flags *f, int *first)
{
	static const struct option opts[] = {
		{ "rootfs", required_argument, NULL, OPT_ROOTFS },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "image-root", required_argument, NULL, OPT_IMAGE_ROOT },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "pids", required_argument, NULL, OPT_PIDS },
		{ "network", required_argument, NULL, OPT_NETWORK },
		{ "allow-domain", required_argument, NULL, OPT_ALLOW_DOMAIN },
		{ "disk", required_argument, NULL, OPT_DISK },
		{ "idle", required_argument, NULL, OPT_IDLE },
		{ "lang", required_argument, NULL, OPT_LANG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "code", required_argument, NULL, OPT_CODE },
		{ "stdin", required_argument, NULL, OPT_STDIN },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "env", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "e:h", opts, NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == '?' || take_flag(f, c, optarg) < 0)
			return -1;
	}
	*first = optind;
	return 0;
}

/* ---- output -------------------------------------------------------------------- */

static int fail(const struct flags *f, struct error *err)
{
	if (f->json)
		cmd_print_json_error(err->msg);
	cmd_fail(err);
	return EXIT_SANDBOX_FAILED;
}

static yajl_gen gen_op(const char *op, const char *path)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_key_str(g, "op", op);
	if (path)
		jgen_key_str(g, "path", path);
	return g;
}

static int read_input(const char *path, size_t max, char **out, size_t *len, struct error *err)
{
	if (!strcmp(path, "-"))
		return read_all_fd(STDIN_FILENO, max, out, len, err) < 0 ? error_prefix(err, "stdin") : 0;
	return read_file_at(AT_FDCWD, path, max, out, len, err) < 0 ? error_prefix(err, "%s", path) : 0;
}

/* ---- the verbs ------------------------------------------------------------------- */

static int resolve_create(const struct global_opts *g, struct flags *f, char **rootfs,
			  struct error *err)
{
	int lang = sandbox_lang_from_name(f->lang ? f->lang : "python");

	if (!!f->rootfs == !!f->image)
		return error_set(err, "session create: give exactly one of --rootfs DIR and --image NAME");
	if ((f->rootfs ? sandbox_rootfs_path(f->rootfs, rootfs, err) : sandbox_image_path(f->image_root, f->image, rootfs, err)) < 0)
		return -1;
	if (lang < 0)
		return error_set(err, "session create: --lang %s: expected python, sh or node", f->lang);
	f->o.cfg.lang = (enum sandbox_lang)lang;
	f->o.cfg.rootfs = *rootfs;
	f->o.cfg.env = f->env;
	f->o.cfg.stdin_fd = -1;
	f->o.image = f->image ? f->image : *rootfs;
	if (!f->o.idle)
		f->o.idle = SESSION_IDLE_DEFAULT;
	if (f->network && strcmp(f->network, "none")) {
		if (f->network[0] != '/')
			return error_set(err, "session create: --network %s: expected none, or the path of a network namespace (/var/run/netns/NAME)",
					 f->network);
		f->o.cfg.netns = f->network;
		if (sandbox_network_needs_annotation(g, &f->o.cfg.netns_annotate, err) < 0)
			return -1;
	}
	return sandbox_check_limits(g, &f->o.cfg, err);
}

static int verb_create(const struct global_opts *g, struct flags *f, int argc, char **argv)
{
	_cleanup_free_ char *rootfs = NULL;
	char name[SESSION_NAME_MAX + 1];
	struct error err;

	if (argc > 1)
		return error_set(&err, "session create: one NAME at most"), fail(f, &err);
	f->o.name = argc ? argv[0] : NULL;
	if (resolve_create(g, f, &rootfs, &err) < 0 || session_create(g, &f->o, name, &err) < 0)
		return fail(f, &err);
	if (f->json)
		printf("{\"session_id\":\"%s\",\"workspace\":\"%s\"}\n", name, SANDBOX_SESSION_DIR);
	else
		printf("%s\n", name);
	return 0;
}

static int print_run(const struct flags *f, struct session_reply *rep)
{
	yajl_val out = jmember(rep->hdr, "stdout"), err = jmember(rep->hdr, "stderr");
	yajl_val code = jmember(rep->hdr, "exit_code"), to = jmember(rep->hdr, "timed_out");

	if (f->json) {
		printf("%s\n", rep->hdr_text);
		return 0;
	}
	if (out && YAJL_IS_STRING(out))
		fputs(out->u.string, stdout);
	fflush(stdout);
	if (err && YAJL_IS_STRING(err))
		fputs(err->u.string, stderr);
	if (to && YAJL_IS_TRUE(to)) {
		fprintf(stderr, "agentsbx: session: timed out\n");
		return EXIT_TIMED_OUT;
	}
	return code && YAJL_IS_INTEGER(code) ? (int)YAJL_GET_INTEGER(code) : EXIT_SANDBOX_FAILED;
}

static int verb_run(const struct global_opts *g, struct flags *f, const char *name, int argc,
		    char **argv)
{
	_cleanup_free_ char *code = NULL, *input = NULL, *hdr = NULL, *body = NULL;
	size_t code_len = 0, in_len = 0;
	struct session_reply rep;
	struct error err;
	yajl_gen gen;
	int status;

	if (!f->code == !argc)
		return error_set(&err, "session run: give --code FILE|- or -- COMMAND, one of them"),
		       fail(f, &err);
	if (f->code && f->stdin_path && !strcmp(f->code, "-") && !strcmp(f->stdin_path, "-"))
		return error_set(&err, "session run: --code - and --stdin - cannot both read stdin"),
		       fail(f, &err);
	if ((f->code && read_input(f->code, CODE_MAX, &code, &code_len, &err) < 0) ||
	    (f->stdin_path && read_input(f->stdin_path, SESSION_FILE_MAX - CODE_MAX, &input,
					 &in_len, &err) < 0))
		return fail(f, &err);
	gen = gen_op("run", NULL);
	if (f->lang)
		jgen_key_str(gen, "language", f->lang);
	if (argc)
		jgen_key_list(gen, "args", (const char *const *)argv);
	if (f->timeout > 0) {
		jgen_str(gen, "timeout");
		yajl_gen_double(gen, f->timeout);
	}
	jgen_key_int(gen, "output_limit", (long long)f->output_limit);
	jgen_key_int(gen, "code_len", (long long)code_len);
	jgen_key_int(gen, "body_len", (long long)(code_len + in_len));
	yajl_gen_map_close(gen);
	hdr = jgen_finish(gen, NULL);
	body = xmalloc(code_len + in_len + 1);
	if (code_len)
		memcpy(body, code, code_len);
	if (in_len)
		memcpy(body + code_len, input, in_len);
	if (session_request(g, name, hdr, body, code_len + in_len, &rep, &err) < 0)
		return fail(f, &err);
	status = print_run(f, &rep);
	session_reply_free(&rep);
	return status;
}

static int verb_write(const struct global_opts *g, struct flags *f, const char *name, int argc,
		      char **argv)
{
	_cleanup_free_ char *data = NULL, *hdr = NULL;
	struct session_reply rep;
	struct error err;
	size_t len = 0;
	yajl_gen gen;

	if (argc < 1 || argc > 2)
		return error_set(&err, "session write: expected NAME PATH [FILE|-]"), fail(f, &err);
	if (read_input(argc == 2 ? argv[1] : "-", SESSION_FILE_MAX, &data, &len, &err) < 0)
		return fail(f, &err);
	gen = gen_op("write", argv[0]);
	jgen_key_int(gen, "body_len", (long long)len);
	yajl_gen_map_close(gen);
	hdr = jgen_finish(gen, NULL);
	if (session_request(g, name, hdr, data, len, &rep, &err) < 0)
		return fail(f, &err);
	if (f->json)
		printf("%s\n", rep.hdr_text);
	session_reply_free(&rep);
	return 0;
}

static int verb_read(const struct global_opts *g, struct flags *f, const char *name, int argc,
		     char **argv)
{
	_cleanup_free_ char *hdr = NULL, *b64 = NULL;
	struct session_reply rep;
	struct error err;
	yajl_gen gen;

	if (argc != 1)
		return error_set(&err, "session read: expected NAME PATH"), fail(f, &err);
	gen = gen_op("read", argv[0]);
	yajl_gen_map_close(gen);
	hdr = jgen_finish(gen, NULL);
	if (session_request(g, name, hdr, NULL, 0, &rep, &err) < 0)
		return fail(f, &err);
	if (f->json) {
		b64 = base64_encode(rep.body, rep.body_len);
		gen = gen_op("read", argv[0]);
		jgen_key_int(gen, "size", (long long)rep.body_len);
		jgen_key_str(gen, "content_base64", b64);
		yajl_gen_map_close(gen);
		free(hdr);
		hdr = jgen_finish(gen, NULL);
		printf("%s\n", hdr);
	} else if (write_all(STDOUT_FILENO, rep.body, rep.body_len) < 0) {
		session_reply_free(&rep);
		return error_sys(&err, "session read: write stdout"), fail(f, &err);
	}
	session_reply_free(&rep);
	return 0;
}

static int verb_ls(const struct global_opts *g, struct flags *f, const char *name, int argc,
		   char **argv)
{
	_cleanup_free_ char *hdr = NULL;
	struct session_reply rep;
	struct error err;
	yajl_val entries;
	yajl_gen gen;

	if (argc > 1)
		return error_set(&err, "session ls: expected NAME [PATH]"), fail(f, &err);
	gen = gen_op("ls", argc ? argv[0] : NULL);
	yajl_gen_map_close(gen);
	hdr = jgen_finish(gen, NULL);
	if (session_request(g, name, hdr, NULL, 0, &rep, &err) < 0)
		return fail(f, &err);
	entries = jmember(rep.hdr, "entries");
	if (f->json)
		printf("%s\n", rep.hdr_text);
	else
		for (size_t i = 0; entries && YAJL_IS_ARRAY(entries) && i < entries->u.array.len; i++) {
			yajl_val e = entries->u.array.values[i];
			yajl_val n = jmember(e, "name"), t = jmember(e, "type"), s = jmember(e, "size");
			printf("%-9s %10lld %s\n", t && YAJL_IS_STRING(t) ? t->u.string : "?",
			       s && YAJL_IS_INTEGER(s) ? YAJL_GET_INTEGER(s) : 0LL,
			       n && YAJL_IS_STRING(n) ? n->u.string : "?");
		}
	session_reply_free(&rep);
	return 0;
}

static int verb_list(const struct global_opts *g, struct flags *f)
{
	struct session_info *list;
	struct error err;
	size_t n;

	if (session_list(g, &list, &n, &err) < 0)
		return fail(f, &err);
	if (f->json)
		printf("[");
	else
		printf("%-20s %-6s %-8s %-10s %-8s %s\n", "NAME", "STATUS", "PID", "LANGUAGE",
		       "UNUSED", "IMAGE");
	for (size_t i = 0; i < n; i++) {
		const struct session_info *s = &list[i];
		if (f->json)
			printf("%s{\"session_id\":\"%s\",\"status\":\"%s\",\"pid\":%d,\"language\":\"%s\",\"unused_seconds\":%.1f,\"idle_seconds\":%g}",
			       i ? "," : "", s->name, s->alive ? "alive" : "dead", s->pid,
			       s->language ? s->language : "", s->unused, s->idle);
		else
			printf("%-20s %-6s %-8d %-10s %-8.0f %s\n", s->name, s->alive ? "alive" : "dead",
			       s->pid, s->language ? s->language : "-", s->unused,
			       s->image ? s->image : "-");
	}
	if (f->json)
		printf("]\n");
	session_list_free(list, n);
	return 0;
}

static int verb_close(const struct global_opts *g, struct flags *f, int argc, char **argv)
{
	int status = 0;

	if (!argc) {
		struct error err;
		return error_set(&err, "session close: expected NAME..."), fail(f, &err);
	}
	for (int i = 0; i < argc; i++) {
		struct error err;
		bool dead;

		if (session_close(g, argv[i], &dead, &err) < 0) {
			status = fail(f, &err);
			continue;
		}
		if (f->json)
			printf("{\"session_id\":\"%s\",\"closed\":true,\"was_dead\":%s}\n", argv[i],
			       dead ? "true" : "false");
		else if (dead)
			printf("%s: removed what was left (its server had died)\n", argv[i]);
	}
	return status;
}

static int run_session(const struct global_opts *g, int argc, char **argv)
{
	struct flags f = { 0 };
	const char *verb = argc > 1 ? argv[1] : "", *name = NULL;
	int first = 0, r, status;
	bool named = strcmp(verb, "create") && strcmp(verb, "list") && strcmp(verb, "close");

	if (argc < 2)
		return cmd_usage(&cmd_session, false);
	/* Flags anywhere before "--"; what follows it is run's command. */
	r = parse(argc - 1, argv + 1, &f, &first);
	if (r > 0 || !strcmp(verb, "-h") || !strcmp(verb, "--help")) {
		cmd_usage(&cmd_session, true);
		printf("\n%s", help_text);
		return 0;
	}
	if (r < 0)
		return cmd_usage(&cmd_session, false);
	argc -= 1 + first;
	argv += 1 + first;
	if (named) {
		if (!argc)
			return cmd_usage(&cmd_session, false);
		name = argv[0];
		argc--;
		argv++;
	}
	if (!strcmp(verb, "create"))
		status = verb_create(g, &f, argc, argv);
	else if (!strcmp(verb, "run"))
		status = verb_run(g, &f, name, argc, argv);
	else if (!strcmp(verb, "write"))
		status = verb_write(g, &f, name, argc, argv);
	else if (!strcmp(verb, "read"))
		status = verb_read(g, &f, name, argc, argv);
	else if (!strcmp(verb, "ls"))
		status = verb_ls(g, &f, name, argc, argv);
	else if (!strcmp(verb, "list"))
		status = verb_list(g, &f);
	else if (!strcmp(verb, "close"))
		status = verb_close(g, &f, argc, argv);
	else
		status = cmd_usage(&cmd_session, false);
	free(f.env);
	free(f.allow_domains);
	return status;
}

const struct command cmd_session = {
	.name = "session",
	.summary = "sandbox sessions that keep their files between runs (create, run, write, read, ls, list, close)",
	.usage = "create|run|write|read|ls|list|close [NAME] [options] (see --help)",
	.run = run_session,
};
