/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup v2 device filter: linux.resources.devices compiled by hand
 * into a BPF_PROG_TYPE_CGROUP_DEVICE program, loaded and attached with
 * bpf(2) directly.
 *
 * Semantics (documented in internal.h): default deny; every access
 * bit asked for (read, write, mknod) is decided by the last rule that
 * matches the device and names that bit.  The program walks the rules from
 * the last to the first and keeps the undecided bits in a register:
 *
 *	r2 = access bits asked for, r3 = device type, r4 = major, r5 = minor
 *	for each rule, last first:
 *		if type/major/minor do not match: next rule
 *		deny:  if (r2 & rule.access) return 0
 *		allow: r2 &= ~rule.access; if (r2 == 0) return 1
 *	return 0
 */
#include "internal.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

#define CG_DEV_MAX_RULES 10000
#define CG_DEV_MAX_ATTACHED 64
#define ACC_ALL (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD)

enum { R0,
       R1,
       R2,
       R3,
       R4,
       R5,
       R6 };

struct prog {
	struct bpf_insn *v;
	size_t n, cap;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src,
		 int16_t off, int32_t imm)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 64;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

static void emit_return(struct prog *p, int32_t v)
{
	emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, v);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

/* A wildcard: unset, or negative ("*" as runc's -1). */
static bool wild(const struct opt_i64 *v)
{
	return !v->set || v->v < 0;
}

size_t cg_device_access_string(unsigned access, char out[4])
{
	size_t k = 0;

	if (access & 2)
		out[k++] = 'r';
	if (access & 4)
		out[k++] = 'w';
	if (access & 1)
		out[k++] = 'm';
	out[k] = '\0';
	return k;
}

int cg_device_rule_check(const struct oci_device_cgroup *r, size_t i,
			 unsigned *access, struct error *err)
{
	const char *a = r->access && *r->access ? r->access : "rwm";

	if (r->type != 'a' && r->type != 'c' && r->type != 'b')
		return error_set(err,
				 "linux.resources.devices[%zu].type: \"%c\" is not a, c or b",
				 i, r->type ? r->type : '?');
	if ((!wild(&r->major) && r->major.v > INT32_MAX) ||
	    (!wild(&r->minor) && r->minor.v > INT32_MAX))
		return error_set(err,
				 "linux.resources.devices[%zu]: major/minor out of range",
				 i);
	*access = 0;
	for (; *a; a++) {
		switch (*a) {
		case 'r':
			*access |= BPF_DEVCG_ACC_READ;
			break;
		case 'w':
			*access |= BPF_DEVCG_ACC_WRITE;
			break;
		case 'm':
			*access |= BPF_DEVCG_ACC_MKNOD;
			break;
		default:
			return error_set(err,
					 "linux.resources.devices[%zu].access: \"%s\" is not made of r, w, m",
					 i, r->access);
		}
	}
	return 0;
}

/* Instructions for one rule; false when it decides every request, so that
 * the earlier rules are unreachable and not emitted. */
static bool emit_rule(struct prog *p, const struct oci_device_cgroup *r,
		      unsigned access)
{
	int checks = (r->type != 'a') + !wild(&r->major) + !wild(&r->minor);
	int tail = r->allow ? 4 : 5;
	int left = checks + tail;

	if (checks == 0 && access == ACC_ALL) {
		emit_return(p, r->allow ? 1 : 0);
		return false;
	}
	if (r->type != 'a')
		emit(p, BPF_JMP | BPF_JNE | BPF_K, R3, 0, (int16_t)(--left),
		     r->type == 'c' ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK);
	if (!wild(&r->major))
		emit(p, BPF_JMP | BPF_JNE | BPF_K, R4, 0, (int16_t)(--left),
		     (int32_t)r->major.v);
	if (!wild(&r->minor))
		emit(p, BPF_JMP | BPF_JNE | BPF_K, R5, 0, (int16_t)(--left),
		     (int32_t)r->minor.v);
	if (r->allow) {
		emit(p, BPF_ALU64 | BPF_AND | BPF_K, R2, 0, 0, (int32_t)~access);
		emit(p, BPF_JMP | BPF_JNE | BPF_K, R2, 0, 2, 0);
		emit_return(p, 1);
	} else {
		emit(p, BPF_ALU64 | BPF_MOV | BPF_X, R6, R2, 0, 0);
		emit(p, BPF_ALU64 | BPF_AND | BPF_K, R6, 0, 0, (int32_t)access);
		emit(p, BPF_JMP | BPF_JEQ | BPF_K, R6, 0, 2, 0);
		emit_return(p, 0);
	}
	return true;
}

int cg_devices_build(const struct oci_device_cgroup *rules, size_t n,
		     struct bpf_insn **insns, size_t *len, struct error *err)
{
	struct prog p = { 0 };
	bool open_end = true;

	if (n > CG_DEV_MAX_RULES)
		return error_set(err,
				 "linux.resources.devices: more than %d rules",
				 CG_DEV_MAX_RULES);
	/* struct bpf_cgroup_dev_ctx: access_type = access << 16 | type. */
	emit(&p, BPF_LDX | BPF_W | BPF_MEM, R2, R1, 0, 0);
	emit(&p, BPF_ALU64 | BPF_MOV | BPF_X, R3, R2, 0, 0);
	emit(&p, BPF_ALU64 | BPF_AND | BPF_K, R3, 0, 0, 0xffff);
	emit(&p, BPF_ALU64 | BPF_RSH | BPF_K, R2, 0, 0, 16);
	emit(&p, BPF_LDX | BPF_W | BPF_MEM, R4, R1, 4, 0);
	emit(&p, BPF_LDX | BPF_W | BPF_MEM, R5, R1, 8, 0);
	for (size_t i = 0; i < n; i++) {
		unsigned access;

		if (cg_device_rule_check(&rules[i], i, &access, err) < 0) {
			free(p.v);
			return -1;
		}
	}
	for (size_t i = n; open_end && i-- > 0;) {
		unsigned access;

		cg_device_rule_check(&rules[i], i, &access, err);
		open_end = emit_rule(&p, &rules[i], access);
	}
	if (open_end)
		emit_return(&p, 0);
	*insns = p.v;
	*len = p.n;
	return 0;
}

/* ---- bpf(2) ------------------------------------------------------------------- */

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static int load(const struct bpf_insn *insns, size_t n, struct error *err)
{
	static char log[16384];
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uintptr_t) "Apache-2.0";
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0 || (errno != EACCES && errno != EINVAL))
		return fd >= 0 ? fd :
				 error_sys(err, "load the device filter (%zu insns)", n);
	/* The verifier refused it: load again for its reason. */
	a.log_buf = (uintptr_t)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	log[0] = '\0';
	if ((fd = sys_bpf(BPF_PROG_LOAD, &a)) >= 0)
		return fd;
	log[sizeof(log) - 1] = '\0';
	return error_set(err, "load the device filter: verifier: %.300s",
			 strlen(log) > 300 ? log + strlen(log) - 300 : log);
}

static int query(const struct cg_dir *d, uint32_t *ids, uint32_t *n,
		 struct error *err)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.query.target_fd = (uint32_t)d->fd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (uintptr_t)ids;
	a.query.prog_cnt = *n;
	if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
		return error_sys(err, "query the device filters of %s", d->path);
	*n = a.query.prog_cnt;
	return 0;
}

static int prog_fd(uint32_t id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_id = id;
	return sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
}

static int attach(const struct cg_dir *d, int fd, int replace_fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)d->fd;
	a.attach_bpf_fd = (uint32_t)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI;
	if (replace_fd >= 0) {
		a.attach_flags |= BPF_F_REPLACE;
		a.replace_bpf_fd = (uint32_t)replace_fd;
	}
	return sys_bpf(BPF_PROG_ATTACH, &a);
}

static int detach(const struct cg_dir *d, uint32_t id, struct error *err)
{
	_cleanup_close_ int fd = prog_fd(id);
	union bpf_attr a;

	if (fd < 0)
		return errno == ENOENT ? 0 :
					 error_sys(err, "device filter %u of %s", id, d->path);
	memset(&a, 0, sizeof(a));
	a.target_fd = (uint32_t)d->fd;
	a.attach_bpf_fd = (uint32_t)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	if (sys_bpf(BPF_PROG_DETACH, &a) < 0 && errno != ENOENT)
		return error_sys(err, "detach device filter %u from %s", id,
				 d->path);
	return 0;
}

/*
 * Replace what is attached: with one old program atomically
 * (BPF_F_REPLACE); otherwise attach first and detach the old ones after, so
 * that meanwhile both apply and nothing is more open than either allows.
 */
static int attach_replacing(const struct cg_dir *d, int fd, struct error *err)
{
	uint32_t ids[CG_DEV_MAX_ATTACHED], n = CG_DEV_MAX_ATTACHED;

	if (query(d, ids, &n, err) < 0)
		return -1;
	if (n == 1) {
		_cleanup_close_ int old = prog_fd(ids[0]);

		if (old >= 0 && attach(d, fd, old) == 0)
			return 0;
		log_debug("cgroup: BPF_F_REPLACE on %s: %s; attach, then detach",
			  d->path, strerror(errno));
	}
	if (attach(d, fd, -1) < 0)
		return error_sys(err, "attach the device filter to %s", d->path);
	for (uint32_t i = 0; i < n; i++)
		if (detach(d, ids[i], err) < 0)
			return -1;
	return 0;
}

int cg_devices_apply(const struct cg_dir *d,
		     const struct oci_device_cgroup *rules, size_t n,
		     struct error *err)
{
	_cleanup_free_ struct bpf_insn *insns = NULL;
	_cleanup_close_ int fd = -1;
	size_t len;

	if (cg_devices_build(rules, n, &insns, &len, err) < 0)
		return -1;
	fd = load(insns, len, err);
	if (fd < 0)
		return -1;
	return attach_replacing(d, fd, err);
}
