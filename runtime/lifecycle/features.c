/* SPDX-License-Identifier: Apache-2.0 */
/* `features`: what this build implements (features.md), decided at build
 * time, not by probing the host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "../../lib/jsongen.h"
#include "../../spec/spec.h"
#include "../cgroup/cgroup.h"
#include "../container.h"
#include "../internal.h"
#include "../init/mounts.h"

static const char *const namespaces[] = {
	"cgroup",
	"ipc",
	"mount",
	"network",
	"pid",
	"user",
	"uts",
	"time",
	NULL,
};

static const char *const capabilities[] = {
	"CAP_CHOWN",
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
	NULL,
};

static const char *const seccomp_actions[] = {
	"SCMP_ACT_ALLOW",
	"SCMP_ACT_ERRNO",
	"SCMP_ACT_KILL",
	"SCMP_ACT_KILL_PROCESS",
	"SCMP_ACT_KILL_THREAD",
	"SCMP_ACT_LOG",
	"SCMP_ACT_NOTIFY",
	"SCMP_ACT_TRACE",
	"SCMP_ACT_TRAP",
	NULL,
};

static const char *const seccomp_ops[] = {
	"SCMP_CMP_EQ",
	"SCMP_CMP_GE",
	"SCMP_CMP_GT",
	"SCMP_CMP_LE",
	"SCMP_CMP_LT",
	"SCMP_CMP_MASKED_EQ",
	"SCMP_CMP_NE",
	NULL,
};

static const char *const seccomp_archs[] = {
	"SCMP_ARCH_X86",
	"SCMP_ARCH_X86_64",
	"SCMP_ARCH_X32",
	"SCMP_ARCH_ARM",
	"SCMP_ARCH_AARCH64",
	NULL,
};

static const char *const seccomp_flags[] = {
	"SECCOMP_FILTER_FLAG_LOG",
	"SECCOMP_FILTER_FLAG_SPEC_ALLOW",
	"SECCOMP_FILTER_FLAG_TSYNC",
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
	NULL,
};

static const char *const mempolicy_modes[] = {
	"MPOL_DEFAULT",
	"MPOL_BIND",
	"MPOL_INTERLEAVE",
	"MPOL_WEIGHTED_INTERLEAVE",
	"MPOL_PREFERRED",
	"MPOL_PREFERRED_MANY",
	"MPOL_LOCAL",
	NULL,
};

static const char *const mempolicy_flags[] = {
	"MPOL_F_NUMA_BALANCING",
	"MPOL_F_RELATIVE_NODES",
	"MPOL_F_STATIC_NODES",
	NULL,
};

static void gen_enabled(yajl_gen g, const char *key, bool on)
{
	jgen_str(g, key);
	yajl_gen_map_open(g);
	jgen_key_bool(g, "enabled", on);
	yajl_gen_map_close(g);
}

static void gen_linux(yajl_gen g)
{
	jgen_str(g, "linux");
	yajl_gen_map_open(g);
	jgen_key_list(g, "namespaces", namespaces);
	jgen_key_list(g, "capabilities", capabilities);
	jgen_str(g, "cgroup");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "v1", true);
	jgen_key_bool(g, "v2", true);
	jgen_key_bool(g, "systemd", true);
	jgen_key_bool(g, "systemdUser", false);
	jgen_key_bool(g, "rdma", true);
	yajl_gen_map_close(g);
	jgen_str(g, "seccomp");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "enabled", true);
	jgen_key_list(g, "actions", seccomp_actions);
	jgen_key_list(g, "operators", seccomp_ops);
	jgen_key_list(g, "archs", seccomp_archs);
	jgen_key_list(g, "knownFlags", seccomp_flags);
	jgen_key_list(g, "supportedFlags", seccomp_flags);
	yajl_gen_map_close(g);
	jgen_str(g, "memoryPolicy");
	yajl_gen_map_open(g);
	jgen_key_list(g, "modes", mempolicy_modes);
	jgen_key_list(g, "flags", mempolicy_flags);
	yajl_gen_map_close(g);
	gen_enabled(g, "apparmor", false);
	gen_enabled(g, "selinux", false);
	gen_enabled(g, "intelRdt", false);
	jgen_str(g, "mountExtensions");
	yajl_gen_map_open(g);
	gen_enabled(g, "idmap", true);
	yajl_gen_map_close(g);
	gen_enabled(g, "netDevices", false);
	yajl_gen_map_close(g);
}

/* What works on this host for this caller (features.md leaves the
 * annotations to the runtime). */
static void gen_caller(yajl_gen g)
{
	static const char *const modes[] = { "v1", "hybrid", "v2" };
	enum cgroup_mode mode;
	struct error err;
	bool rootless = rootless_caller();

	jgen_key_str(g, "io.agentsbx.caller", rootless ? "rootless" : "root");
	if (cgroup_detect_mode(&mode, &err) == 0)
		jgen_key_str(g, "io.agentsbx.cgroup.mode", modes[mode]);
	jgen_key_str(g, "io.agentsbx.cgroup.limits",
		     cgroup_caller_can_create() ? "true" : "false");
	jgen_key_str(g, "io.agentsbx.userns.idmaps",
		     !rootless		     ? "any" :
		     rootless_can_map_more() ? "own id; others through newuidmap (/etc/subuid)" :
					       "own id only (no newuidmap)");
}

int runtime_features(struct error *err)
{
	yajl_gen g = jgen_new(true);
	char *out;

	yajl_gen_map_open(g);
	jgen_str(g, "ociVersionMin");
	jgen_str(g, OCI_VERSION_MIN);
	jgen_str(g, "ociVersionMax");
	jgen_str(g, OCI_VERSION_MAX);
	jgen_key_list(g, "hooks", hook_kind_names());
	jgen_key_list(g, "mountOptions", mount_options_supported());
	gen_linux(g);
	jgen_str(g, "annotations");
	yajl_gen_map_open(g);
	jgen_str(g, "org.opencontainers.runc.version");
	jgen_str(g, "agentsbx " AGENTSBX_VERSION);
	gen_caller(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	out = jgen_finish(g, NULL);
	fputs(out, stdout);
	free(out);
	return 0;
}
