/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2: linux.resources mapped to unified-hierarchy files, and the
 * operations on one cgroup2 hierarchy (the whole host on a pure v2 host, or
 * the cgroup2 side of a hybrid one).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

/* Every controller a pure v2 container cgroup gets, whether limited or not
 * (stats, a later update). */
static const char *const v2_known_ctrls[] = {
	"cpuset",
	"cpu",
	"io",
	"memory",
	"hugetlb",
	"pids",
	"rdma",
	"misc",
};

/* Core files a "unified" key may set; the others (cgroup.procs,
 * cgroup.kill, cgroup.freeze, cgroup.subtree_control, ...) belong to the
 * runtime. */
static const char *const v2_unified_core_ok[] = {
	"cgroup.max.depth",
	"cgroup.max.descendants",
	"cgroup.pressure",
};

uint64_t cg2_cpu_weight(uint64_t shares)
{
	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t cg2_io_weight(uint64_t w)
{
	if (w < 10)
		return 1;
	if (w > 1000)
		w = 1000;
	return 1 + ((w - 10) * 9999) / 990;
}

/* ---- settings: memory ----------------------------------------------------- */

static int v2_swap(const struct oci_memory *m, struct cg_settings *out,
		   struct error *err)
{
	int64_t limit = m->limit.set ? m->limit.v : 0;
	int64_t swap = m->swap.set ? m->swap.v : 0;

	/* As on v1: an unlimited memory with no swap given means both. */
	if (limit == -1 && swap == 0)
		swap = -1;
	if (swap == 0)
		return 0;
	if (swap == -1) {
		cg_settings_add(out, "memory.swap", "memory", CG_SET_OPTIONAL,
				"memory.swap.max", "max");
		return 0;
	}
	if (swap < -1)
		return error_set(err, "linux.resources.memory.swap: invalid value %" PRId64,
				 swap);
	if (limit <= 0)
		return error_set(err,
				 "linux.resources.memory.swap: %" PRId64 " needs a memory.limit on cgroup v2 (swap is memory+swap, as on v1)",
				 swap);
	if (swap < limit)
		return error_set(err,
				 "linux.resources.memory.swap: %" PRId64 " is below memory.limit %" PRId64 " (swap counts memory+swap)",
				 swap, limit);
	/* v2 limits swap alone. */
	cg_settings_add(out, "memory.swap", "memory",
			swap == limit ? CG_SET_OPTIONAL : 0, "memory.swap.max",
			"%" PRId64, swap - limit);
	return 0;
}

static int v2_mem_value(const char *field, int64_t v, char *buf, size_t len,
			struct error *err)
{
	if (v < -1)
		return error_set(err, "linux.resources.%s: invalid value %" PRId64,
				 field, v);
	if (v == -1)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRId64, v);
	return 0;
}

static void v2_mem_ignored(const struct oci_memory *m)
{
	if (m->kernel.set)
		log_warn("linux.resources.memory.kernel is deprecated and ignored (kernel memory is part of memory.max on cgroup v2)");
	if (m->kernel_tcp.set && !(m->limit.set && m->kernel_tcp.v == m->limit.v))
		log_warn("linux.resources.memory.kernelTCP is ignored on cgroup v2 (TCP buffers are part of memory.max)");
	if (m->swappiness.set && m->swappiness.v != UINT64_MAX)
		log_warn("linux.resources.memory.swappiness is ignored: cgroup v2 has no per-cgroup swappiness");
}

static int v2_memory(const struct oci_resources *res, bool update,
		     struct cg_settings *out, struct error *err)
{
	const struct oci_memory *m = &res->memory;
	char val[32];

	if (!res->has_memory)
		return 0;
	if (m->disable_oom_killer.set && m->disable_oom_killer.v)
		return error_set(err,
				 "linux.resources.memory.disableOOMKiller: not supported on cgroup v2 (no memory.oom_control)");
	if (m->use_hierarchy.set && !m->use_hierarchy.v)
		return error_set(err,
				 "linux.resources.memory.useHierarchy=false: accounting is always hierarchical on cgroup v2");
	v2_mem_ignored(m);
	if (v2_swap(m, out, err) < 0)
		return -1;
	if (m->limit.set && m->limit.v != 0) {
		if (v2_mem_value("memory.limit", m->limit.v, val, sizeof(val),
				 err) < 0)
			return -1;
		cg_settings_add(out, "memory.limit", "memory", 0, "memory.max",
				"%s", val);
		/* A new cgroup has no usage to check. */
		if (update && m->check_before_update.set &&
		    m->check_before_update.v)
			out->items[out->n - 1].usage_file = "memory.current";
	}
	if (m->reservation.set && m->reservation.v != 0) {
		if (v2_mem_value("memory.reservation", m->reservation.v, val,
				 sizeof(val), err) < 0)
			return -1;
		cg_settings_add(out, "memory.reservation", "memory", 0,
				"memory.low", "%s", val);
	}
	return 0;
}

/* ---- settings: cpu, cpuset, pids ------------------------------------------ */

static int v2_cpu_max(const struct oci_cpu *c, struct cg_settings *out,
		      struct error *err)
{
	bool quota = c->quota.set && c->quota.v != 0;
	bool period = c->period.set && c->period.v != 0;
	char q[32];

	if (!quota && !period)
		return 0;
	if (quota && c->quota.v < -1)
		return error_set(err, "linux.resources.cpu.quota: invalid value %" PRId64,
				 c->quota.v);
	if (!quota) {
		cg_settings_add(out, "cpu.period", "cpu", CG_SET_KEEP_QUOTA,
				"cpu.max", "%" PRIu64, c->period.v);
		return 0;
	}
	if (c->quota.v == -1)
		snprintf(q, sizeof(q), "max");
	else
		snprintf(q, sizeof(q), "%" PRId64, c->quota.v);
	if (period)
		cg_settings_add(out, "cpu.quota", "cpu", 0, "cpu.max",
				"%s %" PRIu64, q, c->period.v);
	else
		cg_settings_add(out, "cpu.quota", "cpu", 0, "cpu.max", "%s", q);
	return 0;
}

static int v2_cpu(const struct oci_resources *res, struct cg_settings *out,
		  struct error *err)
{
	const struct oci_cpu *c = &res->cpu;
	bool idle_first = c->idle.set && c->idle.v == 0;

	if (!res->has_cpu)
		return 0;
	if ((c->realtime_runtime.set && c->realtime_runtime.v != 0) ||
	    (c->realtime_period.set && c->realtime_period.v != 0))
		return error_set(err,
				 "linux.resources.cpu.realtimeRuntime/realtimePeriod: not supported on cgroup v2 (no cpu.rt_* files)");
	if (c->idle.set && c->idle.v != 0 && c->idle.v != 1)
		return error_set(err,
				 "linux.resources.cpu.idle: must be 0 or 1, not %" PRId64,
				 c->idle.v);
	if (c->burst.set && c->quota.set && c->quota.v > 0 &&
	    c->burst.v > (uint64_t)c->quota.v)
		return error_set(err,
				 "linux.resources.cpu.burst: %" PRIu64 " is larger than quota %" PRId64,
				 c->burst.v, c->quota.v);
	/* A SCHED_IDLE group refuses a weight: order the two. */
	if (idle_first)
		cg_settings_add(out, "cpu.idle", "cpu", 0, "cpu.idle", "0");
	if (c->shares.set && c->shares.v != 0)
		cg_settings_add(out, "cpu.shares", "cpu", 0, "cpu.weight",
				"%" PRIu64, cg2_cpu_weight(c->shares.v));
	if (c->idle.set && !idle_first)
		cg_settings_add(out, "cpu.idle", "cpu", 0, "cpu.idle", "1");
	/* burst <= quota at every step: burst first, again after cpu.max if
	 * the old quota was too small for it. */
	if (c->burst.set)
		cg_settings_add(out, "cpu.burst", "cpu", CG_SET_RETRY,
				"cpu.max.burst", "%" PRIu64, c->burst.v);
	if (v2_cpu_max(c, out, err) < 0)
		return -1;
	return cg_add_cpuset(c, out, err);
}

/* ---- settings: io ------------------------------------------------------------ */

/* BFQ's weight if the host has BFQ, else io.weight (its own scale). */
static void v2_weight_pair(struct cg_settings *out, const char *field,
			   const char *dev, uint64_t w)
{
	cg_settings_add(out, field, "io", CG_SET_OPTIONAL, "io.bfq.weight",
			"%s%" PRIu64, dev, w);
	cg_settings_add(out, field, "io", CG_SET_ALT, "io.weight",
			"%s%" PRIu64, dev, cg2_io_weight(w));
}

/* io.max takes one line per device with all four limits. */
struct io_dev {
	int64_t major, minor;
	char rate[4][24]; /* rbps, wbps, riops, wiops; "" when not given */
};

static struct io_dev *io_dev_get(struct io_dev **v, size_t *n, int64_t major,
				 int64_t minor)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].major == major && (*v)[i].minor == minor)
			return &(*v)[i];
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].major = major;
	(*v)[*n].minor = minor;
	return &(*v)[(*n)++];
}

static void v2_io_max(const struct oci_blkio *b, struct cg_settings *out)
{
	static const char *const keys[4] = { "rbps", "wbps", "riops", "wiops" };
	const struct oci_blkio_throttle *lists[4] = {
		b->throttle_read_bps, b->throttle_write_bps,
		b->throttle_read_iops, b->throttle_write_iops
	};
	const size_t counts[4] = { b->n_throttle_read_bps,
				   b->n_throttle_write_bps,
				   b->n_throttle_read_iops,
				   b->n_throttle_write_iops };
	_cleanup_free_ struct io_dev *devs = NULL;
	size_t ndev = 0;

	for (int k = 0; k < 4; k++)
		for (size_t i = 0; i < counts[k]; i++) {
			const struct oci_blkio_throttle *t = &lists[k][i];
			struct io_dev *d = io_dev_get(&devs, &ndev, t->major,
						      t->minor);

			/* 0 lifts the limit, as it does on v1. */
			if (t->rate == 0)
				snprintf(d->rate[k], sizeof(d->rate[k]), "max");
			else
				snprintf(d->rate[k], sizeof(d->rate[k]),
					 "%" PRIu64, t->rate);
		}
	for (size_t i = 0; i < ndev; i++) {
		char line[160];
		int n = snprintf(line, sizeof(line), "%" PRId64 ":%" PRId64,
				 devs[i].major, devs[i].minor);

		for (int k = 0; k < 4; k++)
			if (devs[i].rate[k][0])
				n += snprintf(line + n, sizeof(line) - n,
					      " %s=%s", keys[k], devs[i].rate[k]);
		cg_settings_add(out, "blockIO.throttle*", "io", 0, "io.max",
				"%s", line);
	}
}

static int v2_io(const struct oci_resources *res, struct cg_settings *out,
		 struct error *err)
{
	const struct oci_blkio *b = &res->block_io;

	if (!res->has_block_io)
		return 0;
	if (b->leaf_weight.set && b->leaf_weight.v != 0)
		return error_set(err,
				 "linux.resources.blockIO.leafWeight: not supported on cgroup v2");
	if (b->weight.set && b->weight.v != 0) {
		if (b->weight.v > 1000)
			return error_set(err,
					 "linux.resources.blockIO.weight: %" PRIu64 " is out of range 1..1000",
					 b->weight.v);
		v2_weight_pair(out, "blockIO.weight", "", b->weight.v);
	}
	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct oci_blkio_weight_device *wd = &b->weight_device[i];
		char dev[48];

		if (wd->leaf_weight.set && wd->leaf_weight.v != 0)
			return error_set(err,
					 "linux.resources.blockIO.weightDevice[%zu].leafWeight: not supported on cgroup v2",
					 i);
		if (!wd->weight.set)
			continue;
		if (wd->weight.v == 0 || wd->weight.v > 1000)
			return error_set(err,
					 "linux.resources.blockIO.weightDevice[%zu].weight: %" PRIu64 " is out of range 1..1000",
					 i, wd->weight.v);
		snprintf(dev, sizeof(dev), "%" PRId64 ":%" PRId64 " ", wd->major,
			 wd->minor);
		v2_weight_pair(out, "blockIO.weightDevice", dev, wd->weight.v);
	}
	v2_io_max(b, out);
	return 0;
}

/* ---- settings: hugetlb, rdma, network, unified ------------------------------ */

int cg2_add_hugetlb(const struct oci_resources *res, struct cg_settings *out,
		    struct error *err)
{
	for (size_t i = 0; i < res->n_hugepage_limits; i++) {
		const struct oci_hugepage_limit *l = &res->hugepage_limits[i];
		_cleanup_free_ char *max = NULL, *rsvd = NULL;

		if (!l->page_size || cg_check_page_size(l->page_size, err) < 0)
			return -1;
		max = xasprintf("hugetlb.%s.max", l->page_size);
		rsvd = xasprintf("hugetlb.%s.rsvd.max", l->page_size);
		cg_settings_add(out, "hugepageLimits", "hugetlb", 0, max,
				"%" PRIu64, l->limit);
		/* Reservations too, where the kernel accounts them. */
		cg_settings_add(out, "hugepageLimits", "hugetlb",
				CG_SET_OPTIONAL, rsvd, "%" PRIu64, l->limit);
	}
	return 0;
}

int cg_add_rdma(const struct oci_resources *res, struct cg_settings *out,
		struct error *err)
{
	for (size_t i = 0; i < res->n_rdma; i++) {
		const struct oci_rdma *r = &res->rdma[i];
		char h[40] = "", o[40] = "";

		if (!r->device || !*r->device ||
		    strcspn(r->device, " \t\n/=") != strlen(r->device))
			return error_set(err,
					 "linux.resources.rdma: invalid device name \"%s\"",
					 r->device ? r->device : "");
		if (!r->hca_handles.set && !r->hca_objects.set)
			return error_set(err,
					 "linux.resources.rdma.%s: neither hcaHandles nor hcaObjects",
					 r->device);
		if (r->hca_handles.set)
			snprintf(h, sizeof(h), " hca_handle=%" PRIu64,
				 r->hca_handles.v);
		if (r->hca_objects.set)
			snprintf(o, sizeof(o), " hca_object=%" PRIu64,
				 r->hca_objects.v);
		cg_settings_add(out, "rdma", "rdma", 0, "rdma.max", "%s%s%s",
				r->device, h, o);
	}
	return 0;
}

static bool unified_core_ok(const char *key)
{
	for (size_t i = 0; i < sizeof(v2_unified_core_ok) / sizeof(*v2_unified_core_ok); i++)
		if (strcmp(key, v2_unified_core_ok[i]) == 0)
			return true;
	return false;
}

int cg2_add_unified(const struct oci_resources *res, struct cg_settings *out,
		    struct error *err)
{
	const struct str_map *u = &res->unified;

	for (size_t i = 0; i < u->len; i++) {
		const char *key = u->keys[i], *dot = strchr(key, '.');
		_cleanup_free_ char *ctrl = NULL;

		if (!*key || strchr(key, '/') || strcmp(key, "..") == 0 ||
		    !dot || dot == key || !dot[1] ||
		    strcspn(key, " \t\n") != strlen(key))
			return error_set(err,
					 "linux.resources.unified: invalid key \"%s\"",
					 key);
		ctrl = xstrndup(key, (size_t)(dot - key));
		if (strcmp(ctrl, "cgroup") == 0) {
			if (!unified_core_ok(key))
				return error_set(err,
						 "linux.resources.unified: %s is managed by the runtime and may not be set",
						 key);
			cg_settings_add(out, "unified", NULL, CG_SET_MULTILINE,
					key, "%s", u->values[i]);
			continue;
		}
		cg_settings_add(out, "unified", ctrl, CG_SET_MULTILINE, key, "%s",
				u->values[i]);
	}
	return 0;
}

int cg2_build_settings(const struct oci_resources *res, bool update,
		       struct cg_settings *out, struct error *err)
{
	if (!res || !res->present)
		return 0;
	if (res->has_network &&
	    ((res->network.class_id.set && res->network.class_id.v != 0) ||
	     res->network.n_priorities > 0))
		return error_set(err,
				 "linux.resources.network: net_cls/net_prio are cgroup v1 controllers, not available on cgroup v2");
	if (v2_memory(res, update, out, err) < 0 || v2_cpu(res, out, err) < 0)
		goto fail;
	cg_add_pids(res, out);
	if (v2_io(res, out, err) < 0 || cg2_add_hugetlb(res, out, err) < 0 ||
	    cg_add_rdma(res, out, err) < 0 || cg2_add_unified(res, out, err) < 0)
		goto fail;
	return 0;
fail:
	cg_settings_free(out);
	return -1;
}

/* ---- operations on a cgroup2 hierarchy ------------------------------------- */

static bool set_needs(const struct cg_settings *set, const char *ctrl)
{
	for (size_t i = 0; set && i < set->n; i++)
		if (set->items[i].ctrl && strcmp(set->items[i].ctrl, ctrl) == 0)
			return true;
	return false;
}

struct enable_ctx {
	const struct cg_settings *set;
	bool all;
	bool leaf_made;
};

/* "+a +b" for the controllers of interest that the parent offers and has
 * not enabled yet (on: its cgroup.subtree_control): nothing is written for
 * those, which a delegated (rootless) caller could not do above its own
 * subtree, and which costs a write each otherwise. */
static char *enable_list(const char *avail, const char *on, const struct enable_ctx *c)
{
	size_t cap = 16, n = 0;
	char *buf = xmalloc(cap);

	buf[0] = '\0';
	for (const char *p = avail; *p;) {
		_cleanup_free_ char *word = NULL;
		size_t len;

		p += strspn(p, " \n");
		len = strcspn(p, " \n");
		if (!len)
			break;
		word = xstrndup(p, len);
		p += len;
		if (on && cg_word_in(on, word))
			continue;
		if (!set_needs(c->set, word)) {
			bool known = false;

			for (size_t i = 0; c->all && i < sizeof(v2_known_ctrls) /
								     sizeof(*v2_known_ctrls);
			     i++)
				known |= strcmp(word, v2_known_ctrls[i]) == 0;
			if (!known)
				continue;
		}
		while (n + len + 3 > cap)
			buf = xrealloc(buf, cap *= 2);
		n += (size_t)sprintf(buf + n, "%s+%s", n ? " " : "", word);
	}
	return buf;
}

/* All at once (one write); controller by controller when that fails, where
 * only those a setting needs must succeed (an ancestor with processes
 * refuses, for one). */
static int enable_each(const struct cg_dir *dir, char *list,
		       const struct cg_settings *set, struct error *err)
{
	char *save = NULL;

	for (char *w = strtok_r(list, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		if (cg_write(dir, "cgroup.subtree_control", w, err) == 0)
			continue;
		if (set_needs(set, w + 1))
			return error_prefix(err, "enable the %s controller",
					    w + 1);
		log_debug("cgroup: %s", err->msg);
	}
	return 0;
}

static int enable_level(const struct cg_dir *parent, const struct cg_dir *dir,
			bool made, bool leaf, void *ctx, struct error *err)
{
	struct enable_ctx *c = ctx;
	_cleanup_free_ char *avail = NULL, *on = NULL, *list = NULL;
	struct error ignored;

	(void)parent;
	if (leaf) {
		c->leaf_made = made;
		return 0;
	}
	if (!c->all && (!c->set || c->set->n == 0))
		return 0;
	if (cg_read(dir, "cgroup.controllers", &avail, err) < 0)
		return -1;
	if (cg_read(dir, "cgroup.subtree_control", &on, &ignored) == 0)
		on[strcspn(on, "\n")] = '\0';
	list = enable_list(avail, on, c);
	if (!*list || cg_write(dir, "cgroup.subtree_control", list, err) == 0)
		return 0;
	return enable_each(dir, list, c->set, err);
}

static int check_ctrls(const struct cg_dir *leaf, const struct cg_settings *set,
		       struct error *err)
{
	_cleanup_free_ char *avail = NULL;

	if (!set || set->n == 0)
		return 0;
	if (cg_read(leaf, "cgroup.controllers", &avail, err) < 0)
		return -1;
	avail[strcspn(avail, "\n")] = '\0';
	for (size_t i = 0; i < set->n; i++) {
		const struct cg_setting *it = &set->items[i];

		if (it->ctrl && !cg_word_in(avail, it->ctrl))
			return error_set(err,
					 "linux.resources.%s (%s): the %s controller is not available in %s (cgroup.controllers: \"%s\")",
					 it->field, it->file, it->ctrl,
					 leaf->path, avail);
	}
	return 0;
}

/* A cgroup that was there already must be empty and not frozen. */
static int check_reusable(const struct cg_dir *leaf, struct error *err)
{
	long long populated = 0, frozen = 0;

	if (cg_read_keyed(leaf, "cgroup.events", "populated", &populated,
			  err) < 0)
		return -1;
	if (populated)
		return error_set(err,
				 "cgroup %s exists and has processes: refusing to share it",
				 leaf->path);
	if (cg_read_keyed(leaf, "cgroup.events", "frozen", &frozen, err) == 0 &&
	    frozen)
		return error_set(err, "cgroup %s exists and is frozen",
				 leaf->path);
	return 0;
}

static int write_pid(const struct cg_dir *d, pid_t pid, struct error *err)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return cg_write(d, "cgroup.procs", buf, err);
}

static int open_leaf(const char *mnt, const char *path, struct cg_dir *root,
		     struct cg_dir *leaf, cg_level_fn fn, void *ctx,
		     struct error *err)
{
	if (cg_open_mount(mnt, true, root, err) < 0)
		return -1;
	if (cg_walk(root, path, false, fn, ctx, leaf, NULL, err) < 0) {
		if (err->code == ENOENT)
			error_setc(err, ENOENT, "cgroup %s%s does not exist",
				   mnt, path);
		return -1;
	}
	return 0;
}

int cg2_create(const struct cg2_create_opts *o, const char *path,
	       const struct cg_settings *set,
	       const struct oci_resources *res, pid_t pid, struct cg_made *made,
	       struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	struct enable_ctx ectx = { .set = set, .all = o->all_ctrls };
	struct cg_made mine = { .n = 0 };

	if (cg_open_mount(o->mnt, true, &root, err) < 0)
		return -1;
	if (cg_walk(&root, path, true, enable_level, &ectx, &leaf, &mine,
		    err) < 0)
		goto fail;
	if (!ectx.leaf_made && check_reusable(&leaf, err) < 0)
		goto fail;
	if (check_ctrls(&leaf, set, err) < 0 ||
	    cg_settings_apply(&leaf, set, NULL, NULL, err) < 0)
		goto fail;
	if (o->devices && cg_devices_apply(&leaf, res ? res->devices : NULL,
					   res ? res->n_devices : 0, err) < 0)
		goto fail;
	if (pid > 0 && write_pid(&leaf, pid, err) < 0)
		goto fail;
	if (made)
		*made = mine;
	else
		cg_made_free(&mine);
	if (o->leaf_fd)
		*o->leaf_fd = take_fd(leaf.fd);
	return 0;
fail:
	cg_dir_close(&leaf);
	cg_rollback(&root, &mine);
	return -1;
}

int cg2_enter(const char *mnt, const char *path, pid_t pid, struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return -1;
	return write_pid(&leaf, pid, err);
}

int cg2_dir_enter(int leaf_fd, const char *path, pid_t pid, struct error *err)
{
	struct cg_dir d = { .fd = leaf_fd, .path = (char *)path };

	return write_pid(&d, pid, err);
}

int cg2_open_leaf_fd(const char *mnt, const char *path, int *fd,
		     struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return -1;
	*fd = take_fd(leaf.fd);
	return 0;
}

/* Until 42a11bf5c543 (Linux 6.3; in the 6.1.y and 6.2.y stable kernels
 * since April 2023) a process born in a cgroup by CLONE_INTO_CGROUP kept
 * its parent's CPU and memory-node masks instead of the cgroup's cpuset.
 * On a kernel older than 6.1, a cgroup with cpus or mems of its own gets
 * its process by migration (cgroup.procs), which applies them. */
bool cg2_born_in_keeps_cpuset(int leaf_fd)
{
	struct cg_dir d = { .fd = leaf_fd, .path = (char *)"(container cgroup)" };
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	struct error ignored;

	if (!cg_kernel_older_than(6, 1))
		return true;
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *v = NULL;

		if (cg_read(&d, files[i], &v, &ignored) == 0 && v[strspn(v, " \n")])
			return false;
	}
	return true;
}

int cg2_update(const char *mnt, const char *path, const struct cg_settings *set,
	       const struct oci_resources *res, struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	struct enable_ctx ectx = { .set = set, .all = false };

	if (open_leaf(mnt, path, &root, &leaf, enable_level, &ectx, err) < 0)
		return -1;
	if (check_ctrls(&leaf, set, err) < 0 ||
	    cg_settings_apply(&leaf, set, NULL, NULL, err) < 0)
		return -1;
	if (res && res->n_devices > 0)
		return cg_devices_apply(&leaf, res->devices, res->n_devices,
					err);
	return 0;
}

/* Wait for "key want" in cgroup.events; the kernel flags the file for
 * poll(POLLPRI) on every change, the short poll bound covers a missed one. */
static int wait_event(const struct cg_dir *d, const char *key, long long want,
		      int timeout_ms, struct error *err)
{
	_cleanup_close_ int fd = openat(d->fd, "cgroup.events",
					O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	long long deadline = cg_now_ms() + timeout_ms;
	size_t klen = strlen(key);

	if (fd < 0)
		return error_sys(err, "open %s/cgroup.events", d->path);
	for (;;) {
		char buf[512];
		ssize_t r = pread(fd, buf, sizeof(buf) - 1, 0);
		long long left = deadline - cg_now_ms();
		struct pollfd p = { .fd = fd, .events = POLLPRI };

		if (r < 0)
			return error_sys(err, "read %s/cgroup.events", d->path);
		buf[r] = '\0';
		for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (strncmp(l, key, klen) == 0 && l[klen] == ' ' &&
			    strtoll(l + klen + 1, NULL, 10) == want)
				return 0;
		if (left <= 0)
			return error_setc(err, ETIMEDOUT,
					  "%s: no \"%s %lld\" in cgroup.events after %d ms",
					  d->path, key, want, timeout_ms);
		if (poll(&p, 1, left < 50 ? (int)left : 50) < 0 && errno != EINTR)
			return error_sys(err, "poll %s/cgroup.events", d->path);
	}
}

int cg2_dir_freeze(const struct cg_dir *d, bool freeze, struct error *err)
{
	struct error undo;

	if (cg_write(d, "cgroup.freeze", freeze ? "1" : "0", err) < 0)
		return -1;
	if (wait_event(d, "frozen", freeze, CG_FREEZE_TIMEOUT_MS, err) == 0)
		return 0;
	/* Not left half frozen. */
	if (freeze && cg_write(d, "cgroup.freeze", "0", &undo) < 0)
		log_warn("cgroup: thaw after a failed freeze: %s", undo.msg);
	return -1;
}

int cg2_dir_is_frozen(const struct cg_dir *d, bool *frozen, struct error *err)
{
	long long v;

	if (cg_read_keyed(d, "cgroup.events", "frozen", &v, err) < 0)
		return -1;
	*frozen = v != 0;
	return 0;
}

int cg2_kill(const char *mnt, const char *path, int sig, struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	struct cg_freezer fz = { cg2_dir_freeze, cg2_dir_is_frozen, NULL };

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return -1;
	/* cgroup.kill: the kernel kills the subtree, forks included. */
	if (sig == SIGKILL && cg_exists(&leaf, "cgroup.kill"))
		return cg_write(&leaf, "cgroup.kill", "1", err);
	fz.dir = &leaf;
	return cg_signal_all(&leaf, sig, &fz, err);
}

int cg2_pids(const char *mnt, const char *path, pid_t **pids, size_t *n,
	     struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return -1;
	return cg_collect_pids(&leaf, pids, n, err);
}

int cg2_freeze(const char *mnt, const char *path, bool freeze,
	       struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return -1;
	return cg2_dir_freeze(&leaf, freeze, err);
}

int cg2_is_frozen(const char *mnt, const char *path, bool *frozen,
		  struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return -1;
	return cg2_dir_is_frozen(&leaf, frozen, err);
}

static int empty_out(const struct cg_dir *leaf, struct error *err)
{
	struct cg_freezer fz = { cg2_dir_freeze, cg2_dir_is_frozen, leaf };
	long long populated = 1;

	/* Empty already (after `run`: the init reaped): nothing to kill. */
	if (cg_read_keyed(leaf, "cgroup.events", "populated", &populated, err) == 0 &&
	    !populated)
		return 0;
	if (cg_exists(leaf, "cgroup.kill")) {
		if (cg_write(leaf, "cgroup.kill", "1", err) < 0)
			return -1;
	} else if (cg_signal_all(leaf, SIGKILL, &fz, err) < 0) {
		return -1;
	}
	return wait_event(leaf, "populated", 0, CG_EMPTY_TIMEOUT_MS, err);
}

int cg2_destroy(const char *mnt, const char *path, bool force,
		struct error *err)
{
	_cleanup_cg_dir_ struct cg_dir root = CG_DIR_INIT;
	_cleanup_cg_dir_ struct cg_dir leaf = CG_DIR_INIT;
	long long populated = 0;

	if (open_leaf(mnt, path, &root, &leaf, NULL, NULL, err) < 0)
		return err->code == ENOENT ? 0 : -1;
	if (force) {
		if (empty_out(&leaf, err) < 0)
			return -1;
	} else if (cg_read_keyed(&leaf, "cgroup.events", "populated",
				 &populated, err) < 0) {
		return -1;
	} else if (populated) {
		return error_setc(err, EBUSY, "cgroup %s still has processes",
				  leaf.path);
	}
	cg_dir_close(&leaf);
	return cg_remove_tree(&root, path, err);
}
