/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scheduling outside the CPU floor.  SCHED_DEADLINE, SCHED_FIFO and
 * SCHED_RR tasks are not under CFS bandwidth control: the policy's cpu
 * quota (cpu.max, cpu.cfs_quota_us) does not apply to them, so a container
 * in one of these classes takes the CPU its quota denies.  RT I/O priority
 * goes before every other process's disk I/O on the host.  A hard
 * RLIMIT_RTPRIO above 0 lets the container's own code switch to SCHED_FIFO
 * or SCHED_RR without any capability.  All refused under enforce unless
 * the policy's realtimeScheduling is true.  Pure data, like spec/.
 */
#include <string.h>
#include <sys/resource.h>

#include "policy.h"

static const char *const realtime_policies[] = {
	"SCHED_DEADLINE",
	"SCHED_FIFO",
	"SCHED_RR",
};

static int refuse(const struct policy *p, const char *field, const char *value,
		  struct error *err)
{
	return error_set(err, "policy: %s %s is refused by the policy (%s): outside CFS bandwidth control, the cpu/io floor would not hold; the policy field realtimeScheduling allows it",
			 field, value, p->source);
}

int policy_rule_scheduling(const struct policy *p, const struct oci_spec *s,
			   struct error *err)
{
	const struct oci_process *pr = &s->process;

	if (p->realtime_scheduling)
		return 0;
	if (pr->scheduler.set && pr->scheduler.policy)
		for (size_t i = 0; i < sizeof(realtime_policies) / sizeof(realtime_policies[0]); i++)
			if (!strcmp(pr->scheduler.policy, realtime_policies[i]))
				return refuse(p, "process.scheduler.policy", pr->scheduler.policy, err);
	if (pr->io_priority.set && pr->io_priority.class_name &&
	    !strcmp(pr->io_priority.class_name, "IOPRIO_CLASS_RT"))
		return refuse(p, "process.ioPriority.class", "IOPRIO_CLASS_RT", err);
	for (size_t i = 0; i < pr->n_rlimits; i++)
		if (pr->rlimits[i].resource == RLIMIT_RTPRIO && pr->rlimits[i].hard > 0)
			return refuse(p, "process.rlimits", "RLIMIT_RTPRIO above 0", err);
	return 0;
}
