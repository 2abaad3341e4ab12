/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ptyfill: open pseudo-terminal masters (posix_openpt: /dev/ptmx) until
 * one fails or MAX are held, run inside a container by
 * tests/integration/test_policy_limits.py to see its devpts `max=`.
 *
 *   ptyfill MAX
 *
 * Output: opened=N and, if one failed, error=ERRNO_NAME (ENOSPC: the
 * devpts instance is full).  Everything is closed on exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long max, n = 0;
	int e = 0;

	if (argc != 2 || (max = strtol(argv[1], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: ptyfill MAX\n");
		return 2;
	}
	for (; n < max; n++) {
		int fd = posix_openpt(O_RDWR | O_NOCTTY);
		if (fd < 0) {
			e = errno;
			break;
		}
		/* unlockpt: the pty is only counted in use once it exists;
		 * a failing one is reported too. */
		if (unlockpt(fd) < 0) {
			e = errno;
			break;
		}
	}
	printf("opened=%ld\n", n);
	if (e)
		printf("error=%s\n", strerrorname_np(e) ? strerrorname_np(e) : "E?");
	return 0;
}
