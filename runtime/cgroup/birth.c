/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct cgroup_birth: the fds through which a new process enters the
 * container's cgroups (at birth with clone3, or by pid after), opened by a
 * manager (v1.c, v2.c) and closed by whoever holds them.
 */
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

void cgroup_birth_init(struct cgroup_birth *b)
{
	memset(b, 0, sizeof(*b));
	b->v2_fd = -1;
}

void cgroup_birth_close(struct cgroup_birth *b)
{
	for (size_t i = 0; i < b->n_tasks; i++)
		close(b->tasks_fd[i]);
	if (b->v2_fd >= 0)
		close(b->v2_fd);
	cgroup_birth_init(b);
}

int cgroup_birth_clone_fd(const struct cgroup_birth *b)
{
	return b->by_pid ? -1 : b->v2_fd;
}
