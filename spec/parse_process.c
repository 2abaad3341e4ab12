/* SPDX-License-Identifier: Apache-2.0 */
/* The "process" object: of config.json, or alone (runc exec --process). */
#include <stdint.h>

#include "internal.h"

static int parse_console_size(struct jctx *c, yajl_val v, void *out)
{
	struct oci_console_size *cs = out;

	if (jreq_u32(c, v, "height", &cs->height) < 0 ||
	    jreq_u32(c, v, "width", &cs->width) < 0)
		return -1;
	cs->set = true;
	return 0;
}

static int parse_user(struct jctx *c, yajl_val v, void *out)
{
	struct oci_user *u = out;

	if (jreq_u32(c, v, "uid", &u->uid) < 0 ||
	    jreq_u32(c, v, "gid", &u->gid) < 0 ||
	    jopt_u64(c, v, "umask", UINT32_MAX, &u->umask) < 0 ||
	    ju32_array(c, v, "additionalGids", &u->additional_gids,
		       &u->n_additional_gids) < 0 ||
	    jstring(c, v, "username", &u->username) < 0)
		return -1;
	return 0;
}

static int parse_capabilities(struct jctx *c, yajl_val v, void *out)
{
	struct oci_capabilities *caps = out;

	if (jstr_array(c, v, "bounding", &caps->bounding) < 0 ||
	    jstr_array(c, v, "effective", &caps->effective) < 0 ||
	    jstr_array(c, v, "inheritable", &caps->inheritable) < 0 ||
	    jstr_array(c, v, "permitted", &caps->permitted) < 0 ||
	    jstr_array(c, v, "ambient", &caps->ambient) < 0)
		return -1;
	return 0;
}

static int parse_rlimit(struct jctx *c, yajl_val v, void *out)
{
	struct oci_rlimit *r = out;
	char q[QUOTE_MAX];
	size_t mark;

	if (jreq_string(c, v, "type", &r->type) < 0 ||
	    jreq_u64(c, v, "soft", &r->soft) < 0 ||
	    jreq_u64(c, v, "hard", &r->hard) < 0)
		return -1;
	r->resource = rlimit_from_name(r->type);
	if (r->resource < 0) {
		mark = jpush_key(c, "type");
		jfail(c, "unknown rlimit %s", spec_quote(q, r->type));
		jpop(c, mark);
		return -1;
	}
	return 0;
}

static int parse_io_priority(struct jctx *c, yajl_val v, void *out)
{
	struct oci_io_priority *io = out;
	struct opt_i64 prio = { 0 };
	char q[QUOTE_MAX];
	size_t mark;

	if (jreq_string(c, v, "class", &io->class_name) < 0 ||
	    jopt_i64(c, v, "priority", INT32_MIN, INT32_MAX, &prio) < 0)
		return -1;
	io->class = ioprio_class_from_name(io->class_name);
	if (io->class < 0) {
		mark = jpush_key(c, "class");
		jfail(c, "unknown I/O priority class %s",
		      spec_quote(q, io->class_name));
		jpop(c, mark);
		return -1;
	}
	io->priority = prio.v;
	io->set = true;
	return 0;
}

static int parse_scheduler(struct jctx *c, yajl_val v, void *out)
{
	struct oci_scheduler *s = out;

	if (jreq_string(c, v, "policy", &s->policy) < 0 ||
	    jopt_i64(c, v, "nice", INT32_MIN, INT32_MAX, &s->nice) < 0 ||
	    jopt_i64(c, v, "priority", INT32_MIN, INT32_MAX, &s->priority) <
		    0 ||
	    jstr_array(c, v, "flags", &s->flags) < 0 ||
	    jopt_u64(c, v, "runtime", UINT64_MAX, &s->runtime) < 0 ||
	    jopt_u64(c, v, "deadline", UINT64_MAX, &s->deadline) < 0 ||
	    jopt_u64(c, v, "period", UINT64_MAX, &s->period) < 0)
		return -1;
	s->set = true;
	return 0;
}

static int parse_exec_cpu_affinity(struct jctx *c, yajl_val v, void *out)
{
	struct oci_exec_cpu_affinity *a = out;

	if (jstring(c, v, "initial", &a->initial) < 0 ||
	    jstring(c, v, "final", &a->final) < 0)
		return -1;
	return 0;
}

int jparse_process(struct jctx *c, yajl_val v, void *out)
{
	struct oci_process *p = out;

	if (jbool(c, v, "terminal", &p->terminal) < 0 ||
	    jobject(c, v, "consoleSize", parse_console_size, &p->console_size,
		    NULL) < 0 ||
	    jobject(c, v, "user", parse_user, &p->user, NULL) < 0 ||
	    jstr_array(c, v, "args", &p->args) < 0 ||
	    jstr_array(c, v, "env", &p->env) < 0 ||
	    jstring(c, v, "cwd", &p->cwd) < 0 ||
	    jobject(c, v, "capabilities", parse_capabilities, &p->capabilities,
		    &p->has_capabilities) < 0 ||
	    JOBJECT_ARRAY(c, v, "rlimits", parse_rlimit, p->rlimits,
			  p->n_rlimits) < 0 ||
	    jbool(c, v, "noNewPrivileges", &p->no_new_privileges) < 0 ||
	    jopt_i64(c, v, "oomScoreAdj", INT32_MIN, INT32_MAX,
		     &p->oom_score_adj) < 0 ||
	    jstring(c, v, "apparmorProfile", &p->apparmor_profile) < 0 ||
	    jstring(c, v, "selinuxLabel", &p->selinux_label) < 0 ||
	    jobject(c, v, "ioPriority", parse_io_priority, &p->io_priority,
		    NULL) < 0 ||
	    jobject(c, v, "scheduler", parse_scheduler, &p->scheduler, NULL) <
		    0 ||
	    jobject(c, v, "execCPUAffinity", parse_exec_cpu_affinity,
		    &p->exec_cpu_affinity, NULL) < 0)
		return -1;
	return 0;
}
