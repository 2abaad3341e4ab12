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
#include <unistd.h>

#include "../../lib/base64.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "sandbox_private.h"

#define VALUE_MAX (64 * 1024)	       /* bytes of repr() kept */
#define OUTPUTS_MAX 100		       /* files listed */
#define OUTPUTS_DEPTH 8		       /* directory levels walked */
#define CONTENT_MAX (4u * 1024 * 1024) /* bytes of content returned in all */
#define OUTPUTS_SEEN_MAX 10000	       /* files of a session's snapshot */

/* warm: first wait for the program (a byte on stdin: sandbox_run's go);
 * stdin at its end means the sandbox goes unused. */
#define PY_WRAPPER(WAIT)                                                                         \
	"import sys\n"                                                                           \
	"def _agentsbx_main():\n"                                                                \
	"    import _ast\n" WAIT "    path = sys.argv[1]\n"                                      \
	"    del sys.argv[0]\n"                                                                  \
	"    sys.path[0] = '/" SANDBOX_CODE_DIR "'\n"                                            \
	"    main = type(sys)('__main__')\n"                                                     \
	"    main.__file__ = path\n"                                                             \
	"    sys.modules['__main__'] = main\n"                                                   \
	"    last = None\n"                                                                      \
	"    try:\n"                                                                             \
	"        with open(path, 'rb') as f:\n"                                                  \
	"            tree = compile(f.read(), path, 'exec', 0x400)\n" /* PyCF_ONLY_AST */        \
	"        if tree.body and isinstance(tree.body[-1], _ast.Expr):\n"                       \
	"            last = _ast.Expression(tree.body.pop().value)\n"                            \
	"        exec(compile(tree, path, 'exec'), main.__dict__)\n"                             \
	"        value = eval(compile(last, path, 'eval'), main.__dict__) if last else None\n"   \
	"    except (SystemExit, KeyboardInterrupt):\n"                                          \
	"        raise\n"                                                                        \
	"    except BaseException as e:\n"                                                       \
	"        tb = e.__traceback__\n"                                                         \
	"        while tb is not None and tb.tb_frame.f_code.co_filename != path:\n"             \
	"            tb = tb.tb_next\n"                                                          \
	"        sys.excepthook(type(e), e.with_traceback(tb), tb)\n"                            \
	"        sys.exit(1)\n"                                                                  \
	"    if value is not None:\n"                                                            \
	"        try:\n"                                                                         \
	"            with open('/" SANDBOX_CODE_DIR "/" SANDBOX_META_DIR "/value', 'w') as f:\n" \
	"                f.write(repr(value)[:"                                                  \
	"65536"                                                                                  \
	"])\n"                                                                                   \
	"        except Exception:\n"                                                            \
	"            pass\n"                                                                     \
	"_agentsbx_main()\n"

const char sandbox_python_wrapper[] = PY_WRAPPER("");
const char sandbox_python_warm_wrapper[] = PY_WRAPPER("    import os\n"
						      "    if os.read(0, 1) != b'\\n':\n"
						      "        os._exit(0)\n");

/* ---- reading what the program left ------------------------------------------- */

/* A regular file at dirfd/name, at most max bytes (-1 if it is not).  The
 * program made the name: a symlink to a host file must not be followed
 * by us (O_NOFOLLOW), a FIFO must not block us (O_NONBLOCK, then fstat). */
static int read_small(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
	int nofollow = WEAK_VALUE_NOFOLLOW ? 0 : O_NOFOLLOW;
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

/* A session's outputs as they were before a run: what is unchanged after
 * it is not news. */
struct sandbox_seen {
	char *rel;
	ino_t ino;
	long long mtime_ns, size;
};

struct walk {
	struct sandbox_result *res; /* collecting, or */
	struct sandbox *snap;	    /* taking the snapshot into snap->seen */
	const struct sandbox *sb;   /* collecting: its snapshot */
	bool content;
	size_t content_left;
};

static long long mtime_ns(const struct stat *st)
{
	return (long long)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

static int cmp_seen(const void *a, const void *b)
{
	return strcmp(((const struct sandbox_seen *)a)->rel, ((const struct sandbox_seen *)b)->rel);
}

/* Sorted by the snapshot: a lookup per file, not a scan (a program may
 * leave OUTPUTS_SEEN_MAX files: a scan each would be 10^8 compares). */
static bool unchanged(const struct sandbox *sb, const char *rel, const struct stat *st)
{
	struct sandbox_seen key = { .rel = (char *)rel };
	const struct sandbox_seen *s = sb->n_seen ? bsearch(&key, sb->seen, sb->n_seen,
							    sizeof(*sb->seen), cmp_seen) :
						    NULL;

	return s && s->ino == st->st_ino && s->mtime_ns == mtime_ns(st) &&
	       s->size == (long long)st->st_size;
}

static void add_seen(struct sandbox *sb, const char *rel, const struct stat *st)
{
	if (sb->n_seen >= OUTPUTS_SEEN_MAX)
		return;
	sb->seen = xgrow(sb->seen, &sb->seen_cap, sb->n_seen + 1, sizeof(*sb->seen));
	sb->seen[sb->n_seen++] = (struct sandbox_seen){ xstrdup(rel), st->st_ino, mtime_ns(st),
							(long long)st->st_size };
}

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

/* Each regular file under dirfd (no symlink followed), to the snapshot or
 * to the result. */
static void walk_dir(struct walk *w, int dirfd, const char *prefix, int depth)
{
	_cleanup_close_ int dupfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	struct dirent *de;

	if (!d)
		return;
	dupfd = -1;
	while ((de = readdir(d)) && (w->snap || w->res->n_outputs <= OUTPUTS_MAX)) {
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
		} else if (S_ISREG(st.st_mode) && w->snap) {
			add_seen(w->snap, rel, &st);
		} else if (S_ISREG(st.st_mode) && !unchanged(w->sb, rel, &st)) {
			add_output(w, dirfd, de->d_name, rel, &st);
		}
	}
	closedir(d);
}

static int open_outputs(const struct sandbox *sb, int *ws)
{
	*ws = sb->dir ? open(sb->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
	return *ws < 0 ? -1 : open_dir_at(*ws, SANDBOX_OUTPUTS_NAME);
}

void sandbox_outputs_snapshot(struct sandbox *sb)
{
	_cleanup_close_ int ws = -1, outputs = open_outputs(sb, &ws);
	struct walk w = { .snap = sb };

	sandbox_outputs_forget(sb);
	if (outputs >= 0)
		walk_dir(&w, outputs, "", 0);
	if (sb->n_seen)
		qsort(sb->seen, sb->n_seen, sizeof(*sb->seen), cmp_seen);
}

void sandbox_outputs_forget(struct sandbox *sb)
{
	for (size_t i = 0; i < sb->n_seen; i++)
		free(sb->seen[i].rel);
	free(sb->seen);
	sb->seen = NULL;
	sb->n_seen = sb->seen_cap = 0;
}

void sandbox_collect_outputs(struct sandbox *sb, struct sandbox_result *res)
{
	_cleanup_close_ int ws = -1, outputs = open_outputs(sb, &ws);
	struct walk w = { .res = res, .sb = sb, .content = !sb->session, .content_left = CONTENT_MAX };

	if (ws >= 0 && sb->lang == SANDBOX_LANG_PYTHON)
		take_value(ws, res);
	if (outputs >= 0)
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
