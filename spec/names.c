/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names config.json uses for kernel and libseccomp constants, and their
 * values.  Pure tables: shared by the parser, the validator and runtime/.
 */
#include <linux/ioprio.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/resource.h>

#include "internal.h"
#include "spec.h"

struct name_value {
	const char *name;
	long long value;
};

#define NV(x)                      \
	{                          \
#x, (long long)(x) \
	}
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static const struct name_value *lookup(const struct name_value *t, size_t n,
				       const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

#define LOOKUP(table, name) lookup((table), ARRAY_LEN(table), (name))

/* ---- namespaces, hooks ------------------------------------------------ */

static const char *const ns_names[NS_TYPE_MAX] = {
	[NS_PID] = "pid",
	[NS_NETWORK] = "network",
	[NS_MOUNT] = "mount",
	[NS_IPC] = "ipc",
	[NS_UTS] = "uts",
	[NS_USER] = "user",
	[NS_CGROUP] = "cgroup",
	[NS_TIME] = "time",
};

const char *ns_type_name(enum ns_type t)
{
	return (unsigned)t < NS_TYPE_MAX ? ns_names[t] : NULL;
}

int ns_type_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int t = 0; t < NS_TYPE_MAX; t++)
		if (strcmp(ns_names[t], name) == 0)
			return t;
	return -1;
}

static const char *const hook_names[HOOK_KIND_MAX + 1] = {
	[HOOK_PRESTART] = "prestart",
	[HOOK_CREATE_RUNTIME] = "createRuntime",
	[HOOK_CREATE_CONTAINER] = "createContainer",
	[HOOK_START_CONTAINER] = "startContainer",
	[HOOK_POSTSTART] = "poststart",
	[HOOK_POSTSTOP] = "poststop",
	[HOOK_KIND_MAX] = NULL,
};

const char *hook_kind_name(enum hook_kind k)
{
	return (unsigned)k < HOOK_KIND_MAX ? hook_names[k] : NULL;
}

const char *const *hook_kind_names(void)
{
	return hook_names;
}

/* ---- process ---------------------------------------------------------- */

static const struct name_value rlimits[] = {
	NV(RLIMIT_AS),
	NV(RLIMIT_CORE),
	NV(RLIMIT_CPU),
	NV(RLIMIT_DATA),
	NV(RLIMIT_FSIZE),
	NV(RLIMIT_LOCKS),
	NV(RLIMIT_MEMLOCK),
	NV(RLIMIT_MSGQUEUE),
	NV(RLIMIT_NICE),
	NV(RLIMIT_NOFILE),
	NV(RLIMIT_NPROC),
	NV(RLIMIT_RSS),
	NV(RLIMIT_RTPRIO),
	NV(RLIMIT_RTTIME),
	NV(RLIMIT_SIGPENDING),
	NV(RLIMIT_STACK),
};

int rlimit_from_name(const char *name)
{
	const struct name_value *e = LOOKUP(rlimits, name);
	return e ? (int)e->value : -1;
}

static const struct name_value ioprio_classes[] = {
	NV(IOPRIO_CLASS_RT),
	NV(IOPRIO_CLASS_BE),
	NV(IOPRIO_CLASS_IDLE),
};

int ioprio_class_from_name(const char *name)
{
	const struct name_value *e = LOOKUP(ioprio_classes, name);
	return e ? (int)e->value : -1;
}

static const struct name_value sched_policies[] = {
	NV(SCHED_OTHER),
	NV(SCHED_FIFO),
	NV(SCHED_RR),
	NV(SCHED_BATCH),
	NV(SCHED_ISO),
	NV(SCHED_IDLE),
	NV(SCHED_DEADLINE),
};

int sched_policy_from_name(const char *name)
{
	const struct name_value *e = LOOKUP(sched_policies, name);
	return e ? (int)e->value : -1;
}

static const struct name_value sched_flags[] = {
	NV(SCHED_FLAG_RESET_ON_FORK),
	NV(SCHED_FLAG_RECLAIM),
	NV(SCHED_FLAG_DL_OVERRUN),
	NV(SCHED_FLAG_KEEP_POLICY),
	NV(SCHED_FLAG_KEEP_PARAMS),
	NV(SCHED_FLAG_UTIL_CLAMP_MIN),
	NV(SCHED_FLAG_UTIL_CLAMP_MAX),
};

int64_t sched_flag_from_name(const char *name)
{
	const struct name_value *e = LOOKUP(sched_flags, name);
	return e ? (int64_t)e->value : -1;
}

/*
 * libcap's cap_from_name() also takes "chown", "cap_chown" and "7": config
 * names are the upper-case "CAP_" form only.
 */
int capability_from_name(const char *name)
{
	cap_value_t v;

	if (!name || strncmp(name, "CAP_", 4) != 0 || name[4] < 'A' ||
	    name[4] > 'Z')
		return -1;
	for (const char *p = name + 4; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_'))
			return -1;
	if (cap_from_name(name, &v) < 0)
		return -1;
	return (int)v;
}

/* ---- linux ------------------------------------------------------------ */

static const struct name_value personality_domains[] = {
	{ "LINUX", PER_LINUX },
	{ "LINUX32", PER_LINUX32 },
};

int personality_domain_from_name(const char *name)
{
	const struct name_value *e = LOOKUP(personality_domains, name);
	return e ? (int)e->value : -1;
}

static const struct name_value propagations[] = {
	{ "shared", MS_SHARED },
	{ "slave", MS_SLAVE },
	{ "private", MS_PRIVATE },
	{ "unbindable", MS_UNBINDABLE },
	{ "rshared", MS_SHARED | MS_REC },
	{ "rslave", MS_SLAVE | MS_REC },
	{ "rprivate", MS_PRIVATE | MS_REC },
	{ "runbindable", MS_UNBINDABLE | MS_REC },
};

int rootfs_propagation_from_name(const char *name, unsigned long *flags)
{
	const struct name_value *e = LOOKUP(propagations, name);

	if (!e)
		return -1;
	*flags = (unsigned long)e->value;
	return 0;
}

/* ---- seccomp ---------------------------------------------------------- */

static const struct name_value seccomp_actions[] = {
	NV(SCMP_ACT_KILL),
	NV(SCMP_ACT_KILL_PROCESS),
	NV(SCMP_ACT_KILL_THREAD),
	NV(SCMP_ACT_TRAP),
	{ "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO(0) },
	{ "SCMP_ACT_TRACE", SCMP_ACT_TRACE(0) },
	NV(SCMP_ACT_ALLOW),
	NV(SCMP_ACT_LOG),
	NV(SCMP_ACT_NOTIFY),
};

int seccomp_action_from_name(const char *name, uint32_t *action)
{
	const struct name_value *e = LOOKUP(seccomp_actions, name);

	if (!e)
		return -1;
	*action = (uint32_t)e->value;
	return 0;
}

bool seccomp_action_takes_errno(const char *name)
{
	return name && (strcmp(name, "SCMP_ACT_ERRNO") == 0 ||
			strcmp(name, "SCMP_ACT_TRACE") == 0);
}

static const struct name_value seccomp_ops[] = {
	NV(SCMP_CMP_NE),
	NV(SCMP_CMP_LT),
	NV(SCMP_CMP_LE),
	NV(SCMP_CMP_EQ),
	NV(SCMP_CMP_GE),
	NV(SCMP_CMP_GT),
	NV(SCMP_CMP_MASKED_EQ),
};

int seccomp_op_from_name(const char *name)
{
	const struct name_value *e = LOOKUP(seccomp_ops, name);
	return e ? (int)e->value : -1;
}

/* Every name the spec lists; 0 for those this libseccomp does not know. */
#ifndef SCMP_ARCH_LOONGARCH64
#define SCMP_ARCH_LOONGARCH64 0
#endif
#ifndef SCMP_ARCH_M68K
#define SCMP_ARCH_M68K 0
#endif
#ifndef SCMP_ARCH_SH
#define SCMP_ARCH_SH 0
#endif
#ifndef SCMP_ARCH_SHEB
#define SCMP_ARCH_SHEB 0
#endif

static const struct name_value seccomp_archs[] = {
	NV(SCMP_ARCH_X86),
	NV(SCMP_ARCH_X86_64),
	NV(SCMP_ARCH_X32),
	NV(SCMP_ARCH_ARM),
	NV(SCMP_ARCH_AARCH64),
	NV(SCMP_ARCH_LOONGARCH64),
	NV(SCMP_ARCH_M68K),
	NV(SCMP_ARCH_MIPS),
	NV(SCMP_ARCH_MIPS64),
	NV(SCMP_ARCH_MIPS64N32),
	NV(SCMP_ARCH_MIPSEL),
	NV(SCMP_ARCH_MIPSEL64),
	NV(SCMP_ARCH_MIPSEL64N32),
	NV(SCMP_ARCH_PPC),
	NV(SCMP_ARCH_PPC64),
	NV(SCMP_ARCH_PPC64LE),
	NV(SCMP_ARCH_S390),
	NV(SCMP_ARCH_S390X),
	NV(SCMP_ARCH_SH),
	NV(SCMP_ARCH_SHEB),
	NV(SCMP_ARCH_PARISC),
	NV(SCMP_ARCH_PARISC64),
	NV(SCMP_ARCH_RISCV64),
};

int seccomp_arch_from_name(const char *name, uint32_t *arch)
{
	const struct name_value *e = LOOKUP(seccomp_archs, name);

	if (!e)
		return -1;
	*arch = (uint32_t)e->value;
	return 0;
}

static const struct name_value seccomp_flags[] = {
	NV(SECCOMP_FILTER_FLAG_TSYNC),
	NV(SECCOMP_FILTER_FLAG_LOG),
	NV(SECCOMP_FILTER_FLAG_SPEC_ALLOW),
	NV(SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV),
};

int seccomp_flag_from_name(const char *name, unsigned int *flag)
{
	const struct name_value *e = LOOKUP(seccomp_flags, name);

	if (!e)
		return -1;
	*flag = (unsigned int)e->value;
	return 0;
}

/* ---- lookups in a parsed spec ----------------------------------------- */

const struct oci_namespace *spec_find_namespace(const struct oci_spec *spec,
						enum ns_type t)
{
	for (size_t i = 0; i < spec->linux.n_namespaces; i++)
		if (spec->linux.namespaces[i].type == t)
			return &spec->linux.namespaces[i];
	return NULL;
}

const char *str_map_get(const struct str_map *m, const char *key)
{
	for (size_t i = 0; i < m->len; i++)
		if (m->keys[i] && strcmp(m->keys[i], key) == 0)
			return m->values[i];
	return NULL;
}
