/* SPDX-License-Identifier: Apache-2.0 */
/*
 * subreaper: run a command as a child subreaper, the way a container shim
 * (containerd-shim, conmon) does.
 *
 *   subreaper [--wait-all] CMD [ARGS...]
 *
 * Sets PR_SET_CHILD_SUBREAPER, forks and execs CMD, and reaps every child
 * -- CMD and every orphan re-parented to us (a container init left behind
 * by `create` when the runtime exits) -- until CMD exits.  Then it reaps
 * whatever has already exited and exits with CMD's status (128+N if CMD
 * died of signal N).
 *
 * With --wait-all it keeps reaping after CMD exits until no child is left
 * at all: `subreaper --wait-all sh -c 'RT create x; RT start x; ...'` then
 * behaves like a shim that outlives the runtime, so that nothing is left as
 * a zombie of PID 1 (which never reaps on the test machines).
 *
 * The pytest suite does not need this program (the pytest process makes
 * itself the subreaper, see tests/integration/conftest.py); it is for
 * running a runtime by hand on these machines, and one test checks that a
 * container created under it is re-parented to it and reaped by it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int status_to_exit(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

int main(int argc, char **argv)
{
	int wait_all = 0, argi = 1, st, rc = 255;
	pid_t cmd, pid;

	if (argi < argc && strcmp(argv[argi], "--wait-all") == 0) {
		wait_all = 1;
		argi++;
	}
	if (argi < argc && strcmp(argv[argi], "--") == 0)
		argi++;
	if (argi >= argc) {
		fprintf(stderr, "usage: subreaper [--wait-all] CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		perror("subreaper: prctl(PR_SET_CHILD_SUBREAPER)");
		return 255;
	}
	cmd = fork();
	if (cmd < 0) {
		perror("subreaper: fork");
		return 255;
	}
	if (cmd == 0) {
		execvp(argv[argi], argv + argi);
		fprintf(stderr, "subreaper: exec %s: %s\n", argv[argi],
			strerror(errno));
		_exit(127);
	}
	/* Reap everything until CMD itself has exited. */
	for (;;) {
		pid = waitpid(-1, &st, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: cannot happen before cmd exits */
		}
		if (pid == cmd) {
			rc = status_to_exit(st);
			break;
		}
	}
	/* Then the orphans: those already dead, or all of them (--wait-all). */
	for (;;) {
		pid = waitpid(-1, &st, wait_all ? 0 : WNOHANG);
		if (pid > 0)
			continue;
		if (pid < 0 && errno == EINTR)
			continue;
		break;
	}
	return rc;
}
