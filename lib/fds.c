/* SPDX-License-Identifier: Apache-2.0 */
#include "fds.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned char open_at_start[FDS_SNAPSHOT_MAX / 8];

static void mark(int fd)
{
	if (fd >= 3 && fd < FDS_SNAPSHOT_MAX)
		open_at_start[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

/* One read of /proc/self/fd rather than a probe of every number (this is
 * on every command's start); the probe when /proc is not there. */
void fds_snapshot(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d) {
		for (int fd = 3; fd < FDS_SNAPSHOT_MAX; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				mark(fd);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(d))
			mark(atoi(de->d_name));
	closedir(d);
}

bool fds_was_open(int fd)
{
	if (fd < 0)
		return false;
	if (fd >= FDS_SNAPSHOT_MAX)
		return true;
	return open_at_start[fd / 8] & (1u << (fd % 8));
}

void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int by_value(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

void fds_close_all_but_list(const int *keep, size_t n)
{
	int sorted[64];
	unsigned int from = 3;

	if (n > sizeof(sorted) / sizeof(sorted[0]))
		n = sizeof(sorted) / sizeof(sorted[0]);
	memcpy(sorted, keep, n * sizeof(int));
	qsort(sorted, n, sizeof(int), by_value);
	for (size_t i = 0; i < n; i++) {
		if (sorted[i] < (int)from)
			continue;
		if (sorted[i] > (int)from)
			syscall(SYS_close_range, from, (unsigned int)sorted[i] - 1, 0);
		from = (unsigned int)sorted[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

void fds_close_all_but(int keep_a, int keep_b)
{
	int keep[2] = { keep_a, keep_b };

	fds_close_all_but_list(keep, 2);
}
