/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sandbox process's watchdog.  A framework that gives up on a call
 * often kills the runner with SIGKILL, which no cleanup code sees; the
 * containers would outlive it.  So a small child, forked once, waits for
 * its parent's death (PR_SET_PDEATHSIG) and then deletes every container
 * whose id says it was the parent's (sbx-PID-...).  The workspaces need no
 * help: they are mounts in the private mount namespace, which goes with
 * its last process.  On a normal exit the parent stops the watchdog first.
 *
 * Frameworks end a call with `kill -9 -PGID`, the caller's whole process
 * group: so the watchdog leaves it at once (a session of its own), or it
 * would die in the same instant as its parent and watch nothing.  The
 * containers cannot reach it: they have pid namespaces of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/fds.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../../runtime/container.h"
#include "sandbox_private.h"

#define RESCAN_DELAY_US 200000 /* a create the parent left mid-way */

static pid_t watchdog_pid = -1;
static int watchdog_ready_fd = -1; /* until it said it is armed */

static void delete_containers_of(const struct global_opts *g, pid_t parent)
{
	char prefix[32];
	struct error err;
	char **ids;
	size_t n;

	snprintf(prefix, sizeof(prefix), "sbx-%d-", parent);
	if (container_ids(g, &ids, &n, &err) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (str_has_prefix(ids[i], prefix) &&
		    container_delete(g, ids[i], true, &err) < 0)
			log_warn("sandbox watchdog: delete %s: %s", ids[i], err.msg);
	container_ids_free(ids, n);
}

/* Nothing of the caller's: not its stdin, not the stdout it reads to EOF. */
static void drop_fds(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	fds_close_all_but(log_get_fd(), log_get_fd());
}

/* Out of the caller's process group, armed for its death: then ready. */
static void watchdog_arm(const sigset_t *set, int ready_fd)
{
	char b = 1;

	sigprocmask(SIG_BLOCK, set, NULL);
	if (!WEAK_WATCHDOG_SESSION && setsid() < 0)
		_exit(1);
	if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) < 0)
		_exit(1);
	if (write(ready_fd, &b, 1) != 1)
		_exit(1);
	close(ready_fd);
}

__attribute__((noreturn)) static void watchdog_main(const struct global_opts *g,
						    pid_t parent, int ready_fd)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	watchdog_arm(&set, ready_fd);
	drop_fds();
	/* The parent may have died before the prctl. */
	while (getppid() == parent)
		if (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
			break;
	delete_containers_of(g, parent);
	usleep(RESCAN_DELAY_US);
	delete_containers_of(g, parent);
	_exit(0);
}

/* Forked now; its word that it is armed is waited for only before the
 * first container (sandbox_watchdog_armed): the workspace is made
 * meanwhile. */
int sandbox_watchdog_start(const struct global_opts *g, struct error *err)
{
	pid_t parent = getpid(), pid;
	int ready[2];

	if (watchdog_pid > 0)
		return 0;
	if (pipe2(ready, O_CLOEXEC) < 0)
		return error_sys(err, "sandbox: pipe for the watchdog");
	pid = fork();
	if (pid < 0) {
		close(ready[0]);
		close(ready[1]);
		return error_sys(err, "sandbox: fork the watchdog");
	}
	if (pid == 0) {
		close(ready[0]);
		watchdog_main(g, parent, ready[1]);
	}
	close(ready[1]);
	watchdog_pid = pid;
	watchdog_ready_fd = ready[0];
	return 0;
}

/* The watchdog is armed before any container exists: a group kill after
 * this returns still finds it outside the group. */
int sandbox_watchdog_armed(struct error *err)
{
	char b;
	ssize_t n;

	if (watchdog_ready_fd < 0)
		return 0;
	do
		n = read(watchdog_ready_fd, &b, 1);
	while (n < 0 && errno == EINTR);
	fd_close(&watchdog_ready_fd);
	if (n != 1)
		return error_set(err, "sandbox: the watchdog could not leave the process group (setsid) or watch for this process's death");
	return 0;
}

void sandbox_env_fini(void)
{
	fd_close(&watchdog_ready_fd);
	if (watchdog_pid <= 0)
		return;
	kill(watchdog_pid, SIGKILL);
	while (waitpid(watchdog_pid, NULL, 0) < 0 && errno == EINTR)
		;
	watchdog_pid = -1;
}
