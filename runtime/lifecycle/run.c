/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `run`: create + start in one process; unless detached, stay, forward
 * signals to the container init (or proxy its terminal), wait for it, and
 * delete the container, exiting with its status.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/forward_signals.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "lifecycle.h"
#include "../init/terminal.h"

static int delete_after_run(const struct global_opts *g, const char *id, struct error *err)
{
	struct container_handle h;
	int r;

	r = handle_open(g, id, true, &h, err) < 0 || destroy_container(&h, err) < 0 ? -1 : 0;
	handle_close(&h);
	return r;
}

static void delete_after_failed_run(const struct global_opts *g, const char *id)
{
	struct error err;

	if (delete_after_run(g, id, &err) < 0)
		log_warn("delete %s after run: %s", id, err.msg);
}

/*
 * After the init was reaped: nothing to signal, the state directory (the
 * same one: a `delete` and a new `create` of that id meanwhile leave a
 * directory that is not ours, and it is left alone), the cgroup with what
 * may be left in it, the egress table.  Everything else as destroy_container.
 */
int container_delete_reaped(const struct global_opts *g, const char *id,
			    const struct container_known *k, struct error *err)
{
	_cleanup_close_ int rootfd = -1, dirfd = -1;
	struct stat st;

	if (k->poststop)
		return delete_after_run(g, id, err);
	if (state_root_open(g->root, false, &rootfd, err) < 0 ||
	    state_dir_open(rootfd, id, true, &dirfd, err) < 0)
		return -1;
	if (fstat(dirfd, &st) < 0 || st.st_dev != k->dir_dev || st.st_ino != k->dir_ino)
		return error_set(err, "its state directory was replaced meanwhile: left alone");
	if (release_container(dirfd, id, k->cgroup_path, (enum cgroup_manager)k->cgroup_manager,
			      err) < 0 ||
	    state_dir_remove(rootfd, id, dirfd, err) < 0)
		return -1;
	return 0;
}

static void delete_known(const struct global_opts *g, const char *id,
			 const struct container_known *k)
{
	struct error err;

	if (container_delete_reaped(g, id, k, &err) < 0)
		log_warn("delete %s after run: %s", id, err.msg);
}

int container_run(const struct global_opts *g, const struct create_opts *o,
		  int *exit_status, struct error *err)
{
	struct container_ctx c;
	_cleanup_close_ int master = -1;
	sigset_t old;
	int status = 0, r;

	/* Block before clone: a signal that arrives early is queued for the
	 * signalfd, not lost or fatal.  The child unblocks in child_main. */
	block_forwarded_signals(&old);
	container_ctx_init(&c, g, o);
	c.decided.foreground = !o->detach;
	c.decided.saved_sigmask = old;
	c.decided.restore_sigmask = true;
	r = create_container(&c, err);
	if (r < 0) {
		container_ctx_release(&c);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	/* The container exists from here: a failure removes it. */
	if (c.handles.console_peer >= 0 &&
	    terminal_recv_master(c.handles.console_peer, &master, err) < 0) {
		container_ctx_release(&c);
		delete_after_failed_run(g, o->id);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	pid_t pid = c.record.pid;
	struct container_known known;

	container_known_from_ctx(&c.decided, &c.handles, &c.record, &known);
	r = container_start_ctx(&c.decided, &c.handles, &c.record, err);
	container_ctx_release(&c);
	if (r < 0) {
		free(known.cgroup_path);
		delete_after_failed_run(g, o->id);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (o->detach) {
		free(known.cgroup_path);
		sigprocmask(SIG_SETMASK, &old, NULL);
		*exit_status = 0;
		return 0;
	}
	/* The forwarded signals stay blocked until the container is gone:
	 * they are read from a signalfd and passed on, never fatal to us. */
	if (master >= 0)
		r = terminal_proxy(master, pid, &status, err);
	else
		r = wait_forwarding_signals(pid, &status, err);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r < 0) {
		free(known.cgroup_path);
		return -1;
	}
	*exit_status = exit_code_of(status);
	/* The container's status is the result; a failed cleanup is logged. */
	delete_known(g, o->id, &known);
	free(known.cgroup_path);
	return 0;
}
