/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SPEC_H
#define AGENTSBX_SPEC_H

/*
 * config.json as typed C structs: the Linux part of the OCI runtime spec
 * v1.3.  Produced by spec_load_*() (parse.c) and checked by spec_validate()
 * (validate.c).  Pure data: nothing in spec/ makes a syscall that changes
 * anything, so all of it is unit-testable.
 *
 * Conventions:
 *  - every string is a NUL-terminated heap copy, NULL when absent;
 *  - arrays are (pointer, count) pairs, count 0 and pointer NULL when absent;
 *  - optional scalars are wrapped in opt_* with a `set` flag, so that an
 *    absent value is never confused with 0.
 *  - spec_free() releases everything.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"

/* GNU C predefines `linux` as 1, which would break the `linux` member of
 * struct oci_spec: use __linux__ to test for Linux. */
#undef linux

#define OCI_VERSION_MIN "1.0.0"
#define OCI_VERSION_MAX "1.3.0"

/* Upper bounds that protect the runtime against hostile configs. */
#define SPEC_MAX_FILE_SIZE (16u * 1024 * 1024) /* bytes of config.json */
#define SPEC_MAX_DEPTH 64		       /* JSON nesting */

struct opt_u64 {
	bool set;
	uint64_t v;
};

struct opt_i64 {
	bool set;
	int64_t v;
};

struct opt_bool {
	bool set;
	bool v;
};

struct str_array {
	char **items; /* NULL-terminated too (items[len] == NULL) */
	size_t len;
};

/* An ordered string -> string map (annotations, sysctl, unified). */
struct str_map {
	char **keys;
	char **values;
	size_t len;
};

/* ---- process ---------------------------------------------------------- */

struct oci_user {
	uint32_t uid;
	uint32_t gid;
	struct opt_u64 umask;
	uint32_t *additional_gids;
	size_t n_additional_gids;
	char *username;
};

struct oci_capabilities {
	struct str_array bounding;
	struct str_array effective;
	struct str_array inheritable;
	struct str_array permitted;
	struct str_array ambient;
};

struct oci_rlimit {
	char *type;   /* "RLIMIT_NOFILE" as written */
	int resource; /* RLIMIT_NOFILE; filled by the parser, -1 if unknown */
	uint64_t soft;
	uint64_t hard;
};

struct oci_console_size {
	bool set;
	uint32_t height;
	uint32_t width;
};

struct oci_io_priority {
	bool set;
	char *class_name; /* "IOPRIO_CLASS_RT" | "_BE" | "_IDLE" */
	int class;	  /* IOPRIO_CLASS_* value; filled by the parser */
	int64_t priority; /* 0..7 */
};

struct oci_scheduler {
	bool set;
	char *policy; /* "SCHED_OTHER" ... "SCHED_DEADLINE" */
	struct opt_i64 nice;
	struct opt_i64 priority;
	struct str_array flags; /* "SCHED_FLAG_..." */
	struct opt_u64 runtime;
	struct opt_u64 deadline;
	struct opt_u64 period;
};

struct oci_exec_cpu_affinity {
	char *initial; /* cpu list, "0-3,7" */
	char *final;
};

struct oci_process {
	bool terminal;
	struct oci_console_size console_size;
	struct oci_user user;
	struct str_array args;
	struct str_array env;
	char *cwd;
	bool has_capabilities; /* "capabilities" present at all */
	struct oci_capabilities capabilities;
	struct oci_rlimit *rlimits;
	size_t n_rlimits;
	bool no_new_privileges;
	struct opt_i64 oom_score_adj;
	char *apparmor_profile;
	char *selinux_label;
	struct oci_io_priority io_priority;
	struct oci_scheduler scheduler;
	struct oci_exec_cpu_affinity exec_cpu_affinity;
};

/* ---- root, mounts ----------------------------------------------------- */

struct oci_root {
	char *path;
	bool readonly;
};

struct oci_id_mapping {
	uint32_t container_id;
	uint32_t host_id;
	uint32_t size;
};

struct oci_mount {
	char *destination;
	char *type;
	char *source;
	struct str_array options;
	struct oci_id_mapping *uid_mappings;
	size_t n_uid_mappings;
	struct oci_id_mapping *gid_mappings;
	size_t n_gid_mappings;
};

/* ---- hooks ------------------------------------------------------------ */

enum hook_kind {
	HOOK_PRESTART,
	HOOK_CREATE_RUNTIME,
	HOOK_CREATE_CONTAINER,
	HOOK_START_CONTAINER,
	HOOK_POSTSTART,
	HOOK_POSTSTOP,
	HOOK_KIND_MAX,
};

struct oci_hook {
	char *path; /* absolute */
	struct str_array args;
	struct str_array env;
	bool has_env;		/* "env" given (absent: the runtime's environment) */
	struct opt_i64 timeout; /* seconds, > 0 when set */
};

struct oci_hook_list {
	struct oci_hook *items;
	size_t len;
};

/* ---- linux: namespaces, devices --------------------------------------- */

enum ns_type {
	NS_PID,
	NS_NETWORK,
	NS_MOUNT,
	NS_IPC,
	NS_UTS,
	NS_USER,
	NS_CGROUP,
	NS_TIME,
	NS_TYPE_MAX,
};

struct oci_namespace {
	enum ns_type type;
	char *path; /* NULL: create a new one; else setns() into it */
};

struct oci_time_offset {
	bool set;
	int64_t secs;
	uint32_t nanosecs;
};

struct oci_device {
	char *path;    /* absolute, inside the container */
	char type;     /* 'c', 'b', 'u' or 'p' */
	int64_t major; /* required for c/b/u */
	int64_t minor;
	struct opt_u64 file_mode;
	struct opt_u64 uid;
	struct opt_u64 gid;
};

/* ---- linux.resources (cgroups) ---------------------------------------- */

struct oci_device_cgroup {
	bool allow;
	char type;	      /* 'a', 'c' or 'b'; 'a' when absent */
	struct opt_i64 major; /* unset = wildcard */
	struct opt_i64 minor;
	char *access; /* subset of "rwm"; NULL = "rwm" */
};

struct oci_memory {
	struct opt_i64 limit;
	struct opt_i64 reservation;
	struct opt_i64 swap;
	struct opt_i64 kernel;
	struct opt_i64 kernel_tcp;
	struct opt_u64 swappiness;
	struct opt_bool disable_oom_killer;
	struct opt_bool use_hierarchy;
	struct opt_bool check_before_update;
};

struct oci_cpu {
	struct opt_u64 shares;
	struct opt_i64 quota;
	struct opt_u64 burst;
	struct opt_u64 period;
	struct opt_i64 realtime_runtime;
	struct opt_u64 realtime_period;
	char *cpus;
	char *mems;
	struct opt_i64 idle;
};

struct oci_blkio_weight_device {
	int64_t major;
	int64_t minor;
	struct opt_u64 weight;
	struct opt_u64 leaf_weight;
};

struct oci_blkio_throttle {
	int64_t major;
	int64_t minor;
	uint64_t rate;
};

struct oci_blkio {
	struct opt_u64 weight;
	struct opt_u64 leaf_weight;
	struct oci_blkio_weight_device *weight_device;
	size_t n_weight_device;
	struct oci_blkio_throttle *throttle_read_bps;
	size_t n_throttle_read_bps;
	struct oci_blkio_throttle *throttle_write_bps;
	size_t n_throttle_write_bps;
	struct oci_blkio_throttle *throttle_read_iops;
	size_t n_throttle_read_iops;
	struct oci_blkio_throttle *throttle_write_iops;
	size_t n_throttle_write_iops;
};

struct oci_hugepage_limit {
	char *page_size; /* "2MB" */
	uint64_t limit;
};

struct oci_net_priority {
	char *name;
	uint32_t priority;
};

struct oci_network_resources {
	struct opt_u64 class_id;
	struct oci_net_priority *priorities;
	size_t n_priorities;
};

struct oci_rdma {
	char *device;
	struct opt_u64 hca_handles;
	struct opt_u64 hca_objects;
};

struct oci_resources {
	bool present;
	struct oci_device_cgroup *devices;
	size_t n_devices;
	bool has_memory;
	struct oci_memory memory;
	bool has_cpu;
	struct oci_cpu cpu;
	struct opt_i64 pids_limit; /* <= 0 means unlimited */
	bool has_block_io;
	struct oci_blkio block_io;
	struct oci_hugepage_limit *hugepage_limits;
	size_t n_hugepage_limits;
	bool has_network;
	struct oci_network_resources network;
	struct oci_rdma *rdma;
	size_t n_rdma;
	struct str_map unified;
};

/* ---- linux.seccomp ---------------------------------------------------- */

struct oci_seccomp_arg {
	uint32_t index;
	uint64_t value;
	uint64_t value_two;
	char *op; /* "SCMP_CMP_EQ" ... */
};

struct oci_seccomp_syscall {
	struct str_array names;
	char *action; /* "SCMP_ACT_ALLOW" ... */
	struct opt_u64 errno_ret;
	struct oci_seccomp_arg *args;
	size_t n_args;
};

struct oci_seccomp {
	bool present;
	char *default_action;
	struct opt_u64 default_errno_ret;
	struct str_array architectures; /* "SCMP_ARCH_X86_64" ... */
	struct str_array flags;		/* "SECCOMP_FILTER_FLAG_..." */
	char *listener_path;
	char *listener_metadata;
	struct oci_seccomp_syscall *syscalls;
	size_t n_syscalls;
};

/* ---- linux: the rest -------------------------------------------------- */

struct oci_personality {
	bool set;
	char *domain; /* "LINUX" | "LINUX32" */
	struct str_array flags;
};

struct oci_memory_policy {
	bool set;
	char *mode;
	char *nodes;
	struct str_array flags;
};

/* linux.memoryPolicy as set_mempolicy(2) takes it (spec/mempolicy.c). */
#define SPEC_MPOL_MAX_NODES 1024
struct spec_mempolicy {
	int mode;
	unsigned flags;
	unsigned long nodes[SPEC_MPOL_MAX_NODES / (8 * sizeof(long))];
	size_t n_nodes;
};
int spec_memory_policy(const struct oci_memory_policy *in, struct spec_mempolicy *out,
		       struct error *err);

struct oci_linux {
	struct oci_namespace *namespaces;
	size_t n_namespaces;
	struct oci_id_mapping *uid_mappings;
	size_t n_uid_mappings;
	struct oci_id_mapping *gid_mappings;
	size_t n_gid_mappings;
	struct oci_time_offset time_monotonic;
	struct oci_time_offset time_boottime;
	struct oci_device *devices;
	size_t n_devices;
	char *cgroups_path;
	struct oci_resources resources;
	char *rootfs_propagation; /* "private" | "shared" | "slave" | "unbindable" ... */
	struct oci_seccomp seccomp;
	struct str_map sysctl;
	struct str_array masked_paths;
	struct str_array readonly_paths;
	char *mount_label;
	struct oci_personality personality;
	struct oci_memory_policy memory_policy;
	bool has_intel_rdt;   /* present: refused as not supported */
	bool has_net_devices; /* present: refused as not supported */
};

/* ---- the whole document ----------------------------------------------- */

struct oci_spec {
	char *oci_version;
	bool has_process;
	struct oci_process process;
	struct oci_root root;
	char *hostname;
	char *domainname;
	struct oci_mount *mounts;
	size_t n_mounts;
	struct oci_hook_list hooks[HOOK_KIND_MAX];
	struct str_map annotations;
	bool has_linux;
	struct oci_linux linux;
};

/* ---- API -------------------------------------------------------------- */

/*
 * Parse config.json bytes (not necessarily NUL-terminated) into *out.
 * Errors name the JSON path: "config.json: linux.namespaces[2].type: ...".
 * Type errors and malformed JSON are reported here; semantic checks are
 * spec_validate()'s.  On failure *out is left zeroed.
 */
int spec_parse(const char *buf, size_t len, struct oci_spec *out,
	       struct error *err);

/* Read a file (bounded by SPEC_MAX_FILE_SIZE) and spec_parse() it. */
int spec_load_file(const char *path, struct oci_spec *out, struct error *err);

/* Parse a lone process object (runc exec --process FILE). */
int spec_parse_process(const char *buf, size_t len, struct oci_process *out,
		       struct error *err);

/*
 * Semantic checks: required fields, absolute paths, duplicate namespaces,
 * uid maps without a user namespace, sysctls without their namespace,
 * unsupported features ("not supported"), ...
 */
int spec_validate(const struct oci_spec *spec, struct error *err);
int spec_validate_process(const struct oci_process *proc, struct error *err);

/* Parse and check a lone linux.resources object (update --resources). */
int spec_parse_resources(const char *buf, size_t len, struct oci_resources *out,
			 struct error *err);
void resources_free(struct oci_resources *r);

void spec_free(struct oci_spec *spec);
void process_free(struct oci_process *proc);

/* Helpers shared by spec/ and runtime/. */
const char *ns_type_name(enum ns_type t);     /* "pid", ...; NULL if invalid */
int ns_type_from_name(const char *name);      /* -1 if unknown */
const char *hook_kind_name(enum hook_kind k); /* "prestart", ...; or NULL */
/* The namespace that isolates sysctl key from the host's (net.* the
 * network one, kernel.msg* and fs.mqueue.* the ipc one, ...); false for a
 * key no namespace isolates. */
bool spec_sysctl_namespace(const char *key, enum ns_type *ns);
/* All six, in enum order, NULL-terminated (for `features`). */
const char *const *hook_kind_names(void);
const struct oci_namespace *spec_find_namespace(const struct oci_spec *spec,
						enum ns_type t);
const char *str_map_get(const struct str_map *m, const char *key);

/* The paths `spec` masks (runc's list); the policy masks these and more. */
extern const char *const spec_default_masked_paths[];
/* The default config.json of `agentsbx spec` (rootless variant too).
 * A heap string, pretty-printed JSON ending in a newline. */
char *spec_default_json(bool rootless, uint32_t uid, uint32_t gid);

/*
 * Name tables (names.c): config.json names of kernel and libseccomp
 * constants.  Each returns -1 for a name it does not know (or NULL).
 */
int rlimit_from_name(const char *name);		/* "RLIMIT_NOFILE" */
int ioprio_class_from_name(const char *name);	/* "IOPRIO_CLASS_BE" */
int sched_policy_from_name(const char *name);	/* "SCHED_FIFO" */
int64_t sched_flag_from_name(const char *name); /* "SCHED_FLAG_RECLAIM" */
/* "CAP_KILL" -> CAP_KILL: upper case with the "CAP_" prefix only, and a
 * name libcap knows (which may be above the running kernel's last cap). */
int capability_from_name(const char *name);
int personality_domain_from_name(const char *name); /* PER_LINUX(32) */
/* "rslave" -> MS_SLAVE|MS_REC, "private" -> MS_PRIVATE, ... */
int rootfs_propagation_from_name(const char *name, unsigned long *flags);
/* SCMP_ACT_*; for ERRNO and TRACE the value carries 0 as its data: OR in
 * the errno (SCMP_ACT_ERRNO(x) == SCMP_ACT_ERRNO(0) | (x & 0xffff)). */
int seccomp_action_from_name(const char *name, uint32_t *action);
bool seccomp_action_takes_errno(const char *name); /* ERRNO, TRACE */
int seccomp_op_from_name(const char *name);	   /* enum scmp_compare */
/* SCMP_ARCH_* token; 0 for a name the spec lists but this build's
 * libseccomp does not know (skip it, with a warning). */
int seccomp_arch_from_name(const char *name, uint32_t *arch);
int seccomp_flag_from_name(const char *name, unsigned int *flag);

#endif
