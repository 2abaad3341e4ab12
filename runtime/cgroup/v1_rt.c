/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The realtime budget on a cgroup v1 host with RT group scheduling.  A
 * cgroup's cpu.rt_runtime_us is carved out of its parent's, and a new
 * cgroup starts with 0: a container that asks for a realtime budget
 * (linux.resources.cpu.realtimeRuntime, which process.scheduler SCHED_FIFO
 * and SCHED_RR need there) gets it only if every level above it has one.
 * The levels agentsbx made for it, and its own CGROUP_DEFAULT_PARENT, get
 * what their children hold plus the new container's share, top-down (a
 * parent before its child, as the kernel requires).  A level someone else
 * made is left as it is: its owner decides, and the kernel's EINVAL then
 * says so.
 */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"

#define RT_DEFAULT_PERIOD 1000000

static int rt_read_at(int dirfd, const char *dir, const char *file, int64_t *v,
		      struct error *err)
{
	struct cg_dir d = { .fd = dirfd, .path = (char *)dir };
	_cleanup_free_ char *text = NULL;

	if (cg_read(&d, file, &text, err) < 0)
		return -1;
	*v = strtoll(text, NULL, 10);
	return 0;
}

/* runtime/period scaled to period p, rounded up. */
static uint64_t share_of(uint64_t runtime, uint64_t period, uint64_t p)
{
	return period ? (runtime * p + period - 1) / period : 0;
}

/* What the child cgroups of d already hold, in d's period. */
static int children_share(const struct cg_dir *d, uint64_t p, uint64_t *sum,
			  struct error *err)
{
	int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir;
	struct dirent *e;
	int ret = 0;

	if (fd < 0)
		return error_sys(err, "open %s", d->path);
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return error_sys(err, "read %s", d->path);
	}
	*sum = 0;
	while (ret == 0 && (e = readdir(dir))) {
		_cleanup_close_ int cfd = -1;
		_cleanup_free_ char *cpath = NULL;
		int64_t rt = 0, per = 0;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		cfd = openat(fd, e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue; /* gone meanwhile */
		cpath = xasprintf("%s/%s", d->path, e->d_name);
		if (rt_read_at(cfd, cpath, "cpu.rt_runtime_us", &rt, err) < 0 ||
		    rt_read_at(cfd, cpath, "cpu.rt_period_us", &per, err) < 0)
			ret = -1;
		else if (rt > 0 && per > 0)
			*sum += share_of((uint64_t)rt, (uint64_t)per, p);
	}
	closedir(dir);
	return ret;
}

int cg1_rt_level(const struct cg_dir *parent, const struct cg_dir *dir, bool made,
		 bool leaf, struct cg1_rt *rt, struct error *err)
{
	int64_t have = 0, per = 0;
	uint64_t need, others = 0;
	const char *base;
	char buf[32];

	if (!parent) {
		rt->depth = 0;
		return 0;
	}
	rt->depth++;
	if (leaf || rt->runtime <= 0)
		return 0;
	base = strrchr(dir->path, '/');
	base = base ? base + 1 : dir->path;
	if (!made && !(rt->depth == 1 && !strcmp(base, &CGROUP_DEFAULT_PARENT[1])))
		return 0;
	if (rt_read_at(dir->fd, dir->path, "cpu.rt_runtime_us", &have, err) < 0 ||
	    rt_read_at(dir->fd, dir->path, "cpu.rt_period_us", &per, err) < 0 ||
	    per <= 0 || children_share(dir, (uint64_t)per, &others, err) < 0)
		return error_prefix(err, "linux.resources.cpu.realtimeRuntime: the budget of %s",
				    dir->path);
	need = others + share_of((uint64_t)rt->runtime,
				 rt->period ? rt->period : RT_DEFAULT_PERIOD, (uint64_t)per);
	if (have >= 0 && (uint64_t)have >= need)
		return 0;
	snprintf(buf, sizeof(buf), "%" PRIu64, need);
	if (cg_write(dir, "cpu.rt_runtime_us", buf, err) < 0)
		return error_prefix(err, "linux.resources.cpu.realtimeRuntime %" PRId64 ": give the parent cgroup a realtime budget",
				    rt->runtime);
	return 0;
}
