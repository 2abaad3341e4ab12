/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CGROUP_SYSTEMD_H
#define AGENTSBX_CGROUP_SYSTEMD_H

/*
 * The systemd cgroup manager (--systemd-cgroup, systemd.c), for
 * cgroup.c's dispatch and the unit tests.
 *
 * The container's cgroup is a transient scope unit, "PREFIX-NAME.scope" in
 * a slice, started over D-Bus (sd-bus) with the container's pid in it.  Its
 * path in the hierarchy ("/system.slice/docker-abc.scope") is what the state
 * file keeps, so that kill, ps, pause/resume, exec and the stats work on
 * the files as with cgroupfs; create, update and destroy go through systemd.
 *
 * Resources: the limits systemd knows are given as unit properties (it
 * writes those files itself, and again at every daemon-reload, so a file
 * write of ours would not last); the rest (devices, hugetlb, rdma, io.max,
 * cpu.idle, burst, other "unified" keys, ...) is written to the files.  The
 * split works on the settings lists of v2.c / v1.c, so the
 * values are checked exactly as with cgroupfs.
 */

#include <stdint.h>

#include "internal.h"

#define CGSD_DEFAULT_SLICE "system.slice"
#define CGSD_DEFAULT_PREFIX "agentsbx"
#define CGSD_RUN_DIR "/run/systemd/system" /* present iff systemd is PID 1 */
#define CGSD_JOB_TIMEOUT_MS 30000
#define CGSD_UNIT_NAME_MAX 255
#define CGSD_CPU_MAX 8192	   /* highest CPU / NUMA node in a mask, + 1 */
#define CGSD_DEFAULT_PERIOD 100000 /* us, the kernel's and systemd's */
/* systemd keeps CPUQuotaPerSecUSec as a whole percent in the transient
 * unit file (CPUQuota=N%), so that is what a daemon-reload brings back. */
#define CGSD_QUOTA_STEP 10000

/* ---- names and paths (pure) ------------------------------------------- */

struct cgsd_unit {
	char *slice; /* "system.slice"; "-.slice" for the root */
	char *name;  /* "docker-abc.scope" */
	char *path;  /* "/system.slice/docker-abc.scope" */
};

void cgsd_unit_free(struct cgsd_unit *u);

/*
 * linux.cgroupsPath "slice:prefix:name" (empty slice: system.slice; empty
 * prefix: the unit is "name.scope"), or "" for system.slice:agentsbx:ID.
 * Characters systemd does not allow in a unit name are \xNN-escaped.
 */
int cgsd_parse_path(const char *cgroups_path, const char *id,
		    struct cgsd_unit *out, struct error *err);

/* "a-b.slice" -> "/a.slice/a-b.slice"; "-.slice" -> "" (the root). */
int cgsd_slice_path(const char *slice, char **out, struct error *err);

/* The unit and its slice back from a cgroup path of a state file. */
int cgsd_unit_from_path(const char *path, struct cgsd_unit *out,
			struct error *err);

/* ---- unit properties (pure) -------------------------------------------- */

enum cgsd_type {
	CGSD_BOOL,  /* b */
	CGSD_U64,   /* t */
	CGSD_STR,   /* s */
	CGSD_STRV,  /* as */
	CGSD_BYTES, /* ay */
	CGSD_PIDS,  /* au, one pid */
	CGSD_PAIRS, /* a(ss), from strv: path, access, path, access, ... */
};

struct cgsd_prop {
	const char *name; /* systemd's name (static) */
	enum cgsd_type type;
	uint64_t u;	/* BOOL, U64, PIDS */
	char *s;	/* STR */
	char **strv;	/* STRV, PAIRS; NULL-terminated */
	uint8_t *bytes; /* BYTES */
	size_t n_bytes;
	const char *field; /* the spec field it comes from, or NULL */
};

struct cgsd_props {
	struct cgsd_prop *items;
	size_t n, cap;
};

void cgsd_props_free(struct cgsd_props *p);
/* The last property of that name (systemd applies them in order). */
const struct cgsd_prop *cgsd_props_find(const struct cgsd_props *p,
					const char *name);

/* What the running systemd and the host offer. */
struct cgsd_caps {
	unsigned version; /* 252 for "252.38-1~deb12u1" */
	bool unified;	  /* pure cgroup v2; false: v1 or hybrid */
};

/* Leading number of systemd's Version property; 0 if there is none. */
unsigned cgsd_parse_version(const char *version);

/* The scope's own properties: Description, Slice, PIDs, Delegate, the
 * accounting switches, DefaultDependencies=no, ... */
void cgsd_scope_props(const struct cgsd_unit *u, pid_t pid,
		      const struct cgsd_caps *caps, struct cgsd_props *out);

/* The CPU quota in force, for a change that gives only the quota or only
 * the period (systemd takes quota per second and period). */
struct cgsd_cpu_now {
	uint64_t quota;	 /* us per period; UINT64_MAX: no limit */
	uint64_t period; /* us */
};

/*
 * Split settings (cg2_build_settings, or cg1_build_settings' v1 list) into
 * properties for what systemd manages and the rest, copied to *rest in the
 * same order, for the files.  Each property names its spec field.
 */
int cgsd_split_settings(const struct cg_settings *in,
			const struct cgsd_caps *caps,
			const struct cgsd_cpu_now *now,
			struct cgsd_props *props, struct cg_settings *rest,
			struct error *err);

/*
 * cgroup v1: the device rules (defaults included) as DevicePolicy=strict and
 * DeviceAllow entries, because systemd writes the devices cgroup of a scope
 * again at every daemon-reload (to "allow all" when it has no rules).
 * "c 1:3" is /dev/char/1:3, "c 136:*" char-pts (the name from the text of
 * /proc/devices), "c *:*" char-*.  Returns 1 when done, 0 when the rules
 * deny something narrower than everything after allowing it (an allow list
 * cannot say that: the caller warns), -1 on an invalid rule.
 */
int cgsd_device_props(const struct oci_device_cgroup *rules, size_t n,
		      const char *proc_devices, struct cgsd_props *out,
		      struct error *err);

/* "0-3,8" -> systemd's AllowedCPUs byte array (bit n of byte n / 8). */
int cgsd_cpu_mask(const char *field, const char *list, uint8_t **bytes,
		  size_t *n, struct error *err);
/* CPUQuotaPerSecUSec for quota/period: rounded up to a whole percent of a
 * CPU (CGSD_QUOTA_STEP), so that the limit systemd writes (per_sec * period
 * / 1e6, rounded down) is never below quota, is quota itself when that is a
 * whole percent, and does not change at a daemon-reload. */
uint64_t cgsd_quota_per_sec(uint64_t quota, uint64_t period);

/* ---- the manager (cgroup.c's dispatch) ---------------------------------- */

/* The scope's cgroup path; fails clearly when systemd is not running. */
int cgsd_resolve_path(const char *cgroups_path, const char *id, char **out,
		      struct error *err);
/* res carries the default device rules already. */
int cgsd_create(const struct cg_host *h, const char *path,
		const struct oci_resources *res, pid_t pid, struct error *err);
/* kill --all: the files, but a scope systemd removed once emptied is no
 * error (v1: it goes while the hierarchies are walked). */
int cgsd_kill(const struct cg_host *h, const char *path, int sig,
	      struct error *err);
int cgsd_update(const struct cg_host *h, const char *path,
		const struct oci_resources *res, struct error *err);
int cgsd_destroy(const struct cg_host *h, const char *path, bool force,
		 struct error *err);

#endif
