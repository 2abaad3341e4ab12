/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v1 and hybrid hosts: one directory per mounted hierarchy, the same
 * relative path in each; linux.resources mapped to v1 files.  On a hybrid
 * host the path is also made in the cgroup2 at /sys/fs/cgroup/unified and
 * the pid put there; what only cgroup2 can hold there (hugetlb when v1 has
 * no hugetlb, "unified" keys) is written there.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

/* ---- settings: memory ----------------------------------------------------- */

static int v1_mem_value(const char *field, int64_t v, struct error *err)
{
	if (v < -1)
		return error_set(err, "linux.resources.%s: invalid value %" PRId64,
				 field, v);
	return 0;
}

static int v1_memory(const struct oci_resources *res, bool update,
		     struct cg_settings *out, struct error *err)
{
	const struct oci_memory *m = &res->memory;
	int64_t limit = m->limit.set ? m->limit.v : 0;
	int64_t swap = m->swap.set ? m->swap.v : 0;

	if (!res->has_memory)
		return 0;
	if (m->kernel.set)
		log_warn("linux.resources.memory.kernel is deprecated and ignored (as runc does)");
	if (v1_mem_value("memory.limit", limit, err) < 0 ||
	    v1_mem_value("memory.swap", swap, err) < 0 ||
	    (m->reservation.set &&
	     v1_mem_value("memory.reservation", m->reservation.v, err) < 0))
		return -1;
	/* memsw >= limit at every step: memsw first, again after the limit
	 * when it had to shrink (EINVAL).  Unlimited memory, swap unsaid:
	 * both unlimited. */
	if (swap != 0)
		cg_settings_add(out, "memory.swap", "memory", CG_SET_RETRY,
				"memory.memsw.limit_in_bytes", "%" PRId64, swap);
	else if (limit == -1)
		cg_settings_add(out, "memory.swap", "memory",
				CG_SET_RETRY | CG_SET_OPTIONAL,
				"memory.memsw.limit_in_bytes", "-1");
	if (limit != 0)
		cg_settings_add(out, "memory.limit", "memory", CG_SET_RETRY,
				"memory.limit_in_bytes", "%" PRId64, limit);
	if (m->reservation.set && m->reservation.v != 0)
		cg_settings_add(out, "memory.reservation", "memory", 0,
				"memory.soft_limit_in_bytes", "%" PRId64,
				m->reservation.v);
	if (m->swappiness.set && m->swappiness.v != UINT64_MAX) {
		if (m->swappiness.v > 100)
			return error_set(err,
					 "linux.resources.memory.swappiness: %" PRIu64 " is out of range 0..100",
					 m->swappiness.v);
		cg_settings_add(out, "memory.swappiness", "memory", 0,
				"memory.swappiness", "%" PRIu64, m->swappiness.v);
	}
	/* Equal to the limit (as the policy sets it): TCP buffers charged as
	 * v2 charges them; a kernel that refuses it gets a warning. */
	if (m->kernel_tcp.set && m->kernel_tcp.v != 0)
		cg_settings_add(out, "memory.kernelTCP", "memory",
				m->kernel_tcp.v == limit ? CG_SET_WARN : 0,
				"memory.kmem.tcp.limit_in_bytes", "%" PRId64,
				m->kernel_tcp.v);
	if (m->disable_oom_killer.set && (m->disable_oom_killer.v || update))
		cg_settings_add(out, "memory.disableOOMKiller", "memory", 0,
				"memory.oom_control", "%d",
				m->disable_oom_killer.v ? 1 : 0);
	if (m->use_hierarchy.set)
		cg_settings_add(out, "memory.useHierarchy", "memory", 0,
				"memory.use_hierarchy", "%d",
				m->use_hierarchy.v ? 1 : 0);
	return 0;
}

/* ---- settings: cpu, cpuset, pids ------------------------------------------ */

static int v1_cpu(const struct oci_resources *res, struct cg_settings *out,
		  struct error *err)
{
	const struct oci_cpu *c = &res->cpu;
	bool idle_first = c->idle.set && c->idle.v == 0;

	if (!res->has_cpu)
		return 0;
	if (c->idle.set && c->idle.v != 0 && c->idle.v != 1)
		return error_set(err,
				 "linux.resources.cpu.idle: must be 0 or 1, not %" PRId64,
				 c->idle.v);
	if (c->quota.set && c->quota.v < -1)
		return error_set(err, "linux.resources.cpu.quota: invalid value %" PRId64,
				 c->quota.v);
	if (idle_first)
		cg_settings_add(out, "cpu.idle", "cpu", 0, "cpu.idle", "0");
	if (c->shares.set && c->shares.v != 0)
		cg_settings_add(out, "cpu.shares", "cpu", 0, "cpu.shares",
				"%" PRIu64, c->shares.v);
	if (c->idle.set && !idle_first)
		cg_settings_add(out, "cpu.idle", "cpu", 0, "cpu.idle", "1");
	/* A new period may not fit the old quota (or burst the old quota):
	 * those go first and again after the quota if refused. */
	if (c->period.set && c->period.v != 0)
		cg_settings_add(out, "cpu.period", "cpu", CG_SET_RETRY,
				"cpu.cfs_period_us", "%" PRIu64, c->period.v);
	if (c->burst.set)
		cg_settings_add(out, "cpu.burst", "cpu", CG_SET_RETRY,
				"cpu.cfs_burst_us", "%" PRIu64, c->burst.v);
	if (c->quota.set && c->quota.v != 0)
		cg_settings_add(out, "cpu.quota", "cpu", 0, "cpu.cfs_quota_us",
				"%" PRId64, c->quota.v);
	if (c->realtime_period.set && c->realtime_period.v != 0)
		cg_settings_add(out, "cpu.realtimePeriod", "cpu", CG_SET_RETRY,
				"cpu.rt_period_us", "%" PRIu64,
				c->realtime_period.v);
	if (c->realtime_runtime.set && c->realtime_runtime.v != 0)
		cg_settings_add(out, "cpu.realtimeRuntime", "cpu", 0,
				"cpu.rt_runtime_us", "%" PRId64,
				c->realtime_runtime.v);
	return cg_add_cpuset(c, out, err);
}

/* ---- settings: blkio -------------------------------------------------------- */

/* CFQ's file when the kernel has it, else BFQ's (as runc does). */
static void v1_weight(struct cg_settings *out, const char *field,
		      const char *file, const char *bfq_file, const char *dev,
		      uint64_t w)
{
	cg_settings_add(out, field, "blkio", CG_SET_OPTIONAL, file,
			"%s%" PRIu64, dev, w);
	cg_settings_add(out, field, "blkio", CG_SET_ALT, bfq_file,
			"%s%" PRIu64, dev, w);
}

static void v1_throttle(struct cg_settings *out, const char *field,
			const char *file, const struct oci_blkio_throttle *t,
			size_t n)
{
	for (size_t i = 0; i < n; i++)
		cg_settings_add(out, field, "blkio", 0, file,
				"%" PRId64 ":%" PRId64 " %" PRIu64, t[i].major,
				t[i].minor, t[i].rate);
}

static void v1_blkio(const struct oci_resources *res, struct cg_settings *out)
{
	const struct oci_blkio *b = &res->block_io;

	if (!res->has_block_io)
		return;
	if (b->weight.set && b->weight.v != 0)
		v1_weight(out, "blockIO.weight", "blkio.weight",
			  "blkio.bfq.weight", "", b->weight.v);
	if (b->leaf_weight.set && b->leaf_weight.v != 0)
		cg_settings_add(out, "blockIO.leafWeight", "blkio", 0,
				"blkio.leaf_weight", "%" PRIu64,
				b->leaf_weight.v);
	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct oci_blkio_weight_device *wd = &b->weight_device[i];
		char dev[48];

		snprintf(dev, sizeof(dev), "%" PRId64 ":%" PRId64 " ", wd->major,
			 wd->minor);
		if (wd->weight.set)
			v1_weight(out, "blockIO.weightDevice",
				  "blkio.weight_device", "blkio.bfq.weight_device",
				  dev, wd->weight.v);
		if (wd->leaf_weight.set)
			cg_settings_add(out, "blockIO.weightDevice.leafWeight",
					"blkio", 0, "blkio.leaf_weight_device",
					"%s%" PRIu64, dev, wd->leaf_weight.v);
	}
	v1_throttle(out, "blockIO.throttleReadBpsDevice",
		    "blkio.throttle.read_bps_device", b->throttle_read_bps,
		    b->n_throttle_read_bps);
	v1_throttle(out, "blockIO.throttleWriteBpsDevice",
		    "blkio.throttle.write_bps_device", b->throttle_write_bps,
		    b->n_throttle_write_bps);
	v1_throttle(out, "blockIO.throttleReadIOPSDevice",
		    "blkio.throttle.read_iops_device", b->throttle_read_iops,
		    b->n_throttle_read_iops);
	v1_throttle(out, "blockIO.throttleWriteIOPSDevice",
		    "blkio.throttle.write_iops_device", b->throttle_write_iops,
		    b->n_throttle_write_iops);
}

/* ---- settings: hugetlb, network, devices ------------------------------------ */

static int v1_hugetlb(const struct oci_resources *res, const struct cg_host *h,
		      struct cg_settings *v1, struct cg_settings *v2,
		      struct error *err)
{
	/* No v1 hugetlb but a cgroup2 side: it goes there (checked against
	 * the controllers that side offers). */
	if (res->n_hugepage_limits && !cg1_host_hier(h, CG1_HUGETLB) && h->v2_mnt)
		return cg2_add_hugetlb(res, v2, err);
	for (size_t i = 0; i < res->n_hugepage_limits; i++) {
		const struct oci_hugepage_limit *l = &res->hugepage_limits[i];
		_cleanup_free_ char *max = NULL, *rsvd = NULL;

		if (!l->page_size || cg_check_page_size(l->page_size, err) < 0)
			return -1;
		max = xasprintf("hugetlb.%s.limit_in_bytes", l->page_size);
		rsvd = xasprintf("hugetlb.%s.rsvd.limit_in_bytes", l->page_size);
		cg_settings_add(v1, "hugepageLimits", "hugetlb", 0, max,
				"%" PRIu64, l->limit);
		cg_settings_add(v1, "hugepageLimits", "hugetlb",
				CG_SET_OPTIONAL, rsvd, "%" PRIu64, l->limit);
	}
	return 0;
}

static int v1_network(const struct oci_resources *res, struct cg_settings *out,
		      struct error *err)
{
	const struct oci_network_resources *n = &res->network;

	if (!res->has_network)
		return 0;
	if (n->class_id.set && n->class_id.v != 0)
		cg_settings_add(out, "network.classID", "net_cls", 0,
				"net_cls.classid", "%" PRIu64, n->class_id.v);
	for (size_t i = 0; i < n->n_priorities; i++) {
		const char *name = n->priorities[i].name;

		if (!name || !*name || strcspn(name, " \t\n/") != strlen(name))
			return error_set(err,
					 "linux.resources.network.priorities[%zu]: invalid interface name",
					 i);
		cg_settings_add(out, "network.priorities", "net_prio", 0,
				"net_prio.ifpriomap", "%s %" PRIu32, name,
				n->priorities[i].priority);
	}
	return 0;
}

static void v1_device_entry(struct cg_settings *out, bool allow, char type,
			    const struct oci_device_cgroup *r, const char *acc)
{
	char maj[24] = "*", min[24] = "*";

	if (r->major.set && r->major.v >= 0)
		snprintf(maj, sizeof(maj), "%" PRId64, r->major.v);
	if (r->minor.set && r->minor.v >= 0)
		snprintf(min, sizeof(min), "%" PRId64, r->minor.v);
	cg_settings_add(out, "devices", "devices", 0,
			allow ? "devices.allow" : "devices.deny", "%c %s:%s %s",
			type, maj, min, acc);
}

/* Default deny, then the rules in order.  "a" means everything to the
 * kernel whatever follows it, so a narrower "a" rule becomes a c and a b
 * rule. */
static int v1_devices(const struct oci_resources *res, bool update,
		      const struct cg_host *h, struct cg_settings *out,
		      struct error *err)
{
	size_t n = res ? res->n_devices : 0;

	if (update && n == 0)
		return 0;
	if (n == 0 && !cg1_host_hier(h, CG1_DEVICES)) {
		log_warn("cgroup: no devices controller on this host: device access is not restricted by a cgroup");
		return 0;
	}
	cg_settings_add(out, "devices", "devices", 0, "devices.deny", "a");
	for (size_t i = 0; i < n; i++) {
		const struct oci_device_cgroup *r = &res->devices[i];
		char acc[4];
		unsigned bits;
		size_t k;

		if (cg_device_rule_check(r, i, &bits, err) < 0)
			return -1;
		k = cg_device_access_string(bits, acc);
		if (r->type == 'a' && k == 3 && !(r->major.set && r->major.v >= 0) &&
		    !(r->minor.set && r->minor.v >= 0)) {
			cg_settings_add(out, "devices", "devices", 0,
					r->allow ? "devices.allow" : "devices.deny",
					"a");
		} else if (r->type == 'a') {
			v1_device_entry(out, r->allow, 'c', r, acc);
			v1_device_entry(out, r->allow, 'b', r, acc);
		} else {
			v1_device_entry(out, r->allow, r->type, r, acc);
		}
	}
	return 0;
}

int cg1_build_settings(const struct oci_resources *res, bool update,
		       const struct cg_host *host, struct cg_settings *v1,
		       struct cg_settings *v2, struct error *err)
{
	const struct oci_resources *r = res && res->present ? res : NULL;

	if (r && r->unified.len > 0 && !host->v2_mnt) {
		error_set(err,
			  "linux.resources.unified: this host has cgroup v1 only");
		goto fail;
	}
	if (r && (v1_memory(r, update, v1, err) < 0 || v1_cpu(r, v1, err) < 0))
		goto fail;
	if (r) {
		cg_add_pids(r, v1);
		v1_blkio(r, v1);
	}
	if (r && (v1_hugetlb(r, host, v1, v2, err) < 0 ||
		  v1_network(r, v1, err) < 0 || cg_add_rdma(r, v1, err) < 0 ||
		  cg2_add_unified(r, v2, err) < 0))
		goto fail;
	/* Devices even without other resources: the default rules. */
	if (v1_devices(res, update, host, v1, err) < 0)
		goto fail;
	return 0;
fail:
	cg_settings_free(v1);
	cg_settings_free(v2);
	return -1;
}

/* ---- directories ------------------------------------------------------------ */

/* The container's directory in every hierarchy (and the cgroup2 side). */
struct v1_dirs {
	const struct cg_host *h;
	struct cg_dir root[CG1_MAX_HIER];
	struct cg_dir leaf[CG1_MAX_HIER];
	struct cg_made made[CG1_MAX_HIER];
	struct cg_made v2_made;
};

static void v1_dirs_init(struct v1_dirs *d, const struct cg_host *h)
{
	memset(d, 0, sizeof(*d));
	d->h = h;
	for (size_t i = 0; i < CG1_MAX_HIER; i++)
		d->root[i].fd = d->leaf[i].fd = -1;
}

static void v1_dirs_close(struct v1_dirs *d)
{
	for (size_t i = 0; i < CG1_MAX_HIER; i++) {
		cg_dir_close(&d->leaf[i]);
		cg_dir_close(&d->root[i]);
		cg_made_free(&d->made[i]);
	}
	cg_made_free(&d->v2_made);
}

static void v1_dirs_rollback(struct v1_dirs *d)
{
	struct cg_dir root = CG_DIR_INIT;
	struct error ignored;

	for (size_t i = 0; i < d->h->n_hier; i++) {
		cg_dir_close(&d->leaf[i]);
		if (d->root[i].fd >= 0)
			cg_rollback(&d->root[i], &d->made[i]);
	}
	if (d->v2_made.n && cg_open_mount(d->h->v2_mnt, true, &root,
					  &ignored) == 0)
		cg_rollback(&root, &d->v2_made);
	cg_dir_close(&root);
}

static bool hier_has(const char *ctrl, const void *ctx)
{
	const struct cg1_hier *hier = ctx;
	int c = ctrl ? cg1_ctrl_from_name(ctrl) : -1;

	return c >= 0 && (hier->ctrls & (1u << c));
}

/* The index of the hierarchy for c, -1 if not mounted. */
static int hier_index(const struct cg_host *h, enum cg1_ctrl c)
{
	for (size_t i = 0; i < h->n_hier; i++)
		if (h->hier[i].ctrls & (1u << c))
			return (int)i;
	return -1;
}

/* Where to read the processes from: pids, memory, or the first one. */
static size_t procs_hier(const struct cg_host *h)
{
	int i = hier_index(h, CG1_PIDS);

	if (i < 0)
		i = hier_index(h, CG1_MEMORY);
	return i < 0 ? 0 : (size_t)i;
}

static int open_hier(const struct cg_host *h, size_t i, const char *path,
		     struct cg_dir *root, struct cg_dir *leaf,
		     struct error *err)
{
	if (cg_open_mount(h->hier[i].mnt, false, root, err) < 0)
		return -1;
	if (cg_walk(root, path, false, NULL, NULL, leaf, NULL, err) < 0) {
		if (err->code == ENOENT)
			error_setc(err, ENOENT, "cgroup %s%s does not exist",
				   h->hier[i].mnt, path);
		return -1;
	}
	return 0;
}

/* cpuset refuses tasks while cpus or mems is empty, and a new cpuset
 * starts empty: give each one made here its parent's. */
struct cpuset_ctx {
	char *cpus, *mems;
};

static int cpuset_take(const struct cg_dir *d, const char *file, char **val,
		       struct error *err)
{
	_cleanup_free_ char *v = NULL;

	if (cg_read(d, file, &v, err) < 0)
		return -1;
	v[strcspn(v, "\n")] = '\0';
	if (!*v)
		return 0; /* empty: keep the parent's */
	free(*val);
	*val = take_ptr(v);
	return 0;
}

static int cpuset_level(const struct cg_dir *parent, const struct cg_dir *dir,
			bool made, bool leaf, void *ctx, struct error *err)
{
	struct cpuset_ctx *c = ctx;
	bool fill = made;

	(void)leaf;
	if (!made) {
		_cleanup_free_ char *cpus = NULL, *mems = NULL;

		if (cpuset_take(dir, "cpuset.cpus", &cpus, err) < 0 ||
		    cpuset_take(dir, "cpuset.mems", &mems, err) < 0)
			return -1;
		fill = parent && (!cpus || !mems);
		if (cpus) {
			free(c->cpus);
			c->cpus = take_ptr(cpus);
		}
		if (mems) {
			free(c->mems);
			c->mems = take_ptr(mems);
		}
	}
	if (!fill || !c->cpus || !c->mems)
		return 0;
	if (cg_write(dir, "cpuset.cpus", c->cpus, err) < 0 ||
	    cg_write(dir, "cpuset.mems", c->mems, err) < 0)
		return error_prefix(err, "initialise cpuset %s", dir->path);
	return 0;
}

static int check_v1_ctrls(const struct cg_host *h, const struct cg_settings *s,
			  struct error *err)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct cg_setting *it = &s->items[i];
		int c = it->ctrl ? cg1_ctrl_from_name(it->ctrl) : -1;

		if (c < 0 || !cg1_host_hier(h, (enum cg1_ctrl)c))
			return error_set(err,
					 "linux.resources.%s: the %s controller is not mounted on this host (no %s)",
					 it->field, it->ctrl ? it->ctrl : "?",
					 it->file);
	}
	return 0;
}

/* A directory that was there already must be empty (one check is enough:
 * the same processes are in every hierarchy). */
static int check_reusable(const struct cg_dir *leaf, struct error *err)
{
	_cleanup_free_ pid_t *pids = NULL;
	size_t n;

	if (cg_collect_pids(leaf, &pids, &n, err) < 0)
		return -1;
	if (n)
		return error_set(err,
				 "cgroup %s exists and has processes: refusing to share it",
				 leaf->path);
	return 0;
}

/* What each level of a hierarchy needs when it is made: cpuset's cpus and
 * mems, cpu's realtime budget (v1_rt.c). */
struct level_ctx {
	bool cpuset, rt;
	struct cpuset_ctx cs;
	struct cg1_rt budget;
};

static int hier_level(const struct cg_dir *parent, const struct cg_dir *dir,
		      bool made, bool leaf, void *ctx, struct error *err)
{
	struct level_ctx *l = ctx;

	if (l->cpuset && cpuset_level(parent, dir, made, leaf, &l->cs, err) < 0)
		return -1;
	if (l->rt && cg1_rt_level(parent, dir, made, leaf, &l->budget, err) < 0)
		return -1;
	return 0;
}

static int make_hier(struct v1_dirs *d, size_t i, const char *path,
		     const struct oci_resources *res, bool *checked, struct error *err)
{
	const struct cg1_hier *hier = &d->h->hier[i];
	const struct oci_cpu *cpu = res ? &res->cpu : NULL;
	struct level_ctx l = {
		.cpuset = hier->ctrls & (1u << CG1_CPUSET),
		.rt = cpu && (hier->ctrls & (1u << CG1_CPU)) && cpu->realtime_runtime.set &&
		      cpu->realtime_runtime.v > 0,
	};
	int ret;

	if (l.rt) {
		l.budget.runtime = cpu->realtime_runtime.v;
		l.budget.period = cpu->realtime_period.set ? cpu->realtime_period.v : 0;
	}
	if (cg_open_mount(hier->mnt, false, &d->root[i], err) < 0)
		return -1;
	ret = cg_walk(&d->root[i], path, true, l.cpuset || l.rt ? hier_level : NULL,
		      &l, &d->leaf[i], &d->made[i], err);
	free(l.cs.cpus);
	free(l.cs.mems);
	if (ret < 0)
		return -1;
	if (d->made[i].n == 0 && !*checked) {
		*checked = true;
		return check_reusable(&d->leaf[i], err);
	}
	return 0;
}

static int write_pid(const struct cg_dir *d, pid_t pid, struct error *err)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return cg_write(d, "cgroup.procs", buf, err);
}

/* ---- operations ------------------------------------------------------------- */

static int create_dirs(struct v1_dirs *d, const char *path,
		       const struct oci_resources *res,
		       const struct cg_settings *v1, const struct cg_settings *v2,
		       int *v2_leaf_fd, struct error *err)
{
	struct cg2_create_opts o = { .mnt = d->h->v2_mnt, .leaf_fd = v2_leaf_fd };
	bool checked = false;

	for (size_t i = 0; i < d->h->n_hier; i++) {
		if (make_hier(d, i, path, res, &checked, err) < 0 ||
		    cg_settings_apply(&d->leaf[i], v1, hier_has,
				      &d->h->hier[i], err) < 0)
			return -1;
	}
	if (d->h->mode == CGROUP_MODE_HYBRID)
		return cg2_create(&o, path, v2, NULL, 0, &d->v2_made, err);
	return 0;
}

/* Undo a partial entry so that the directories can go: out to the root
 * of each hierarchy (the caller kills the process anyway). */
static void move_out(struct v1_dirs *d, size_t entered, pid_t pid)
{
	struct error ignored;

	for (size_t i = 0; i < entered; i++)
		if (write_pid(&d->root[i], pid, &ignored) < 0)
			log_debug("cgroup: %s", ignored.msg);
}

_Static_assert(CG1_MAX_HIER <= CGROUP_BIRTH_MAX_TASKS, "a tasks file per hierarchy");

/* The leaf's tasks file in the hierarchy at mnt, for the new process to
 * write "0" into (cgroup.h). */
static int open_tasks(const struct cg_dir *leaf, const char *mnt,
		      struct cgroup_birth *b, struct error *err)
{
	int fd;

	if (b->n_tasks >= CGROUP_BIRTH_MAX_TASKS)
		return error_set(err, "cgroup %s: too many hierarchies", leaf->path);
	fd = openat(leaf->fd, "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return error_sys(err, "open %s/tasks", leaf->path);
	b->tasks_fd[b->n_tasks] = fd;
	b->tasks_mnt[b->n_tasks++] = mnt;
	return 0;
}

int cg1_create(const struct cg_host *h, const char *path,
	       const struct oci_resources *res, pid_t pid,
	       struct cgroup_birth *b, struct error *err)
{
	struct cg_settings v1 = { 0 }, v2 = { 0 };
	struct v1_dirs d;
	size_t entered = 0;
	int ret = -1;

	if (cg1_build_settings(res, false, h, &v1, &v2, err) < 0)
		return -1;
	v1_dirs_init(&d, h);
	if (check_v1_ctrls(h, &v1, err) < 0 ||
	    create_dirs(&d, path, res, &v1, &v2,
			b && h->mode == CGROUP_MODE_HYBRID ? &b->v2_fd : NULL, err) < 0)
		goto out;
	for (size_t i = 0; b && i < h->n_hier; i++)
		if (open_tasks(&d.leaf[i], h->hier[i].mnt, b, err) < 0)
			goto out;
	for (; pid > 0 && entered < h->n_hier; entered++)
		if (write_pid(&d.leaf[entered], pid, err) < 0)
			goto out;
	if (pid > 0 && h->mode == CGROUP_MODE_HYBRID &&
	    cg2_enter(h->v2_mnt, path, pid, err) < 0)
		goto out;
	ret = 0;
out:
	if (ret < 0) {
		if (b)
			cgroup_birth_close(b);
		move_out(&d, entered, pid);
		v1_dirs_rollback(&d);
	}
	v1_dirs_close(&d);
	cg_settings_free(&v1);
	cg_settings_free(&v2);
	return ret;
}

int cg1_enter(const struct cg_host *h, const char *path, pid_t pid,
	      struct error *err)
{
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

		if (open_hier(h, i, path, &root, &leaf, err) < 0 ||
		    write_pid(&leaf, pid, err) < 0)
			return -1;
	}
	if (h->mode == CGROUP_MODE_HYBRID)
		return cg2_enter(h->v2_mnt, path, pid, err);
	return 0;
}

int cg1_open_birth(const struct cg_host *h, const char *path,
		   struct cgroup_birth *b, struct error *err)
{
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

		if (open_hier(h, i, path, &root, &leaf, err) < 0 ||
		    open_tasks(&leaf, h->hier[i].mnt, b, err) < 0)
			goto fail;
	}
	if (h->mode == CGROUP_MODE_HYBRID &&
	    cg2_open_leaf_fd(h->v2_mnt, path, &b->v2_fd, err) < 0)
		goto fail;
	return 0;
fail:
	cgroup_birth_close(b);
	return -1;
}

int cg1_update(const struct cg_host *h, const char *path,
	       const struct oci_resources *res, struct error *err)
{
	struct cg_settings v1 = { 0 }, v2 = { 0 };
	int ret = -1;

	if (cg1_build_settings(res, true, h, &v1, &v2, err) < 0)
		return -1;
	if (check_v1_ctrls(h, &v1, err) < 0)
		goto out;
	for (size_t i = 0; i < h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
		bool any = false;

		for (size_t k = 0; k < v1.n; k++)
			any |= hier_has(v1.items[k].ctrl, &h->hier[i]);
		if (!any)
			continue;
		if (open_hier(h, i, path, &root, &leaf, err) < 0 ||
		    cg_settings_apply(&leaf, &v1, hier_has, &h->hier[i],
				      err) < 0)
			goto out;
	}
	if (v2.n > 0 && cg2_update(h->v2_mnt, path, &v2, NULL, err) < 0)
		goto out;
	ret = 0;
out:
	cg_settings_free(&v1);
	cg_settings_free(&v2);
	return ret;
}

/* ---- freezer ------------------------------------------------------------------ */

static int read_state(const struct cg_dir *d, char *buf, size_t len,
		      struct error *err)
{
	_cleanup_free_ char *v = NULL;

	if (cg_read(d, "freezer.state", &v, err) < 0)
		return -1;
	v[strcspn(v, "\n")] = '\0';
	snprintf(buf, len, "%s", v);
	return 0;
}

/* FREEZING can stall on a task busy forking: write the state again now
 * and then while polling. */
static int v1_dir_freeze(const struct cg_dir *d, bool freeze, struct error *err)
{
	const char *want = freeze ? "FROZEN" : "THAWED";
	long long deadline = cg_now_ms() + CG_FREEZE_TIMEOUT_MS;
	unsigned delay = 1;
	struct error undo;
	char state[32];

	for (int round = 0;; round++) {
		if (round % 25 == 0 && cg_write(d, "freezer.state", want, err) < 0)
			return -1;
		if (read_state(d, state, sizeof(state), err) < 0)
			return -1;
		if (strcmp(state, want) == 0)
			return 0;
		if (cg_now_ms() >= deadline)
			break;
		cg_sleep_ms(delay);
		if (delay < 10)
			delay *= 2;
	}
	if (freeze && cg_write(d, "freezer.state", "THAWED", &undo) < 0)
		log_warn("cgroup: thaw after a failed freeze: %s", undo.msg);
	return error_setc(err, ETIMEDOUT, "%s/freezer.state: still %s after %d ms",
			  d->path, state, CG_FREEZE_TIMEOUT_MS);
}

static int v1_dir_is_frozen(const struct cg_dir *d, bool *frozen,
			    struct error *err)
{
	char state[32];

	if (read_state(d, state, sizeof(state), err) < 0)
		return -1;
	*frozen = strcmp(state, "FROZEN") == 0;
	return 0;
}

int cg1_freeze(const struct cg_host *h, const char *path, bool freeze,
	       struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	int i = hier_index(h, CG1_FREEZER);

	if (i < 0 && h->mode == CGROUP_MODE_HYBRID)
		return cg2_freeze(h->v2_mnt, path, freeze, err);
	if (i < 0)
		return error_set(err, "pause/resume: the freezer controller is not mounted on this host");
	if (open_hier(h, (size_t)i, path, &root, &leaf, err) < 0)
		return -1;
	return v1_dir_freeze(&leaf, freeze, err);
}

int cg1_is_frozen(const struct cg_host *h, const char *path, bool *frozen,
		  struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	int i = hier_index(h, CG1_FREEZER);

	if (i < 0 && h->mode == CGROUP_MODE_HYBRID)
		return cg2_is_frozen(h->v2_mnt, path, frozen, err);
	*frozen = false;
	if (i < 0)
		return 0;
	if (open_hier(h, (size_t)i, path, &root, &leaf, err) < 0)
		return -1;
	return v1_dir_is_frozen(&leaf, frozen, err);
}

/* ---- kill, pids, destroy ------------------------------------------------------ */

/* Signal through the processes hierarchy, frozen meanwhile by the v1
 * freezer when mounted.  On a hybrid host SIGKILL goes first through the
 * cgroup2 side's cgroup.kill, which no fork escapes. */
static int v1_signal(const struct cg_host *h, const char *path, int sig,
		     bool missing_ok, struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir froot = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir fleaf = CG_DIR_INIT;
	struct cg_freezer fz = { v1_dir_freeze, v1_dir_is_frozen, NULL };
	int fi = hier_index(h, CG1_FREEZER);
	struct error ignored;

	if (open_hier(h, procs_hier(h), path, &root, &leaf, err) < 0)
		return missing_ok && err->code == ENOENT ? 0 : -1;
	if (sig == SIGKILL && h->mode == CGROUP_MODE_HYBRID &&
	    cg2_kill(h->v2_mnt, path, SIGKILL, &ignored) < 0)
		log_debug("cgroup: %s", ignored.msg);
	if (fi >= 0 && open_hier(h, (size_t)fi, path, &froot, &fleaf, &ignored) == 0)
		fz.dir = &fleaf;
	return cg_signal_all(&leaf, sig, &fz, err);
}

int cg1_kill(const struct cg_host *h, const char *path, int sig,
	     struct error *err)
{
	return v1_signal(h, path, sig, false, err);
}

int cg1_pids(const struct cg_host *h, const char *path, pid_t **pids,
	     size_t *n, struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

	if (open_hier(h, procs_hier(h), path, &root, &leaf, err) < 0)
		return -1;
	return cg_collect_pids(&leaf, pids, n, err);
}

static int v1_empty(const struct cg_host *h, const char *path, bool force,
		    struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n;

	if (force && v1_signal(h, path, SIGKILL, true, err) < 0)
		return -1;
	if (open_hier(h, procs_hier(h), path, &root, &leaf, err) < 0)
		return err->code == ENOENT ? 0 : -1;
	if (force)
		return cg_wait_empty(&leaf, CG_EMPTY_TIMEOUT_MS, err);
	if (cg_collect_pids(&leaf, &pids, &n, err) < 0)
		return -1;
	if (n)
		return error_setc(err, EBUSY, "cgroup %s still has %zu process(es)",
				  leaf.path, n);
	return 0;
}

/* Every hierarchy is tried; the first failure is reported. */
int cg1_destroy(const struct cg_host *h, const char *path, bool force,
		struct error *err)
{
	struct error e;
	int ret = 0;

	if (v1_empty(h, path, force, err) < 0)
		return -1;
	for (size_t i = 0; i <= h->n_hier; i++) {
		_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
		bool unified = i == h->n_hier;

		if (unified && h->mode != CGROUP_MODE_HYBRID)
			break;
		if (cg_open_mount(unified ? h->v2_mnt : h->hier[i].mnt, unified,
				  &root, &e) < 0 ||
		    cg_remove_tree(&root, path, &e) < 0) {
			if (ret == 0)
				*err = e;
			ret = -1;
		}
	}
	return ret;
}
