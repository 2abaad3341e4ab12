/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inotifyfill: the per-uid inotify instance count, seen from a container
 * by tests/integration/test_floor_identity.py (two tenants sharing a host
 * uid share fs.inotify.max_user_instances).
 *
 *   inotifyfill MAX SECONDS
 *
 * Opens up to MAX inotify instances (stops at the first failure), prints
 * opened=N and errno=NAME (or errno=none), then holds them for SECONDS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int max, seconds, opened = 0, failed = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: inotifyfill MAX SECONDS\n");
		return 2;
	}
	max = atoi(argv[1]);
	seconds = atoi(argv[2]);
	while (opened < max) {
		if (inotify_init1(IN_CLOEXEC) < 0) {
			failed = errno;
			break;
		}
		opened++;
	}
	printf("opened=%d errno=%s\n", opened,
	       failed ? (strerrorname_np(failed) ? strerrorname_np(failed) : "E?") : "none");
	fflush(stdout);
	if (seconds > 0)
		sleep((unsigned)seconds);
	return 0;
}
