/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a run gives back besides its streams, as code interpreters do:
 *
 * - the value of a Python program's last expression (REPL-like: `1+2` at
 *   the end gives "3"), found by a small wrapper that runs the code file
 *   (python3 -c WRAPPER /.agentsbx/main.py; the C module _ast only: importing
 *   ast costs more than a whole print(1)): it parses the file, runs all
 *   but a final expression statement as the module __main__, evaluates
 *   that expression and writes its repr() to /.agentsbx/meta/value (a
 *   directory of the workspace bound there).  An uncaught exception is
 *   printed as Python prints it, without the wrapper's frames, so stderr
 *   and the parsed error are what they were without it.
 * - the files in /outputs (a directory of the workspace bound there, kept
 *   between a session's runs): those the run created or changed, with
 *   their content (base64) for a one-call sandbox, whose files are deleted
 *   with it (a session's are read with its read-file call).
 *
 * Both are written by the hostile program: read through directory fds,
 * O_NOFOLLOW and O_NONBLOCK, regular files only, sizes bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/base64.h"
#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/weaken.h"
#include "sandbox_private.h"

#define VALUE_MAX (64 * 1024)	       /* bytes of repr() kept */
#define OUTPUTS_MAX 100		       /* files listed */
#define OUTPUTS_DEPTH 8		       /* directory levels walked */
#define CONTENT_MAX (4u * 1024 * 1024) /* bytes of content returned in all */
#define MTIME_SLACK_NS 20000000LL      /* tmpfs times are a tick coarse */

const char sandbox_python_wrapper[] =
	"import sys\n"
	"def _agentsbx_main():\n"
	"    import _ast\n"
	"    path = sys.argv[1]\n"
	"    del sys.argv[0]\n"
	"    sys.path[0] = '/" SANDBOX_CODE_DIR "'\n"
	"    main = type(sys)('__main__')\n"
	"    main.__file__ = path\n"
	"    sys.modules['__main__'] = main\n"
	"    last = None\n"
	"    try:\n"
	"        with open(path, 'rb') as f:\n"
	"            tree = compile(f.read(), path, 'exec', 0x400)\n" /* PyCF_ONLY_AST */
	"        if tree.body and isinstance(tree.body[-1], _ast.Expr):\n"
	"            last = _ast.Expression(tree.body.pop().value)\n"
	"        exec(compile(tree, path, 'exec'), main.__dict__)\n"
	"        value = eval(compile(last, path, 'eval'), main.__dict__) if last else None\n"
	"    except (SystemExit, KeyboardInterrupt):\n"
	"        raise\n"
	"    except BaseException as e:\n"
	"        tb = e.__traceback__\n"
	"        while tb is not None and tb.tb_frame.f_code.co_filename != path:\n"
	"            tb = tb.tb_next\n"
	"        sys.excepthook(type(e), e.with_traceback(tb), tb)\n"
	"        sys.exit(1)\n"
	"    if value is not None:\n"
	"        try:\n"
	"            with open('/" SANDBOX_CODE_DIR "/" SANDBOX_META_DIR "/value', 'w') as f:\n"
	"                f.write(repr(value)[:" "65536" "])\n"
	"        except Exception:\n"
	"            pass\n"
	"_agentsbx_main()\n";

/* ---- reading what the program left ------------------------------------------- */

/* A regular file at dirfd/name, at most max bytes (-1 if it is not).  The
 * program made the name: a symlink to a host file must not be followed
 * by us (O_NOFOLLOW), a FIFO must not block us (O_NONBLOCK, then fstat). */
static int read_small(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
	int nofollow = WEAKENED("value-nofollow") ? 0 : O_NOFOLLOW;
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | nofollow | O_NONBLOCK | O_CLOEXEC);
	struct error e;

	if (fd < 0)
		return -1;
	return read_regular_fd(fd, name, max, out, len, &e);
}

static int open_dir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void take_value(int ws, struct sandbox_result *res)
{
	_cleanup_close_ int meta = open_dir_at(ws, SANDBOX_META_DIR);
	char *text = NULL;
	size_t len = 0;

	if (meta < 0)
		return;
	if (read_small(meta, "value", VALUE_MAX, &text, &len) == 0) {
		res->value = text;
		res->value_len = len;
	}
	/* A session's next run must not find this one's. */
	unlinkat(meta, "value", 0);
}

struct walk {
	struct sandbox_result *res;
	long long since_ns; /* CLOCK_REALTIME; 0: every file */
	bool content;
	size_t content_left;
};

static void add_output(struct walk *w, int dirfd, const char *name, const char *rel,
		       const struct stat *st)
{
	struct sandbox_output *o;
	size_t len = 0;
	char *data = NULL;

	if (w->res->n_outputs >= OUTPUTS_MAX) {
		w->res->outputs_truncated = true;
		return;
	}
	w->res->outputs = xrealloc(w->res->outputs,
				   (w->res->n_outputs + 1) * sizeof(*w->res->outputs));
	o = &w->res->outputs[w->res->n_outputs++];
	memset(o, 0, sizeof(*o));
	o->path = xasprintf("%s/%s", SANDBOX_OUTPUTS_DIR, rel);
	o->size = (unsigned long long)st->st_size;
	if (!w->content)
		return;
	if ((size_t)st->st_size <= w->content_left &&
	    read_small(dirfd, name, w->content_left, &data, &len) == 0) {
		o->content_base64 = base64_encode(data, len);
		w->content_left -= len;
		free(data);
	}
}

static void walk_dir(struct walk *w, int dirfd, const char *prefix, int depth)
{
	_cleanup_close_ int dupfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	struct dirent *de;

	if (!d)
		return;
	dupfd = -1;
	while ((de = readdir(d)) && w->res->n_outputs <= OUTPUTS_MAX) {
		_cleanup_free_ char *rel = NULL;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		rel = *prefix ? xasprintf("%s/%s", prefix, de->d_name) : xstrdup(de->d_name);
		if (S_ISDIR(st.st_mode) && depth < OUTPUTS_DEPTH) {
			_cleanup_close_ int sub = open_dir_at(dirfd, de->d_name);
			if (sub >= 0)
				walk_dir(w, sub, rel, depth + 1);
		} else if (S_ISREG(st.st_mode) &&
			   (!w->since_ns || (long long)st.st_mtim.tv_sec * 1000000000LL +
							    st.st_mtim.tv_nsec >= w->since_ns)) {
			add_output(w, dirfd, de->d_name, rel, &st);
		}
	}
	closedir(d);
}

static long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void sandbox_collect_outputs(struct sandbox *sb, long long start_ns, struct sandbox_result *res)
{
	_cleanup_close_ int ws = sb->dir ? open(sb->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC) : -1, outputs = -1;
	struct walk w = { .res = res, .content = !sb->session, .content_left = CONTENT_MAX };

	if (ws < 0)
		return;
	if (sb->lang == SANDBOX_LANG_PYTHON)
		take_value(ws, res);
	outputs = open_dir_at(ws, SANDBOX_OUTPUTS_NAME);
	if (outputs < 0)
		return;
	/* A session's outputs stay: only what this run wrote is news. */
	if (sb->session)
		w.since_ns = realtime_ns() - (sandbox_now_ns() - start_ns) - MTIME_SLACK_NS;
	walk_dir(&w, outputs, "", 0);
}

void sandbox_outputs_free(struct sandbox_result *res)
{
	for (size_t i = 0; i < res->n_outputs; i++) {
		free(res->outputs[i].path);
		free(res->outputs[i].content_base64);
	}
	free(res->outputs);
	free(res->value);
	res->outputs = NULL;
	res->n_outputs = 0;
	res->value = NULL;
}
