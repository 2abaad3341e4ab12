/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the host has, found once and cached: the mode (v1, hybrid, v2), the
 * v1 hierarchies and where they are mounted; and the checked, normalised
 * form of a cgroup path.  A primitive: the drivers and the manager use it,
 * it uses nothing of theirs.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/vfs.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"

static const char *const cg1_names[CG1_CTRL_MAX] = {
	[CG1_CPU] = "cpu",
	[CG1_CPUACCT] = "cpuacct",
	[CG1_CPUSET] = "cpuset",
	[CG1_MEMORY] = "memory",
	[CG1_DEVICES] = "devices",
	[CG1_FREEZER] = "freezer",
	[CG1_NET_CLS] = "net_cls",
	[CG1_NET_PRIO] = "net_prio",
	[CG1_BLKIO] = "blkio",
	[CG1_PERF_EVENT] = "perf_event",
	[CG1_HUGETLB] = "hugetlb",
	[CG1_PIDS] = "pids",
	[CG1_RDMA] = "rdma",
	[CG1_MISC] = "misc",
	[CG1_NAME_SYSTEMD] = "name=systemd",
};

const char *cg1_ctrl_name(enum cg1_ctrl c)
{
	return (unsigned)c < CG1_CTRL_MAX ? cg1_names[c] : "?";
}

int cg1_ctrl_from_name(const char *name)
{
	for (int i = 0; i < CG1_CTRL_MAX; i++)
		if (strcmp(cg1_names[i], name) == 0)
			return i;
	return -1;
}

/* ---- mode and host -------------------------------------------------------- */

static int statfs_type(const char *path, unsigned long *type)
{
	struct statfs sfs;

	if (statfs(path, &sfs) < 0)
		return -1;
	*type = (unsigned long)sfs.f_type;
	return 0;
}

int cgroup_detect_mode(enum cgroup_mode *mode, struct error *err)
{
	static int cached = -1;
	unsigned long type;

	if (cached >= 0) {
		*mode = (enum cgroup_mode)cached;
		return 0;
	}
	if (statfs_type(CGROUP_FS_ROOT, &type) < 0)
		return error_sys(err, "statfs %s", CGROUP_FS_ROOT);
	if (type == CGROUP2_SUPER_MAGIC) {
		cached = CGROUP_MODE_V2;
	} else if (type == TMPFS_MAGIC) {
		cached = statfs_type(CGROUP_HYBRID_UNIFIED, &type) == 0 &&
					 type == CGROUP2_SUPER_MAGIC ?
				 CGROUP_MODE_HYBRID :
				 CGROUP_MODE_V1;
	} else {
		return error_set(err,
				 "%s is neither a cgroup2 mount nor a tmpfs of cgroup v1 hierarchies",
				 CGROUP_FS_ROOT);
	}
	*mode = (enum cgroup_mode)cached;
	return 0;
}

/* One mountinfo line: "... ROOT MOUNTPOINT OPTS [opt fields] - TYPE SRC SUPEROPTS" */
static void parse_mount_line(char *line, struct cg_host *h)
{
	char *f[6] = { 0 }, *save = NULL, *sep, *tail[3] = { 0 };
	unsigned ctrls = 0;

	sep = strstr(line, " - ");
	if (!sep)
		return;
	*sep = '\0';
	f[0] = strtok_r(line, " ", &save);
	for (int i = 1; i < 6 && f[i - 1]; i++)
		f[i] = strtok_r(NULL, " ", &save);
	save = NULL;
	tail[0] = strtok_r(sep + 3, " ", &save);
	for (int i = 1; i < 3 && tail[i - 1]; i++)
		tail[i] = strtok_r(NULL, " ", &save);
	if (!f[4] || !tail[2] || strcmp(tail[0], "cgroup") != 0)
		return;
	/* Only whole hierarchies, at the usual place, plainly named. */
	if (strcmp(f[3], "/") != 0 || !str_has_prefix(f[4], CGROUP_FS_ROOT "/") ||
	    strchr(f[4], '\\'))
		return;
	save = NULL;
	for (char *o = strtok_r(tail[2], ",", &save); o;
	     o = strtok_r(NULL, ",", &save)) {
		int c = cg1_ctrl_from_name(o);

		if (c >= 0)
			ctrls |= 1u << c;
	}
	if (!ctrls || (h->v1_ctrls & ctrls) || h->n_hier >= CG1_MAX_HIER)
		return; /* unknown, or a second mount of a hierarchy */
	h->hier[h->n_hier].mnt = xstrdup(f[4]);
	h->hier[h->n_hier].ctrls = ctrls;
	h->n_hier++;
	h->v1_ctrls |= ctrls;
}

int cg1_parse_mountinfo(const char *text, struct cg_host *h)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;

	for (char *l = strtok_r(copy, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save))
		parse_mount_line(l, h);
	return 0;
}

void cg_host_free(struct cg_host *h)
{
	for (size_t i = 0; i < h->n_hier; i++)
		free(h->hier[i].mnt);
	memset(h, 0, sizeof(*h));
}

const struct cg1_hier *cg1_host_hier(const struct cg_host *h, enum cg1_ctrl c)
{
	for (size_t i = 0; i < h->n_hier; i++)
		if (h->hier[i].ctrls & (1u << c))
			return &h->hier[i];
	return NULL;
}

const struct cg_host *cg_host_get(struct error *err)
{
	static struct cg_host host;
	static bool ready;
	_cleanup_free_ char *mi = NULL;

	if (ready)
		return &host;
	if (cgroup_detect_mode(&host.mode, err) < 0)
		return NULL;
	if (host.mode == CGROUP_MODE_V2) {
		host.v2_mnt = CGROUP_FS_ROOT;
		ready = true;
		return &host;
	}
	if (host.mode == CGROUP_MODE_HYBRID)
		host.v2_mnt = CGROUP_HYBRID_UNIFIED;
	if (read_file_at(AT_FDCWD, "/proc/self/mountinfo", 16u << 20, &mi, NULL,
			 err) < 0)
		return NULL;
	cg1_parse_mountinfo(mi, &host);
	if (host.n_hier == 0) {
		error_set(err, "no cgroup v1 hierarchy is mounted under %s",
			  CGROUP_FS_ROOT);
		return NULL;
	}
	ready = true;
	return &host;
}

void cgroup_warm_cache(void)
{
	enum cgroup_mode mode;
	struct error err;

	(void)cgroup_detect_mode(&mode, &err);
	(void)cg_host_get(&err);
}

bool cg_release_older_than(const char *release, int major, int minor)
{
	int ma = 0, mi = 0;

	if (!release || sscanf(release, "%d.%d", &ma, &mi) != 2)
		return true; /* unknown: assume the old behaviour */
	return ma < major || (ma == major && mi < minor);
}

bool cg_kernel_older_than(int major, int minor)
{
	static struct utsname u;
	static bool have;

	if (!have && uname(&u) == 0)
		have = true;
	return cg_release_older_than(have ? u.release : NULL, major, minor);
}

/* ---- names in the hierarchy ------------------------------------------------ */

static int check_component(const char *c, size_t len, const char *in,
			   struct error *err)
{
	if (len == 2 && strncmp(c, "..", 2) == 0)
		return error_set(err, "cgroup path %s: \"..\" is not allowed",
				 in);
	if (len > NAME_MAX)
		return error_set(err, "cgroup path %s: a name is longer than %d",
				 in, NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
			return error_set(err,
					 "cgroup path %s: control characters are not allowed",
					 in);
	return 0;
}

int cg_path_normalize(const char *in, char **out, struct error *err)
{
	size_t cap = strlen(in) + 2, n = 0, depth = 0;
	_cleanup_free_ char *buf = xmalloc(cap);
	const char *p = in;

	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (!(len == 1 && *p == '.')) {
			if (check_component(p, len, in, err) < 0)
				return -1;
			if (++depth > CG_MAX_DEPTH)
				return error_set(err,
						 "cgroup path %s: more than %d levels",
						 in, CG_MAX_DEPTH);
			buf[n++] = '/';
			memcpy(buf + n, p, len);
			n += len;
		}
		p += len;
	}
	if (n == 0)
		return error_set(err,
				 "cgroup path \"%s\" names the root cgroup: refused",
				 in);
	buf[n] = '\0';
	*out = take_ptr(buf);
	return 0;
}
