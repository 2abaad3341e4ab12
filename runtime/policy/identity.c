/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identities (spec/policy/policy.h): a host uid and gid of the container's
 * own, taken at create and given back at delete, so that no two tenants
 * share per-uid kernel counters or file ownership.
 *
 * The registry is host-wide, whatever --root a caller uses (two engines
 * with their own state roots are still two tenants): under
 * IDENTITY_REGISTRY, a directory per uid in use holding one "holder" file
 * per container that runs as it (a pod's containers share their sandbox's
 * uid).  A holder is named by the state directory's device and inode and
 * holds its path; it is live while that directory is there, is the same
 * directory, and records the same uid.  Every change is made under one
 * flock (short, bounded critical sections: no wait inside).
 *
 * A front-door caller's directory (a session's workspace) is seen only in
 * that caller's private mount namespace, so its holder names the process
 * that holds it instead ("pid:PID:START"): live while that process is.
 *
 * Recorded before it is made, so that `delete --force` after a SIGKILL at
 * any point gives it back: the uid is written into the state directory
 * (STATE_IDENTITY_FILE) before the holder is created; a holder whose
 * container never recorded it, or is gone, is stale and taken over by the
 * next create that probes its uid.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "../lifecycle/state.h"

#define IDENTITY_REGISTRY DEFAULT_STATE_ROOT "/.identities"
#define IDENTITY_LOCK ".lock"
#define CRI_SANDBOX_ID "io.kubernetes.cri.sandbox-id"

/* ---- the record in the state directory ------------------------------------ */

static int record_write(int state_dir_fd, uint32_t uid, struct error *err)
{
	_cleanup_close_ int fd = openat(state_dir_fd, STATE_IDENTITY_FILE,
					O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%" PRIu32 "\n", uid);

	if (fd < 0 || write_all(fd, buf, (size_t)n) < 0)
		return error_sys(err, "identity: record uid %" PRIu32 " in the state directory", uid);
	return 0;
}

int identity_of(int state_dir_fd, uint32_t *uid, struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	unsigned long long v;
	size_t len;

	if (read_file_at(state_dir_fd, STATE_IDENTITY_FILE, 32, &buf, &len, err) < 0)
		return -1;
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	if (parse_u64(buf, &v) < 0 || v == 0 || v >= UINT32_MAX)
		return error_set(err, "identity: %s holds no uid", STATE_IDENTITY_FILE);
	*uid = (uint32_t)v;
	return 0;
}

/* ---- the registry ------------------------------------------------------------ */

struct registry {
	int dir;
	int lock;
};

static void registry_close(struct registry *r)
{
	if (r->lock >= 0)
		close(r->lock); /* the flock goes with it */
	if (r->dir >= 0)
		close(r->dir);
	r->dir = r->lock = -1;
}

/* Made if missing (0700 all the way: uids in use are root's business). */
static int registry_open_locked(struct registry *r, struct error *err)
{
	r->dir = r->lock = -1;
	if (mkdir(DEFAULT_STATE_ROOT, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "identity: mkdir %s", DEFAULT_STATE_ROOT);
	if (mkdir(IDENTITY_REGISTRY, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "identity: mkdir %s", IDENTITY_REGISTRY);
	r->dir = open(IDENTITY_REGISTRY, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->dir < 0)
		return error_sys(err, "identity: open %s", IDENTITY_REGISTRY);
	r->lock = openat(r->dir, IDENTITY_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (r->lock < 0) {
		error_sys(err, "identity: open %s/%s", IDENTITY_REGISTRY, IDENTITY_LOCK);
		registry_close(r);
		return -1;
	}
	while (flock(r->lock, LOCK_EX) < 0)
		if (errno != EINTR) {
			error_sys(err, "identity: lock %s", IDENTITY_REGISTRY);
			registry_close(r);
			return -1;
		}
	return 0;
}

static void holder_name(const struct stat *state_dir, char *out, size_t n)
{
	snprintf(out, n, "%llx-%llx", (unsigned long long)state_dir->st_dev,
		 (unsigned long long)state_dir->st_ino);
}

/* "pid:PID:START": that process is still the one that holds it. */
static bool process_holder_live(const char *text)
{
	long long pid;
	unsigned long long start;
	int used = 0;

	if (sscanf(text, "pid:%lld:%llu%n", &pid, &start, &used) != 2 || text[used] ||
	    pid <= 0 || pid > INT_MAX)
		return false;
	return proc_is_same((pid_t)pid, start);
}

/* The holder's container is there, is the directory it names, and records
 * uid; or the process that holds it is alive. */
static bool holder_live(int uid_dir, const char *name, uint32_t uid)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int state = -1;
	struct error ignored;
	struct stat st;
	char want[64];
	uint32_t recorded;
	size_t len;

	if (read_file_at(uid_dir, name, PATH_MAX, &path, &len, &ignored) < 0)
		return false;
	if (!strncmp(path, "pid:", 4))
		return process_holder_live(path);
	if (path[0] != '/')
		return false;
	state = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (state < 0 || fstat(state, &st) < 0)
		return false;
	holder_name(&st, want, sizeof(want));
	return !strcmp(want, name) && identity_of(state, &recorded, &ignored) == 0 &&
	       recorded == uid;
}

/* uid's directory has a live holder; the stale ones are removed. */
static int uid_in_use(int uid_dir, uint32_t uid, bool *in_use, struct error *err)
{
	int fd = fcntl(uid_dir, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return error_sys(err, "identity: read the holders of uid %" PRIu32, uid);
	}
	*in_use = false;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (holder_live(uid_dir, de->d_name, uid)) {
			*in_use = true;
			continue;
		}
		log_debug("identity: uid %" PRIu32 ": holder %s is stale, removed", uid, de->d_name);
		unlinkat(uid_dir, de->d_name, 0);
	}
	closedir(d);
	return 0;
}

static int holder_add(int uid_dir, uint32_t uid, const struct stat *st, const char *path,
		      struct error *err)
{
	char name[64];
	_cleanup_close_ int fd = -1;

	holder_name(st, name, sizeof(name));
	fd = openat(uid_dir, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write_all(fd, path, strlen(path)) < 0)
		return error_sys(err, "identity: record the holder of uid %" PRIu32, uid);
	return 0;
}

/* uid's directory, free (made now) or to be taken over (every holder
 * stale): *got; in use by another container: *got false. */
static int try_uid(int reg, uint32_t uid, int *uid_dir, struct error *err)
{
	char name[16];
	bool in_use;

	snprintf(name, sizeof(name), "%" PRIu32, uid);
	if (mkdirat(reg, name, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "identity: mkdir %s/%s", IDENTITY_REGISTRY, name);
	*uid_dir = openat(reg, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*uid_dir < 0)
		return error_sys(err, "identity: open %s/%s", IDENTITY_REGISTRY, name);
	if (uid_in_use(*uid_dir, uid, &in_use, err) < 0)
		return -1;
	if (in_use) {
		close(*uid_dir);
		*uid_dir = -1;
	}
	return 0;
}

/* ---- holding an identity ------------------------------------------------------- */

/* A directory that holds (or will hold) an identity: a container's state
 * directory, or a directory of a front-door caller's own (a session's
 * workspace, whose containers all share its uid). */
struct holder {
	int dir_fd;
	const char *path; /* absolute */
	struct stat st;
};

static int holder_open(int dir_fd, const char *path, struct holder *h, struct error *err)
{
	h->dir_fd = dir_fd;
	h->path = path; /* what the holder file says: replaced by a front door's pid */
	if (path[0] != '/')
		return error_set(err, "identity: %s is not an absolute path", path);
	if (fstat(dir_fd, &h->st) < 0)
		return error_sys(err, "identity: stat %s", path);
	return 0;
}

/* Join uid: its directory must be there with a live holder.  *joined
 * false: nobody holds it (any more). */
static int join_uid(int reg, uint32_t uid, const struct holder *h, bool *joined,
		    struct error *err)
{
	_cleanup_close_ int uid_dir = -1;
	char name[16];
	bool in_use = false;

	*joined = false;
	snprintf(name, sizeof(name), "%" PRIu32, uid);
	uid_dir = openat(reg, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (uid_dir < 0)
		return 0;
	if (uid_in_use(uid_dir, uid, &in_use, err) < 0)
		return -1;
	if (!in_use)
		return 0;
	if (record_write(h->dir_fd, uid, err) < 0 ||
	    holder_add(uid_dir, uid, &h->st, h->path, err) < 0)
		return -1;
	*joined = true;
	return 0;
}

/* FNV-1a of the key: where the probe starts, so that creates at once do
 * not all contend for the first free uid. */
static uint32_t probe_start(const char *key, uint32_t count)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (uint32_t)(h % count);
}

static int take_free_uid(const struct policy *p, int reg, const struct holder *h,
			 uint32_t *out, struct error *err)
{
	const uint32_t first = p->identity_first, count = p->identity_count;
	const uint32_t start = probe_start(h->path, count);

	for (uint32_t i = 0; i < count; i++) {
		uint32_t uid = first + (start + i) % count;
		_cleanup_close_ int uid_dir = -1;

		if (try_uid(reg, uid, &uid_dir, err) < 0)
			return -1;
		if (uid_dir < 0)
			continue;
		if (record_write(h->dir_fd, uid, err) < 0 ||
		    holder_add(uid_dir, uid, &h->st, h->path, err) < 0)
			return -1;
		*out = uid;
		return 0;
	}
	return error_set(err, "policy: identities: all %" PRIu32 " uids from %" PRIu32 " are in use by other containers (policy field \"identities\": a larger \"count\")",
			 count, first);
}

/* share_fd >= 0: a directory that holds the identity to share (a pod's
 * sandbox, a session), if it still does; else a free uid. */
static int hold(const struct policy *p, const struct holder *h, int share_fd, uint32_t *uid,
		struct error *err)
{
	struct registry r;
	struct error ignored;
	uint32_t shared;
	bool joined = false;
	int rc = 0;

	if (registry_open_locked(&r, err) < 0)
		return -1;
	if (share_fd >= 0 && identity_of(share_fd, &shared, &ignored) == 0 &&
	    shared >= p->identity_first && shared - p->identity_first < p->identity_count) {
		rc = join_uid(r.dir, shared, h, &joined, err);
		if (joined)
			*uid = shared;
	}
	if (rc == 0 && !joined)
		rc = take_free_uid(p, r.dir, h, uid, err);
	registry_close(&r);
	return rc;
}

static void give_back(int dir_fd, const char *what)
{
	struct registry r;
	struct error err;
	struct stat st;
	uint32_t uid;
	char name[16], holder[64];
	_cleanup_close_ int uid_dir = -1;

	if (identity_of(dir_fd, &uid, &err) < 0)
		return; /* none taken (or none recorded: nothing was held) */
	if (fstat(dir_fd, &st) < 0 || registry_open_locked(&r, &err) < 0) {
		log_warn("%s: identity uid %" PRIu32 " not given back: %s", what, uid, err.msg);
		return;
	}
	snprintf(name, sizeof(name), "%" PRIu32, uid);
	holder_name(&st, holder, sizeof(holder));
	uid_dir = openat(r.dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (uid_dir >= 0 && unlinkat(uid_dir, holder, 0) == 0)
		log_debug("identity: %s gave back uid %" PRIu32, what, uid);
	unlinkat(r.dir, name, AT_REMOVEDIR); /* fails while another holder has it */
	registry_close(&r);
}

/* ---- create, exec, delete ---------------------------------------------------- */

/* The state directory's absolute path (a holder names it). */
static char *state_dir_path(const struct ctx_decided *d)
{
	char cwd[PATH_MAX];

	if (d->g->root[0] == '/')
		return xasprintf("%s/%s", d->g->root, d->id);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return xasprintf("%s/%s/%s", cwd, d->g->root, d->id);
}

/* Whose identity this container shares: the front door's directory
 * (create_opts.identity_dir: a session's), else, for a CRI container, its
 * pod's sandbox when that is a container under the same --root. */
static int share_from(const struct ctx_decided *d, const struct ctx_handles *h)
{
	const char *sid = str_map_get(&d->spec.annotations, CRI_SANDBOX_ID);

	if (d->opts && d->opts->identity_dir)
		return open(d->opts->identity_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!sid || !*sid || !strcmp(sid, d->id) || strchr(sid, '/') || sid[0] == '.')
		return -1;
	return openat(h->root_fd, sid, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int identity_take(struct ctx_decided *d, const struct ctx_handles *h, struct error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int share = -1;
	struct holder holder;
	uint32_t uid;

	if (!d->decision.identity)
		return 0;
	path = state_dir_path(d);
	if (!path)
		return error_sys(err, "identity: the state directory of %s", d->id);
	if (holder_open(h->state_dir_fd, path, &holder, err) < 0)
		return -1;
	share = share_from(d, h);
	if (hold(&d->policy, &holder, share, &uid, err) < 0)
		return -1;
	d->spec.process.user.uid = uid;
	d->spec.process.user.gid = uid;
	log_info("policy: identity: container %s runs as uid and gid %" PRIu32, d->id, uid);
	return 0;
}

int identity_apply_exec(struct ctx_decided *d, int state_dir_fd, struct error *err)
{
	uint32_t uid;

	if (!d->decision.identity)
		return 0;
	if (identity_of(state_dir_fd, &uid, err) < 0)
		return error_prefix(err, "policy: identities: container %s was created without an identity of its own, its processes' uid is not known (policy field \"identities\")",
				    d->id);
	d->spec.process.user.uid = uid;
	d->spec.process.user.gid = uid;
	return 0;
}

void identity_release(int state_dir_fd, const char *id)
{
	give_back(state_dir_fd, id);
}

/* ---- the front door's own holders ---------------------------------------------- */

int container_identity_hold(const struct global_opts *g, const char *dir, uint32_t *uid,
			    struct error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *pin = NULL;
	struct policy p;
	struct holder h;
	int rc = 0;

	*uid = 0;
	if (policy_load(g->policy_path, &p, err) < 0)
		return -1;
	if (p.mode != POLICY_ENFORCE || geteuid() != 0) {
		/* the policy's uid does not apply either: rootless, 0 is the caller */
	} else if (!p.identity_count) {
		*uid = p.uid.set ? (uint32_t)p.uid.v : 0;
	} else {
		fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			rc = error_sys(err, "identity: open %s", dir);
		else if (holder_open(fd, dir, &h, err) < 0 ||
			 (h.path = pin = xasprintf("pid:%d:%llu", getpid(),
						   proc_start_time(getpid()))) == NULL ||
			 hold(&p, &h, -1, uid, err) < 0)
			rc = -1;
	}
	policy_free(&p);
	return rc;
}

void container_identity_release(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		give_back(fd, dir);
}
