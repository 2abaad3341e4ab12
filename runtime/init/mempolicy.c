/* SPDX-License-Identifier: Apache-2.0 */
/*
 * linux.memoryPolicy: the NUMA policy of the container's processes, set
 * with set_mempolicy(2) in the init (and in each exec'd process) before
 * its execve, which keeps it.  Nodes are checked against the ones this
 * process may use (the host's online nodes, as its cpuset allows them):
 * a node the host does not have is an error that names it.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../internal.h"

#define BITS_PER_LONG (8 * sizeof(long))

static bool node_set(const unsigned long *mask, unsigned long n)
{
	return mask[n / BITS_PER_LONG] & (1ul << (n % BITS_PER_LONG));
}

static int check_nodes(const struct spec_mempolicy *mp, struct error *err)
{
	unsigned long allowed[SPEC_MPOL_MAX_NODES / BITS_PER_LONG] = { 0 };
	int mode;

	/* Relative nodes are numbered within the allowed set: any will do. */
	if (!mp->n_nodes || (mp->flags & MPOL_F_RELATIVE_NODES))
		return 0;
	if (syscall(SYS_get_mempolicy, &mode, allowed, SPEC_MPOL_MAX_NODES, NULL,
		    MPOL_F_MEMS_ALLOWED) < 0)
		return error_sys(err, "linux.memoryPolicy: get_mempolicy(MPOL_F_MEMS_ALLOWED)");
	for (unsigned long n = 0; n < SPEC_MPOL_MAX_NODES; n++)
		if (node_set(mp->nodes, n) && !node_set(allowed, n))
			return error_set(err, "linux.memoryPolicy.nodes: node %lu is not an online memory node of this host",
					 n);
	return 0;
}

int mempolicy_apply(const struct oci_spec *spec, struct error *err)
{
	struct spec_mempolicy mp;

	if (!spec->linux.memory_policy.set)
		return 0;
	if (spec_memory_policy(&spec->linux.memory_policy, &mp, err) < 0 ||
	    check_nodes(&mp, err) < 0)
		return -1;
	/* maxnode counts one past the last bit the kernel reads */
	if (syscall(SYS_set_mempolicy, mp.mode | (int)mp.flags,
		    mp.n_nodes ? mp.nodes : NULL,
		    mp.n_nodes ? SPEC_MPOL_MAX_NODES + 1 : 0) < 0)
		return error_sys(err, "linux.memoryPolicy: set_mempolicy %s%s%s",
				 spec->linux.memory_policy.mode,
				 spec->linux.memory_policy.nodes ? " nodes " : "",
				 spec->linux.memory_policy.nodes ? spec->linux.memory_policy.nodes : "");
	return 0;
}
