/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The config.json of a sandbox: the default spec (`agentsbx spec`), re-emitted
 * with the process, root, hostname, resources and network of the call.  The
 * mounts, namespaces, masked and read-only paths stay the default's, and the
 * policy in force then makes the whole no looser than its floor.  Also the
 * small parsers shared by the sandbox and mcp commands.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"
#include "sandbox_private.h"

#define CPU_PERIOD 100000

static const char *const lang_names[SANDBOX_LANG_MAX] = {
	[SANDBOX_LANG_NONE] = "command",
	[SANDBOX_LANG_PYTHON] = "python",
	[SANDBOX_LANG_SH] = "sh",
	[SANDBOX_LANG_NODE] = "node",
};

static const char *const code_files[SANDBOX_LANG_MAX] = {
	[SANDBOX_LANG_PYTHON] = "main.py",
	[SANDBOX_LANG_SH] = "main.sh",
	[SANDBOX_LANG_NODE] = "main.js",
};

/* The environment every sandbox gets; -e K=V adds to it (and wins). */
static const char *const base_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/tmp",
	"LANG=C.UTF-8",
	"PYTHONDONTWRITEBYTECODE=1",
	/* What a program printed before a timeout's SIGKILL is in its output. */
	"PYTHONUNBUFFERED=1",
	NULL,
};

int sandbox_lang_from_name(const char *name)
{
	for (int i = SANDBOX_LANG_PYTHON; i < SANDBOX_LANG_MAX; i++)
		if (!strcmp(name, lang_names[i]))
			return i;
	if (!strcmp(name, "python3"))
		return SANDBOX_LANG_PYTHON;
	if (!strcmp(name, "javascript") || !strcmp(name, "js"))
		return SANDBOX_LANG_NODE;
	if (!strcmp(name, "bash") || !strcmp(name, "shell"))
		return SANDBOX_LANG_SH;
	return -1;
}

const char *sandbox_lang_name(enum sandbox_lang lang)
{
	return lang < SANDBOX_LANG_MAX ? lang_names[lang] : "?";
}

const char *sandbox_code_file(enum sandbox_lang lang)
{
	return lang < SANDBOX_LANG_MAX ? code_files[lang] : NULL;
}

/* The default spec is ours: this only bounds the recursion. */
#define SANDBOX_SPEC_MAX_DEPTH 64

/* ---- emitting ------------------------------------------------------------ */

/* A trusted tree (the default spec) as it is; its depth is a handful. */
static bool env_overridden(char **extra, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (char **e = extra; e && *e; e++)
		if (!strncmp(*e, kv, n) && (*e)[n] == '=')
			return true;
	return false;
}

static void gen_env(yajl_gen g, const struct sandbox_config *cfg)
{
	jgen_str(g, "env");
	yajl_gen_array_open(g);
	for (const char *const *e = base_env; *e; e++)
		if (!env_overridden(cfg->env, *e))
			jgen_str(g, *e);
	for (char **e = cfg->env; e && *e; e++)
		jgen_str(g, *e);
	yajl_gen_array_close(g);
}

/* A warm sh: the interpreter waits for the go byte (sandbox_run), then
 * becomes the program's own sh (stdin at its end: never used, exit). */
static const char sh_warm[] = "IFS= read -r _ || exit 0; exec \"$0\" \"$@\"";
/* A warm node: the same, then the file is loaded as the main module (as
 * `node FILE` does for a CommonJS file; require.main is it).  The stdio
 * streams, made on first use, are made before: each is 10-20 ms of the
 * first console.log otherwise. */
static const char node_warm[] =
	"process.stdout; process.stderr;\n"
	"const fs = require('fs'), b = Buffer.alloc(1);\n"
	"let n = 0;\n"
	"for (;;) { try { n = fs.readSync(0, b, 0, 1, null); break; }\n"
	"  catch (e) { if (e.code !== 'EAGAIN') break;\n"
	"    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1); } }\n"
	"if (n !== 1 || b[0] !== 10) process.exit(0);\n"
	"require('module')._load(process.argv[1], null, true);\n";

/* The interpreter's arguments before the code file's name. */
static void gen_interpreter(yajl_gen g, const struct sandbox_config *cfg,
			    const char *interpreter)
{
	jgen_str(g, interpreter);
	switch (cfg->lang) {
	case SANDBOX_LANG_PYTHON:
		/* the last expression's value (sandbox_outputs.c) */
		jgen_str(g, "-c");
		jgen_str(g, cfg->warm ? sandbox_python_warm_wrapper : sandbox_python_wrapper);
		break;
	case SANDBOX_LANG_SH:
		if (cfg->warm) {
			jgen_str(g, "-c");
			jgen_str(g, sh_warm);
			jgen_str(g, interpreter); /* $0 */
		}
		break;
	case SANDBOX_LANG_NODE:
		if (cfg->warm) {
			jgen_str(g, "-e");
			jgen_str(g, node_warm);
		}
		break;
	default:
		break;
	}
}

static void gen_args(yajl_gen g, const struct sandbox_config *cfg,
		     const char *interpreter)
{
	_cleanup_free_ char *init = xasprintf("/%s/%s", SANDBOX_CODE_DIR, SANDBOX_INIT_FILE);

	jgen_str(g, "args");
	yajl_gen_array_open(g);
	/* PID 1 is our init; the program is its child. */
	jgen_str(g, init);
	if (cfg->lang != SANDBOX_LANG_NONE) {
		_cleanup_free_ char *file = xasprintf("/%s/%s", SANDBOX_CODE_DIR,
						      sandbox_code_file(cfg->lang));
		gen_interpreter(g, cfg, interpreter);
		jgen_str(g, file);
	}
	for (char **a = cfg->args; a && *a; a++)
		jgen_str(g, *a);
	yajl_gen_array_close(g);
}

static void gen_empty_caps(yajl_gen g)
{
	static const char *const sets[] = { "bounding", "effective", "permitted" };

	jgen_str(g, "capabilities");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		jgen_str(g, sets[i]);
		yajl_gen_array_open(g);
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
}

static void gen_process(yajl_gen g, const struct sandbox_config *cfg,
			const char *interpreter)
{
	yajl_gen_map_open(g);
	jgen_str(g, "terminal");
	yajl_gen_bool(g, false);
	jgen_str(g, "user");
	yajl_gen_map_open(g);
	jgen_key_int(g, "uid", 0);
	jgen_key_int(g, "gid", 0);
	yajl_gen_map_close(g);
	gen_args(g, cfg, interpreter);
	gen_env(g, cfg);
	jgen_str(g, "cwd");
	jgen_str(g, cfg->cwd ? cfg->cwd : cfg->session ? SANDBOX_SESSION_DIR :
							 "/tmp");
	gen_empty_caps(g);
	jgen_str(g, "noNewPrivileges");
	yajl_gen_bool(g, true);
	yajl_gen_map_close(g);
}

/* The root is the overlay: writable only if the policy lets it be, and in
 * any case thrown away with the workspace. */
static void gen_root(yajl_gen g)
{
	yajl_gen_map_open(g);
	jgen_str(g, "path");
	jgen_str(g, "rootfs");
	jgen_str(g, "readonly");
	yajl_gen_bool(g, false);
	yajl_gen_map_close(g);
}

static void gen_resources(yajl_gen g, const struct sandbox_config *cfg)
{
	yajl_gen_map_open(g);
	jgen_str(g, "devices");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	jgen_str(g, "allow");
	yajl_gen_bool(g, false);
	jgen_str(g, "access");
	jgen_str(g, "rwm");
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	if (cfg->memory) {
		jgen_str(g, "memory");
		yajl_gen_map_open(g);
		jgen_key_int(g, "limit", (long long)cfg->memory);
		jgen_key_int(g, "swap", (long long)cfg->memory);
		yajl_gen_map_close(g);
	}
	if (cfg->cpu_quota) {
		jgen_str(g, "cpu");
		yajl_gen_map_open(g);
		jgen_key_int(g, "quota", (long long)cfg->cpu_quota);
		jgen_key_int(g, "period", CPU_PERIOD);
		yajl_gen_map_close(g);
	}
	if (cfg->pids > 0) {
		jgen_str(g, "pids");
		yajl_gen_map_open(g);
		jgen_key_int(g, "limit", cfg->pids);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

/* The default's namespaces, the network one joined at cfg->netns. */
static void gen_namespaces(yajl_gen g, yajl_val list, const struct sandbox_config *cfg)
{
	yajl_gen_array_open(g);
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++) {
		yajl_val ns = list->u.array.values[i];
		const char *type_path[] = { "type", NULL };
		yajl_val type = yajl_tree_get(ns, type_path, yajl_t_string);

		if (!type || strcmp(type->u.string, "network")) {
			(void)jgen_tree(g, ns, SANDBOX_SPEC_MAX_DEPTH);
			continue;
		}
		yajl_gen_map_open(g);
		jgen_str(g, "type");
		jgen_str(g, "network");
		jgen_str(g, "path");
		jgen_str(g, cfg->netns);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_linux(yajl_gen g, yajl_val linux_obj, const struct sandbox_config *cfg)
{
	bool had_resources = false;

	yajl_gen_map_open(g);
	for (size_t i = 0; YAJL_IS_OBJECT(linux_obj) && i < linux_obj->u.object.len; i++) {
		const char *key = linux_obj->u.object.keys[i];
		yajl_val v = linux_obj->u.object.values[i];

		jgen_str(g, key);
		if (!strcmp(key, "resources")) {
			gen_resources(g, cfg);
			had_resources = true;
		} else if (!strcmp(key, "namespaces") && cfg->netns) {
			gen_namespaces(g, v, cfg);
		} else {
			(void)jgen_tree(g, v, SANDBOX_SPEC_MAX_DEPTH);
		}
	}
	if (!had_resources) {
		jgen_str(g, "resources");
		gen_resources(g, cfg);
	}
	yajl_gen_map_close(g);
}

/* A directory of the bundle (so on the workspace's own size-capped
 * tmpfs) read-write on destination. */
static void gen_bind(yajl_gen g, const char *destination, const char *source)
{
	static const char *const opts[] = { "rbind", "rw", "nosuid", "nodev" };

	yajl_gen_map_open(g);
	jgen_str(g, "destination");
	jgen_str(g, destination);
	jgen_str(g, "type");
	jgen_str(g, "bind");
	jgen_str(g, "source");
	jgen_str(g, source);
	jgen_str(g, "options");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		jgen_str(g, opts[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

/* The default's mounts; a session's files on /workspace; /outputs and the
 * Python wrapper's /.agentsbx/meta (sandbox_outputs.c). */
static void gen_mounts(yajl_gen g, yajl_val list, const struct sandbox_config *cfg)
{
	yajl_gen_array_open(g);
	for (size_t i = 0; YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
		(void)jgen_tree(g, list->u.array.values[i], SANDBOX_SPEC_MAX_DEPTH);
	if (cfg->session)
		gen_bind(g, SANDBOX_SESSION_DIR, SANDBOX_FILES_DIR);
	gen_bind(g, SANDBOX_OUTPUTS_DIR, SANDBOX_OUTPUTS_NAME);
	gen_bind(g, "/" SANDBOX_CODE_DIR "/" SANDBOX_META_DIR, SANDBOX_META_DIR);
	yajl_gen_array_close(g);
}

static void gen_annotations(yajl_gen g, const struct sandbox_config *cfg)
{
	jgen_str(g, "annotations");
	yajl_gen_map_open(g);
	jgen_str(g, "org.agentsbx.sandbox");
	jgen_str(g, "true");
	if (cfg->netns && cfg->netns_annotate) {
		jgen_str(g, "agentsbx.network");
		jgen_str(g, "allow");
	}
	if (cfg->allow_domains) {
		jgen_str(g, "agentsbx.egress.allow");
		jgen_str(g, cfg->allow_domains);
	}
	yajl_gen_map_close(g);
}

static void gen_spec(yajl_gen g, yajl_val def, const struct sandbox_config *cfg,
		     const char *interpreter)
{
	yajl_gen_map_open(g);
	for (size_t i = 0; i < def->u.object.len; i++) {
		const char *key = def->u.object.keys[i];
		yajl_val v = def->u.object.values[i];

		if (!strcmp(key, "annotations"))
			continue;
		jgen_str(g, key);
		if (!strcmp(key, "process"))
			gen_process(g, cfg, interpreter);
		else if (!strcmp(key, "root"))
			gen_root(g);
		else if (!strcmp(key, "hostname"))
			jgen_str(g, "sandbox");
		else if (!strcmp(key, "linux"))
			gen_linux(g, v, cfg);
		else if (!strcmp(key, "mounts"))
			gen_mounts(g, v, cfg);
		else
			(void)jgen_tree(g, v, SANDBOX_SPEC_MAX_DEPTH);
	}
	gen_annotations(g, cfg);
	yajl_gen_map_close(g);
}

char *sandbox_spec_json(const struct sandbox_config *cfg, const char *interpreter,
			struct error *err)
{
	/* Rootless: the default for an unprivileged caller, with a user
	 * namespace that maps its own ids to 0 (spec --rootless). */
	bool rootless = geteuid() != 0;
	_cleanup_free_ char *def_json = spec_default_json(rootless, geteuid(), getegid());
	char ebuf[256] = "";
	yajl_val def = yajl_tree_parse(def_json, ebuf, sizeof(ebuf));
	yajl_gen g;

	if (!def || !YAJL_IS_OBJECT(def)) {
		yajl_tree_free(def);
		error_set(err, "sandbox: the default spec does not parse: %s", ebuf);
		return NULL;
	}
	g = jgen_new(false);
	gen_spec(g, def, cfg, interpreter);
	yajl_tree_free(def);
	return jgen_finish(g, NULL);
}

/* ---- the policy and the network ----------------------------------------- */

int sandbox_network_needs_annotation(const struct global_opts *g, bool *out,
				     struct error *err)
{
	struct policy p;

	if (policy_load(g->policy_path, &p, err) < 0)
		return -1;
	*out = p.mode == POLICY_ENFORCE && !p.network_allowed;
	policy_free(&p);
	return 0;
}

/* ---- flag values ---------------------------------------------------------- */

int sandbox_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k':
	case 'K': shift = 10; break;
	case 'm':
	case 'M': shift = 20; break;
	case 'g':
	case 'G': shift = 30; break;
	default:
		return -1;
	}
	if (*end && end[1] && strcmp(end + 1, "b") && strcmp(end + 1, "B") &&
	    strcmp(end + 1, "iB") && strcmp(end + 1, "ib"))
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int sandbox_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

int sandbox_parse_cpus(const char *s, uint64_t *quota)
{
	double v;

	if (sandbox_parse_seconds(s, &v) < 0 || v > 1024)
		return -1;
	*quota = (uint64_t)(v * CPU_PERIOD + 0.5);
	if (*quota < 1000)
		return -1;
	return 0;
}
