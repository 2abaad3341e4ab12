/* SPDX-License-Identifier: Apache-2.0 */
#include "fds.h"

#include <fcntl.h>

static unsigned char open_at_start[FDS_SNAPSHOT_MAX / 8];

void fds_snapshot(void)
{
	for (int fd = 3; fd < FDS_SNAPSHOT_MAX; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			open_at_start[fd / 8] |= (unsigned char)(1u << (fd % 8));
}

bool fds_was_open(int fd)
{
	if (fd < 0)
		return false;
	if (fd >= FDS_SNAPSHOT_MAX)
		return true;
	return open_at_start[fd / 8] & (1u << (fd % 8));
}
