/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CGROUP_INTERNAL_H
#define AGENTSBX_CGROUP_INTERNAL_H

/*
 * Shared by cgroup.c (mode, host discovery, path, dispatch), fs.c
 * (directory and file primitives, settings lists), v2.c,
 * v1.c and devices_bpf.c.  Not for the rest of the runtime.
 *
 * Layout of the work: a resources object is first turned into a list of
 * "settings" (file, value, the spec field it came from) by pure functions
 * (cg2_build_settings, cg1_build_settings), which the unit tests check
 * without cgroups; the settings are then written through directory fds.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

#define CGROUP_FS_ROOT "/sys/fs/cgroup"
#define CGROUP_HYBRID_UNIFIED "/sys/fs/cgroup/unified"
#define CGROUP_DEFAULT_PARENT "/agentsbx"

#define CG_MAX_DEPTH 64	       /* components in a container cgroup path */
#define CG_READ_MAX (1u << 20) /* largest control file we read */
#define CG_FREEZE_TIMEOUT_MS 10000
#define CG_EMPTY_TIMEOUT_MS 10000 /* destroy --force: wait for the exit */
#define CG_RMDIR_TIMEOUT_MS 5000  /* EBUSY retries */
#define CG_KILL_MAX_ROUNDS 200

/* ---- host ------------------------------------------------------------- */

/* v1 controllers we know (bit numbers). */
enum cg1_ctrl {
	CG1_CPU,
	CG1_CPUACCT,
	CG1_CPUSET,
	CG1_MEMORY,
	CG1_DEVICES,
	CG1_FREEZER,
	CG1_NET_CLS,
	CG1_NET_PRIO,
	CG1_BLKIO,
	CG1_PERF_EVENT,
	CG1_HUGETLB,
	CG1_PIDS,
	CG1_RDMA,
	CG1_MISC,
	CG1_NAME_SYSTEMD, /* the name=systemd hierarchy, joined as runc does */
	CG1_CTRL_MAX,
};

#define CG1_MAX_HIER CG1_CTRL_MAX

/* One mounted v1 hierarchy (co-mounted controllers share one). */
struct cg1_hier {
	char *mnt;	/* mount point, e.g. /sys/fs/cgroup/cpu,cpuacct */
	unsigned ctrls; /* 1u << enum cg1_ctrl */
};

struct cg_host {
	enum cgroup_mode mode;
	const char *v2_mnt; /* unified mount (V2, HYBRID), else NULL */
	struct cg1_hier hier[CG1_MAX_HIER];
	size_t n_hier;
	unsigned v1_ctrls; /* union of hier[].ctrls */
};

/* The host's cgroup layout, discovered once and cached.  NULL on error. */
const struct cg_host *cg_host_get(struct error *err);
/* Whether the running kernel (or release, "6.1.0-57-amd64") is older than
 * major.minor; an unparsable release counts as older. */
bool cg_kernel_older_than(int major, int minor);
bool cg_release_older_than(const char *release, int major, int minor);
const char *cg1_ctrl_name(enum cg1_ctrl c);
int cg1_ctrl_from_name(const char *name); /* -1 if unknown */
/* The hierarchy holding a controller, or NULL when it is not mounted. */
const struct cg1_hier *cg1_host_hier(const struct cg_host *h, enum cg1_ctrl c);
/* Parse /proc/self/mountinfo text into h->hier (exposed for tests). */
int cg1_parse_mountinfo(const char *text, struct cg_host *h);
void cg_host_free(struct cg_host *h);

/* Normalise "a//b/./c" into "/a/b/c"; refuses "..", control characters,
 * over-long names and the root itself.  Exposed for tests. */
int cg_path_normalize(const char *in, char **out, struct error *err);

/* ---- directories and files (fs.c) ------------------------------ */

/* An open cgroup directory; path is kept for messages. */
struct cg_dir {
	int fd;
	char *path;
};

#define CG_DIR_INIT                    \
	{                              \
		.fd = -1, .path = NULL \
	}

void cg_dir_close(struct cg_dir *d);
#define _cleanup_cg_dir_ __attribute__((cleanup(cg_dir_close)))

/* Open a hierarchy's mount point and check its filesystem magic. */
int cg_open_mount(const char *mnt, bool v2, struct cg_dir *out,
		  struct error *err);

/*
 * Open (create == false) or create (create == true) the directories of
 * path ("/a/b/c") under root, one component at a time with O_NOFOLLOW.
 * For every level, from root itself down to the leaf, calls fn (may be
 * NULL) with the parent (NULL for root), the level and whether it was
 * just made.  Made directories are recorded in *made for cg_rollback().
 * A missing directory (create == false) fails with err->code ENOENT.
 */
struct cg_made {
	char *rel[CG_MAX_DEPTH]; /* relative to the root, top-down */
	size_t n;
};

typedef int (*cg_level_fn)(const struct cg_dir *parent,
			   const struct cg_dir *dir, bool made, bool leaf,
			   void *ctx, struct error *err);

/* v1_rt.c: a realtime budget for the parents agentsbx made, given
 * top-down from a cg_walk level function (cgroup v1 cpu hierarchy). */
struct cg1_rt {
	int64_t runtime; /* requested cpu.rt_runtime_us, <= 0: none */
	uint64_t period; /* requested cpu.rt_period_us, 0: the default */
	int depth;
};
int cg1_rt_level(const struct cg_dir *parent, const struct cg_dir *dir, bool made,
		 bool leaf, struct cg1_rt *rt, struct error *err);

int cg_walk(const struct cg_dir *root, const char *path, bool create,
	    cg_level_fn fn, void *ctx, struct cg_dir *leaf,
	    struct cg_made *made, struct error *err);
/* Remove what cg_walk made (bottom-up, best effort) and free the record. */
void cg_rollback(const struct cg_dir *root, struct cg_made *made);
void cg_made_free(struct cg_made *made);

/* Write value to d/file: "write VALUE to PATH: strerror" on failure,
 * err->code = errno. */
int cg_write(const struct cg_dir *d, const char *file, const char *value,
	     struct error *err);
int cg_read(const struct cg_dir *d, const char *file, char **out,
	    struct error *err);
bool cg_exists(const struct cg_dir *d, const char *file);
/* Value of "key N" in a flat-keyed file (cgroup.events, memory.events). */
int cg_read_keyed(const struct cg_dir *d, const char *file, const char *key,
		  long long *out, struct error *err);
/* Is word (a controller name) in a space-separated list? */
bool cg_word_in(const char *list, const char *word);

/* All pids in d and its descendants (cgroup.procs). *pids is a heap array. */
int cg_collect_pids(const struct cg_dir *d, pid_t **pids, size_t *n,
		    struct error *err);
/* rmdir d's descendants and then path itself (relative to root), retrying
 * EBUSY for up to CG_RMDIR_TIMEOUT_MS.  A missing path is not an error. */
int cg_remove_tree(const struct cg_dir *root, const char *path,
		   struct error *err);

/* Freezing, as each version does it; used by the common kill loop. */
struct cg_freezer {
	int (*freeze)(const struct cg_dir *d, bool freeze, struct error *err);
	int (*is_frozen)(const struct cg_dir *d, bool *frozen,
			 struct error *err);
	const struct cg_dir *dir; /* NULL: no freezer, signal without */
};

/*
 * Signal every process in d (descendants included).  Freezes first when a
 * freezer is given (so that nothing forks meanwhile), thaws afterwards
 * unless it was frozen already and sig is not SIGKILL; repeats until no new
 * process shows up.
 */
int cg_signal_all(const struct cg_dir *d, int sig,
		  const struct cg_freezer *fz, struct error *err);
/* Poll until d and its descendants hold no process, up to timeout_ms. */
int cg_wait_empty(const struct cg_dir *d, int timeout_ms, struct error *err);

void cg_sleep_ms(unsigned ms);
long long cg_now_ms(void);

/* ---- settings: what to write where ------------------------------------ */

enum {
	CG_SET_OPTIONAL = 1u << 0,   /* file may be absent: skip it */
	CG_SET_RETRY = 1u << 1,	     /* EINVAL: retry after the others */
	CG_SET_KEEP_QUOTA = 1u << 2, /* v2 cpu.max: value is the period only */
	CG_SET_MULTILINE = 1u << 3,  /* write each line separately */
	CG_SET_ALT = 1u << 4,	     /* only if the previous one's file was absent */
	CG_SET_WARN = 1u << 5,	     /* any failure: a warning, not an error */
};

struct cg_setting {
	const char *field; /* spec field, "memory.limit" (static) */
	char *ctrl;	   /* controller owning the file; NULL: core file */
	char *file;
	char *value;
	unsigned flags;
	const char *usage_file; /* checkBeforeUpdate: refuse below this */
};

struct cg_settings {
	struct cg_setting *items;
	size_t n, cap;
};

void cg_settings_add(struct cg_settings *s, const char *field,
		     const char *ctrl, unsigned flags, const char *file,
		     const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void cg_settings_free(struct cg_settings *s);
const struct cg_setting *cg_settings_find(const struct cg_settings *s,
					  const char *file);

/*
 * Write the settings whose controller satisfies want(ctrl) (NULL: all)
 * into d, in order; CG_SET_RETRY ones that fail with EINVAL are tried
 * again at the end (kernel ordering rules between related files).
 */
int cg_settings_apply(const struct cg_dir *d, const struct cg_settings *s,
		      bool (*want)(const char *ctrl, const void *ctx),
		      const void *ctx,
		      struct error *err);

/* Shared validation of spec values. */
int cg_check_cpulist(const char *field, const char *list, struct error *err);
/* cpu.cpus/mems -> cpuset.cpus/mems and pids.limit -> pids.max: the same
 * file names on v1 and v2. */
int cg_add_cpuset(const struct oci_cpu *c, struct cg_settings *out,
		  struct error *err);
void cg_add_pids(const struct oci_resources *res, struct cg_settings *out);
int cg_check_page_size(const char *size, struct error *err);

/* ---- v2 (v2.c) --------------------------------------------------- */

int cg2_build_settings(const struct oci_resources *res, bool update,
		       struct cg_settings *out, struct error *err);
/* The parts a hybrid host sends to its cgroup2 side. */
int cg2_add_hugetlb(const struct oci_resources *res, struct cg_settings *out,
		    struct error *err);
int cg2_add_unified(const struct oci_resources *res, struct cg_settings *out,
		    struct error *err);
/* rdma.max lines (the same file on v1 and v2). */
int cg_add_rdma(const struct oci_resources *res, struct cg_settings *out,
		struct error *err);
/* Conversions, exposed for tests. */
uint64_t cg2_cpu_weight(uint64_t shares);
uint64_t cg2_io_weight(uint64_t blkio_weight);

/*
 * The operations on one cgroup2 hierarchy at mnt.  all_ctrls: enable every
 * controller we know that the parent offers (pure v2, so that stats and a
 * later update find them), else only those the settings need (the cgroup2
 * side of a hybrid host).
 */
struct cg2_create_opts {
	const char *mnt;
	bool all_ctrls;
	bool devices; /* attach the device filter */
	bool hybrid;  /* side of a hybrid host: only settings, no checks */
	int *leaf_fd; /* non-NULL: the leaf's fd, kept for CLONE_INTO_CGROUP */
};

int cg2_create(const struct cg2_create_opts *o, const char *path,
	       const struct cg_settings *set,
	       const struct oci_resources *res, pid_t pid, struct cg_made *made,
	       struct error *err);
int cg2_enter(const char *mnt, const char *path, pid_t pid,
	      struct error *err);
/* pid into the cgroup2 directory at leaf_fd (path: for messages). */
int cg2_dir_enter(int leaf_fd, const char *path, pid_t pid, struct error *err);
/* The leaf's fd, for CLONE_INTO_CGROUP into an existing cgroup. */
int cg2_open_leaf_fd(const char *mnt, const char *path, int *fd,
		     struct error *err);
/* Whether a process born in the cgroup at leaf_fd by CLONE_INTO_CGROUP
 * gets its cpuset (v2.c says when not). */
bool cg2_born_in_keeps_cpuset(int leaf_fd);
int cg2_update(const char *mnt, const char *path, const struct cg_settings *set,
	       const struct oci_resources *res, struct error *err);
int cg2_kill(const char *mnt, const char *path, int sig, struct error *err);
int cg2_pids(const char *mnt, const char *path, pid_t **pids, size_t *n,
	     struct error *err);
int cg2_freeze(const char *mnt, const char *path, bool freeze,
	       struct error *err);
int cg2_is_frozen(const char *mnt, const char *path, bool *frozen,
		  struct error *err);
int cg2_destroy(const char *mnt, const char *path, bool force,
		struct error *err);
/* Primitives on an open cgroup2 directory. */
int cg2_dir_freeze(const struct cg_dir *d, bool freeze, struct error *err);
int cg2_dir_is_frozen(const struct cg_dir *d, bool *frozen,
		      struct error *err);

/* ---- v1 and hybrid (v1.c) ---------------------------------------- */

/* v1 settings, plus (hybrid) the ones for the cgroup2 side in *v2. */
int cg1_build_settings(const struct oci_resources *res, bool update,
		       const struct cg_host *host, struct cg_settings *v1,
		       struct cg_settings *v2, struct error *err);
/* pid 0: no process yet; with b, the leaves' tasks files (and the
 * cgroup2 side's leaf, hybrid) for a process to come (cgroup.h). */
int cg1_create(const struct cg_host *h, const char *path,
	       const struct oci_resources *res, pid_t pid,
	       struct cgroup_birth *b, struct error *err);
int cg1_enter(const struct cg_host *h, const char *path, pid_t pid,
	      struct error *err);
/* b for an existing cgroup (exec). */
int cg1_open_birth(const struct cg_host *h, const char *path,
		   struct cgroup_birth *b, struct error *err);
int cg1_update(const struct cg_host *h, const char *path,
	       const struct oci_resources *res, struct error *err);
int cg1_kill(const struct cg_host *h, const char *path, int sig,
	     struct error *err);
int cg1_pids(const struct cg_host *h, const char *path, pid_t **pids,
	     size_t *n, struct error *err);
int cg1_freeze(const struct cg_host *h, const char *path, bool freeze,
	       struct error *err);
int cg1_is_frozen(const struct cg_host *h, const char *path, bool *frozen,
		  struct error *err);
int cg1_destroy(const struct cg_host *h, const char *path, bool force,
		struct error *err);

/* ---- v2 device filter (devices_bpf.c) ---------------------------- */

struct bpf_insn;

/*
 * The BPF_PROG_TYPE_CGROUP_DEVICE program for a rule list.  Semantics:
 * default deny; for each access bit asked for (r, w, m), the last rule
 * that matches the device and names that bit decides.  *insns is a heap
 * array.
 */
int cg_devices_build(const struct oci_device_cgroup *rules, size_t n,
		     struct bpf_insn **insns, size_t *len, struct error *err);
/* Load the program and attach it to the cgroup (BPF_F_ALLOW_MULTI),
 * replacing the programs attached there before. */
int cg_devices_apply(const struct cg_dir *d,
		     const struct oci_device_cgroup *rules, size_t n,
		     struct error *err);
/* Check one rule (type, access); shared with the v1 devices mapping. */
int cg_device_rule_check(const struct oci_device_cgroup *r, size_t i,
			 unsigned *access, struct error *err);
/* The checked access bits as v1 and systemd write them ("rwm" order);
 * returns the string's length. */
size_t cg_device_access_string(unsigned access, char out[4]);

#endif
