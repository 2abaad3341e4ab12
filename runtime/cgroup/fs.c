/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Directory and file primitives for cgroupfs: every access goes through an
 * O_DIRECTORY fd of the cgroup and openat(O_NOFOLLOW); the mount is checked
 * by its filesystem magic.  Also the settings list and the signal loop
 * shared by v1 and v2.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

void cg_sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

long long cg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cg_dir_close(struct cg_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	d->fd = -1;
	d->path = NULL;
}

static int check_magic(int fd, bool v2, const char *path, struct error *err)
{
	unsigned long want = v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC;
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return error_sys(err, "statfs %s", path);
	if ((unsigned long)sfs.f_type != want)
		return error_set(err, "%s is not a %s filesystem", path,
				 v2 ? "cgroup2" : "cgroup");
	return 0;
}

int cg_open_mount(const char *mnt, bool v2, struct cg_dir *out,
		  struct error *err)
{
	_cleanup_close_ int fd =
		open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return error_sys(err, "open %s", mnt);
	if (check_magic(fd, v2, mnt, err) < 0)
		return -1;
	out->fd = take_fd(fd);
	out->path = xstrdup(mnt);
	return 0;
}

static int open_child(const struct cg_dir *parent, const char *name,
		      struct cg_dir *out, struct error *err)
{
	int fd = openat(parent->fd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return error_sys(err, "open %s/%s", parent->path, name);
	out->fd = fd;
	out->path = xasprintf("%s/%s", parent->path, name);
	return 0;
}

/* mkdir, tolerating a concurrent creator.  *made tells who made it. */
static int make_child(const struct cg_dir *parent, const char *name,
		      bool *made, struct error *err)
{
	*made = false;
	if (mkdirat(parent->fd, name, 0755) == 0) {
		*made = true;
		return 0;
	}
	if (errno == EEXIST)
		return 0;
	return error_sys(err, "mkdir %s/%s", parent->path, name);
}

void cg_made_free(struct cg_made *made)
{
	for (size_t i = 0; i < made->n; i++)
		free(made->rel[i]);
	made->n = 0;
}

void cg_rollback(const struct cg_dir *root, struct cg_made *made)
{
	while (made->n > 0) {
		char *rel = made->rel[--made->n];

		if (unlinkat(root->fd, rel, AT_REMOVEDIR) < 0 &&
		    errno != ENOENT)
			log_debug("cgroup: cannot remove %s/%s: %s", root->path,
				  rel, strerror(errno));
		free(rel);
	}
}

/* A stale parent may vanish between mkdir and open (a concurrent rollback
 * of another container's create): retry the step a few times. */
static int walk_step(const struct cg_dir *cur, const char *name, bool create,
		     struct cg_dir *next, bool *made, struct error *err)
{
	for (int attempt = 0;; attempt++) {
		*made = false;
		if (create && make_child(cur, name, made, err) < 0)
			return -1;
		if (open_child(cur, name, next, err) == 0)
			return 0;
		if (!create || err->code != ENOENT || attempt >= 3)
			return -1;
	}
}

/* Nothing mounted over a directory on the way: still the hierarchy. */
static int same_mount(const struct cg_dir *root, const struct cg_dir *leaf,
		      struct error *err)
{
	struct stat a, b;

	if (fstat(root->fd, &a) < 0 || fstat(leaf->fd, &b) < 0)
		return error_sys(err, "stat %s", leaf->path);
	if (a.st_dev != b.st_dev)
		return error_set(err, "%s is not on the cgroup mount %s",
				 leaf->path, root->path);
	return 0;
}

int cg_walk(const struct cg_dir *root, const char *path, bool create,
	    cg_level_fn fn, void *ctx, struct cg_dir *leaf,
	    struct cg_made *made, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(path);
	_cleanup_free_ char *rel = NULL;
	struct cg_dir cur = CG_DIR_INIT, parent = CG_DIR_INIT;
	char *save = NULL, *name, *next;
	int ret = -1;

	cur.fd = fcntl(root->fd, F_DUPFD_CLOEXEC, 3);
	if (cur.fd < 0)
		return error_sys(err, "dup %s", root->path);
	cur.path = xstrdup(root->path);

	name = strtok_r(copy, "/", &save);
	if (!name) {
		error_set(err, "cgroup path %s names the root", path);
		goto out;
	}
	if (fn && fn(NULL, &cur, false, false, ctx, err) < 0)
		goto out;
	for (; name; name = next) {
		struct cg_dir child = CG_DIR_INIT;
		bool was_made;
		char *longer;

		next = strtok_r(NULL, "/", &save);
		if (walk_step(&cur, name, create, &child, &was_made, err) < 0)
			goto out;
		longer = rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
		free(rel);
		rel = longer;
		if (was_made && made) {
			if (made->n >= CG_MAX_DEPTH) {
				cg_dir_close(&child);
				error_set(err, "cgroup path %s is too deep", path);
				goto out;
			}
			made->rel[made->n++] = xstrdup(rel);
		}
		cg_dir_close(&parent);
		parent = cur;
		cur = child;
		if (fn && fn(&parent, &cur, was_made, next == NULL, ctx, err) < 0)
			goto out;
	}
	if (same_mount(root, &cur, err) < 0)
		goto out;
	*leaf = cur;
	cur = (struct cg_dir)CG_DIR_INIT;
	ret = 0;
out:
	cg_dir_close(&parent);
	cg_dir_close(&cur);
	return ret;
}

int cg_write(const struct cg_dir *d, const char *file, const char *value,
	     struct error *err)
{
	_cleanup_close_ int fd =
		openat(d->fd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len = strlen(value);
	ssize_t w;

	if (fd < 0)
		return error_sys(err, "open %s/%s", d->path, file);
	/* One write(2): cgroupfs takes a value per write, a short write
	 * would split it. */
	do
		w = write(fd, value, len);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return error_sys(err, "write %s to %s/%s", value, d->path,
				 file);
	if ((size_t)w != len)
		return error_setc(err, EIO, "write %s to %s/%s", value, d->path,
				  file);
	return 0;
}

int cg_read(const struct cg_dir *d, const char *file, char **out,
	    struct error *err)
{
	_cleanup_close_ int fd =
		openat(d->fd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return error_sys(err, "open %s/%s", d->path, file);
	if (read_all_fd(fd, CG_READ_MAX, out, NULL, err) < 0)
		return error_prefix(err, "read %s/%s", d->path, file);
	return 0;
}

bool cg_exists(const struct cg_dir *d, const char *file)
{
	return faccessat(d->fd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int cg_read_keyed(const struct cg_dir *d, const char *file, const char *key,
		  long long *out, struct error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t klen = strlen(key);

	if (cg_read(d, file, &text, err) < 0)
		return -1;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ' &&
		    parse_i64(line + klen + 1, out) == 0)
			return 0;
		line = nl ? nl + 1 : NULL;
	}
	return error_setc(err, ENOENT, "%s/%s: no \"%s\" entry", d->path, file,
			  key);
}

bool cg_word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p;) {
		p += strspn(p, " \t\n");
		size_t len = strcspn(p, " \t\n");

		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
	}
	return false;
}

/* ---- pids and removal of a subtree ------------------------------------- */

static int add_pids(const char *text, pid_t **pids, size_t *n, size_t *cap)
{
	for (const char *p = text; *p;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		if (v > 0) {
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 16;
				*pids = xrealloc(*pids, *cap * sizeof(**pids));
			}
			(*pids)[(*n)++] = (pid_t)v;
		}
		p = end + strspn(end, "\n");
	}
	return 0;
}

/*
 * The descendants of d, as paths relative to d, parents before children.
 * Relative paths rather than an fd per level keep the fd count flat on
 * deep trees a container may have made.
 */
static int list_subdirs(const struct cg_dir *d, char ***out, size_t *n,
			struct error *err)
{
	char **rel = NULL;
	size_t cnt = 0, cap = 0;

	for (size_t i = 0; i <= cnt; i++) {
		const char *base = i == 0 ? "." : rel[i - 1];
		int fd = openat(d->fd, base,
				O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dir;
		struct dirent *de;

		if (fd < 0) {
			if (errno == ENOENT) /* removed meanwhile */
				continue;
			error_sys(err, "open %s/%s", d->path, base);
			goto fail;
		}
		dir = fdopendir(fd);
		if (!dir) {
			close(fd);
			error_sys(err, "opendir %s/%s", d->path, base);
			goto fail;
		}
		while ((de = readdir(dir))) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			if (cnt == cap) {
				cap = cap ? cap * 2 : 8;
				rel = xrealloc(rel, cap * sizeof(*rel));
			}
			rel[cnt++] = i == 0 ? xstrdup(de->d_name) :
					      xasprintf("%s/%s", base, de->d_name);
			if (strlen(rel[cnt - 1]) >= PATH_MAX) {
				closedir(dir);
				error_set(err, "%s: sub-cgroups nested too deep",
					  d->path);
				goto fail;
			}
		}
		closedir(dir);
	}
	*out = rel;
	*n = cnt;
	return 0;
fail:
	for (size_t i = 0; i < cnt; i++)
		free(rel[i]);
	free(rel);
	return -1;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int cg_collect_pids(const struct cg_dir *d, pid_t **pids, size_t *n,
		    struct error *err)
{
	char **sub = NULL;
	size_t nsub = 0, cap = 0;
	int ret = -1;

	*pids = NULL;
	*n = 0;
	if (list_subdirs(d, &sub, &nsub, err) < 0)
		return -1;
	for (size_t i = 0; i <= nsub; i++) {
		_cleanup_free_ char *file =
			i == 0 ? xstrdup("cgroup.procs") :
				 xasprintf("%s/cgroup.procs", sub[i - 1]);
		_cleanup_free_ char *text = NULL;

		if (cg_read(d, file, &text, err) < 0) {
			if (i > 0 && err->code == ENOENT)
				continue;
			goto out;
		}
		add_pids(text, pids, n, &cap);
	}
	ret = 0;
out:
	free_strs(sub, nsub);
	if (ret < 0) {
		free(*pids);
		*pids = NULL;
		*n = 0;
	}
	return ret;
}

static int rmdir_retry(int dirfd, const char *parent_path, const char *rel,
		       long long deadline, struct error *err)
{
	unsigned delay = 1;

	for (;;) {
		if (unlinkat(dirfd, rel, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || cg_now_ms() >= deadline)
			return error_sys(err, "rmdir %s/%s", parent_path, rel);
		cg_sleep_ms(delay);
		if (delay < 64)
			delay *= 2;
	}
}

int cg_remove_tree(const struct cg_dir *root, const char *path,
		   struct error *err)
{
	const char *rel = path + strspn(path, "/");
	long long deadline = cg_now_ms() + CG_RMDIR_TIMEOUT_MS;
	struct cg_dir leaf = CG_DIR_INIT;
	char **sub = NULL;
	size_t nsub = 0;
	int ret = -1;

	/* The common case first: a leaf with no child cgroup (and no task)
	 * goes at once; EBUSY (children, tasks) takes the long way. */
	if (unlinkat(root->fd, rel, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	if (cg_walk(root, path, false, NULL, NULL, &leaf, NULL, err) < 0)
		return err->code == ENOENT ? 0 : -1;
	if (list_subdirs(&leaf, &sub, &nsub, err) < 0)
		goto out;
	for (size_t i = nsub; i-- > 0;)
		if (rmdir_retry(leaf.fd, leaf.path, sub[i], deadline, err) < 0)
			goto out;
	ret = rmdir_retry(root->fd, root->path, rel, deadline, err);
out:
	free_strs(sub, nsub);
	cg_dir_close(&leaf);
	return ret;
}

/* ---- signalling --------------------------------------------------------- */

static bool pid_in(const pid_t *v, size_t n, pid_t p)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == p)
			return true;
	return false;
}

/* One round: signal the pids not signalled yet (all of them for SIGKILL:
 * a pid may have been reused).  *fresh counts the new ones. */
static int signal_round(const struct cg_dir *d, int sig, pid_t **seen,
			size_t *nseen, size_t *fresh, struct error *err)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n;

	*fresh = 0;
	if (cg_collect_pids(d, &pids, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		bool known = pid_in(*seen, *nseen, pids[i]);

		if (known && sig != SIGKILL)
			continue;
		if (kill(pids[i], sig) < 0 && errno != ESRCH)
			return error_sys(err, "kill %d with signal %d",
					 (int)pids[i], sig);
		if (!known) {
			*seen = xrealloc(*seen, (*nseen + 1) * sizeof(**seen));
			(*seen)[(*nseen)++] = pids[i];
			(*fresh)++;
		}
	}
	return 0;
}

int cg_signal_all(const struct cg_dir *d, int sig,
		  const struct cg_freezer *fz, struct error *err)
{
	_cleanup_free_ pid_t *seen = NULL;
	size_t nseen = 0, fresh = 0;
	bool was_frozen = false, froze = false;
	struct error ferr;
	_cleanup_free_ pid_t *first = NULL;
	size_t nfirst;
	int ret = 0;

	/* Nothing to stop in an empty cgroup (the usual one after `run`:
	 * the init reaped): no freeze.  A task that could join it now comes
	 * from outside, which no freeze keeps out either. */
	if (cg_collect_pids(d, &first, &nfirst, err) < 0)
		return -1;
	if (nfirst == 0)
		return 0;
	if (fz && fz->dir && fz->is_frozen(fz->dir, &was_frozen, &ferr) == 0 &&
	    !was_frozen) {
		froze = fz->freeze(fz->dir, true, &ferr) == 0;
		if (!froze)
			log_debug("cgroup: kill without freezing: %s", ferr.msg);
	}
	for (int round = 0; round < CG_KILL_MAX_ROUNDS; round++) {
		ret = signal_round(d, sig, &seen, &nseen, &fresh, err);
		if (ret < 0 || fresh == 0)
			break;
	}
	/* Frozen tasks only act on the signal once thawed; a paused
	 * container stays paused unless it is being killed. */
	if (froze || (was_frozen && sig == SIGKILL)) {
		if (fz->freeze(fz->dir, false, &ferr) < 0 && ret == 0) {
			*err = ferr;
			ret = -1;
		}
	}
	return ret;
}

int cg_wait_empty(const struct cg_dir *d, int timeout_ms, struct error *err)
{
	long long deadline = cg_now_ms() + timeout_ms;
	unsigned delay = 1;

	for (;;) {
		_cleanup_free_ pid_t *pids = NULL;
		size_t n;

		if (cg_collect_pids(d, &pids, &n, err) < 0)
			return -1;
		if (n == 0)
			return 0;
		if (cg_now_ms() >= deadline)
			return error_set(err,
					 "%s: %zu process(es) still there after %d ms (first %d)",
					 d->path, n, timeout_ms, (int)pids[0]);
		cg_sleep_ms(delay);
		if (delay < 50)
			delay *= 2;
	}
}

/* ---- settings ------------------------------------------------------------ */

void cg_settings_add(struct cg_settings *s, const char *field,
		     const char *ctrl, unsigned flags, const char *file,
		     const char *fmt, ...)
{
	struct cg_setting *it;
	va_list ap;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->items = xrealloc(s->items, s->cap * sizeof(*s->items));
	}
	it = &s->items[s->n++];
	memset(it, 0, sizeof(*it));
	it->field = field;
	it->ctrl = ctrl ? xstrdup(ctrl) : NULL;
	it->file = xstrdup(file);
	it->flags = flags;
	va_start(ap, fmt);
	if (vasprintf(&it->value, fmt, ap) < 0)
		it->value = NULL;
	va_end(ap);
	if (!it->value)
		it->value = xstrdup(""); /* xasprintf would abort: same */
}

void cg_settings_free(struct cg_settings *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->items[i].ctrl);
		free(s->items[i].file);
		free(s->items[i].value);
	}
	free(s->items);
	memset(s, 0, sizeof(*s));
}

const struct cg_setting *cg_settings_find(const struct cg_settings *s,
					  const char *file)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->items[i].file, file) == 0)
			return &s->items[i];
	return NULL;
}

/* checkBeforeUpdate: refuse a limit below what is in use now. */
static int check_usage(const struct cg_dir *d, const struct cg_setting *it,
		       struct error *err)
{
	_cleanup_free_ char *text = NULL;
	long long limit, usage;

	if (!it->usage_file || parse_i64(it->value, &limit) < 0)
		return 0; /* "max" */
	if (cg_read(d, it->usage_file, &text, err) < 0)
		return err->code == ENOENT ? 0 : -1;
	text[strcspn(text, "\n")] = '\0';
	if (parse_i64(text, &usage) < 0 || limit >= usage)
		return 0;
	return error_set(err,
			 "linux.resources.%s: new limit %lld is below the current usage %lld (%s/%s) and checkBeforeUpdate is set",
			 it->field, limit, usage, d->path, it->usage_file);
}

/* v2 cpu.max when only the period changes: keep the quota in place. */
static int keep_quota_value(const struct cg_dir *d, const struct cg_setting *it,
			    char **value, struct error *err)
{
	_cleanup_free_ char *cur = NULL;

	if (cg_read(d, it->file, &cur, err) < 0)
		return -1;
	cur[strcspn(cur, " \n")] = '\0';
	*value = xasprintf("%s %s", *cur ? cur : "max", it->value);
	return 0;
}

static int write_lines(const struct cg_dir *d, const struct cg_setting *it,
		       const char *value, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(value);
	char *save = NULL;
	bool wrote = false;

	if (!(it->flags & CG_SET_MULTILINE) || !strchr(value, '\n'))
		return cg_write(d, it->file, value, err);
	for (char *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if (!*l)
			continue;
		if (cg_write(d, it->file, l, err) < 0)
			return -1;
		wrote = true;
	}
	return wrote ? 0 : cg_write(d, it->file, value, err);
}

/* 1: written, 0: skipped (optional file absent), -1: error. */
static int apply_one(const struct cg_dir *d, const struct cg_setting *it,
		     struct error *err)
{
	_cleanup_free_ char *value = NULL;

	if (check_usage(d, it, err) < 0)
		return -1;
	if ((it->flags & CG_SET_KEEP_QUOTA) &&
	    keep_quota_value(d, it, &value, err) < 0)
		return -1;
	if (write_lines(d, it, value ? value : it->value, err) == 0)
		return 1;
	if (it->flags & CG_SET_WARN) {
		log_warn("cgroup: linux.resources.%s not applied: %s", it->field, err->msg);
		return 0;
	}
	if (err->code == ENOENT) {
		if (it->flags & CG_SET_OPTIONAL) {
			log_debug("cgroup: %s/%s absent, %s not applied",
				  d->path, it->file, it->field);
			return 0;
		}
		return error_set(err,
				 "linux.resources.%s: cannot write %s: %s/%s does not exist on this host",
				 it->field, it->value, d->path, it->file);
	}
	return -1;
}

int cg_settings_apply(const struct cg_dir *d, const struct cg_settings *s,
		      bool (*want)(const char *ctrl, const void *ctx),
		      const void *ctx,
		      struct error *err)
{
	_cleanup_free_ size_t *later = xcalloc(s->n, sizeof(*later));
	size_t nlater = 0;
	bool prev_skipped = false;

	for (size_t i = 0; i < s->n; i++) {
		const struct cg_setting *it = &s->items[i];
		int r;

		if (want && !want(it->ctrl, ctx))
			continue;
		if ((it->flags & CG_SET_ALT) && !prev_skipped)
			continue;
		r = apply_one(d, it, err);
		prev_skipped = r == 0;
		if (r >= 0)
			continue;
		if (!(it->flags & CG_SET_RETRY) || err->code != EINVAL)
			return -1;
		later[nlater++] = i;
	}
	for (size_t i = 0; i < nlater; i++)
		if (apply_one(d, &s->items[later[i]], err) < 0)
			return -1;
	return 0;
}

/* ---- shared value checks ------------------------------------------------ */

int cg_check_cpulist(const char *field, const char *list, struct error *err)
{
	if (strspn(list, "0123456789,-") != strlen(list))
		return error_set(err,
				 "linux.resources.%s: invalid list \"%s\" (digits, ',' and '-' only)",
				 field, list);
	return 0;
}

int cg_check_page_size(const char *size, struct error *err)
{
	size_t digits = strspn(size, "0123456789");

	if (digits == 0 || digits > 10 || !strchr("KMGT", size[digits]) ||
	    strcmp(size + digits + 1, "B") != 0)
		return error_set(err,
				 "linux.resources.hugepageLimits: invalid pageSize \"%s\" (expected e.g. 2MB, 1GB)",
				 size);
	return 0;
}

int cg_add_cpuset(const struct oci_cpu *c, struct cg_settings *out,
		  struct error *err)
{
	if (c->cpus && *c->cpus) {
		if (cg_check_cpulist("cpu.cpus", c->cpus, err) < 0)
			return -1;
		cg_settings_add(out, "cpu.cpus", "cpuset", 0, "cpuset.cpus",
				"%s", c->cpus);
	}
	if (c->mems && *c->mems) {
		if (cg_check_cpulist("cpu.mems", c->mems, err) < 0)
			return -1;
		cg_settings_add(out, "cpu.mems", "cpuset", 0, "cpuset.mems",
				"%s", c->mems);
	}
	return 0;
}

void cg_add_pids(const struct oci_resources *res, struct cg_settings *out)
{
	if (!res->pids_limit.set)
		return;
	if (res->pids_limit.v > 0)
		cg_settings_add(out, "pids.limit", "pids", 0, "pids.max",
				"%" PRId64, res->pids_limit.v);
	else
		cg_settings_add(out, "pids.limit", "pids", 0, "pids.max", "max");
}
