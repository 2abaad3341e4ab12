/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the policy set up for a container outside its cgroup and mounts,
 * given back in one place by delete and by a create that failed: its
 * egress table, its egress proxy, its host identity.  Each is recorded in
 * the state directory before it is made, so this works at any point.
 */
#include "../../lib/log.h"
#include "../internal.h"

void policy_release_container(int state_dir_fd, const char *id, const char *what)
{
	struct error e;

	if (netfilter_remove_egress(state_dir_fd, id, &e) < 0)
		log_warn("%s %s: %s", what, id, e.msg);
	egress_proxy_stop(state_dir_fd, id);
	identity_release(state_dir_fd, id);
}
