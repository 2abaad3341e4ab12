/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sandbox process's watchdog.  A framework that gives up on a call
 * often kills the runner with SIGKILL, which no cleanup code sees; the
 * containers would outlive it.  So a small child, forked once, waits for
 * its parent's death (PR_SET_PDEATHSIG) and then deletes every container
 * whose id says it was the parent's (sbx-PID-...).  The workspaces need no
 * help: they are mounts in the private mount namespace, which goes with
 * its last process.  On a normal exit the parent stops the watchdog first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "lifecycle.h"
#include "sandbox_internal.h"

#define RESCAN_DELAY_US 200000 /* a create the parent left mid-way */

static pid_t watchdog_pid = -1;

static void delete_containers_of(const struct global_opts *g, pid_t parent)
{
	char prefix[32];
	struct dirent *de;
	struct error err;
	int rootfd;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "sbx-%d-", parent);
	if (state_root_open(g->root, false, &rootfd, &err) < 0)
		return;
	d = fdopendir(rootfd);
	if (!d) {
		close(rootfd);
		return;
	}
	while ((de = readdir(d)))
		if (str_has_prefix(de->d_name, prefix) &&
		    container_delete(g, de->d_name, true, &err) < 0)
			log_warn("sandbox watchdog: delete %s: %s", de->d_name, err.msg);
	closedir(d);
}

/* Nothing of the caller's: not its stdin, not the stdout it reads to EOF. */
static void drop_fds(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	sandbox_close_fds_but(log_get_fd(), log_get_fd());
}

__attribute__((noreturn)) static void watchdog_main(const struct global_opts *g, pid_t parent)
{
	sigset_t set;
	int sig;

	drop_fds();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGUSR1, 0, 0, 0) < 0)
		_exit(1);
	/* The parent may have died before the prctl. */
	while (getppid() == parent)
		if (sigwait(&set, &sig) == 0 && sig == SIGUSR1)
			break;
	delete_containers_of(g, parent);
	usleep(RESCAN_DELAY_US);
	delete_containers_of(g, parent);
	_exit(0);
}

int sandbox_watchdog_start(const struct global_opts *g, struct error *err)
{
	pid_t parent = getpid(), pid;

	if (watchdog_pid > 0)
		return 0;
	pid = fork();
	if (pid < 0)
		return error_sys(err, "sandbox: fork the watchdog");
	if (pid == 0)
		watchdog_main(g, parent);
	watchdog_pid = pid;
	return 0;
}

void sandbox_env_fini(void)
{
	if (watchdog_pid <= 0)
		return;
	kill(watchdog_pid, SIGKILL);
	while (waitpid(watchdog_pid, NULL, 0) < 0 && errno == EINTR)
		;
	watchdog_pid = -1;
}
