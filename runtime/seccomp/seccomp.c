/* SPDX-License-Identifier: Apache-2.0 */
/*
 * linux.seccomp -> classic BPF (with libseccomp, or from the cache) and
 * seccomp(2).  See seccomp.h for the life of a filter and the ordering the
 * caller must respect.
 *
 * Deliberate semantics, where the spec leaves room:
 *  - SCMP_ACT_ERRNO and SCMP_ACT_TRACE without errnoRet return EPERM
 *    (as runc); errnoRet with any other action is an error (the spec's
 *    MUST).
 *  - args on different indexes combine with AND in one rule.  When an index
 *    repeats, libseccomp cannot express it in one rule; like runc, every
 *    condition of that entry then becomes a rule of its own (OR), so that
 *    profiles written against runc keep their meaning.
 *  - Syscall names libseccomp does not know are skipped (log_debug);
 *    unknown actions, operators, flags and architecture names are errors.
 *  - A rule whose action is the default action is skipped.
 *  - ENOSYS instead of the default action for syscalls the profile never
 *    names and that libcs probe with a fallback on ENOSYS (clone3 first of
 *    all), see enosys_*() below.
 */
#define SECCOMP_NO_COMPAT_NAMES /* we include libseccomp's <seccomp.h> */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

#define MAX_ERRNO 4095	      /* the kernel clamps SECCOMP_RET_ERRNO data */
#define SYSCALL_ARGS 6	      /* seccomp_data.args[] */
#define MAX_ARCHS 32	      /* more than libseccomp knows */
#define STUB_NR_LIMIT 1024    /* syscall numbers the ENOSYS stub covers */
#define OPTIMIZE_MIN_NAMES 32 /* binary tree pays off above this */

static unsigned compile_count;

unsigned seccomp_compile_count(void)
{
	return compile_count;
}

/* ---- names --------------------------------------------------------------- */

static const struct {
	const char *name;
	uint32_t action;
	bool takes_errno;
} action_names[] = {
	{ "SCMP_ACT_KILL", SCMP_ACT_KILL, false },
	{ "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, false },
	{ "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, false },
	{ "SCMP_ACT_TRAP", SCMP_ACT_TRAP, false },
	{ "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0), true },
	{ "SCMP_ACT_TRACE", SCMP_ACT_TRACE(0), true },
	{ "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, false },
	{ "SCMP_ACT_LOG", SCMP_ACT_LOG, false },
	{ "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, false },
};

/* OCI names -> libseccomp's seccomp_arch_resolve_name() names. */
static const struct {
	const char *oci;
	const char *lib;
} arch_names[] = {
	{ "SCMP_ARCH_X86", "x86" },
	{ "SCMP_ARCH_X86_64", "x86_64" },
	{ "SCMP_ARCH_X32", "x32" },
	{ "SCMP_ARCH_ARM", "arm" },
	{ "SCMP_ARCH_AARCH64", "aarch64" },
	{ "SCMP_ARCH_MIPS", "mips" },
	{ "SCMP_ARCH_MIPS64", "mips64" },
	{ "SCMP_ARCH_MIPS64N32", "mips64n32" },
	{ "SCMP_ARCH_MIPSEL", "mipsel" },
	{ "SCMP_ARCH_MIPSEL64", "mipsel64" },
	{ "SCMP_ARCH_MIPSEL64N32", "mipsel64n32" },
	{ "SCMP_ARCH_PPC", "ppc" },
	{ "SCMP_ARCH_PPC64", "ppc64" },
	{ "SCMP_ARCH_PPC64LE", "ppc64le" },
	{ "SCMP_ARCH_S390", "s390" },
	{ "SCMP_ARCH_S390X", "s390x" },
	{ "SCMP_ARCH_PARISC", "parisc" },
	{ "SCMP_ARCH_PARISC64", "parisc64" },
	{ "SCMP_ARCH_RISCV64", "riscv64" },
	{ "SCMP_ARCH_LOONGARCH64", "loongarch64" },
	{ "SCMP_ARCH_M68K", "m68k" },
	{ "SCMP_ARCH_SH", "sh" },
	{ "SCMP_ARCH_SHEB", "sheb" },
};

static const struct {
	const char *name;
	enum scmp_compare op;
} op_names[] = {
	{ "SCMP_CMP_NE", SCMP_CMP_NE },
	{ "SCMP_CMP_LT", SCMP_CMP_LT },
	{ "SCMP_CMP_LE", SCMP_CMP_LE },
	{ "SCMP_CMP_EQ", SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", SCMP_CMP_GE },
	{ "SCMP_CMP_GT", SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static const struct {
	const char *name;
	unsigned int flag;
} flag_names[] = {
	{ "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
	{ "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
	{ "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
	  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Syscalls the child may need to hand the listener to the parent after the
 * filter is in force; notifying them would deadlock (runc refuses write).
 */
static const char *const handover_syscalls[] = { "write", "sendmsg" };

/* ---- validation ---------------------------------------------------------- */

/* What the profile asks for, beyond the rules themselves. */
struct profile {
	uint32_t default_action;
	uint32_t archs[MAX_ARCHS]; /* libseccomp tokens, no duplicates */
	size_t n_archs;
	unsigned int flags; /* SECCOMP_FILTER_FLAG_* asked for by name */
	bool needs_listener;
	size_t n_names;
};

static int parse_action(const char *name, const struct opt_u64 *errno_ret,
			const char *where, uint32_t *out, struct error *err)
{
	if (!name)
		return error_set(err, "linux.seccomp.%s: no action", where);
	for (size_t i = 0; i < ARRAY_SIZE(action_names); i++) {
		if (strcmp(name, action_names[i].name) != 0)
			continue;
		if (!action_names[i].takes_errno) {
			if (errno_ret->set)
				return error_set(err, "linux.seccomp.%s: errnoRet "
						      "is not valid with %s",
						 where, name);
			*out = action_names[i].action;
			return 0;
		}
		uint64_t v = errno_ret->set ? errno_ret->v : EPERM;
		uint64_t max = action_names[i].action == SCMP_ACT_ERRNO(0) ?
				       MAX_ERRNO :
				       0xffff;
		if (v > max)
			return error_set(err, "linux.seccomp.%s: errnoRet %llu "
					      "out of range (max %llu)",
					 where,
					 (unsigned long long)v,
					 (unsigned long long)max);
		*out = action_names[i].action | (uint32_t)v;
		return 0;
	}
	return error_set(err, "linux.seccomp.%s: unknown action \"%s\"", where,
			 name);
}

static int parse_op(const char *name, enum scmp_compare *out)
{
	for (size_t i = 0; name && i < ARRAY_SIZE(op_names); i++) {
		if (strcmp(name, op_names[i].name) == 0) {
			*out = op_names[i].op;
			return 0;
		}
	}
	return -1;
}

static int check_archs(const struct oci_seccomp *sc, struct profile *p,
		       struct error *err)
{
	for (size_t i = 0; i < sc->architectures.len; i++) {
		const char *name = sc->architectures.items[i];
		const char *lib = NULL;

		for (size_t j = 0; name && j < ARRAY_SIZE(arch_names); j++)
			if (strcmp(name, arch_names[j].oci) == 0)
				lib = arch_names[j].lib;
		if (!lib)
			return error_set(err, "linux.seccomp.architectures[%zu]: "
					      "unknown architecture \"%s\"",
					 i,
					 name ? name : "");
		uint32_t token = seccomp_arch_resolve_name(lib);
		if (!token) {
			/* Nothing of that arch can pass the filter anyway: it
			 * gets the bad-arch action (kill). */
			log_debug("seccomp: libseccomp has no %s, skipped", name);
			continue;
		}
		bool dup = false;
		for (size_t j = 0; j < p->n_archs; j++)
			dup |= p->archs[j] == token;
		if (!dup && p->n_archs < MAX_ARCHS)
			p->archs[p->n_archs++] = token;
	}
	return 0;
}

static int check_flags(const struct oci_seccomp *sc, struct profile *p,
		       struct error *err)
{
	for (size_t i = 0; i < sc->flags.len; i++) {
		const char *name = sc->flags.items[i];
		unsigned int flag = 0;

		for (size_t j = 0; name && j < ARRAY_SIZE(flag_names); j++)
			if (strcmp(name, flag_names[j].name) == 0)
				flag = flag_names[j].flag;
		if (!flag)
			return error_set(err, "linux.seccomp.flags[%zu]: unknown "
					      "flag \"%s\"",
					 i, name ? name : "");
		p->flags |= flag;
	}
	return 0;
}

static int check_args(const struct oci_seccomp_syscall *s, const char *where,
		      struct error *err)
{
	for (size_t j = 0; j < s->n_args; j++) {
		enum scmp_compare op;

		if (s->args[j].index >= SYSCALL_ARGS)
			return error_set(err, "linux.seccomp.%s.args[%zu]: index "
					      "%u out of range (0-5)",
					 where, j,
					 s->args[j].index);
		if (parse_op(s->args[j].op, &op) < 0)
			return error_set(err, "linux.seccomp.%s.args[%zu]: "
					      "unknown operator \"%s\"",
					 where, j,
					 s->args[j].op ? s->args[j].op : "");
	}
	return 0;
}

static int check_notify(const struct oci_seccomp_syscall *s, const char *where,
			struct error *err)
{
	for (size_t j = 0; j < s->names.len; j++)
		for (size_t k = 0; k < ARRAY_SIZE(handover_syscalls); k++)
			if (strcmp(s->names.items[j], handover_syscalls[k]) == 0)
				return error_set(err, "linux.seccomp.%s: "
						      "SCMP_ACT_NOTIFY cannot be used "
						      "for %s (the runtime needs it to "
						      "hand the listener over)",
						 where,
						 handover_syscalls[k]);
	return 0;
}

static int check_syscall(const struct oci_seccomp_syscall *s, size_t i,
			 struct profile *p, struct error *err)
{
	char where[48];
	uint32_t action;

	snprintf(where, sizeof(where), "syscalls[%zu]", i);
	if (s->names.len == 0)
		return error_set(err, "linux.seccomp.%s: names is empty", where);
	for (size_t j = 0; j < s->names.len; j++)
		if (!s->names.items[j] || !*s->names.items[j])
			return error_set(err, "linux.seccomp.%s.names[%zu]: "
					      "empty name",
					 where, j);
	if (parse_action(s->action, &s->errno_ret, where, &action, err) < 0)
		return -1;
	if (check_args(s, where, err) < 0)
		return -1;
	if (action == SCMP_ACT_NOTIFY) {
		if (check_notify(s, where, err) < 0)
			return -1;
		p->needs_listener = true;
	}
	p->n_names += s->names.len;
	return 0;
}

/* Everything but the syscall names, which only libseccomp can resolve. */
static int check_profile(const struct oci_seccomp *sc, struct profile *p,
			 struct error *err)
{
	memset(p, 0, sizeof(*p));
	if (parse_action(sc->default_action, &sc->default_errno_ret,
			 "defaultAction", &p->default_action, err) < 0)
		return -1;
	if (p->default_action == SCMP_ACT_NOTIFY)
		return error_set(err, "linux.seccomp.defaultAction: "
				      "SCMP_ACT_NOTIFY cannot be the default action");
	if (sc->listener_metadata && !sc->listener_path)
		return error_set(err, "linux.seccomp.listenerMetadata needs "
				      "listenerPath");
	if (check_archs(sc, p, err) < 0 || check_flags(sc, p, err) < 0)
		return -1;
	for (size_t i = 0; i < sc->n_syscalls; i++)
		if (check_syscall(&sc->syscalls[i], i, p, err) < 0)
			return -1;
	return 0;
}

/* ---- seccomp(2) flags ---------------------------------------------------- */

/*
 * Does this kernel take flag?  seccomp(SET_MODE_FILTER) with a NULL program
 * fails with EINVAL on an unknown flag and with EFAULT (reading the program)
 * once the flags passed; nothing is installed either way.
 */
static bool kernel_has_flag(unsigned int flag)
{
	static unsigned int known, ok;
	unsigned int probe = flag;

	if (known & flag)
		return ok & flag;
	if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
		probe |= SECCOMP_FILTER_FLAG_NEW_LISTENER; /* required with it */
	errno = 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, probe, NULL) < 0 &&
	    errno == EFAULT)
		ok |= flag;
	known |= flag;
	return ok & flag;
}

static const char *flag_name(unsigned int flag)
{
	for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++)
		if (flag_names[i].flag == flag)
			return flag_names[i].name;
	return "?";
}

static int load_flags(const struct profile *p, unsigned int *out,
		      struct error *err)
{
	unsigned int f = 0;

	for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++) {
		unsigned int bit = flag_names[i].flag;

		if (!(p->flags & bit))
			continue;
		if (bit == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV &&
		    !p->needs_listener) {
			/* The kernel refuses it without a listener. */
			log_debug("seccomp: %s ignored: no SCMP_ACT_NOTIFY rule",
				  flag_name(bit));
			continue;
		}
		if (!kernel_has_flag(bit)) {
			log_warn("seccomp: the kernel does not support %s, "
				 "ignored",
				 flag_name(bit));
			continue;
		}
		f |= bit;
	}
	if (p->needs_listener) {
		if (!kernel_has_flag(SECCOMP_FILTER_FLAG_NEW_LISTENER))
			return error_set(err, "seccomp: SCMP_ACT_NOTIFY needs "
					      "a kernel with seccomp user notification");
		f |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
		/* TSYNC reports a failed thread by returning its tid, which
		 * cannot be told from a listener fd: the kernel wants
		 * TSYNC_ESRCH with both.  Without it, TSYNC goes: the child
		 * is single-threaded anyway. */
		if (f & SECCOMP_FILTER_FLAG_TSYNC) {
			if (kernel_has_flag(SECCOMP_FILTER_FLAG_TSYNC_ESRCH))
				f |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
			else
				f &= ~(unsigned int)SECCOMP_FILTER_FLAG_TSYNC;
		}
	}
	*out = f;
	return 0;
}

/* ---- rules --------------------------------------------------------------- */

/* Native syscall numbers named anywhere in the profile, whatever action. */
struct named_set {
	uint64_t bits[STUB_NR_LIMIT / 64];
	int max; /* -1: none */
	bool clone_has_args;
	unsigned n_rules;
};

static void named_add(struct named_set *ns, int nr)
{
	if (nr < 0 || nr >= STUB_NR_LIMIT)
		return;
	ns->bits[nr / 64] |= 1ull << (nr % 64);
	if (nr > ns->max)
		ns->max = nr;
}

static bool named_has(const struct named_set *ns, int nr)
{
	return nr >= 0 && nr < STUB_NR_LIMIT &&
	       (ns->bits[nr / 64] & (1ull << (nr % 64)));
}

static void make_cmp(const struct oci_seccomp_arg *a, struct scmp_arg_cmp *c)
{
	enum scmp_compare op = SCMP_CMP_EQ;

	parse_op(a->op, &op); /* validated by check_args() */
	c->arg = a->index;
	c->op = op;
	c->datum_a = a->value;	   /* MASKED_EQ: the mask */
	c->datum_b = a->value_two; /* MASKED_EQ: the value */
}

static int add_rule(scmp_filter_ctx ctx, const char *name, int nr,
		    uint32_t action, const struct oci_seccomp_syscall *s,
		    unsigned *n_rules, struct error *err)
{
	struct scmp_arg_cmp cmp[SYSCALL_ARGS];
	unsigned per_index[SYSCALL_ARGS] = { 0 };
	bool repeated = false;
	int rc;

	for (size_t i = 0; i < s->n_args; i++)
		repeated |= ++per_index[s->args[i].index] > 1;
	if (repeated) {
		/* One rule per condition, ORed: see the top of the file. */
		for (size_t i = 0; i < s->n_args; i++) {
			make_cmp(&s->args[i], &cmp[0]);
			rc = seccomp_rule_add_array(ctx, action, nr, 1, cmp);
			if (rc < 0)
				return error_setc(err, -rc, "seccomp: add rule "
							    "for %s",
						  name);
			(*n_rules)++;
		}
		return 0;
	}
	for (size_t i = 0; i < s->n_args; i++)
		make_cmp(&s->args[i], &cmp[i]);
	rc = seccomp_rule_add_array(ctx, action, nr, (unsigned)s->n_args, cmp);
	if (rc < 0)
		return error_setc(err, -rc, "seccomp: add rule for %s", name);
	(*n_rules)++;
	return 0;
}

static int add_syscall(scmp_filter_ctx ctx, const struct profile *p,
		       const struct oci_seccomp_syscall *s,
		       struct named_set *ns, struct error *err)
{
	uint32_t action;

	if (parse_action(s->action, &s->errno_ret, "syscalls", &action,
			 err) < 0)
		return -1;
	for (size_t j = 0; j < s->names.len; j++) {
		const char *name = s->names.items[j];
		int nr = seccomp_syscall_resolve_name(name);

		if (nr == __NR_SCMP_ERROR) {
			log_debug("seccomp: syscall %s unknown to libseccomp, "
				  "skipped",
				  name);
			continue;
		}
		named_add(ns, nr);
		if (s->n_args && strcmp(name, "clone") == 0)
			ns->clone_has_args = true;
		if (action == p->default_action)
			continue; /* libseccomp refuses it, and it is a no-op */
		if (add_rule(ctx, name, nr, action, s, &ns->n_rules, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- ENOSYS for what the profile does not know about --------------------- */

/*
 * A profile written before a syscall existed denies it with its default
 * action, typically EPERM; a libc that tries the new syscall first (glibc's
 * clone3 for posix_spawn and pthread_create, faccessat2, ...) only falls
 * back to the old one on ENOSYS, so EPERM breaks programs for no security
 * gain.  Two measures, only when the default action denies (ERRNO, KILL*):
 *
 *  1. A six-instruction stub in front of libseccomp's program: on the
 *     native arch, a syscall number above the highest one the profile names
 *     (and below STUB_NR_LIMIT, which also keeps x32's 0x40000000 bit and
 *     garbage out) returns ENOSYS.  The profile cannot have meant anything
 *     by a syscall that did not exist for it.  Native only: other arches
 *     multiplex socketcall/ipc, whose numbers libseccomp rewrites.
 *
 *  2. The syscalls below, when the profile never names them, get an
 *     explicit ERRNO(ENOSYS) rule, on every arch of the filter: they may
 *     well be below that highest number (a profile naming mseal but not
 *     clone3).  They are all denied either way; only the errno changes.
 *
 * And one hardening for allow-by-default profiles: a profile that filters
 * clone() by its flags but does not name clone3, whose flags live in memory
 * where seccomp cannot look, would leave clone3 as a way around the clone
 * rule (new namespaces).  clone3 gets ENOSYS there too; libcs fall back to
 * clone(), which the profile does check.
 */
static const char *const enosys_syscalls[] = {
	"clone3",
	"close_range",
	"openat2",
	"faccessat2",
	"fchmodat2",
	"statx",
	"epoll_pwait2",
	"pidfd_open",
	"pidfd_send_signal",
	"pidfd_getfd",
	"copy_file_range",
	"getrandom",
	"memfd_create",
	"futex_waitv",
	"map_shadow_stack",
	"mseal",
	"rseq",
	"cachestat",
	"process_mrelease",
	"landlock_create_ruleset",
	"landlock_add_rule",
	"landlock_restrict_self",
};

static bool default_denies(uint32_t action)
{
	uint32_t kind = action & SECCOMP_RET_ACTION_FULL;

	if (kind == SECCOMP_RET_ERRNO)
		return (action & SECCOMP_RET_DATA) != ENOSYS;
	return kind == SECCOMP_RET_KILL_PROCESS ||
	       kind == SECCOMP_RET_KILL_THREAD;
}

static int add_enosys_rule(scmp_filter_ctx ctx, const char *name,
			   struct named_set *ns, struct error *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	int rc;

	if (nr == __NR_SCMP_ERROR || named_has(ns, nr))
		return 0;
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0);
	if (rc < 0)
		return error_setc(err, -rc, "seccomp: add ENOSYS rule for %s",
				  name);
	ns->n_rules++;
	return 0;
}

static int enosys_rules(scmp_filter_ctx ctx, const struct profile *p,
			struct named_set *ns, struct error *err)
{
	uint32_t kind = p->default_action & SECCOMP_RET_ACTION_FULL;

	if (default_denies(p->default_action)) {
		for (size_t i = 0; i < ARRAY_SIZE(enosys_syscalls); i++)
			if (add_enosys_rule(ctx, enosys_syscalls[i], ns, err) < 0)
				return -1;
	} else if ((kind == SECCOMP_RET_ALLOW || kind == SECCOMP_RET_LOG) &&
		   ns->clone_has_args) {
		log_debug("seccomp: clone is filtered by flags: clone3 -> ENOSYS");
		return add_enosys_rule(ctx, "clone3", ns, err);
	}
	return 0;
}

static bool stub_arch_ok(uint32_t arch)
{
	/* Flat syscall tables starting at 0, no multiplexers. */
	return arch == SCMP_ARCH_X86_64 || arch == SCMP_ARCH_AARCH64 ||
	       arch == SCMP_ARCH_RISCV64;
}

/* Returns the number of instructions written to s[] (at most 6). */
static size_t enosys_stub(const struct profile *p, const struct named_set *ns,
			  struct sock_filter *s)
{
	uint32_t arch = seccomp_arch_native();

	if (!default_denies(p->default_action) || ns->max < 0 ||
	    ns->max >= STUB_NR_LIMIT - 1 || !stub_arch_ok(arch))
		return 0;
	/* Every path falls through to libseccomp's program (offset 6) except
	 * the ENOSYS return; libseccomp reloads arch and nr itself. */
	s[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, arch));
	s[1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch,
					    0, 4);
	s[2] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, nr));
	s[3] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K,
					    (uint32_t)ns->max, 0, 2);
	s[4] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
					    STUB_NR_LIMIT, 1, 0);
	s[5] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					    SECCOMP_RET_ERRNO | ENOSYS);
	return 6;
}

/* ---- compiling ----------------------------------------------------------- */

static int build_filter(scmp_filter_ctx ctx, const struct oci_seccomp *sc,
			const struct profile *p, struct named_set *ns,
			struct error *err)
{
	int rc;

	/* We load the program ourselves: libseccomp's NNP handling is moot. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc < 0)
		return error_setc(err, -rc, "seccomp: clear NNP attribute");
	/* A binary search over syscall numbers instead of a linear chain;
	 * libseccomp <= 2.5.4 mishandles it on near-empty filters. */
	if (p->n_names > OPTIMIZE_MIN_NAMES &&
	    seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0)
		log_debug("seccomp: no binary tree optimisation");
	for (size_t i = 0; i < p->n_archs; i++) {
		rc = seccomp_arch_add(ctx, p->archs[i]);
		if (rc < 0 && rc != -EEXIST)
			return error_setc(err, -rc, "seccomp: add arch 0x%x",
					  p->archs[i]);
	}
	for (size_t i = 0; i < sc->n_syscalls; i++)
		if (add_syscall(ctx, p, &sc->syscalls[i], ns, err) < 0)
			return -1;
	return enosys_rules(ctx, p, ns, err);
}

/* libseccomp 2.5 exports to an fd only: go through a memfd. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_filter **insns,
		      size_t *n, struct error *err)
{
	_cleanup_close_ int fd = memfd_create("agentsbx-seccomp", MFD_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	off_t size;
	int rc;

	if (fd < 0)
		return error_sys(err, "seccomp: memfd_create");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return error_setc(err, -rc, "seccomp: export BPF");
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % sizeof(struct sock_filter) ||
	    size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter)))
		return error_set(err, "seccomp: libseccomp exported %lld bytes",
				 (long long)size);
	buf = xmalloc((size_t)size);
	for (off_t done = 0; done < size;) {
		ssize_t r = pread(fd, buf + done, (size_t)(size - done), done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return error_sys(err, "seccomp: read exported BPF");
		done += r;
	}
	*insns = (struct sock_filter *)take_ptr(buf);
	*n = (size_t)size / sizeof(struct sock_filter);
	return 0;
}

static int compile_profile(const struct oci_seccomp *sc,
			   const struct profile *p, struct seccomp_prog *out,
			   unsigned *n_rules, struct error *err)
{
	struct named_set ns = { .max = -1 };
	_cleanup_free_ struct sock_filter *body = NULL;
	struct sock_filter stub[6];
	size_t n_body = 0, n_stub;
	scmp_filter_ctx ctx;
	int rc;

	compile_count++;
	ctx = seccomp_init(p->default_action);
	if (!ctx)
		return error_set(err, "seccomp: seccomp_init(0x%x) failed",
				 p->default_action);
	rc = build_filter(ctx, sc, p, &ns, err);
	if (rc == 0)
		rc = export_bpf(ctx, &body, &n_body, err);
	seccomp_release(ctx);
	if (rc < 0)
		return -1;

	n_stub = enosys_stub(p, &ns, stub);
	if (n_stub + n_body > BPF_MAXINSNS)
		return error_set(err, "seccomp: program too long (%zu "
				      "instructions, max %d)",
				 n_stub + n_body,
				 BPF_MAXINSNS);
	out->insns = xcalloc(n_stub + n_body, sizeof(*out->insns));
	memcpy(out->insns, stub, n_stub * sizeof(*stub));
	memcpy(out->insns + n_stub, body, n_body * sizeof(*body));
	out->len = (unsigned short)(n_stub + n_body);
	*n_rules = ns.n_rules;
	return 0;
}

static double elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static int open_cache(const char *cache_dir)
{
	struct error e;
	int fd;

	if (!cache_dir)
		return -1;
	fd = seccomp_cache_open_dir(cache_dir, &e);
	if (fd < 0)
		log_warn("seccomp: not using the cache: %s", e.msg);
	return fd;
}

/* The program for key from the cache; -1 on a miss (or no cache). */
static int load_cached(int dirfd, const uint8_t key[SECCOMP_KEY_SIZE], struct seccomp_prog *out)
{
	if (dirfd < 0 || seccomp_cache_load(dirfd, key, &out->insns, &out->len) < 0)
		return -1;
	out->from_cache = true;
	log_debug("seccomp: cache hit %s", out->key);
	return 0;
}

/* key: the caller's (a built-in profile's, made from its text), or NULL:
 * made from sc. */
static int prepare(const struct oci_seccomp *sc, const uint8_t *given_key, const char *cache_dir,
		   struct seccomp_prog *out, struct error *err)
{
	uint8_t key[SECCOMP_KEY_SIZE];
	_cleanup_close_ int dirfd = -1;
	struct timespec t0;
	struct profile p;
	unsigned n_rules = 0;

	memset(out, 0, sizeof(*out));
	if (!sc || !sc->present)
		return 0;
	/* Validated even on a cache hit: cheap, and flags are not cached. */
	if (check_profile(sc, &p, err) < 0 || load_flags(&p, &out->flags, err) < 0)
		return -1;
	out->needs_listener = p.needs_listener;
	if (given_key && (out->flags || out->needs_listener))
		return error_set(err, "seccomp: a built-in profile with flags or a listener "
				      "cannot be keyed by its text (its hit would lose them)");
	if (given_key)
		memcpy(key, given_key, sizeof(key));
	else
		seccomp_cache_key(sc, key);
	seccomp_key_hex(key, out->key);

	dirfd = open_cache(cache_dir);
	/* A built-in profile's caller looked before it parsed. */
	if (!given_key && load_cached(dirfd, key, out) == 0)
		return 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (compile_profile(sc, &p, out, &n_rules, err) < 0) {
		seccomp_prog_free(out);
		return -1;
	}
	if (dirfd >= 0) {
		struct error e;
		if (seccomp_cache_store(dirfd, key, out->insns, out->len, &e) < 0)
			log_warn("seccomp: %s", e.msg);
	}
	log_debug("seccomp: compiled %u rules in %.3f ms, %s %s", n_rules,
		  elapsed_ms(&t0), dirfd >= 0 ? "cached as" : "key", out->key);
	return 0;
}

int seccomp_prepare(const struct oci_seccomp *sc, const char *cache_dir,
		    struct seccomp_prog *out, struct error *err)
{
	return prepare(sc, NULL, cache_dir, out, err);
}

int seccomp_prepare_builtin_cached(const uint8_t key[SECCOMP_KEY_SIZE], const char *cache_dir,
				   struct seccomp_prog *out)
{
	_cleanup_close_ int dirfd = -1;

	memset(out, 0, sizeof(*out));
	if (!cache_dir)
		return -1;
	seccomp_key_hex(key, out->key);
	dirfd = open_cache(cache_dir);
	return load_cached(dirfd, key, out);
}

int seccomp_prepare_builtin(const struct oci_seccomp *sc, const uint8_t key[SECCOMP_KEY_SIZE],
			    const char *cache_dir, struct seccomp_prog *out, struct error *err)
{
	return prepare(sc, key, cache_dir, out, err);
}

/* ---- loading ------------------------------------------------------------- */

int seccomp_prog_load(const struct seccomp_prog *prog, int *listener_fd,
		      struct error *err)
{
	struct sock_fprog fprog = { .len = prog->len, .filter = prog->insns };
	long rc;

	*listener_fd = -1;
	if (prog->len == 0)
		return 0;
	rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, prog->flags, &fprog);
	if (rc < 0) {
		if (errno == EACCES)
			return error_sys(err, "seccomp: load filter (without "
					      "no_new_privs the caller needs "
					      "CAP_SYS_ADMIN)");
		return error_sys(err, "seccomp: load filter");
	}
	if (prog->flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) {
		*listener_fd = (int)rc;
		return 0;
	}
	if (rc > 0) /* TSYNC without TSYNC_ESRCH: the thread that refused */
		return error_set(err, "seccomp: TSYNC failed for thread %ld", rc);
	return 0;
}

void seccomp_prog_free(struct seccomp_prog *p)
{
	if (!p)
		return;
	free(p->insns);
	p->insns = NULL;
	p->len = 0;
}
