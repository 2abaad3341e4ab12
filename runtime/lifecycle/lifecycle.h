/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_LIFECYCLE_H
#define AGENTSBX_LIFECYCLE_H

#include <stdbool.h>

#include "../../lib/error.h"
#include "../container.h"
#include "state.h"

/* An existing container, its state directory locked. */
struct container_handle {
	int rootfd;
	int dirfd;
	struct container_state st;
	bool no_record; /* no readable state.json: st is a "stopped" stub */
};

enum handle_lock { HANDLE_UNLOCKED,
		   HANDLE_SHARED,
		   HANDLE_EXCLUSIVE };

int handle_open(const struct global_opts *g, const char *id, bool exclusive,
		struct container_handle *h, struct error *err);
void handle_close(struct container_handle *h);

/* Kill what is left, remove the cgroup, run poststop hooks, drop the state
 * directory. */
/* What a container whose processes are gone still holds: its cgroup and
 * the egress table it put in a joined network namespace (not its state
 * directory).  Shared by delete and run's own teardown. */
int release_container(int dirfd, const char *id, const char *cgroup_path,
		      enum cgroup_manager manager, struct error *err);
int destroy_container(struct container_handle *h, struct error *err);

#endif
