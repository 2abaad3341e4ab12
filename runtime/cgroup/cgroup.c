/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The manager: cgroup.h for the rest of the runtime.  The container's
 * cgroup path, the device rules every container gets, and dispatch to the
 * drivers (systemd.c, v1.c, v2.c).  Layers, each using only those below:
 *   cgroup.c (manager) -> systemd.c -> v1.c (with v1_rt.c) -> v2.c
 *   -> the primitives host.c, fs.c, devices_bpf.c.
 */
#include "internal.h"
#include "systemd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"

/* ---- paths ------------------------------------------------------------------ */

/* The runtime's own cgroup: the "0::" line (cgroup2), "/" on pure v1. */
static int own_cgroup(char **out, struct error *err)
{
	_cleanup_free_ char *text = NULL;

	if (read_file_at(AT_FDCWD, "/proc/self/cgroup", 1u << 16, &text, NULL,
			 err) < 0)
		return -1;
	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n');

		if (nl)
			*nl = '\0';
		if (str_has_prefix(l, "0::")) {
			const char *path = l + 3;

			if (path[0] != '/' || strstr(path, "/.."))
				return error_set(err,
						 "the runtime's own cgroup \"%s\" is outside its cgroup namespace",
						 path);
			*out = xstrdup(path);
			return 0;
		}
		l = nl ? nl + 1 : NULL;
	}
	*out = xstrdup("/");
	return 0;
}

bool cgroup_caller_can_create(void)
{
	_cleanup_free_ char *own = NULL, *dir = NULL;
	const struct cg_host *h;
	const struct cg1_hier *mem;
	struct error err;

	if (!(h = cg_host_get(&err)))
		return false;
	if (h->mode == CGROUP_MODE_V2) {
		/* Delegated: the caller's own cgroup is its to divide. */
		if (own_cgroup(&own, &err) < 0)
			return false;
		dir = xasprintf("%s%s", h->v2_mnt, own);
		return access(dir, W_OK) == 0;
	}
	mem = cg1_host_hier(h, CG1_MEMORY);
	return mem && access(mem->mnt, W_OK) == 0;
}

int cgroup_resolve_path(const char *cgroups_path, const char *id,
			enum cgroup_manager manager, char **out,
			struct error *err)
{
	_cleanup_free_ char *own = NULL, *joined = NULL;

	if (manager == CGROUP_MANAGER_SYSTEMD)
		return cgsd_resolve_path(cgroups_path, id, out, err);
	if (!cgroups_path || !*cgroups_path) {
		if (!id || !*id || strchr(id, '/') || strcmp(id, ".") == 0 ||
		    strcmp(id, "..") == 0)
			return error_set(err,
					 "container id \"%s\" cannot name a cgroup",
					 id ? id : "");
		joined = xasprintf(CGROUP_DEFAULT_PARENT "/%s", id);
		return cg_path_normalize(joined, out, err);
	}
	if (cgroups_path[0] == '/')
		return cg_path_normalize(cgroups_path, out, err);
	if (own_cgroup(&own, err) < 0)
		return -1;
	joined = xasprintf("%s/%s", own, cgroups_path);
	return cg_path_normalize(joined, out, err);
}

/* A path from the state file must already be in normal form. */
static int check_path(const char *path, struct error *err)
{
	_cleanup_free_ char *norm = NULL;

	if (!path || path[0] != '/')
		return error_set(err, "cgroup path \"%s\" is not absolute",
				 path ? path : "");
	if (cg_path_normalize(path, &norm, err) < 0)
		return -1;
	if (strcmp(norm, path) != 0)
		return error_set(err, "cgroup path \"%s\" is not normalised",
				 path);
	return 0;
}

/* ---- device rules ------------------------------------------------------------ */

#define RULE(t, maj, min, acc)                                              \
	{                                                                   \
		.allow = true, .type = (t), .major = { (maj) >= 0, (maj) }, \
		.minor = { (min) >= 0, (min) }, .access = (char *)(acc)     \
	}

/* The nodes every container gets (runtime/init/devices.c), the terminal ones,
 * and mknod of any node (opening it stays denied), as runc allows them. */
static const struct oci_device_cgroup default_rules[] = {
	RULE('c', -1, -1, "m"), RULE('b', -1, -1, "m"),
	RULE('c', 1, 3, "rwm"),	   /* null */
	RULE('c', 1, 5, "rwm"),	   /* zero */
	RULE('c', 1, 7, "rwm"),	   /* full */
	RULE('c', 1, 8, "rwm"),	   /* random */
	RULE('c', 1, 9, "rwm"),	   /* urandom */
	RULE('c', 5, 0, "rwm"),	   /* tty */
	RULE('c', 5, 2, "rwm"),	   /* ptmx */
	RULE('c', 136, -1, "rwm"), /* pts/N, the console */
};

#define N_DEFAULT_RULES (sizeof(default_rules) / sizeof(*default_rules))

/* res with the default rules after its own; shares all but devices. */
static void with_default_rules(const struct oci_resources *res,
			       struct oci_resources *out)
{
	size_t n = res ? res->n_devices : 0;

	if (res)
		*out = *res;
	else
		memset(out, 0, sizeof(*out));
	out->devices = xcalloc(n + N_DEFAULT_RULES, sizeof(*out->devices));
	if (n)
		memcpy(out->devices, res->devices, n * sizeof(*out->devices));
	memcpy(out->devices + n, default_rules, sizeof(default_rules));
	out->n_devices = n + N_DEFAULT_RULES;
}

void cgroup_resources_for_spec(const struct oci_spec *spec,
			       struct oci_resources *out)
{
	const struct oci_resources *res = &spec->linux.resources;
	size_t n = res->n_devices, k = spec->linux.n_devices;

	*out = *res;
	out->devices = xcalloc(n + k, sizeof(*out->devices));
	if (n)
		memcpy(out->devices, res->devices, n * sizeof(*out->devices));
	for (size_t i = 0; i < k; i++) {
		const struct oci_device *d = &spec->linux.devices[i];
		char type = d->type == 'b' ? 'b' : 'c'; /* u is a char device */

		if (d->type == 'p')
			continue; /* a FIFO is no device to the cgroup */
		out->devices[n++] = (struct oci_device_cgroup){
			.allow = true,
			.type = type,
			.major = { true, d->major },
			.minor = { true, d->minor },
			.access = (char *)"rwm",
		};
	}
	out->n_devices = n;
}

/* ---- dispatch --------------------------------------------------------------- */

static const struct cg_host *prepare(const char *path,
				     enum cgroup_manager manager,
				     struct error *err)
{
	/* A systemd scope's path is a cgroup path like any other: only
	 * create, update and destroy go through systemd. */
	(void)manager;
	if (check_path(path, err) < 0)
		return NULL;
	return cg_host_get(err);
}

/* cgroupfs or systemd, pid 0 for none yet; with b (cgroupfs only), what
 * a process to come needs to enter (cgroup.h). */
static int create(const char *path, enum cgroup_manager manager,
		  const struct oci_resources *res, pid_t pid,
		  struct cgroup_birth *b, struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);
	struct cg_settings set = { 0 };
	/* An unprivileged caller (rootless) cannot load the BPF device
	 * filter; its containers are in user namespaces, where no device node
	 * can be made and the host's are bound in (as runc does rootless). */
	struct cg2_create_opts o = { .all_ctrls = true, .devices = geteuid() == 0 };
	struct oci_resources eff;
	int ret = -1;

	if (!h)
		return -1;
	with_default_rules(res, &eff);
	if (manager == CGROUP_MANAGER_SYSTEMD) {
		ret = cgsd_create(h, path, &eff, pid, err);
	} else if (h->mode != CGROUP_MODE_V2) {
		ret = cg1_create(h, path, &eff, pid, b, err);
	} else if (cg2_build_settings(&eff, false, &set, err) == 0) {
		o.mnt = h->v2_mnt;
		o.leaf_fd = b ? &b->v2_fd : NULL;
		ret = cg2_create(&o, path, &set, &eff, pid, NULL, err);
		cg_settings_free(&set);
	}
	free(eff.devices);
	return ret;
}

int cgroup_create(const char *path, enum cgroup_manager manager,
		  const struct oci_resources *res, pid_t pid,
		  struct error *err)
{
	return create(path, manager, res, pid, NULL, err);
}

/* ---- a new process's way in ------------------------------------------------- */

/* A cgroup2 leaf whose cpuset a born-in process would miss on this kernel
 * is entered by pid instead (v2.c cg2_born_in_keeps_cpuset). */
static void check_born_in(struct cgroup_birth *b)
{
	b->by_pid = b->v2_fd >= 0 && !cg2_born_in_keeps_cpuset(b->v2_fd);
}

int cgroup_create_for_clone(const char *path, enum cgroup_manager manager,
			    const struct oci_resources *res,
			    struct cgroup_birth *b, struct error *err)
{
	cgroup_birth_init(b);
	if (manager == CGROUP_MANAGER_SYSTEMD) {
		b->after_clone = true; /* the scope is started with the pid in it */
		return 0;
	}
	b->path = path;
	if (create(path, manager, res, 0, b, err) < 0) {
		cgroup_birth_close(b);
		return -1;
	}
	check_born_in(b);
	return 0;
}

int cgroup_open_birth(const char *path, enum cgroup_manager manager,
		      struct cgroup_birth *b, struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);
	int r;

	cgroup_birth_init(b);
	if (!h)
		return -1;
	b->path = path;
	if (h->mode == CGROUP_MODE_V2)
		r = cg2_open_leaf_fd(h->v2_mnt, path, &b->v2_fd, err);
	else
		r = cg1_open_birth(h, path, b, err);
	if (r < 0)
		return -1;
	check_born_in(b);
	return 0;
}

int cgroup_after_clone(struct cgroup_birth *b, pid_t pid, bool born_in,
		       struct error *err)
{
	int r = 0;

	if (b->v2_fd >= 0 && (b->by_pid || !born_in))
		r = cg2_dir_enter(b->v2_fd, b->path, pid, err);
	cgroup_birth_close(b);
	return r;
}

int cgroup_place_self(struct cgroup_birth *b, struct error *err)
{
	for (size_t i = 0; i < b->n_tasks; i++) {
		ssize_t w;

		do
			w = write(b->tasks_fd[i], "0", 1);
		while (w < 0 && errno == EINTR);
		if (w != 1) {
			if (w >= 0)
				errno = EIO;
			error_sys(err, "join the container's cgroup: write 0 to %s%s/tasks",
				  b->tasks_mnt[i], b->path);
			cgroup_birth_close(b);
			return -1;
		}
	}
	cgroup_birth_close(b);
	return 0;
}

int cgroup_enter(const char *path, enum cgroup_manager manager, pid_t pid,
		 struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);

	if (!h)
		return -1;
	if (h->mode == CGROUP_MODE_V2)
		return cg2_enter(h->v2_mnt, path, pid, err);
	return cg1_enter(h, path, pid, err);
}

int cgroup_update(const char *path, enum cgroup_manager manager,
		  const struct oci_resources *res, struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);
	struct cg_settings set = { 0 };
	struct oci_resources eff;
	int ret = -1;

	if (!h)
		return -1;
	/* Device rules only change when some are given. */
	if (res && res->n_devices > 0)
		with_default_rules(res, &eff);
	else if (res)
		eff = *res;
	else
		memset(&eff, 0, sizeof(eff));
	if (manager == CGROUP_MANAGER_SYSTEMD) {
		ret = cgsd_update(h, path, &eff, err);
	} else if (h->mode != CGROUP_MODE_V2) {
		ret = cg1_update(h, path, &eff, err);
	} else if (cg2_build_settings(&eff, true, &set, err) == 0) {
		ret = cg2_update(h->v2_mnt, path, &set, &eff, err);
		cg_settings_free(&set);
	}
	if (res && res->n_devices > 0)
		free(eff.devices);
	return ret;
}

int cgroup_kill(const char *path, enum cgroup_manager manager, int sig,
		struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);

	if (!h)
		return -1;
	if (manager == CGROUP_MANAGER_SYSTEMD)
		return cgsd_kill(h, path, sig, err);
	if (h->mode == CGROUP_MODE_V2)
		return cg2_kill(h->v2_mnt, path, sig, err);
	return cg1_kill(h, path, sig, err);
}

int cgroup_pids(const char *path, enum cgroup_manager manager, pid_t **pids,
		size_t *n, struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);

	if (!h)
		return -1;
	if (h->mode == CGROUP_MODE_V2)
		return cg2_pids(h->v2_mnt, path, pids, n, err);
	return cg1_pids(h, path, pids, n, err);
}

int cgroup_freeze(const char *path, enum cgroup_manager manager, bool freeze,
		  struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);

	if (!h)
		return -1;
	if (h->mode == CGROUP_MODE_V2)
		return cg2_freeze(h->v2_mnt, path, freeze, err);
	return cg1_freeze(h, path, freeze, err);
}

int cgroup_is_frozen(const char *path, enum cgroup_manager manager,
		     bool *frozen, struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);

	if (!h)
		return -1;
	if (h->mode == CGROUP_MODE_V2)
		return cg2_is_frozen(h->v2_mnt, path, frozen, err);
	return cg1_is_frozen(h, path, frozen, err);
}

int cgroup_destroy(const char *path, enum cgroup_manager manager, bool force,
		   struct error *err)
{
	const struct cg_host *h = prepare(path, manager, err);

	if (!h)
		return -1;
	if (manager == CGROUP_MANAGER_SYSTEMD)
		return cgsd_destroy(h, path, force, err);
	if (h->mode == CGROUP_MODE_V2)
		return cg2_destroy(h->v2_mnt, path, force, err);
	return cg1_destroy(h, path, force, err);
}

/* The first pid in mnt/dir/cgroup.procs, or 0 (none, or no such cgroup). */
static pid_t first_process(const char *mnt, const char *dir)
{
	_cleanup_free_ char *path = xasprintf("%s%s/cgroup.procs", mnt, dir);
	FILE *f = fopen(path, "re");
	long pid = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = 0;
	fclose(f);
	return (pid_t)pid;
}

int cgroup_ancestor_with_processes(const char *path, char **which, pid_t *pid,
				   struct error *err)
{
	const struct cg_host *h = cg_host_get(err);
	const struct cg1_hier *mem;
	const char *mnt;
	_cleanup_free_ char *dir = NULL;

	*which = NULL;
	*pid = 0;
	if (!h)
		return -1;
	/* one hierarchy is enough: a container's processes are in all */
	mem = h->mode == CGROUP_MODE_V2 ? NULL : cg1_host_hier(h, CG1_MEMORY);
	mnt = mem ? mem->mnt : h->v2_mnt;
	if (!mnt || !path || path[0] != '/')
		return 0;
	dir = xstrdup(path);
	for (char *slash = strrchr(dir, '/'); slash && slash != dir; slash = strrchr(dir, '/')) {
		*slash = '\0'; /* the parent of what is left */
		if ((*pid = first_process(mnt, dir))) {
			*which = xstrdup(dir);
			return 0;
		}
	}
	return 0;
}
