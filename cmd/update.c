/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../spec/spec.h"
#include "cmd.h"

enum {
	OPT_RESOURCES = 256,
	OPT_MEMORY,
	OPT_MEMORY_SWAP,
	OPT_MEMORY_RES,
	OPT_KMEM,
	OPT_KMEM_TCP,
	OPT_PIDS,
	OPT_CPU_QUOTA,
	OPT_CPU_PERIOD,
	OPT_CPU_SHARES,
	OPT_CPU_RT_PERIOD,
	OPT_CPU_RT_RUNTIME,
	OPT_CPUSET_CPUS,
	OPT_CPUSET_MEMS,
	OPT_BLKIO_WEIGHT,
};

/* "512m", "1g", "4096", "-1": docker's and runc's byte sizes. */
static int parse_bytes(const char *s, int64_t *out)
{
	char *end;
	long long v;
	int shift = 0;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (*end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': shift = 10; break;
		case 'm': shift = 20; break;
		case 'g': shift = 30; break;
		case 't': shift = 40; break;
		case 'b': shift = 0; break;
		default: return -1;
		}
		end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return -1;
	}
	if (v < -1 || (v > 0 && shift && v > (INT64_MAX >> shift)))
		return -1;
	*out = v > 0 ? (int64_t)v << shift : v;
	return 0;
}

static int read_resources(const char *path, struct oci_resources *res,
			  struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (!strcmp(path, "-")) {
		if (read_all_fd(STDIN_FILENO, SPEC_MAX_FILE_SIZE, &buf, &len, err) < 0)
			return error_prefix(err, "update: read resources from stdin");
	} else if (read_file_at(AT_FDCWD, path, SPEC_MAX_FILE_SIZE, &buf, &len, err) < 0) {
		return error_prefix(err, "update: --resources");
	}
	return spec_parse_resources(buf, len, res, err);
}

static int set_i64(struct opt_i64 *o, const char *s, bool bytes, const char *flag,
		   struct error *err)
{
	long long v;
	int64_t b;

	if (bytes ? parse_bytes(s, &b) < 0 : parse_i64(s, &v) < 0)
		return error_set(err, "update: %s: invalid value \"%s\"", flag, s);
	o->set = true;
	o->v = bytes ? b : v;
	return 0;
}

static int set_u64(struct opt_u64 *o, const char *s, const char *flag,
		   struct error *err)
{
	unsigned long long v;

	if (parse_u64(s, &v) < 0)
		return error_set(err, "update: %s: invalid value \"%s\"", flag, s);
	o->set = true;
	o->v = v;
	return 0;
}

static int apply_flag(int c, const char *arg, struct oci_resources *r,
		      struct error *err)
{
	r->present = true;
	switch (c) {
	case OPT_MEMORY:
		r->has_memory = true;
		return set_i64(&r->memory.limit, arg, true, "--memory", err);
	case OPT_MEMORY_SWAP:
		r->has_memory = true;
		return set_i64(&r->memory.swap, arg, true, "--memory-swap", err);
	case OPT_MEMORY_RES:
		r->has_memory = true;
		return set_i64(&r->memory.reservation, arg, true, "--memory-reservation", err);
	case OPT_KMEM:
		r->has_memory = true;
		return set_i64(&r->memory.kernel, arg, true, "--kernel-memory", err);
	case OPT_KMEM_TCP:
		r->has_memory = true;
		return set_i64(&r->memory.kernel_tcp, arg, true, "--kernel-memory-tcp", err);
	case OPT_PIDS:
		return set_i64(&r->pids_limit, arg, false, "--pids-limit", err);
	case OPT_CPU_QUOTA:
		r->has_cpu = true;
		return set_i64(&r->cpu.quota, arg, false, "--cpu-quota", err);
	case OPT_CPU_PERIOD:
		r->has_cpu = true;
		return set_u64(&r->cpu.period, arg, "--cpu-period", err);
	case OPT_CPU_SHARES:
		r->has_cpu = true;
		return set_u64(&r->cpu.shares, arg, "--cpu-share", err);
	case OPT_CPU_RT_PERIOD:
		r->has_cpu = true;
		return set_u64(&r->cpu.realtime_period, arg, "--cpu-rt-period", err);
	case OPT_CPU_RT_RUNTIME:
		r->has_cpu = true;
		return set_i64(&r->cpu.realtime_runtime, arg, false, "--cpu-rt-runtime", err);
	case OPT_CPUSET_CPUS:
		r->has_cpu = true;
		free(r->cpu.cpus);
		r->cpu.cpus = xstrdup(arg);
		return 0;
	case OPT_CPUSET_MEMS:
		r->has_cpu = true;
		free(r->cpu.mems);
		r->cpu.mems = xstrdup(arg);
		return 0;
	case OPT_BLKIO_WEIGHT:
		r->has_block_io = true;
		return set_u64(&r->block_io.weight, arg, "--blkio-weight", err);
	}
	return error_set(err, "update: unknown option");
}

static int run_update(const struct global_opts *g, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "resources", required_argument, NULL, 'r' },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "memory-swap", required_argument, NULL, OPT_MEMORY_SWAP },
		{ "memory-reservation", required_argument, NULL, OPT_MEMORY_RES },
		{ "kernel-memory", required_argument, NULL, OPT_KMEM },
		{ "kernel-memory-tcp", required_argument, NULL, OPT_KMEM_TCP },
		{ "pids-limit", required_argument, NULL, OPT_PIDS },
		{ "cpu-quota", required_argument, NULL, OPT_CPU_QUOTA },
		{ "cpu-period", required_argument, NULL, OPT_CPU_PERIOD },
		{ "cpu-share", required_argument, NULL, OPT_CPU_SHARES },
		{ "cpu-shares", required_argument, NULL, OPT_CPU_SHARES },
		{ "cpu-rt-period", required_argument, NULL, OPT_CPU_RT_PERIOD },
		{ "cpu-rt-runtime", required_argument, NULL, OPT_CPU_RT_RUNTIME },
		{ "cpuset-cpus", required_argument, NULL, OPT_CPUSET_CPUS },
		{ "cpuset-mems", required_argument, NULL, OPT_CPUSET_MEMS },
		{ "blkio-weight", required_argument, NULL, OPT_BLKIO_WEIGHT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct flag {
		int c;
		const char *arg;
	} flags[32];
	size_t n_flags = 0;
	const char *resources = NULL;
	struct oci_resources res;
	struct error err;
	int c, r;

	while ((c = getopt_long(argc, argv, "r:h", opts, NULL)) != -1) {
		if (c == 'r')
			resources = optarg;
		else if (c == 'h')
			return cmd_usage(&cmd_update, true);
		else if (c == '?' || n_flags == sizeof(flags) / sizeof(flags[0]))
			return cmd_usage(&cmd_update, false);
		else
			flags[n_flags++] = (struct flag){ c, optarg };
	}
	if (!cmd_want_args(&cmd_update, argc, optind, 1))
		return 1;
	memset(&res, 0, sizeof(res));
	if (resources && read_resources(resources, &res, &err) < 0)
		return cmd_fail(&err);
	/* Flags apply on top of the JSON, as in runc. */
	for (size_t i = 0; i < n_flags; i++)
		if (apply_flag(flags[i].c, flags[i].arg, &res, &err) < 0) {
			resources_free(&res);
			return cmd_fail(&err);
		}
	if (!resources && !n_flags) {
		resources_free(&res);
		error_set(&err, "update: nothing to update (give --resources or a limit flag)");
		return cmd_fail(&err);
	}
	r = container_update(g, argv[optind], &res, &err);
	resources_free(&res);
	return r < 0 ? cmd_fail(&err) : 0;
}

const struct command cmd_update = {
	.name = "update",
	.summary = "change the resource limits of a running container",
	.usage = "[--resources|-r FILE|-] [--memory N] [--memory-swap N] [--memory-reservation N] "
		 "[--pids-limit N] [--cpu-quota N] [--cpu-period N] [--cpu-share N] "
		 "[--cpuset-cpus L] [--cpuset-mems L] [--blkio-weight N] ID",
	.run = run_update,
};
