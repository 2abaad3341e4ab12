/* SPDX-License-Identifier: Apache-2.0 */
/*
 * start, state, kill, delete and list: the commands that act on an existing
 * container through its state directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../hooks/hooks.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "../policy/audit_log.h"
#include "lifecycle.h"

/* From the start byte to the process's execve, beyond the startContainer
 * hooks' own timeouts. */
#define START_EXEC_MARGIN_S 60

/* An opened, locked container: its state directory and state. */
void handle_close(struct container_handle *h)
{
	if (h->dirfd >= 0)
		close(h->dirfd);
	if (h->rootfd >= 0)
		close(h->rootfd);
	state_free(&h->st);
	h->dirfd = h->rootfd = -1;
}

/* What a directory without a readable state.json is: the leftover of a
 * killed delete (state.json goes last) or a damaged one, recording
 * nothing to undo.  Shown stopped, removable by delete. */
static void stub_state(const char *id, struct container_state *st)
{
	memset(st, 0, sizeof(*st));
	st->id = xstrdup(id);
	st->bundle = xstrdup("");
	st->status = STATUS_STOPPED;
}

static int handle_open_as(const struct global_opts *g, const char *id,
			  enum handle_lock lock, bool stub_ok,
			  struct container_handle *h, struct error *err)
{
	memset(h, 0, sizeof(*h));
	h->dirfd = h->rootfd = -1;
	if (container_id_validate(id, err) < 0)
		return -1;
	if (state_root_open(g->root, false, &h->rootfd, err) < 0) {
		if (err->code == ENOENT)
			error_set(err, "container \"%s\" does not exist", id);
		return -1;
	}
	if ((lock == HANDLE_UNLOCKED ? state_dir_open_unlocked(h->rootfd, id, &h->dirfd, err) : state_dir_open(h->rootfd, id, lock == HANDLE_EXCLUSIVE, &h->dirfd, err)) < 0)
		goto fail;
	if (state_read(h->dirfd, &h->st, err) == 0)
		return 0;
	if (!stub_ok)
		goto fail;
	/* Unlocked, the directory may be going away under a delete. */
	if (lock == HANDLE_UNLOCKED) {
		struct stat sb;
		if (fstat(h->dirfd, &sb) == 0 && sb.st_nlink == 0) {
			error_set(err, "container \"%s\" does not exist", id);
			goto fail;
		}
	}
	log_debug("container %s: %s: taken as stopped", id, err->msg);
	stub_state(id, &h->st);
	h->no_record = true;
	return 0;
fail:
	handle_close(h);
	return -1;
}

int handle_open(const struct global_opts *g, const char *id, bool exclusive,
		struct container_handle *h, struct error *err)
{
	return handle_open_as(g, id, exclusive ? HANDLE_EXCLUSIVE : HANDLE_SHARED,
			      false, h, err);
}

/* A pidfd for the init, if it is still the process we started. */
static int open_init_pidfd(const struct container_state *st, int *out)
{
	int fd = (int)syscall(SYS_pidfd_open, st->pid, 0);

	if (fd < 0)
		return -1;
	/* The pidfd pins the process; check it is the same one. */
	if (!proc_is_same(st->pid, st->start_time)) {
		close(fd);
		errno = ESRCH;
		return -1;
	}
	*out = fd;
	return 0;
}

static int signal_init(const struct container_state *st, int sig,
		       struct error *err)
{
	_cleanup_close_ int pfd = -1;

	if (open_init_pidfd(st, &pfd) < 0)
		return error_set(err, "container not running");
	if (syscall(SYS_pidfd_send_signal, pfd, sig, NULL, 0) < 0)
		return error_sys(err, "send signal %d to container %s", sig, st->id);
	return 0;
}

/* Wait (bounded) for the init to exit after SIGKILL. */
static int wait_init_gone(const struct container_state *st, struct error *err)
{
	_cleanup_close_ int pfd = -1;
	struct pollfd p;

	if (open_init_pidfd(st, &pfd) < 0)
		return 0;
	p.fd = pfd;
	p.events = POLLIN;
	for (int i = 0; i < 100; i++) {
		int r = poll(&p, 1, 100);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return error_sys(err, "wait for container %s to exit", st->id);
	}
	return error_set(err, "container %s did not exit after SIGKILL", st->id);
}

/* Milliseconds from now to end (0 once it has passed). */
static int ms_until(const struct timespec *end)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (long long)(end->tv_sec - now.tv_sec) * 1000 +
	     (end->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX :
					     (int)ms;
}

/* How long the init may take from the start byte to its execve: the
 * startContainer hooks' own timeouts plus a margin; 0 (no bound) when one
 * of them has none. */
static int64_t start_exec_timeout(const struct oci_spec *spec)
{
	const struct oci_hook_list *l = &spec->hooks[HOOK_START_CONTAINER];
	int64_t t = START_EXEC_MARGIN_S;

	for (size_t i = 0; i < l->len; i++) {
		if (!l->items[i].timeout.set || l->items[i].timeout.v <= 0)
			return 0;
		t += l->items[i].timeout.v;
	}
	return t;
}

/*
 * After the start byte: wait until the init has exec'd the process (its
 * close-on-exec writer of exec.done is gone) or has died, and collect what
 * it reported on the way (a failed startContainer hook, an exec error).
 */
static int wait_process_executed(const struct container_state *st, int done,
				 int64_t timeout_s, struct error *err)
{
	_cleanup_close_ int pfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
	char msg[ERROR_MSG_MAX] = "";
	size_t len = 0;
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_s;
	for (;;) {
		struct pollfd p[2] = { { .fd = done, .events = POLLIN },
				       { .fd = pfd, .events = POLLIN } };
		int ms = timeout_s > 0 ? ms_until(&end) : -1;
		ssize_t n;
		int r = poll(p, pfd >= 0 ? 2 : 1, ms);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return error_sys(err, "wait for container %s to run its process", st->id);
		}
		if (r == 0)
			return error_setc(err, ETIMEDOUT, "start container %s: its process did not start within %lld s",
					  st->id, (long long)timeout_s);
		if (p[0].revents & POLLIN) {
			n = read(done, msg + len, sizeof(msg) - 1 - len);
			if (n > 0) {
				len += (size_t)n;
				continue;
			}
		}
		if (p[0].revents & (POLLHUP | POLLERR) || (p[1].revents & POLLIN))
			break;
	}
	/* A process that ran and exited at once also closes exec.done: only
	 * what the init wrote there is a failure. */
	msg[len] = '\0';
	if (len)
		return error_set(err, "start container %s: %s", st->id, msg);
	return 0;
}

static ssize_t write_no_sigpipe(int fd, const char *b)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	ssize_t n;
	int saved;

	sigaction(SIGPIPE, &ign, &old);
	n = write(fd, b, 1);
	saved = errno;
	sigaction(SIGPIPE, &old, NULL);
	errno = saved;
	return n;
}

/* The start itself, on a created container whose state directory h holds
 * locked: the exec FIFO, "running", then (unlocked) the wait for the
 * process's exec and the poststart hooks of spec (NULL: a spec that could
 * not be read back: neither). */
static int start_created(const struct global_opts *g, struct container_handle *h,
			 const struct oci_spec *spec, struct error *err)
{
	_cleanup_close_ int fifo = -1, done = -1;
	_cleanup_free_ char *json = NULL;
	static const char init_gone[] = "cannot start a container that is stopped: its init exited before start";
	const char *id = h->st.id;
	char b = '0';

	/* Opened while the init still holds its writer: the last writer's
	 * close then shows as POLLHUP. */
	done = openat(h->dirfd, STATE_DONE_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	/* ENXIO: nobody holds the read end, so the init is gone. */
	fifo = openat(h->dirfd, STATE_FIFO, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fifo < 0 && errno == ENXIO)
		/* killed between the status check and here (a kill racing
		 * this start): the same answer as a start after the kill */
		return error_setc(err, ENXIO, "%s", init_gone);
	if (fifo < 0)
		return error_sys(err, "start container %s: open exec fifo", id);
	/* the init may die between the open and the write: EPIPE, not a
	 * SIGPIPE that would kill this call with no word */
	if (write_no_sigpipe(fifo, &b) != 1) {
		if (errno == EPIPE)
			return error_setc(err, EPIPE, "%s", init_gone);
		return error_sys(err, "start container %s: write exec fifo", id);
	}
	unlinkat(h->dirfd, STATE_FIFO, 0);
	h->st.started = true;
	h->st.status = STATUS_RUNNING;
	if (state_write(h->dirfd, &h->st, err) < 0)
		return -1;
	/* Nothing below changes the state directory: waiting for the init
	 * and running poststart hooks never hold the container's lock, so
	 * state, kill and delete --force answer meanwhile. */
	flock(h->dirfd, LOCK_UN);
	if (!spec)
		return 0;
	if (done >= 0) {
		int w = wait_process_executed(&h->st, done, start_exec_timeout(spec), err);
		unlinkat(h->dirfd, STATE_DONE_FIFO, 0);
		if (w < 0) {
			struct error ignored;
			if (err->code == ETIMEDOUT)
				signal_init(&h->st, SIGKILL, &ignored);
			return -1;
		}
	}
	if (!spec->hooks[HOOK_POSTSTART].len)
		return 0;
	json = state_to_json(&h->st, false);
	hooks_set_cwd(h->st.bundle);
	hooks_guard_load(g->policy_path); /* judged where they run */
	hooks_guard_container(h->st.id, h->st.bundle);
	/* runtime.md step 9: a failing poststart hook is an error and the
	 * container is stopped; `delete` then runs the poststop hooks. */
	if (hooks_run(&spec->hooks[HOOK_POSTSTART], HOOK_POSTSTART, json, err) < 0) {
		struct error ignored;
		signal_init(&h->st, SIGKILL, &ignored);
		wait_init_gone(&h->st, &ignored);
		return -1;
	}
	return 0;
}

int container_start(const struct global_opts *g, const char *id,
		    struct error *err)
{
	struct container_handle h;
	struct oci_spec spec;
	int r = -1;

	if (handle_open(g, id, true, &h, err) < 0)
		return -1;
	if (h.st.status != STATUS_CREATED) {
		error_set(err, "cannot start a container that is %s", status_name(h.st.status));
		goto out;
	}
	if (state_load_spec(h.dirfd, &spec, err) < 0) {
		/* started all the same: the spec is only the hooks' and the
		 * wait's */
		log_warn("poststart hooks not run: %s", err->msg);
		error_clear(err);
		r = start_created(g, &h, NULL, err);
		goto out;
	}
	r = start_created(g, &h, &spec, err);
	spec_free(&spec);
out:
	handle_close(&h);
	return r;
}

int container_start_ctx(const struct ctx_decided *d, const struct ctx_handles *h,
			const struct ctx_record *r, struct error *err)
{
	struct container_handle ct = { .rootfd = -1, .dirfd = h->state_dir_fd };

	/* create's lock is still held on its state directory; the state and
	 * the spec are the ones create wrote */
	ctx_state(d, r, STATUS_CREATED, &ct.st);
	return start_created(d->g, &ct, &d->spec, err);
}

void container_known_from_ctx(const struct ctx_decided *d, const struct ctx_handles *h,
			      const struct ctx_record *r, struct container_known *k)
{
	struct stat st;

	memset(k, 0, sizeof(*k));
	k->poststop = d->spec.hooks[HOOK_POSTSTOP].len > 0 || fstat(h->state_dir_fd, &st) < 0;
	if (!k->poststop) {
		k->dir_dev = st.st_dev;
		k->dir_ino = st.st_ino;
	}
	k->cgroup_path = r->cgroup_path ? xstrdup(r->cgroup_path) : NULL;
	k->cgroup_manager = (int)r->cgroup_manager;
}

int container_state(const struct global_opts *g, const char *id,
		    struct error *err)
{
	struct container_handle h;
	_cleanup_free_ char *json = NULL;

	/* No lock: state.json is replaced whole, and a create or delete in
	 * progress is answered at once ("creating", or the state before). */
	if (handle_open_as(g, id, HANDLE_UNLOCKED, true, &h, err) < 0)
		return -1;
	json = state_to_json(&h.st, true);
	printf("%s\n", json);
	handle_close(&h);
	return 0;
}

int container_kill(const struct global_opts *g, const char *id, int sig,
		   bool all, struct error *err)
{
	struct container_handle h;
	int r;

	if (handle_open_as(g, id, HANDLE_SHARED, true, &h, err) < 0)
		return -1;
	if (h.st.status == STATUS_STOPPED && !all) {
		handle_close(&h);
		return error_set(err, "container not running");
	}
	if (all && h.st.cgroup_path)
		r = cgroup_kill(h.st.cgroup_path, h.st.cgroup_manager, sig, err);
	else
		r = signal_init(&h.st, sig, err);
	handle_close(&h);
	return r;
}

/* Kill what is left and remove the cgroup, run poststop, drop the state. */
int release_container(int dirfd, const char *id, const char *cgroup_path,
		      enum cgroup_manager manager, struct error *err)
{
	audit_log_limit_hits(dirfd, id, cgroup_path); /* before the cgroup goes */
	if (cgroup_path && cgroup_destroy(cgroup_path, manager, true, err) < 0)
		return -1;
	policy_release_container(dirfd, id, "delete");
	return 0;
}

int destroy_container(struct container_handle *h, struct error *err)
{
	struct oci_spec spec;
	_cleanup_free_ char *json = NULL;

	if (h->st.status == STATUS_PAUSED)
		cgroup_freeze(h->st.cgroup_path, h->st.cgroup_manager, false, err);
	/* Also when "stopped": a killed create may have left its init alive
	 * (signal_init acts only on the recorded pid and start time). */
	if (proc_is_same(h->st.pid, h->st.start_time)) {
		if (signal_init(&h->st, SIGKILL, err) < 0 && err->code)
			return -1;
		if (wait_init_gone(&h->st, err) < 0)
			return -1;
	}
	if (release_container(h->dirfd, h->st.id, h->st.cgroup_path, h->st.cgroup_manager,
			      err) < 0)
		return -1;
	h->st.status = STATUS_STOPPED;
	if (state_load_spec(h->dirfd, &spec, err) == 0) {
		if (spec.hooks[HOOK_POSTSTOP].len) {
			json = state_to_json(&h->st, false);
			hooks_set_cwd(h->st.bundle);
			hooks_run_warn(&spec.hooks[HOOK_POSTSTOP], HOOK_POSTSTOP, json);
		}
		spec_free(&spec);
	} else {
		log_warn("poststop hooks not run: %s", err->msg);
	}
	return state_dir_remove(h->rootfd, h->st.id, h->dirfd, err);
}

/* Directories of creates killed before they had an id (nothing made yet). */
static void sweep_staged(const struct global_opts *g)
{
	_cleanup_close_ int rootfd = -1;
	struct error ignored;

	if (state_root_open(g->root, false, &rootfd, &ignored) == 0)
		state_dir_sweep_staged(rootfd);
}

int container_delete(const struct global_opts *g, const char *id, bool force,
		     struct error *err)
{
	struct container_handle h;
	int r;

	if (handle_open_as(g, id, HANDLE_EXCLUSIVE, true, &h, err) < 0) {
		/* runc: delete --force of a missing container is not an error. */
		if (force && strstr(err->msg, "does not exist")) {
			sweep_staged(g);
			return 0;
		}
		return -1;
	}
	if (!force && (h.st.status == STATUS_RUNNING || h.st.status == STATUS_PAUSED)) {
		error_set(err, "cannot delete container %s that is not stopped: %s", id,
			  status_name(h.st.status));
		handle_close(&h);
		return -1;
	}
	hooks_guard_load(g->policy_path); /* poststop: judged where they run */
	hooks_guard_container(h.st.id, h.st.bundle);
	r = destroy_container(&h, err);
	handle_close(&h);
	if (force)
		sweep_staged(g);
	return r;
}

static void list_entry(const struct global_opts *g, const char *id, bool json,
		       bool quiet, bool *first)
{
	struct container_handle h;
	struct container_state *st = &h.st;
	struct error err;

	/* Unlocked, as state: a container being created or deleted is shown
	 * as it is, never waited for, never hidden. */
	if (handle_open_as(g, id, HANDLE_UNLOCKED, true, &h, &err) < 0)
		return;
	if (quiet) {
		printf("%s\n", st->id);
	} else if (json) {
		_cleanup_free_ char *s = state_to_json(st, false);
		printf("%s%s", *first ? "" : ",", s);
	} else {
		printf("%-12s %-10d %-10s %-40s %-30s %s\n", st->id,
		       st->status == STATUS_STOPPED ? 0 : st->pid, status_name(st->status),
		       st->bundle, st->created ? st->created : "", st->owner ? st->owner : "");
	}
	*first = false;
	handle_close(&h);
}

void container_ids_free(char **ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

int container_ids(const struct global_opts *g, char ***ids, size_t *n,
		  struct error *err)
{
	_cleanup_close_ int rootfd = -1;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;

	*ids = NULL;
	*n = 0;
	if (state_root_open(g->root, false, &rootfd, err) < 0)
		return err->code == ENOENT ? 0 : -1;
	d = fdopendir(dup(rootfd));
	if (!d)
		return error_sys(err, "read %s", g->root);
	/* Dot names are the runtime's own (staged creates, the seccomp cache). */
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*ids = xrealloc(*ids, cap * sizeof(**ids));
		}
		(*ids)[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	return 0;
}

int container_list(const struct global_opts *g, bool json, bool quiet,
		   struct error *err)
{
	char **ids;
	bool first = true;
	size_t n;

	if (container_ids(g, &ids, &n, err) < 0)
		return -1;
	if (json && !quiet)
		printf("[");
	else if (!quiet)
		printf("%-12s %-10s %-10s %-40s %-30s %s\n", "ID", "PID", "STATUS",
		       "BUNDLE", "CREATED", "OWNER");
	for (size_t i = 0; i < n; i++)
		list_entry(g, ids[i], json && !quiet, quiet, &first);
	if (json && !quiet)
		printf("]\n");
	container_ids_free(ids, n);
	return 0;
}

int runtime_prepare_root(const struct global_opts *g, struct error *err)
{
	int fd;

	if (state_root_open(g->root, true, &fd, err) < 0)
		return -1;
	close(fd);
	return 0;
}

void runtime_warm_caches(void)
{
	cgroup_warm_cache();
}
