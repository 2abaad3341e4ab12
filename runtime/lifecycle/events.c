/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `events [--stats] [--interval D] ID`: JSON lines as runc writes them.
 * {"type":"stats","id":ID,"data":{cpu, memory, pids, blkio, hugetlb}} every
 * interval (once with --stats), and {"type":"oom","id":ID} when the memory
 * cgroup's OOM-kill counter grows, until the container stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "lifecycle.h"

#define CG_ROOT "/sys/fs/cgroup"

struct cg_files {
	enum cgroup_mode mode;
	const char *path; /* the container's cgroup path */
};

/* The whole content of a cgroup file; NULL if it is not there. */
static char *cg_read(const struct cg_files *f, const char *ctrl, const char *file)
{
	_cleanup_free_ char *p = NULL;
	struct error err;
	char *buf = NULL;

	if (f->mode == CGROUP_MODE_V2)
		p = xasprintf(CG_ROOT "%s/%s", f->path, file);
	else
		p = xasprintf(CG_ROOT "/%s%s/%s", ctrl, f->path, file);
	if (read_file_at(AT_FDCWD, p, 1 << 20, &buf, NULL, &err) < 0)
		return NULL;
	return buf;
}

static unsigned long long cg_u64(const struct cg_files *f, const char *ctrl,
				 const char *file)
{
	_cleanup_free_ char *s = cg_read(f, ctrl, file);

	if (!s || !strncmp(s, "max", 3))
		return 0;
	return strtoull(s, NULL, 10);
}

/* "key value" lines (cpu.stat, memory.stat, memory.events, oom_control). */
static unsigned long long cg_keyed(const struct cg_files *f, const char *ctrl,
				   const char *file, const char *key)
{
	_cleanup_free_ char *s = cg_read(f, ctrl, file);

	return s ? keyed_value(s, key) : 0;
}

static void gnum(yajl_gen g, const char *key, unsigned long long v)
{
	jgen_key_int(g, key, (long long)v);
}

static void gen_cpu(yajl_gen g, const struct cg_files *f)
{
	bool v2 = f->mode == CGROUP_MODE_V2;

	jgen_str(g, "cpu");
	yajl_gen_map_open(g);
	jgen_str(g, "usage");
	yajl_gen_map_open(g);
	if (v2) {
		gnum(g, "total", cg_keyed(f, "", "cpu.stat", "usage_usec") * 1000);
		gnum(g, "kernel", cg_keyed(f, "", "cpu.stat", "system_usec") * 1000);
		gnum(g, "user", cg_keyed(f, "", "cpu.stat", "user_usec") * 1000);
	} else {
		_cleanup_free_ char *percpu = cg_read(f, "cpuacct", "cpuacct.usage_percpu");
		gnum(g, "total", cg_u64(f, "cpuacct", "cpuacct.usage"));
		jgen_str(g, "percpu");
		yajl_gen_array_open(g);
		for (char *p = percpu, *end; p && *p; p = end) {
			unsigned long long v = strtoull(p, &end, 10);
			if (end == p)
				break;
			yajl_gen_integer(g, (long long)v);
		}
		yajl_gen_array_close(g);
		/* cpuacct.stat is in USER_HZ ticks; runc reports nanoseconds. */
		gnum(g, "kernel", cg_keyed(f, "cpuacct", "cpuacct.stat", "system") * 10000000ULL);
		gnum(g, "user", cg_keyed(f, "cpuacct", "cpuacct.stat", "user") * 10000000ULL);
	}
	yajl_gen_map_close(g);
	jgen_str(g, "throttling");
	yajl_gen_map_open(g);
	gnum(g, "periods", cg_keyed(f, "cpu", "cpu.stat", "nr_periods"));
	gnum(g, "throttledPeriods", cg_keyed(f, "cpu", "cpu.stat", "nr_throttled"));
	gnum(g, "throttledTime", v2 ? cg_keyed(f, "", "cpu.stat", "throttled_usec") * 1000 : cg_keyed(f, "cpu", "cpu.stat", "throttled_time"));
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

static void gen_memory(yajl_gen g, const struct cg_files *f)
{
	bool v2 = f->mode == CGROUP_MODE_V2;

	jgen_str(g, "memory");
	yajl_gen_map_open(g);
	jgen_str(g, "usage");
	yajl_gen_map_open(g);
	if (v2) {
		gnum(g, "limit", cg_u64(f, "", "memory.max"));
		gnum(g, "usage", cg_u64(f, "", "memory.current"));
		gnum(g, "max", cg_u64(f, "", "memory.peak"));
		gnum(g, "failcnt", cg_keyed(f, "", "memory.events", "max"));
	} else {
		gnum(g, "limit", cg_u64(f, "memory", "memory.limit_in_bytes"));
		gnum(g, "usage", cg_u64(f, "memory", "memory.usage_in_bytes"));
		gnum(g, "max", cg_u64(f, "memory", "memory.max_usage_in_bytes"));
		gnum(g, "failcnt", cg_u64(f, "memory", "memory.failcnt"));
	}
	yajl_gen_map_close(g);
	jgen_str(g, "raw");
	yajl_gen_map_open(g);
	gnum(g, "cache", v2 ? cg_keyed(f, "", "memory.stat", "file") : cg_keyed(f, "memory", "memory.stat", "cache"));
	gnum(g, "rss", v2 ? cg_keyed(f, "", "memory.stat", "anon") : cg_keyed(f, "memory", "memory.stat", "rss"));
	gnum(g, "oom_kill", v2 ? cg_keyed(f, "", "memory.events", "oom_kill") : cg_keyed(f, "memory", "memory.oom_control", "oom_kill"));
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

static void gen_pids(yajl_gen g, const struct cg_files *f)
{
	jgen_str(g, "pids");
	yajl_gen_map_open(g);
	gnum(g, "current", cg_u64(f, "pids", "pids.current"));
	gnum(g, "limit", cg_u64(f, "pids", "pids.max"));
	yajl_gen_map_close(g);
}

static void print_line(yajl_gen g)
{
	_cleanup_free_ char *line = jgen_finish(g, NULL);

	printf("%s\n", line);
	fflush(stdout);
}

static void print_stats(const char *id, const struct cg_files *f)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_str(g, "type");
	jgen_str(g, "stats");
	jgen_str(g, "id");
	jgen_str(g, id);
	jgen_str(g, "data");
	yajl_gen_map_open(g);
	gen_cpu(g, f);
	gen_memory(g, f);
	gen_pids(g, f);
	jgen_str(g, "blkio");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	jgen_str(g, "hugetlb");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	print_line(g);
}

static void print_oom(const char *id)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_str(g, "type");
	jgen_str(g, "oom");
	jgen_str(g, "id");
	jgen_str(g, id);
	yajl_gen_map_close(g);
	print_line(g);
}

static unsigned long long oom_kills(const struct cg_files *f)
{
	if (f->mode == CGROUP_MODE_V2)
		return cg_keyed(f, "", "memory.events", "oom_kill");
	return cg_keyed(f, "memory", "memory.oom_control", "oom_kill");
}

bool container_cgroup_oom_killed(const char *cgroup_path)
{
	struct cg_files f = { .path = cgroup_path };
	struct error err;

	if (!cgroup_path || cgroup_path[0] != '/' ||
	    cgroup_detect_mode(&f.mode, &err) < 0)
		return false;
	return oom_kills(&f) > 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Still running?  Re-read the state under a shared lock each time. */
static bool still_running(const struct global_opts *g, const char *id)
{
	struct container_handle h;
	struct error err;
	bool alive;

	if (handle_open(g, id, false, &h, &err) < 0)
		return false;
	alive = h.st.status != STATUS_STOPPED;
	handle_close(&h);
	return alive;
}

int container_events(const struct global_opts *g, const char *id, bool stats_once,
		     unsigned interval_ms, struct error *err)
{
	struct container_handle h;
	struct cg_files f;
	_cleanup_free_ char *path = NULL;
	unsigned long long ooms;
	double next;

	if (handle_open(g, id, false, &h, err) < 0)
		return -1;
	if (h.st.status == STATUS_STOPPED || !h.st.cgroup_path) {
		handle_close(&h);
		return error_set(err, "container not running");
	}
	path = xstrdup(h.st.cgroup_path);
	handle_close(&h);
	if (cgroup_detect_mode(&f.mode, err) < 0)
		return -1;
	f.path = path;
	if (stats_once) {
		print_stats(id, &f);
		return 0;
	}
	ooms = oom_kills(&f);
	next = now_s();
	for (;;) {
		unsigned long long n = oom_kills(&f);

		for (; ooms < n; ooms++)
			print_oom(id);
		if (now_s() >= next) {
			print_stats(id, &f);
			next = now_s() + interval_ms / 1000.0;
		}
		if (!still_running(g, id))
			return 0;
		usleep(100000);
	}
}
