/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic checks of a process: config.json's (prefix "config.json:
 * process.") or a lone one for exec (prefix "process.json: ").
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NO_LSM "not supported: this build has no AppArmor/SELinux support"
#define CPU_ID_MAX 8191 /* the kernel's largest NR_CPUS is 8192 */

static int check_cwd_args_env(const struct oci_process *p, const char *pre,
			      struct error *err)
{
	char q[QUOTE_MAX];

	if (!p->cwd)
		return spec_vfail(err, pre, "cwd: required field is missing");
	if (!spec_path_is_absolute(p->cwd))
		return spec_vfail(err, pre,
				  "cwd: must be an absolute path, got %s",
				  spec_quote(q, p->cwd));
	if (p->args.len == 0)
		return spec_vfail(err, pre,
				  "args: must have at least one entry");
	if (p->args.items[0][0] == '\0')
		return spec_vfail(err, pre, "args[0]: must not be empty");
	for (size_t i = 0; i < p->env.len; i++) {
		const char *e = p->env.items[i];
		const char *eq = strchr(e, '=');

		if (!eq || eq == e)
			return spec_vfail(err, pre,
					  "env[%zu]: %s is not NAME=value", i,
					  spec_quote(q, e));
	}
	return 0;
}

static int check_user(const struct oci_process *p, const char *pre,
		      struct error *err)
{
	if (p->user.umask.set && p->user.umask.v > 0777)
		return spec_vfail(err, pre,
				  "user.umask: %llu is not a umask (0..0777, "
				  "written in decimal: 0..511)",
				  (unsigned long long)p->user.umask.v);
	return 0;
}

static int check_capabilities(const struct oci_process *p, const char *pre,
			      struct error *err)
{
	const struct {
		const char *name;
		const struct str_array *set;
	} sets[] = {
		{ "bounding", &p->capabilities.bounding },
		{ "effective", &p->capabilities.effective },
		{ "inheritable", &p->capabilities.inheritable },
		{ "permitted", &p->capabilities.permitted },
		{ "ambient", &p->capabilities.ambient },
	};
	char q[QUOTE_MAX];

	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++)
		for (size_t i = 0; i < sets[s].set->len; i++)
			if (capability_from_name(sets[s].set->items[i]) < 0)
				return spec_vfail(
					err, pre,
					"capabilities.%s[%zu]: unknown "
					"capability %s",
					sets[s].name, i,
					spec_quote(q, sets[s].set->items[i]));
	return 0;
}

static int check_rlimits(const struct oci_process *p, const char *pre,
			 struct error *err)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < p->n_rlimits; i++) {
		const struct oci_rlimit *r = &p->rlimits[i];

		if (rlimit_from_name(r->type) < 0)
			return spec_vfail(err, pre,
					  "rlimits[%zu].type: unknown "
					  "rlimit %s",
					  i, spec_quote(q, r->type));
		if (r->soft > r->hard)
			return spec_vfail(
				err, pre,
				"rlimits[%zu]: soft limit %llu is above "
				"the hard limit %llu",
				i, (unsigned long long)r->soft,
				(unsigned long long)r->hard);
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->rlimits[j].type, r->type) == 0)
				return spec_vfail(
					err, pre,
					"rlimits[%zu]: duplicate rlimit "
					"%s (also rlimits[%zu])",
					i, spec_quote(q, r->type), j);
	}
	return 0;
}

static int check_lsm_and_oom(const struct oci_process *p, const char *pre,
			     struct error *err)
{
	if (p->apparmor_profile)
		return spec_vfail(err, pre, "apparmorProfile: " NO_LSM);
	if (p->selinux_label)
		return spec_vfail(err, pre, "selinuxLabel: " NO_LSM);
	if (p->oom_score_adj.set &&
	    (p->oom_score_adj.v < -1000 || p->oom_score_adj.v > 1000))
		return spec_vfail(
			err, pre,
			"oomScoreAdj: %lld is out of range (-1000..1000)",
			(long long)p->oom_score_adj.v);
	return 0;
}

static int check_io_priority(const struct oci_process *p, const char *pre,
			     struct error *err)
{
	const struct oci_io_priority *io = &p->io_priority;
	char q[QUOTE_MAX];

	if (!io->set)
		return 0;
	if (ioprio_class_from_name(io->class_name) < 0)
		return spec_vfail(err, pre,
				  "ioPriority.class: unknown I/O priority "
				  "class %s",
				  spec_quote(q, io->class_name));
	if (io->priority < 0 || io->priority > 7)
		return spec_vfail(
			err, pre,
			"ioPriority.priority: %lld is out of range (0..7)",
			(long long)io->priority);
	return 0;
}

static int check_deadline(const struct oci_scheduler *s, int policy,
			  const char *pre, struct error *err)
{
	uint64_t runtime = s->runtime.v, deadline = s->deadline.v;
	uint64_t period = s->period.v;

	if (policy != SCHED_DEADLINE) {
		if (runtime || deadline || period)
			return spec_vfail(
				err, pre,
				"scheduler: runtime, deadline and period "
				"are for SCHED_DEADLINE only");
		return 0;
	}
	if (deadline == 0)
		return spec_vfail(err, pre,
				  "scheduler.deadline: SCHED_DEADLINE "
				  "needs a deadline above 0");
	if (runtime > deadline || (period && deadline > period))
		return spec_vfail(err, pre,
				  "scheduler: SCHED_DEADLINE needs runtime <= "
				  "deadline <= period");
	return 0;
}

static int check_scheduler(const struct oci_process *p, const char *pre,
			   struct error *err)
{
	const struct oci_scheduler *s = &p->scheduler;
	int64_t prio = s->priority.v;
	char q[QUOTE_MAX];
	bool realtime;
	int policy;

	if (!s->set)
		return 0;
	policy = sched_policy_from_name(s->policy);
	if (policy < 0)
		return spec_vfail(err, pre,
				  "scheduler.policy: unknown policy %s",
				  spec_quote(q, s->policy));
	if (policy == SCHED_ISO)
		return spec_vfail(err, pre,
				  "scheduler.policy: SCHED_ISO is not "
				  "implemented by Linux");
	for (size_t i = 0; i < s->flags.len; i++)
		if (sched_flag_from_name(s->flags.items[i]) < 0)
			return spec_vfail(err, pre,
					  "scheduler.flags[%zu]: unknown "
					  "flag %s",
					  i, spec_quote(q, s->flags.items[i]));
	if (s->nice.set && (s->nice.v < -20 || s->nice.v > 19))
		return spec_vfail(err, pre,
				  "scheduler.nice: %lld is out of range "
				  "(-20..19)",
				  (long long)s->nice.v);
	realtime = policy == SCHED_FIFO || policy == SCHED_RR;
	if (realtime && (prio < 1 || prio > 99))
		return spec_vfail(err, pre,
				  "scheduler.priority: %s needs a "
				  "priority in 1..99",
				  s->policy);
	if (!realtime && prio != 0)
		return spec_vfail(err, pre,
				  "scheduler.priority: only SCHED_FIFO "
				  "and SCHED_RR take a priority");
	return check_deadline(s, policy, pre, err);
}

/* "0-3,7": comma-separated CPU numbers or ranges (spaces allowed). */
static bool cpu_list_valid(const char *s)
{
	const char *p = s;

	while (*p) {
		char *end;
		unsigned long lo, hi;

		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return false;
		lo = hi = strtoul(p, &end, 10);
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return false;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (lo > hi || hi > CPU_ID_MAX)
			return false;
		while (*p == ' ')
			p++;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return false;
	}
	return true;
}

static int check_cpu_affinity(const struct oci_process *p, const char *pre,
			      struct error *err)
{
	const struct oci_exec_cpu_affinity *a = &p->exec_cpu_affinity;
	char q[QUOTE_MAX];

	if (a->initial && !cpu_list_valid(a->initial))
		return spec_vfail(err, pre,
				  "execCPUAffinity.initial: %s is not a "
				  "CPU list like \"0-3,7\" (CPUs 0..%d)",
				  spec_quote(q, a->initial), CPU_ID_MAX);
	if (a->final && !cpu_list_valid(a->final))
		return spec_vfail(err, pre,
				  "execCPUAffinity.final: %s is not a "
				  "CPU list like \"0-3,7\" (CPUs 0..%d)",
				  spec_quote(q, a->final), CPU_ID_MAX);
	return 0;
}

int spec_check_process(const struct oci_process *p, const char *pre,
		       struct error *err)
{
	if (check_cwd_args_env(p, pre, err) < 0 ||
	    check_user(p, pre, err) < 0 ||
	    check_capabilities(p, pre, err) < 0 ||
	    check_rlimits(p, pre, err) < 0 ||
	    check_lsm_and_oom(p, pre, err) < 0 ||
	    check_io_priority(p, pre, err) < 0 ||
	    check_scheduler(p, pre, err) < 0 ||
	    check_cpu_affinity(p, pre, err) < 0)
		return -1;
	return 0;
}
