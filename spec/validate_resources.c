/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic checks of linux.resources and linux.seccomp.  Strings that end
 * up in cgroup files are checked so that they cannot name another file or
 * smuggle a second line.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define CFG "config.json: "
#define R "linux.resources."
#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */
#define SECCOMP_ARGS_MAX 6

/* ---- devices, memory, cpu --------------------------------------------- */

static int check_device_rules(const struct oci_resources *r, struct error *err)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < r->n_devices; i++) {
		const struct oci_device_cgroup *d = &r->devices[i];

		if (!d->type || !strchr("acb", d->type))
			return spec_vfail(err, CFG,
					  R "devices[%zu].type: must be "
					    "one of a, c, b",
					  i);
		if ((d->major.set && d->major.v < -1) ||
		    (d->minor.set && d->minor.v < -1))
			return spec_vfail(err, CFG,
					  R "devices[%zu]: negative major "
					    "or minor number",
					  i);
		if (!d->access)
			continue;
		for (const char *a = d->access; *a; a++)
			if (!strchr("rwm", *a) || strchr(a + 1, *a))
				return spec_vfail(
					err, CFG,
					R "devices[%zu].access: "
					  "%s is not a combination of r, w "
					  "and m",
					i, spec_quote(q, d->access));
	}
	return 0;
}

/* Byte limits: -1 (unlimited) or a size. */
static int check_limit(const struct opt_i64 *v, const char *field,
		       struct error *err)
{
	if (v->set && v->v < -1)
		return spec_vfail(err, CFG,
				  R "memory.%s: %lld is neither -1 nor "
				    "a size",
				  field, (long long)v->v);
	return 0;
}

static int check_memory(const struct oci_memory *m, struct error *err)
{
	if (check_limit(&m->limit, "limit", err) < 0 ||
	    check_limit(&m->reservation, "reservation", err) < 0 ||
	    check_limit(&m->swap, "swap", err) < 0 ||
	    check_limit(&m->kernel, "kernel", err) < 0 ||
	    check_limit(&m->kernel_tcp, "kernelTCP", err) < 0)
		return -1;
	if (m->swappiness.set && m->swappiness.v > 100)
		return spec_vfail(err, CFG,
				  R "memory.swappiness: %llu is out of "
				    "range (0..100)",
				  (unsigned long long)m->swappiness.v);
	/* swap is memory+swap: below the memory limit it cannot hold */
	if (m->limit.set && m->swap.set && m->limit.v > 0 && m->swap.v > 0 &&
	    m->swap.v < m->limit.v)
		return spec_vfail(err, CFG,
				  R
				  "memory.swap: %lld is below "
				  "memory.limit %lld (swap counts memory+swap)",
				  (long long)m->swap.v, (long long)m->limit.v);
	return 0;
}

/* cpuset lists: digits, ',', '-' (and ':' '/' of the kernel's stride
 * syntax); anything else, a newline above all, is refused. */
static bool cpuset_list_valid(const char *s)
{
	return strspn(s, "0123456789,-:/ ") == strlen(s);
}

static int check_cpu(const struct oci_cpu *cpu, struct error *err)
{
	char q[QUOTE_MAX];

	if (cpu->quota.set && cpu->quota.v < -1)
		return spec_vfail(err, CFG,
				  R "cpu.quota: %lld is neither -1 nor a "
				    "time",
				  (long long)cpu->quota.v);
	if (cpu->burst.set && cpu->quota.set && cpu->quota.v > 0 &&
	    cpu->burst.v > (uint64_t)cpu->quota.v)
		return spec_vfail(err, CFG,
				  R "cpu.burst: %llu is above cpu.quota "
				    "%lld",
				  (unsigned long long)cpu->burst.v,
				  (long long)cpu->quota.v);
	if (cpu->realtime_runtime.set && cpu->realtime_runtime.v < -1)
		return spec_vfail(err, CFG,
				  R "cpu.realtimeRuntime: %lld is neither "
				    "-1 nor a time",
				  (long long)cpu->realtime_runtime.v);
	if (cpu->idle.set && cpu->idle.v != 0 && cpu->idle.v != 1)
		return spec_vfail(err, CFG,
				  R "cpu.idle: must be 0 or 1, got %lld",
				  (long long)cpu->idle.v);
	if (cpu->cpus && !cpuset_list_valid(cpu->cpus))
		return spec_vfail(err, CFG, R "cpu.cpus: %s is not a CPU list",
				  spec_quote(q, cpu->cpus));
	if (cpu->mems && !cpuset_list_valid(cpu->mems))
		return spec_vfail(err, CFG,
				  R "cpu.mems: %s is not a memory node "
				    "list",
				  spec_quote(q, cpu->mems));
	return 0;
}

/* ---- block I/O, hugepages, network, rdma ------------------------------ */

static int check_throttles(const struct oci_blkio_throttle *t, size_t n,
			   const char *field, struct error *err)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].major < 0 || t[i].minor < 0)
			return spec_vfail(err, CFG,
					  R "blockIO.%s[%zu]: negative "
					    "major or minor number",
					  field, i);
	return 0;
}

static int check_block_io(const struct oci_blkio *b, struct error *err)
{
	for (size_t i = 0; i < b->n_weight_device; i++) {
		const struct oci_blkio_weight_device *w = &b->weight_device[i];

		if (w->major < 0 || w->minor < 0)
			return spec_vfail(err, CFG,
					  R "blockIO.weightDevice[%zu]: "
					    "negative major or minor number",
					  i);
		if (!w->weight.set && !w->leaf_weight.set)
			return spec_vfail(err, CFG,
					  R "blockIO.weightDevice[%zu]: "
					    "needs weight or leafWeight",
					  i);
	}
	if (check_throttles(b->throttle_read_bps, b->n_throttle_read_bps,
			    "throttleReadBpsDevice", err) < 0 ||
	    check_throttles(b->throttle_write_bps, b->n_throttle_write_bps,
			    "throttleWriteBpsDevice", err) < 0 ||
	    check_throttles(b->throttle_read_iops, b->n_throttle_read_iops,
			    "throttleReadIOPSDevice", err) < 0 ||
	    check_throttles(b->throttle_write_iops, b->n_throttle_write_iops,
			    "throttleWriteIOPSDevice", err) < 0)
		return -1;
	return 0;
}

/* "2MB": ^[1-9][0-9]*[KMG]B$ */
static bool page_size_valid(const char *s)
{
	size_t digits;

	if (!s)
		return false;
	digits = strspn(s, "0123456789");
	return s[0] >= '1' && s[0] <= '9' && s[digits] &&
	       strchr("KMG", s[digits]) && s[digits + 1] == 'B' &&
	       s[digits + 2] == '\0';
}

/* A name written into a cgroup file next to a number ("eth0 5"). */
static bool plain_name_valid(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > max || strchr(s, '/'))
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

static int check_hugepages_net_rdma(const struct oci_resources *r,
				    struct error *err)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < r->n_hugepage_limits; i++)
		if (!page_size_valid(r->hugepage_limits[i].page_size))
			return spec_vfail(
				err, CFG,
				R "hugepageLimits[%zu].pageSize: "
				  "%s is not a size like \"2MB\"",
				i,
				spec_quote(q, r->hugepage_limits[i].page_size));
	for (size_t i = 0; i < r->network.n_priorities; i++)
		if (!plain_name_valid(r->network.priorities[i].name,
				      IFNAME_MAX))
			return spec_vfail(
				err, CFG,
				R "network.priorities[%zu].name: "
				  "%s is not an interface name",
				i,
				spec_quote(q, r->network.priorities[i].name));
	for (size_t i = 0; i < r->n_rdma; i++) {
		const struct oci_rdma *d = &r->rdma[i];

		if (!plain_name_valid(d->device, 255))
			return spec_vfail(err, CFG,
					  R "rdma: %s is not a device "
					    "name",
					  spec_quote(q, d->device));
		if (!d->hca_handles.set && !d->hca_objects.set)
			return spec_vfail(err, CFG,
					  R "rdma[%s]: needs hcaHandles or "
					    "hcaObjects",
					  spec_quote(q, d->device));
	}
	return 0;
}

/* ---- unified ---------------------------------------------------------- */

/* Files the runtime itself drives: a config must not write them. */
static const char *const cgroup_control_files[] = {
	"cgroup.procs",
	"cgroup.threads",
	"cgroup.subtree_control",
	"cgroup.type",
	"cgroup.freeze",
	"cgroup.kill",
};

static int check_unified(const struct str_map *u, struct error *err)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < u->len; i++) {
		const char *k = u->keys[i];
		const char *dot = strchr(k, '.');

		if (!plain_name_valid(k, 255) || !dot || dot == k || !dot[1] ||
		    strstr(k, ".."))
			return spec_vfail(err, CFG,
					  R "unified[%s]: not a cgroup "
					    "file name like \"memory.max\"",
					  spec_quote(q, k));
		for (size_t j = 0; j < sizeof(cgroup_control_files) /
					       sizeof(cgroup_control_files[0]);
		     j++)
			if (strcmp(k, cgroup_control_files[j]) == 0)
				return spec_vfail(
					err, CFG,
					R "unified[%s]: "
					  "refused: the runtime manages it",
					spec_quote(q, k));
	}
	return 0;
}

int spec_check_resources(const struct oci_resources *r, struct error *err)
{
	if (check_device_rules(r, err) < 0)
		return -1;
	if (r->has_memory && check_memory(&r->memory, err) < 0)
		return -1;
	if (r->has_cpu && check_cpu(&r->cpu, err) < 0)
		return -1;
	if (r->has_block_io && check_block_io(&r->block_io, err) < 0)
		return -1;
	if (check_hugepages_net_rdma(r, err) < 0 ||
	    check_unified(&r->unified, err) < 0)
		return -1;
	return 0;
}

/* ---- seccomp ---------------------------------------------------------- */

#define S "linux.seccomp."

static int check_action(const char *action, bool has_errno, const char *field,
			struct error *err)
{
	uint32_t v;
	char q[QUOTE_MAX];

	if (!action)
		return spec_vfail(err, CFG, S "%s: required field is missing",
				  field);
	if (seccomp_action_from_name(action, &v) < 0)
		return spec_vfail(err, CFG, S "%s: unknown action %s", field,
				  spec_quote(q, action));
	if (has_errno && !seccomp_action_takes_errno(action))
		return spec_vfail(err, CFG,
				  S "%s: %s takes no errno (errnoRet is "
				    "for SCMP_ACT_ERRNO and SCMP_ACT_TRACE)",
				  field, action);
	return 0;
}

static int check_seccomp_lists(const struct oci_seccomp *sc, struct error *err)
{
	char q[QUOTE_MAX];
	uint32_t arch;
	unsigned int flag;

	for (size_t i = 0; i < sc->architectures.len; i++)
		if (seccomp_arch_from_name(sc->architectures.items[i], &arch) <
		    0)
			return spec_vfail(
				err, CFG,
				S "architectures[%zu]: unknown "
				  "architecture %s",
				i, spec_quote(q, sc->architectures.items[i]));
	for (size_t i = 0; i < sc->flags.len; i++)
		if (seccomp_flag_from_name(sc->flags.items[i], &flag) < 0)
			return spec_vfail(err, CFG,
					  S "flags[%zu]: unknown flag %s", i,
					  spec_quote(q, sc->flags.items[i]));
	return 0;
}

static int check_syscall(const struct oci_seccomp *sc, size_t i,
			 struct error *err)
{
	const struct oci_seccomp_syscall *s = &sc->syscalls[i];
	char field[64], q[QUOTE_MAX];

	if (s->names.len == 0)
		return spec_vfail(err, CFG,
				  S "syscalls[%zu].names: must have at "
				    "least one entry",
				  i);
	for (size_t j = 0; j < s->names.len; j++)
		if (!s->names.items[j][0] ||
		    spec_has_control_chars(s->names.items[j]))
			return spec_vfail(err, CFG,
					  S "syscalls[%zu].names[%zu]: %s "
					    "is not a syscall name",
					  i, j,
					  spec_quote(q, s->names.items[j]));
	snprintf(field, sizeof(field), "syscalls[%zu].action", i);
	if (check_action(s->action, s->errno_ret.set, field, err) < 0)
		return -1;
	if (strcmp(s->action, "SCMP_ACT_NOTIFY") == 0 && !sc->listener_path)
		return spec_vfail(
			err, CFG,
			S "syscalls[%zu].action: "
			  "SCMP_ACT_NOTIFY needs linux.seccomp.listenerPath",
			i);
	for (size_t j = 0; j < s->n_args; j++) {
		const struct oci_seccomp_arg *a = &s->args[j];

		if (a->index >= SECCOMP_ARGS_MAX)
			return spec_vfail(err, CFG,
					  S "syscalls[%zu].args[%zu].index: "
					    "%u is out of range (0..%d)",
					  i, j, a->index, SECCOMP_ARGS_MAX - 1);
		if (seccomp_op_from_name(a->op) < 0)
			return spec_vfail(err, CFG,
					  S "syscalls[%zu].args[%zu].op: "
					    "unknown operator %s",
					  i, j, spec_quote(q, a->op));
	}
	return 0;
}

int spec_check_seccomp(const struct oci_seccomp *sc, struct error *err)
{
	char q[QUOTE_MAX];

	if (check_action(sc->default_action, sc->default_errno_ret.set,
			 "defaultAction", err) < 0)
		return -1;
	/* the kernel would park every syscall with the agent */
	if (strcmp(sc->default_action, "SCMP_ACT_NOTIFY") == 0)
		return spec_vfail(err, CFG,
				  S "defaultAction: SCMP_ACT_NOTIFY cannot "
				    "be the default action");
	if (sc->listener_metadata && !sc->listener_path)
		return spec_vfail(err, CFG,
				  S "listenerMetadata: set without "
				    "listenerPath");
	if (sc->listener_path && !spec_path_is_absolute(sc->listener_path))
		return spec_vfail(err, CFG,
				  S "listenerPath: must be an absolute "
				    "path, got %s",
				  spec_quote(q, sc->listener_path));
	if (check_seccomp_lists(sc, err) < 0)
		return -1;
	for (size_t i = 0; i < sc->n_syscalls; i++)
		if (check_syscall(sc, i, err) < 0)
			return -1;
	return 0;
}
