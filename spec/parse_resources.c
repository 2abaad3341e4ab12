/* SPDX-License-Identifier: Apache-2.0 */
/* linux.resources: the cgroup settings. */
#include <stdint.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/util.h"
#include "internal.h"

static int parse_device_cgroup(struct jctx *c, yajl_val v, void *out)
{
	struct oci_device_cgroup *d = out;

	d->type = 'a';
	if (jrequire(c, v, "allow") < 0 ||
	    jbool(c, v, "allow", &d->allow) < 0 ||
	    jparse_device_type(c, v, "acb", false, &d->type) < 0 ||
	    jopt_i64(c, v, "major", INT64_MIN, INT64_MAX, &d->major) < 0 ||
	    jopt_i64(c, v, "minor", INT64_MIN, INT64_MAX, &d->minor) < 0)
		return -1;
	/* "" is a (useless) access list, not "absent" = "rwm" */
	if (jmember(v, "access") && jreq_string(c, v, "access", &d->access) < 0)
		return -1;
	return 0;
}

static int parse_memory(struct jctx *c, yajl_val v, void *out)
{
	struct oci_memory *m = out;

	if (jopt_i64(c, v, "limit", INT64_MIN, INT64_MAX, &m->limit) < 0 ||
	    jopt_i64(c, v, "reservation", INT64_MIN, INT64_MAX,
		     &m->reservation) < 0 ||
	    jopt_i64(c, v, "swap", INT64_MIN, INT64_MAX, &m->swap) < 0 ||
	    jopt_i64(c, v, "kernel", INT64_MIN, INT64_MAX, &m->kernel) < 0 ||
	    jopt_i64(c, v, "kernelTCP", INT64_MIN, INT64_MAX, &m->kernel_tcp) <
		    0 ||
	    jopt_u64(c, v, "swappiness", UINT64_MAX, &m->swappiness) < 0 ||
	    jopt_bool(c, v, "disableOOMKiller", &m->disable_oom_killer) < 0 ||
	    jopt_bool(c, v, "useHierarchy", &m->use_hierarchy) < 0 ||
	    jopt_bool(c, v, "checkBeforeUpdate", &m->check_before_update) < 0)
		return -1;
	/* Docker writes swappiness -1 ("unset") as a uint64: 2^64-1. */
	if (m->swappiness.set && m->swappiness.v == UINT64_MAX)
		m->swappiness.set = false;
	return 0;
}

static int parse_cpu(struct jctx *c, yajl_val v, void *out)
{
	struct oci_cpu *cpu = out;

	if (jopt_u64(c, v, "shares", UINT64_MAX, &cpu->shares) < 0 ||
	    jopt_i64(c, v, "quota", INT64_MIN, INT64_MAX, &cpu->quota) < 0 ||
	    jopt_u64(c, v, "burst", UINT64_MAX, &cpu->burst) < 0 ||
	    jopt_u64(c, v, "period", UINT64_MAX, &cpu->period) < 0 ||
	    jopt_i64(c, v, "realtimeRuntime", INT64_MIN, INT64_MAX,
		     &cpu->realtime_runtime) < 0 ||
	    jopt_u64(c, v, "realtimePeriod", UINT64_MAX,
		     &cpu->realtime_period) < 0 ||
	    jstring(c, v, "cpus", &cpu->cpus) < 0 ||
	    jstring(c, v, "mems", &cpu->mems) < 0 ||
	    jopt_i64(c, v, "idle", INT64_MIN, INT64_MAX, &cpu->idle) < 0)
		return -1;
	return 0;
}

static int parse_pids(struct jctx *c, yajl_val v, void *out)
{
	struct opt_i64 *limit = out;

	if (jrequire(c, v, "limit") < 0 ||
	    jopt_i64(c, v, "limit", INT64_MIN, INT64_MAX, limit) < 0)
		return -1;
	return 0;
}

static int parse_weight_device(struct jctx *c, yajl_val v, void *out)
{
	struct oci_blkio_weight_device *w = out;

	if (jreq_i64(c, v, "major", &w->major) < 0 ||
	    jreq_i64(c, v, "minor", &w->minor) < 0 ||
	    jopt_u64(c, v, "weight", UINT16_MAX, &w->weight) < 0 ||
	    jopt_u64(c, v, "leafWeight", UINT16_MAX, &w->leaf_weight) < 0)
		return -1;
	return 0;
}

static int parse_throttle(struct jctx *c, yajl_val v, void *out)
{
	struct oci_blkio_throttle *t = out;

	if (jreq_i64(c, v, "major", &t->major) < 0 ||
	    jreq_i64(c, v, "minor", &t->minor) < 0 ||
	    jreq_u64(c, v, "rate", &t->rate) < 0)
		return -1;
	return 0;
}

static int parse_block_io(struct jctx *c, yajl_val v, void *out)
{
	struct oci_blkio *b = out;

	if (jopt_u64(c, v, "weight", UINT16_MAX, &b->weight) < 0 ||
	    jopt_u64(c, v, "leafWeight", UINT16_MAX, &b->leaf_weight) < 0 ||
	    JOBJECT_ARRAY(c, v, "weightDevice", parse_weight_device,
			  b->weight_device, b->n_weight_device) < 0 ||
	    JOBJECT_ARRAY(c, v, "throttleReadBpsDevice", parse_throttle,
			  b->throttle_read_bps, b->n_throttle_read_bps) < 0 ||
	    JOBJECT_ARRAY(c, v, "throttleWriteBpsDevice", parse_throttle,
			  b->throttle_write_bps, b->n_throttle_write_bps) < 0 ||
	    JOBJECT_ARRAY(c, v, "throttleReadIOPSDevice", parse_throttle,
			  b->throttle_read_iops, b->n_throttle_read_iops) < 0 ||
	    JOBJECT_ARRAY(c, v, "throttleWriteIOPSDevice", parse_throttle,
			  b->throttle_write_iops, b->n_throttle_write_iops) < 0)
		return -1;
	return 0;
}

static int parse_hugepage_limit(struct jctx *c, yajl_val v, void *out)
{
	struct oci_hugepage_limit *h = out;

	if (jreq_string(c, v, "pageSize", &h->page_size) < 0 ||
	    jreq_u64(c, v, "limit", &h->limit) < 0)
		return -1;
	return 0;
}

static int parse_net_priority(struct jctx *c, yajl_val v, void *out)
{
	struct oci_net_priority *p = out;

	if (jreq_string(c, v, "name", &p->name) < 0 ||
	    jreq_u32(c, v, "priority", &p->priority) < 0)
		return -1;
	return 0;
}

static int parse_network(struct jctx *c, yajl_val v, void *out)
{
	struct oci_network_resources *n = out;

	if (jopt_u64(c, v, "classID", UINT32_MAX, &n->class_id) < 0 ||
	    JOBJECT_ARRAY(c, v, "priorities", parse_net_priority, n->priorities,
			  n->n_priorities) < 0)
		return -1;
	return 0;
}

/* rdma is a map: device name -> limits. */
static int parse_rdma(struct jctx *c, yajl_val v, void *out)
{
	struct oci_resources *r = out;
	size_t n = v->u.object.len;

	if (n == 0)
		return 0;
	r->rdma = xcalloc(n, sizeof(*r->rdma));
	r->n_rdma = n;
	for (size_t i = 0; i < n; i++) {
		struct oci_rdma *d = &r->rdma[i];
		yajl_val e = v->u.object.values[i];
		size_t mark = jpush_key(c, v->u.object.keys[i]);
		int rc;

		d->device = xstrdup(v->u.object.keys[i]);
		rc = jcheck_object(c, e);
		if (rc == 0)
			rc = jopt_u64(c, e, "hcaHandles", UINT32_MAX,
				      &d->hca_handles);
		if (rc == 0)
			rc = jopt_u64(c, e, "hcaObjects", UINT32_MAX,
				      &d->hca_objects);
		jpop(c, mark);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int jparse_resources(struct jctx *c, yajl_val v, void *out)
{
	struct oci_resources *r = out;

	if (JOBJECT_ARRAY(c, v, "devices", parse_device_cgroup, r->devices,
			  r->n_devices) < 0 ||
	    jobject(c, v, "memory", parse_memory, &r->memory, &r->has_memory) <
		    0 ||
	    jobject(c, v, "cpu", parse_cpu, &r->cpu, &r->has_cpu) < 0 ||
	    jobject(c, v, "pids", parse_pids, &r->pids_limit, NULL) < 0 ||
	    jobject(c, v, "blockIO", parse_block_io, &r->block_io,
		    &r->has_block_io) < 0 ||
	    JOBJECT_ARRAY(c, v, "hugepageLimits", parse_hugepage_limit,
			  r->hugepage_limits, r->n_hugepage_limits) < 0 ||
	    jobject(c, v, "network", parse_network, &r->network,
		    &r->has_network) < 0 ||
	    jobject(c, v, "rdma", parse_rdma, r, NULL) < 0 ||
	    jstr_map(c, v, "unified", &r->unified) < 0)
		return -1;
	return 0;
}

int jparse_device_type(struct jctx *c, yajl_val obj, const char *allowed,
		       bool required, char *out)
{
	_cleanup_free_ char *type = NULL;
	char q[QUOTE_MAX];
	size_t mark;

	if (required ? jreq_string(c, obj, "type", &type) < 0 : jstring(c, obj, "type", &type) < 0)
		return -1;
	if (!type)
		return 0;
	if (strlen(type) == 1 && strchr(allowed, type[0])) {
		*out = type[0];
		return 0;
	}
	mark = jpush_key(c, "type");
	jfail(c, "unknown device type %s (expected one of \"%s\")",
	      spec_quote(q, type), allowed);
	jpop(c, mark);
	return -1;
}
