/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rawsys: make raw syscalls by number, for the seccomp tests (a syscall
 * newer than a profile, argument filters, notify answers), where
 * syscall_probe's fixed list does not reach.
 *
 *   rawsys [--nofork] CALL...     CALL is NR or NR,ARG1,ARG2,... (integers,
 *                                 any base strtoll takes: -1, 0x400000)
 *
 * One line per CALL:
 *   CALL ok=RETURN_VALUE | CALL ERRNO_NAME | CALL SIGSYS (killed: the
 *   filter's KILL action) | CALL signal=N
 * Each call is made in a forked child, so a kill shows and the next call
 * still runs; --nofork makes them in the process itself (for a KILL_PROCESS
 * test: the whole process must die).  The caller picks harmless arguments:
 * bad pointers and fds that the kernel refuses before acting.
 * Exit status 0, 2 on bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int parse_call(const char *s, long *nr, long args[6])
{
	char *copy = strdup(s), *save = NULL, *tok, *end;
	int i = -1;

	if (!copy)
		return -1;
	memset(args, 0, 6 * sizeof(long));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long long v = strtoll(tok, &end, 0);
		if (*end || i >= 6) {
			free(copy);
			return -1;
		}
		if (i < 0)
			*nr = (long)v;
		else
			args[i] = (long)v;
		i++;
	}
	free(copy);
	return i < 0 ? -1 : 0;
}

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);
	static char buf[32];

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

int main(int argc, char **argv)
{
	int nofork = 0, first = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--nofork")) {
		nofork = 1;
		first = 2;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: rawsys [--nofork] NR[,ARG...]...\n");
		return 2;
	}
	for (int a = first; a < argc; a++) {
		long nr = -1, args[6];
		int pfd[2];

		if (parse_call(argv[a], &nr, args) < 0) {
			fprintf(stderr, "rawsys: bad call %s\n", argv[a]);
			return 2;
		}
		if (nofork) {
			long r = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
			if (r == -1)
				printf("%s %s\n", argv[a], ename(errno));
			else
				printf("%s ok=%ld\n", argv[a], r);
			continue;
		}
		if (pipe(pfd) < 0) {
			perror("pipe");
			return 1;
		}
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			long r = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
			long msg[2] = { r, r == -1 ? errno : 0 };
			close(pfd[0]);
			if (write(pfd[1], msg, sizeof(msg)) != sizeof(msg))
				_exit(3);
			_exit(0);
		}
		close(pfd[1]);
		long msg[2];
		ssize_t n = read(pfd[0], msg, sizeof(msg));
		int status;
		close(pfd[0]);
		waitpid(pid, &status, 0);
		if (WIFSIGNALED(status) && n != sizeof(msg)) {
			int sig = WTERMSIG(status);
			if (sig == SIGSYS)
				printf("%s SIGSYS\n", argv[a]);
			else
				printf("%s signal=%d\n", argv[a], sig);
		} else if (n != sizeof(msg)) {
			printf("%s lost\n", argv[a]);
		} else if (msg[0] == -1) {
			printf("%s %s\n", argv[a], ename((int)msg[1]));
		} else {
			printf("%s ok=%ld\n", argv[a], msg[0]);
		}
	}
	return 0;
}
