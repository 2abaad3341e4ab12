/* SPDX-License-Identifier: Apache-2.0 */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../cgroup/cgroup.h"
#include "../container.h"

#define STATE_MAX_SIZE (4u * 1024 * 1024)

static const char *const status_names[] = {
	[STATUS_CREATING] = "creating",
	[STATUS_CREATED] = "created",
	[STATUS_RUNNING] = "running",
	[STATUS_PAUSED] = "paused",
	[STATUS_STOPPED] = "stopped",
};

const char *status_name(enum container_status s)
{
	return status_names[s];
}

/* mkdir -p; the last component 0700, parents 0711 (as runc). */
static int mkdir_parents(const char *path, struct error *err)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return error_set(err, "state root path too long: %s", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0711) < 0 && errno != EEXIST)
			return error_sys(err, "create state root %s: mkdir %s", path, buf);
		*p = '/';
	}
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "create state root %s", path);
	return 0;
}

int state_root_open(const char *root, bool create, int *out, struct error *err)
{
	int fd;

	if (create && mkdir_parents(root, err) < 0)
		return -1;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, "open state root %s", root);
	*out = fd;
	return 0;
}

/* ---- the state directory ---------------------------------------------------- */

/* flock, waiting at most STATE_LOCK_WAIT_S: every holder's own waits are
 * bounded, so a lock held that long is a stuck or stopped command. */
static int lock_bounded(int fd, int op, const char *id, struct error *err)
{
	struct timespec now, end;
	useconds_t delay = 1000;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += STATE_LOCK_WAIT_S;
	for (;;) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return error_sys(err, "lock state directory for %s", id);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			return error_setc(err, EWOULDBLOCK,
					  "container \"%s\" is busy: another command has held its lock for %d s",
					  id, STATE_LOCK_WAIT_S);
		usleep(delay);
		if (delay < 20000)
			delay *= 2;
	}
}

int state_dir_stage(int rootfd, char **name, int *out, struct error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *n = NULL;

	/* Unique even across pid namespaces sharing one --root. */
	for (int tries = 0;; tries++) {
		uint32_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return error_sys(err, "getrandom");
		free(n);
		n = xasprintf(STATE_STAGING_PREFIX "%d.%08x", (int)getpid(), r);
		if (mkdirat(rootfd, n, 0700) == 0)
			break;
		if (errno != EEXIST || tries == 10)
			return error_sys(err, "create state directory %s", n);
	}
	fd = openat(rootfd, n, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return error_sys(err, "open state directory %s", n);
	if (flock(fd, LOCK_EX) < 0)
		return error_sys(err, "lock state directory %s", n);
	*out = take_fd(fd);
	*name = take_ptr(n);
	return 0;
}

/* Remove the entries of dirfd (files only), state.json last. */
static int empty_dir(int dirfd, const char *id, struct error *err)
{
	_cleanup_close_ int dupfd = dup(dirfd);
	struct dirent *de;
	DIR *d;

	if (dupfd < 0)
		return error_sys(err, "dup state directory fd");
	d = fdopendir(dupfd);
	if (!d)
		return error_sys(err, "read state directory for %s", id);
	dupfd = -1;
	rewinddir(d); /* the offset is shared with dirfd */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strcmp(de->d_name, STATE_FILE))
			continue;
		if (unlinkat(dirfd, de->d_name, 0) < 0 && errno != ENOENT) {
			int e = errno;
			closedir(d);
			return error_setc(err, e, "remove %s/%s", id, de->d_name);
		}
	}
	closedir(d);
	if (unlinkat(dirfd, STATE_FILE, 0) < 0 && errno != ENOENT)
		return error_sys(err, "remove %s/%s", id, STATE_FILE);
	return 0;
}

void state_dir_discard_staged(int rootfd, const char *name, int dirfd)
{
	struct error e;

	if (empty_dir(dirfd, name, &e) < 0)
		log_warn("remove staged state directory %s: %s", name, e.msg);
	else if (unlinkat(rootfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		log_warn("remove staged state directory %s: %s", name, strerror(errno));
}

int state_dir_publish(int rootfd, const char *name, const char *id, int dirfd,
		      struct error *err)
{
	int r = renameat2(rootfd, name, rootfd, id, RENAME_NOREPLACE);

	/* A filesystem without RENAME_NOREPLACE: a plain rename still never
	 * replaces a container, whose directory is never empty. */
	if (r < 0 && errno == EINVAL)
		r = renameat(rootfd, name, rootfd, id);
	if (r == 0)
		return 0;
	if (errno == EEXIST || errno == ENOTEMPTY)
		error_set(err, "container with id exists: %s", id);
	else
		error_sys(err, "create state directory for %s", id);
	state_dir_discard_staged(rootfd, name, dirfd);
	return -1;
}

int state_dir_create(int rootfd, const char *id, int *out, struct error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *name = NULL;

	if (state_dir_stage(rootfd, &name, &fd, err) < 0 ||
	    state_dir_publish(rootfd, name, id, fd, err) < 0)
		return -1;
	*out = take_fd(fd);
	return 0;
}

/* ".new.PID.RANDOM" -> PID; false if name is not a staged directory. */
static bool parse_staged(const char *name, pid_t *pid)
{
	const char *p = name + strlen(STATE_STAGING_PREFIX);
	char *end;
	long v;

	if (strncmp(name, STATE_STAGING_PREFIX, strlen(STATE_STAGING_PREFIX)))
		return false;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end == p || *end != '.' || v <= 0 || v > INT32_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

void state_dir_sweep_staged(int rootfd)
{
	_cleanup_close_ int dupfd = dup(rootfd);
	struct dirent *de;
	DIR *d;

	if (dupfd < 0 || !(d = fdopendir(dupfd)))
		return;
	dupfd = -1;
	rewinddir(d); /* the offset is shared with rootfd */
	while ((de = readdir(d))) {
		_cleanup_close_ int fd = -1;
		pid_t pid;

		if (!parse_staged(de->d_name, &pid))
			continue;
		/* Its creator may be between the mkdir and the flock: only a
		 * dead creator's (and an unlocked) one is a leftover. */
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		fd = openat(rootfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		state_dir_discard_staged(rootfd, de->d_name, fd);
	}
	closedir(d);
}

static int open_dir(int rootfd, const char *id, int *out, struct error *err)
{
	int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		if (errno == ENOENT)
			return error_set(err, "container \"%s\" does not exist", id);
		return error_sys(err, "open state directory for %s", id);
	}
	*out = fd;
	return 0;
}

int state_dir_open_unlocked(int rootfd, const char *id, int *out,
			    struct error *err)
{
	return open_dir(rootfd, id, out, err);
}

int state_dir_open(int rootfd, const char *id, bool exclusive, int *out,
		   struct error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	if (open_dir(rootfd, id, &fd, err) < 0)
		return -1;
	if (lock_bounded(fd, exclusive ? LOCK_EX : LOCK_SH, id, err) < 0)
		return -1;
	/* It may have been deleted while we waited for the lock. */
	if (fstat(fd, &st) < 0)
		return error_sys(err, "stat state directory for %s", id);
	if (st.st_nlink == 0)
		return error_set(err, "container \"%s\" does not exist", id);
	*out = take_fd(fd);
	return 0;
}

int state_dir_remove(int rootfd, const char *id, int dirfd, struct error *err)
{
	if (empty_dir(dirfd, id, err) < 0)
		return -1;
	if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return error_sys(err, "remove state directory for %s", id);
	return 0;
}

/* ---- JSON out ------------------------------------------------------------ */

/* runc writes "" for an unset string field, never null. */
static void gen_kv_str(yajl_gen g, const char *k, const char *v)
{
	jgen_key_str(g, k, v ? v : "");
}

static void gen_annotations(yajl_gen g, const struct str_map *m)
{
	jgen_str(g, "annotations");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < m->len; i++)
		gen_kv_str(g, m->keys[i], m->values[i]);
	yajl_gen_map_close(g);
}

static void gen_public_fields(yajl_gen g, const struct container_state *st)
{
	gen_kv_str(g, "ociVersion", OCI_VERSION_MAX);
	gen_kv_str(g, "id", st->id);
	jgen_str(g, "pid");
	yajl_gen_integer(g, st->status == STATUS_STOPPED ? 0 : st->pid);
	gen_kv_str(g, "status", status_name(st->status));
	gen_kv_str(g, "bundle", st->bundle);
	gen_kv_str(g, "rootfs", st->rootfs);
	gen_kv_str(g, "created", st->created);
	gen_kv_str(g, "owner", st->owner);
	gen_annotations(g, &st->annotations);
}

char *state_to_json(const struct container_state *st, bool pretty)
{
	yajl_gen g = jgen_new(pretty);

	yajl_gen_map_open(g);
	gen_public_fields(g, st);
	yajl_gen_map_close(g);
	return jgen_finish(g, NULL);
}

/* The stored form: the public fields plus what later commands need. */
static char *state_to_stored_json(const struct container_state *st)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	gen_public_fields(g, st);
	jgen_str(g, "initStartTime");
	yajl_gen_integer(g, (long long)st->start_time);
	jgen_str(g, "initPid");
	yajl_gen_integer(g, st->pid);
	gen_kv_str(g, "cgroupPath", st->cgroup_path);
	jgen_str(g, "cgroupManager");
	yajl_gen_integer(g, st->cgroup_manager);
	jgen_str(g, "started");
	yajl_gen_bool(g, st->started);
	jgen_str(g, "storedStatus");
	jgen_str(g, status_name(st->status));
	if (st->status == STATUS_CREATING) {
		jgen_str(g, "creatorPid");
		yajl_gen_integer(g, st->creator_pid);
		jgen_str(g, "creatorStartTime");
		yajl_gen_integer(g, (long long)st->creator_start_time);
	}
	yajl_gen_map_close(g);
	return jgen_finish(g, NULL);
}

int state_write(int dirfd, const struct container_state *st, struct error *err)
{
	_cleanup_free_ char *json = state_to_stored_json(st);
	_cleanup_close_ int fd = -1;
	static const char tmp[] = STATE_FILE ".tmp";

	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return error_sys(err, "create %s for %s", tmp, st->id);
	if (write_all(fd, json, strlen(json)) < 0)
		return error_sys(err, "write %s for %s", tmp, st->id);
	if (renameat(dirfd, tmp, dirfd, STATE_FILE) < 0)
		return error_sys(err, "rename %s for %s", tmp, st->id);
	return 0;
}

/* ---- JSON in ------------------------------------------------------------- */

static const char *tree_str(yajl_val root, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_string);
	return v ? YAJL_GET_STRING(v) : NULL;
}

static long long tree_int(yajl_val root, const char *key)
{
	const char *path[] = { key, NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_number);
	return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void read_annotations(yajl_val root, struct str_map *m)
{
	const char *path[] = { "annotations", NULL };
	yajl_val v = yajl_tree_get(root, path, yajl_t_object);
	size_t n;

	if (!v)
		return;
	n = YAJL_GET_OBJECT(v)->len;
	m->keys = xcalloc(n, sizeof(char *));
	m->values = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		yajl_val val = YAJL_GET_OBJECT(v)->values[i];
		if (!YAJL_IS_STRING(val))
			continue;
		m->keys[m->len] = xstrdup(YAJL_GET_OBJECT(v)->keys[i]);
		m->values[m->len] = xstrdup(YAJL_GET_STRING(val));
		m->len++;
	}
}

int state_read(int dirfd, struct container_state *st, struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	char ebuf[256];
	yajl_val root;
	const char *path[] = { "started", NULL };

	memset(st, 0, sizeof(*st));
	if (read_file_at(dirfd, STATE_FILE, STATE_MAX_SIZE, &buf, NULL, err) < 0)
		return -1;
	root = yajl_tree_parse(buf, ebuf, sizeof(ebuf));
	if (!root)
		return error_set(err, "corrupt state file: %s", ebuf);
	st->id = dup_or_null(tree_str(root, "id"));
	st->pid = (pid_t)tree_int(root, "initPid");
	st->start_time = (unsigned long long)tree_int(root, "initStartTime");
	st->bundle = dup_or_null(tree_str(root, "bundle"));
	st->rootfs = dup_or_null(tree_str(root, "rootfs"));
	st->created = dup_or_null(tree_str(root, "created"));
	st->owner = dup_or_null(tree_str(root, "owner"));
	/* "" is a container without a cgroup (rootless, none delegated). */
	st->cgroup_path = dup_or_null(tree_str(root, "cgroupPath"));
	if (st->cgroup_path && !st->cgroup_path[0]) {
		free(st->cgroup_path);
		st->cgroup_path = NULL;
	}
	st->cgroup_manager = (enum cgroup_manager)tree_int(root, "cgroupManager");
	st->started = YAJL_IS_TRUE(yajl_tree_get(root, path, yajl_t_true));
	{
		const char *stored = tree_str(root, "storedStatus");
		st->creating = stored && !strcmp(stored, status_name(STATUS_CREATING));
	}
	st->creator_pid = (pid_t)tree_int(root, "creatorPid");
	st->creator_start_time = (unsigned long long)tree_int(root, "creatorStartTime");
	read_annotations(root, &st->annotations);
	yajl_tree_free(root);
	if (!st->id || !st->bundle) {
		state_free(st);
		return error_set(err, "corrupt state file: missing id or bundle");
	}
	state_refresh(dirfd, st);
	return 0;
}

void state_free(struct container_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->created);
	free(st->owner);
	free(st->cgroup_path);
	for (size_t i = 0; i < st->annotations.len; i++) {
		free(st->annotations.keys[i]);
		free(st->annotations.values[i]);
	}
	free(st->annotations.keys);
	free(st->annotations.values);
	memset(st, 0, sizeof(*st));
}

int state_load_spec(int dirfd, struct oci_spec *spec, struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	memset(spec, 0, sizeof(*spec));
	if (read_file_at(dirfd, STATE_CONFIG_FILE, SPEC_MAX_FILE_SIZE, &buf, &len,
			 err) < 0)
		return -1;
	return spec_parse(buf, len, spec, err);
}

/* ---- liveness -------------------------------------------------------------- */

/* Parse /proc/PID/stat: state letter and starttime (field 22).  The comm
 * field may hold spaces and parentheses, so parse from the last ')'. */
static int proc_stat(pid_t pid, char *state, unsigned long long *start)
{
	char path[64], buf[1024];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	/* p is at field 3; skip to field 22. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	*start = strtoull(p, NULL, 10);
	return 0;
}

unsigned long long proc_start_time(pid_t pid)
{
	unsigned long long start;
	char state;

	if (pid <= 0 || proc_stat(pid, &state, &start) < 0)
		return 0;
	return start;
}

bool proc_is_same(pid_t pid, unsigned long long start_time)
{
	unsigned long long start;
	char state;

	if (pid <= 0 || proc_stat(pid, &state, &start) < 0)
		return false;
	if (state == 'Z' || state == 'X')
		return false;
	return start == start_time;
}

void state_refresh(int dirfd, struct container_state *st)
{
	bool frozen = false;
	struct error err;

	/* A create in progress, or a killed one (whatever it left is for
	 * delete, even a live init: it was never handed over). */
	if (st->creating) {
		st->status = proc_is_same(st->creator_pid, st->creator_start_time) ? STATUS_CREATING : STATUS_STOPPED;
		return;
	}
	if (!proc_is_same(st->pid, st->start_time)) {
		st->status = STATUS_STOPPED;
		return;
	}
	if (!st->started && faccessat(dirfd, STATE_FIFO, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		st->status = STATUS_CREATED;
		return;
	}
	st->status = STATUS_RUNNING;
	if (st->cgroup_path &&
	    cgroup_is_frozen(st->cgroup_path, st->cgroup_manager, &frozen, &err) == 0 &&
	    frozen)
		st->status = STATUS_PAUSED;
}

char *rfc3339_now(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	/* Not strftime: it reads the time zone (/etc/localtime) on every
	 * create, for a UTC time that does not need one. */
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ts.tv_nsec);
	return xstrdup(buf);
}

/* An id names a directory under --root: nothing that could walk out of it. */
int container_id_validate(const char *id, struct error *err)
{
	size_t len = strlen(id);

	if (!len)
		return error_set(err, "container id cannot be empty");
	if (len > CONTAINER_ID_MAX)
		return error_set(err, "invalid container id: longer than %d bytes",
				 CONTAINER_ID_MAX);
	for (size_t i = 0; i < len; i++) {
		char ch = id[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (alnum || (i > 0 && ch && strchr("_.+-", ch)))
			continue;
		return error_set(err, "invalid container id \"%s\": only [A-Za-z0-9][A-Za-z0-9_.+-]* is allowed",
				 id);
	}
	if (strstr(id, ".."))
		return error_set(err, "invalid container id \"%s\": \"..\" is not allowed", id);
	return 0;
}
