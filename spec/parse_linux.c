/* SPDX-License-Identifier: Apache-2.0 */
/* The "linux" object, except resources (parse_resources.c). */
#include <stdint.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "internal.h"

static int parse_namespace(struct jctx *c, yajl_val v, void *out)
{
	struct oci_namespace *ns = out;
	_cleanup_free_ char *type = NULL;
	char q[QUOTE_MAX];
	size_t mark;
	int t;

	if (jreq_string(c, v, "type", &type) < 0 ||
	    jstring(c, v, "path", &ns->path) < 0)
		return -1;
	t = ns_type_from_name(type);
	if (t < 0) {
		mark = jpush_key(c, "type");
		jfail(c, "unknown namespace type %s", spec_quote(q, type));
		jpop(c, mark);
		return -1;
	}
	ns->type = (enum ns_type)t;
	return 0;
}

static int parse_time_offset(struct jctx *c, yajl_val v, void *out)
{
	struct oci_time_offset *t = out;
	struct opt_i64 secs = { 0 };
	struct opt_u64 nsecs = { 0 };

	if (jopt_i64(c, v, "secs", INT64_MIN, INT64_MAX, &secs) < 0 ||
	    jopt_u64(c, v, "nanosecs", UINT32_MAX, &nsecs) < 0)
		return -1;
	t->set = true;
	t->secs = secs.v;
	t->nanosecs = (uint32_t)nsecs.v;
	return 0;
}

static int parse_time_offsets(struct jctx *c, yajl_val v, void *out)
{
	struct oci_linux *l = out;
	char q[QUOTE_MAX];

	/* Keys name clocks: an offset for any other clock cannot be honoured. */
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *clock = v->u.object.keys[i];

		if (strcmp(clock, "monotonic") != 0 &&
		    strcmp(clock, "boottime") != 0)
			return jfail(c,
				     "unknown clock %s (only \"monotonic\" and "
				     "\"boottime\" have offsets)",
				     spec_quote(q, clock));
	}
	if (jobject(c, v, "monotonic", parse_time_offset, &l->time_monotonic,
		    NULL) < 0 ||
	    jobject(c, v, "boottime", parse_time_offset, &l->time_boottime,
		    NULL) < 0)
		return -1;
	return 0;
}

static int parse_device(struct jctx *c, yajl_val v, void *out)
{
	struct oci_device *d = out;
	struct opt_i64 major = { 0 }, minor = { 0 };

	if (jstring(c, v, "path", &d->path) < 0 ||
	    jparse_device_type(c, v, "cbup", true, &d->type) < 0 ||
	    jopt_u64(c, v, "fileMode", UINT32_MAX, &d->file_mode) < 0 ||
	    jopt_u64(c, v, "uid", UINT32_MAX, &d->uid) < 0 ||
	    jopt_u64(c, v, "gid", UINT32_MAX, &d->gid) < 0)
		return -1;
	/* The struct cannot say "absent": required unless a FIFO. */
	if (d->type != 'p' &&
	    (jrequire(c, v, "major") < 0 || jrequire(c, v, "minor") < 0))
		return -1;
	if (jopt_i64(c, v, "major", INT64_MIN, INT64_MAX, &major) < 0 ||
	    jopt_i64(c, v, "minor", INT64_MIN, INT64_MAX, &minor) < 0)
		return -1;
	d->major = major.v;
	d->minor = minor.v;
	return 0;
}

static int parse_personality(struct jctx *c, yajl_val v, void *out)
{
	struct oci_personality *p = out;

	if (jreq_string(c, v, "domain", &p->domain) < 0 ||
	    jstr_array(c, v, "flags", &p->flags) < 0)
		return -1;
	p->set = true;
	return 0;
}

static int parse_memory_policy(struct jctx *c, yajl_val v, void *out)
{
	struct oci_memory_policy *mp = out;

	if (jreq_string(c, v, "mode", &mp->mode) < 0 ||
	    jstring(c, v, "nodes", &mp->nodes) < 0 ||
	    jstr_array(c, v, "flags", &mp->flags) < 0)
		return -1;
	mp->set = true;
	return 0;
}

/* intelRdt is refused by the validator: only its presence is kept. */
static int parse_presence(struct jctx *c, yajl_val v, void *out)
{
	return 0;
}

/* netDevices is refused too, but its types are still checked. */
static int parse_net_devices(struct jctx *c, yajl_val v, void *out)
{
	for (size_t i = 0; i < v->u.object.len; i++) {
		size_t mark = jpush_key(c, v->u.object.keys[i]);
		_cleanup_free_ char *name = NULL;
		yajl_val dev = v->u.object.values[i];
		int rc = jcheck_object(c, dev);

		if (rc == 0)
			rc = jstring(c, dev, "name", &name);
		jpop(c, mark);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- seccomp ---------------------------------------------------------- */

static int parse_seccomp_arg(struct jctx *c, yajl_val v, void *out)
{
	struct oci_seccomp_arg *a = out;
	struct opt_u64 two = { 0 };

	if (jreq_u32(c, v, "index", &a->index) < 0 ||
	    jreq_u64(c, v, "value", &a->value) < 0 ||
	    jopt_u64(c, v, "valueTwo", UINT64_MAX, &two) < 0 ||
	    jreq_string(c, v, "op", &a->op) < 0)
		return -1;
	a->value_two = two.v;
	return 0;
}

static int parse_seccomp_syscall(struct jctx *c, yajl_val v, void *out)
{
	struct oci_seccomp_syscall *s = out;

	if (jrequire(c, v, "names") < 0 ||
	    jstr_array(c, v, "names", &s->names) < 0 ||
	    jreq_string(c, v, "action", &s->action) < 0 ||
	    jopt_u64(c, v, "errnoRet", UINT32_MAX, &s->errno_ret) < 0 ||
	    JOBJECT_ARRAY(c, v, "args", parse_seccomp_arg, s->args, s->n_args) <
		    0)
		return -1;
	return 0;
}

int jparse_seccomp(struct jctx *c, yajl_val v, void *out)
{
	struct oci_seccomp *sc = out;

	if (jstring(c, v, "defaultAction", &sc->default_action) < 0 ||
	    jopt_u64(c, v, "defaultErrnoRet", UINT32_MAX,
		     &sc->default_errno_ret) < 0 ||
	    jstr_array(c, v, "architectures", &sc->architectures) < 0 ||
	    jstr_array(c, v, "flags", &sc->flags) < 0 ||
	    jstring(c, v, "listenerPath", &sc->listener_path) < 0 ||
	    jstring(c, v, "listenerMetadata", &sc->listener_metadata) < 0 ||
	    JOBJECT_ARRAY(c, v, "syscalls", parse_seccomp_syscall, sc->syscalls,
			  sc->n_syscalls) < 0)
		return -1;
	return 0;
}

/* ---- linux ------------------------------------------------------------ */

static int parse_linux_lists(struct jctx *c, yajl_val v, struct oci_linux *l)
{
	if (JOBJECT_ARRAY(c, v, "namespaces", parse_namespace, l->namespaces,
			  l->n_namespaces) < 0 ||
	    JOBJECT_ARRAY(c, v, "uidMappings", jparse_id_mapping,
			  l->uid_mappings, l->n_uid_mappings) < 0 ||
	    JOBJECT_ARRAY(c, v, "gidMappings", jparse_id_mapping,
			  l->gid_mappings, l->n_gid_mappings) < 0 ||
	    JOBJECT_ARRAY(c, v, "devices", parse_device, l->devices,
			  l->n_devices) < 0 ||
	    jstr_map(c, v, "sysctl", &l->sysctl) < 0 ||
	    jstr_array(c, v, "maskedPaths", &l->masked_paths) < 0 ||
	    jstr_array(c, v, "readonlyPaths", &l->readonly_paths) < 0)
		return -1;
	return 0;
}

int jparse_linux(struct jctx *c, yajl_val v, void *out)
{
	struct oci_linux *l = out;

	if (parse_linux_lists(c, v, l) < 0 ||
	    jobject(c, v, "timeOffsets", parse_time_offsets, l, NULL) < 0 ||
	    jstring(c, v, "cgroupsPath", &l->cgroups_path) < 0 ||
	    jobject(c, v, "resources", jparse_resources, &l->resources,
		    &l->resources.present) < 0 ||
	    jstring(c, v, "rootfsPropagation", &l->rootfs_propagation) < 0 ||
	    jobject(c, v, "seccomp", jparse_seccomp, &l->seccomp,
		    &l->seccomp.present) < 0 ||
	    jstring(c, v, "mountLabel", &l->mount_label) < 0 ||
	    jobject(c, v, "personality", parse_personality, &l->personality,
		    NULL) < 0 ||
	    jobject(c, v, "memoryPolicy", parse_memory_policy,
		    &l->memory_policy, NULL) < 0 ||
	    jobject(c, v, "intelRdt", parse_presence, NULL, &l->has_intel_rdt) <
		    0 ||
	    jobject(c, v, "netDevices", parse_net_devices, NULL,
		    &l->has_net_devices) < 0)
		return -1;
	return 0;
}

int jparse_id_mapping(struct jctx *c, yajl_val v, void *out)
{
	struct oci_id_mapping *m = out;

	if (jreq_u32(c, v, "containerID", &m->container_id) < 0 ||
	    jreq_u32(c, v, "hostID", &m->host_id) < 0 ||
	    jreq_u32(c, v, "size", &m->size) < 0)
		return -1;
	return 0;
}
