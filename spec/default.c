/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The config.json that `agentsbx spec` writes: a shell in a read-only
 * rootfs with every namespace but user (rootless: user too, mapping root in
 * the container to uid/gid 1000 outside, a placeholder the caller edits),
 * few capabilities, no new privileges, and the /proc and /sys paths that
 * leak host information masked.
 */
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "../lib/util.h"
#include "internal.h"

struct gen {
	yajl_gen g;
	yajl_gen_status status; /* first failure */
};

static void check(struct gen *g, yajl_gen_status st)
{
	if (st != yajl_gen_status_ok && g->status == yajl_gen_status_ok)
		g->status = st;
}

static void gstr(struct gen *g, const char *s)
{
	check(g, yajl_gen_string(g->g, (const unsigned char *)s, strlen(s)));
}

static void gkey_str(struct gen *g, const char *key, const char *value)
{
	gstr(g, key);
	gstr(g, value);
}

static void gkey_bool(struct gen *g, const char *key, bool value)
{
	gstr(g, key);
	check(g, yajl_gen_bool(g->g, value));
}

static void gkey_int(struct gen *g, const char *key, long long value)
{
	gstr(g, key);
	check(g, yajl_gen_integer(g->g, value));
}

static void gmap_open(struct gen *g, const char *key)
{
	if (key)
		gstr(g, key);
	check(g, yajl_gen_map_open(g->g));
}

static void gmap_close(struct gen *g)
{
	check(g, yajl_gen_map_close(g->g));
}

static void garray_open(struct gen *g, const char *key)
{
	gstr(g, key);
	check(g, yajl_gen_array_open(g->g));
}

static void garray_close(struct gen *g)
{
	check(g, yajl_gen_array_close(g->g));
}

/* key: [v...], v NULL-terminated */
static void gkey_strv(struct gen *g, const char *key, const char *const *v)
{
	garray_open(g, key);
	for (; *v; v++)
		gstr(g, *v);
	garray_close(g);
}

/* ---- the content ------------------------------------------------------ */

static const char *const default_args[] = { "sh", NULL };
static const char *const default_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"TERM=xterm",
	NULL,
};
static const char *const default_caps[] = {
	"CAP_AUDIT_WRITE",
	"CAP_KILL",
	"CAP_NET_BIND_SERVICE",
	NULL,
};

static const char *const opts_proc[] = { "nosuid", "noexec", "nodev", NULL };
static const char *const opts_dev[] = { "nosuid", "strictatime", "mode=755",
					"size=65536k", NULL };
static const char *const opts_pts[] = { "nosuid", "noexec",
					"newinstance", "ptmxmode=0666",
					"mode=0620", "gid=5",
					NULL };
/* gid 5 (tty) is not mapped in a rootless container: devpts would fail */
static const char *const opts_pts_rootless[] = { "nosuid", "noexec",
						 "newinstance", "ptmxmode=0666",
						 "mode=0620", NULL };
static const char *const opts_shm[] = { "nosuid", "noexec", "nodev",
					"mode=1777", "size=65536k", NULL };
static const char *const opts_mqueue[] = { "nosuid", "noexec", "nodev", NULL };
static const char *const opts_sys[] = { "nosuid", "noexec", "nodev", "ro",
					NULL };
static const char *const opts_cgroup[] = { "nosuid", "noexec", "nodev",
					   "relatime", "ro", NULL };

struct default_mount {
	const char *destination;
	const char *type;
	const char *source;
	const char *const *options;
	const char *const *options_rootless;
};

static const struct default_mount default_mounts[] = {
	{ "/proc", "proc", "proc", opts_proc, opts_proc },
	{ "/dev", "tmpfs", "tmpfs", opts_dev, opts_dev },
	{ "/dev/pts", "devpts", "devpts", opts_pts, opts_pts_rootless },
	{ "/dev/shm", "tmpfs", "shm", opts_shm, opts_shm },
	{ "/dev/mqueue", "mqueue", "mqueue", opts_mqueue, opts_mqueue },
	{ "/sys", "sysfs", "sysfs", opts_sys, opts_sys },
	{ "/sys/fs/cgroup", "cgroup", "cgroup", opts_cgroup, opts_cgroup },
};

const char *const spec_default_masked_paths[] = {
	"/proc/acpi",
	"/proc/asound",
	"/proc/kcore",
	"/proc/keys",
	"/proc/latency_stats",
	"/proc/timer_list",
	"/proc/timer_stats",
	"/proc/sched_debug",
	"/proc/scsi",
	"/sys/firmware",
	"/sys/devices/virtual/powercap",
	NULL,
};

static const char *const readonly_paths[] = {
	"/proc/bus",
	"/proc/fs",
	"/proc/irq",
	"/proc/sys",
	"/proc/sysrq-trigger",
	NULL,
};

static const char *const namespaces[] = {
	"pid",
	"network",
	"ipc",
	"uts",
	"mount",
	"cgroup",
	NULL,
};

static void gen_process(struct gen *g)
{
	gmap_open(g, "process");
	gkey_bool(g, "terminal", true);
	gmap_open(g, "user");
	gkey_int(g, "uid", 0);
	gkey_int(g, "gid", 0);
	gmap_close(g);
	gkey_strv(g, "args", default_args);
	gkey_strv(g, "env", default_env);
	gkey_str(g, "cwd", "/");
	gmap_open(g, "capabilities");
	gkey_strv(g, "bounding", default_caps);
	gkey_strv(g, "effective", default_caps);
	gkey_strv(g, "permitted", default_caps);
	gmap_close(g);
	garray_open(g, "rlimits");
	gmap_open(g, NULL);
	gkey_str(g, "type", "RLIMIT_NOFILE");
	gkey_int(g, "hard", 1024);
	gkey_int(g, "soft", 1024);
	gmap_close(g);
	garray_close(g);
	gkey_bool(g, "noNewPrivileges", true);
	gmap_close(g);
}

static void gen_mounts(struct gen *g, bool rootless)
{
	garray_open(g, "mounts");
	for (size_t i = 0;
	     i < sizeof(default_mounts) / sizeof(default_mounts[0]); i++) {
		const struct default_mount *m = &default_mounts[i];

		gmap_open(g, NULL);
		gkey_str(g, "destination", m->destination);
		gkey_str(g, "type", m->type);
		gkey_str(g, "source", m->source);
		gkey_strv(g, "options",
			  rootless ? m->options_rootless : m->options);
		gmap_close(g);
	}
	garray_close(g);
}

static void gen_id_mapping(struct gen *g, const char *key, uint32_t host_id)
{
	garray_open(g, key);
	gmap_open(g, NULL);
	gkey_int(g, "containerID", 0);
	gkey_int(g, "hostID", host_id);
	gkey_int(g, "size", 1);
	gmap_close(g);
	garray_close(g);
}

static void gen_namespaces(struct gen *g, bool rootless)
{
	garray_open(g, "namespaces");
	for (const char *const *ns = namespaces; *ns; ns++) {
		gmap_open(g, NULL);
		gkey_str(g, "type", *ns);
		gmap_close(g);
	}
	if (rootless) {
		gmap_open(g, NULL);
		gkey_str(g, "type", "user");
		gmap_close(g);
	}
	garray_close(g);
}

static void gen_linux(struct gen *g, bool rootless, uint32_t uid, uint32_t gid)
{
	gmap_open(g, "linux");
	if (rootless) {
		gen_id_mapping(g, "uidMappings", uid);
		gen_id_mapping(g, "gidMappings", gid);
	} else {
		/* a rootless container cannot set up a device cgroup */
		gmap_open(g, "resources");
		garray_open(g, "devices");
		gmap_open(g, NULL);
		gkey_bool(g, "allow", false);
		gkey_str(g, "access", "rwm");
		gmap_close(g);
		garray_close(g);
		gmap_close(g);
	}
	gen_namespaces(g, rootless);
	gkey_strv(g, "maskedPaths", spec_default_masked_paths);
	gkey_strv(g, "readonlyPaths", readonly_paths);
	gmap_close(g);
}

static void gen_spec(struct gen *g, bool rootless, uint32_t uid, uint32_t gid)
{
	gmap_open(g, NULL);
	gkey_str(g, "ociVersion", OCI_VERSION_MAX);
	gen_process(g);
	gmap_open(g, "root");
	gkey_str(g, "path", "rootfs");
	gkey_bool(g, "readonly", true);
	gmap_close(g);
	gkey_str(g, "hostname", "agentsbx");
	gen_mounts(g, rootless);
	gen_linux(g, rootless, uid, gid);
	gmap_close(g);
}

char *spec_default_json(bool rootless, uint32_t uid, uint32_t gid)
{
	struct gen g = { .g = yajl_gen_alloc(NULL) };
	const unsigned char *buf;
	size_t len;
	char *out;

	if (!g.g)
		abort();
	yajl_gen_config(g.g, yajl_gen_beautify, 1);
	yajl_gen_config(g.g, yajl_gen_indent_string, "\t");
	gen_spec(&g, rootless, uid, gid);
	check(&g, yajl_gen_get_buf(g.g, &buf, &len));
	/* fixed content: a failure is a bug here, not a runtime condition */
	if (g.status != yajl_gen_status_ok)
		abort();
	out = xmalloc(len + 2);
	memcpy(out, buf, len);
	out[len] = '\n';
	out[len + 1] = '\0';
	yajl_gen_free(g.g);
	return out;
}
