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
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "internal.h"
#include "lifecycle.h"
#include "terminal.h"

/* Signals a foreground run passes on to the container, as runc does. */
static const int forwarded[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH,
	SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGALRM, SIGPIPE,
};

void forwarded_signals_mask(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(mask, forwarded[i]);
}

void block_forwarded_signals(sigset_t *old)
{
	sigset_t mask;

	forwarded_signals_mask(&mask);
	sigprocmask(SIG_BLOCK, &mask, old);
}

/* Wait for pid, passing on every forwardable signal we receive. */
static int wait_forwarding(pid_t pid, int sfd, int *status, struct error *err)
{
	for (;;) {
		struct signalfd_siginfo si;
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return error_sys(err, "wait for container init");
		if (read(sfd, &si, sizeof(si)) != sizeof(si)) {
			if (errno != EINTR && errno != EAGAIN)
				return error_sys(err, "read signalfd");
			continue;
		}
		if (si.ssi_signo != SIGCHLD)
			kill(pid, (int)si.ssi_signo);
	}
}

int wait_forwarding_signals(pid_t pid, int *status, struct error *err)
{
	_cleanup_close_ int sfd = -1;
	sigset_t mask;

	forwarded_signals_mask(&mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return error_sys(err, "signalfd");
	return wait_forwarding(pid, sfd, status, err);
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

static int delete_after_run(const struct global_opts *g, const char *id)
{
	struct container_handle h;
	struct error err;

	if (handle_open(g, id, true, &h, &err) < 0 || destroy_container(&h, &err) < 0) {
		log_warn("delete %s after run: %s", id, err.msg);
		handle_close(&h);
		return -1;
	}
	handle_close(&h);
	return 0;
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
	ctx_init(&c, g, o);
	c.foreground = !o->detach;
	c.saved_sigmask = old;
	c.restore_sigmask = true;
	r = create_container(&c, err);
	if (r < 0) {
		ctx_release(&c);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	/* The container exists from here: a failure removes it. */
	if (c.console_peer >= 0 &&
	    terminal_recv_master(c.console_peer, &master, err) < 0) {
		ctx_release(&c);
		delete_after_run(g, o->id);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	pid_t pid = c.pid;
	ctx_release(&c);
	if (container_start(g, o->id, err) < 0) {
		delete_after_run(g, o->id);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return -1;
	}
	if (o->detach) {
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
	if (r < 0)
		return -1;
	*exit_status = exit_code(status);
	/* The container's status is the result; a failed cleanup is logged. */
	delete_after_run(g, o->id);
	return 0;
}
