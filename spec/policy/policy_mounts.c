/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy's mount rules (pure data, like the rest of spec/):
 *  - bind sources: relative ones resolved against the bundle and lexically
 *    cleaned, then judged against bindPrefixes like absolute ones (the
 *    runtime judges again, on the opened object: runtime/init/mounts.c);
 *  - filesystem types: an allow-list, and no mount under /proc or /sys
 *    but the pseudo filesystems at their own place;
 *  - tmpfs sizes parsed as the kernel parses them (mm/shmem.c) and capped;
 *  - sysfs and cgroupfs read-only; the root read-only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "weak.h"
#include "policy.h"

struct mrules {
	const struct policy *p;
	struct oci_spec *s;
	struct policy_changes *ch;
	struct error *err;
};

static void change(struct mrules *a, const char *rule, const char *field,
		   const char *from, const char *to)
{
	policy_change_add(a->ch, rule, field, from, to);
}

/* ---- paths ------------------------------------------------------------------ */

bool policy_mount_is_bind(const struct oci_mount *m)
{
	return (m->type && !strcmp(m->type, "bind")) || policy_strv_has(&m->options, "bind") ||
	       policy_strv_has(&m->options, "rbind");
}

char *policy_bind_source_path(const char *bundle, const char *source)
{
	_cleanup_free_ char *joined = NULL;

	if (source[0] == '/' || WEAK_BIND_RELATIVE)
		return policy_clean_path(source);
	joined = xasprintf("%s/%s", bundle, source);
	return policy_clean_path(joined);
}

void policy_resolve_bind_sources(struct oci_spec *s, const char *bundle)
{
	for (size_t i = 0; i < s->n_mounts; i++) {
		struct oci_mount *m = &s->mounts[i];
		char *abs;

		if (!policy_mount_is_bind(m) || !m->source || m->source[0] == '/')
			continue;
		if (WEAK_BIND_RELATIVE)
			continue;
		abs = policy_bind_source_path(bundle, m->source);
		free(m->source);
		m->source = abs;
	}
}

/* runc's checkProcMount: the files lxcfs binds over; nothing else below
 * /proc may be a mount destination, whatever the policy mode. */
static const char *const proc_bind_ok[] = {
	"/proc/cpuinfo",
	"/proc/diskstats",
	"/proc/meminfo",
	"/proc/stat",
	"/proc/swaps",
	"/proc/uptime",
	"/proc/loadavg",
	"/proc/slabinfo",
	"/proc/net/dev",
	"/proc/sys/kernel/ns_last_pid",
	NULL,
};

bool policy_proc_dest_allowed(const char *dest, const char *type, bool bind)
{
	_cleanup_free_ char *clean = policy_clean_path(dest);

	if (!policy_path_under(clean, "/proc"))
		return true;
	if (!strcmp(clean, "/proc"))
		return bind || (type && !strcmp(type, "proc"));
	if (!bind)
		return false;
	for (size_t i = 0; proc_bind_ok[i]; i++)
		if (!strcmp(clean, proc_bind_ok[i]))
			return true;
	return false;
}

/* ---- tmpfs sizes ---------------------------------------------------------------- */

/* simple_strtoull(s, &end, 0): base from the prefix, wrapping on overflow. */
static unsigned long long kernel_strtoull(const char *s, const char **end)
{
	unsigned long long v = 0;
	unsigned base = 10;

	if (s[0] == '0') {
		base = 8;
		if ((s[1] == 'x' || s[1] == 'X') &&
		    strchr("0123456789abcdefABCDEF", s[2]) && s[2]) {
			base = 16;
			s += 2;
		}
	}
	for (;; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
	}
	*end = s;
	return v;
}

unsigned long long policy_memparse(const char *s, const char **end)
{
	unsigned long long v = kernel_strtoull(s, end);
	const char *units = "kmgtpe";
	const char *u;

	if (**end && (u = strchr(units, **end | 0x20))) {
		for (long k = u - units; k >= 0; k--)
			v <<= 10;
		(*end)++;
	}
	return v;
}

int policy_tmpfs_size(const char *opt, uint64_t ram, uint64_t page, uint64_t *bytes)
{
	const char *end;
	unsigned long long v, blocks;

	if (!strncmp(opt, "nr_blocks=", 10)) {
		blocks = policy_memparse(opt + 10, &end);
		if (*end || blocks > (unsigned long long)INT64_MAX)
			return -1;
	} else if (!strncmp(opt, "size=", 5)) {
		v = policy_memparse(opt + 5, &end);
		if (*end == '%') {
			if (!ram)
				return -2; /* depends on the machine's memory */
			v = (v * ram) / 100;
			end++;
		}
		if (*end)
			return -1;
		blocks = (v + page - 1) / page; /* DIV_ROUND_UP, wrapping */
	} else {
		return -1;
	}
	/* 0 blocks: no limit at all. */
	*bytes = (uint64_t)blocks * page;
	if (blocks && *bytes / page != blocks)
		*bytes = UINT64_MAX;
	return 0;
}

bool policy_tmpfs_size_option(const char *opt)
{
	return !strncmp(opt, "size", 4) || !strncmp(opt, "nr_blocks", 9);
}

/* The size options of a tmpfs made no bigger than cap: an unlimited (0),
 * over-cap, RAM-relative or unparseable size is replaced by the cap. */
static void cap_tmpfs(struct mrules *a, struct oci_mount *m, uint64_t cap, bool policy_path)
{
	bool has_size = false;
	_cleanup_free_ char *capstr = xasprintf("size=%llu", (unsigned long long)cap);

	for (size_t i = 0; i < m->options.len; i++) {
		char *o = m->options.items[i];
		uint64_t v;

		if (!policy_tmpfs_size_option(o))
			continue;
		has_size = true;
		if (policy_tmpfs_size(o, 0, 4096, &v) == 0 && v && v <= cap)
			continue;
		change(a, "rootfs", m->destination, o, capstr);
		free(m->options.items[i]);
		m->options.items[i] = xstrdup(capstr);
	}
	if (!has_size) {
		policy_strv_add(&m->options, capstr);
		change(a, "rootfs", m->destination, "(no size)", capstr);
	}
	if (!policy_path)
		return; /* /dev, /dev/shm...: their own flags */
	if (!policy_strv_has(&m->options, "nosuid"))
		policy_strv_add(&m->options, "nosuid");
	if (!policy_strv_has(&m->options, "nodev"))
		policy_strv_add(&m->options, "nodev");
}

static struct oci_mount *find_mount(struct oci_spec *s, const char *dest)
{
	for (size_t i = 0; i < s->n_mounts; i++)
		if (!strcmp(s->mounts[i].destination, dest))
			return &s->mounts[i];
	return NULL;
}

static void add_tmpfs(struct mrules *a, const struct policy_tmpfs *t)
{
	struct oci_spec *s = a->s;
	struct oci_mount *m;
	_cleanup_free_ char *size = xasprintf("size=%llu", (unsigned long long)t->size);

	s->mounts = xrealloc(s->mounts, (s->n_mounts + 1) * sizeof(*s->mounts));
	m = &s->mounts[s->n_mounts++];
	memset(m, 0, sizeof(*m));
	m->destination = xstrdup(t->path);
	m->type = xstrdup("tmpfs");
	m->source = xstrdup("tmpfs");
	policy_strv_add(&m->options, "nosuid");
	policy_strv_add(&m->options, "nodev");
	policy_strv_add(&m->options, "mode=1777");
	policy_strv_add(&m->options, size);
	change(a, "rootfs", "mounts", "(none)", t->path);
}

static const struct policy_tmpfs *policy_tmpfs_at(const struct policy *p, const char *dest)
{
	for (size_t i = 0; i < p->n_tmpfs; i++)
		if (!strcmp(p->tmpfs[i].path, dest))
			return &p->tmpfs[i];
	return NULL;
}

/* The image is never written: a root the spec leaves writable becomes a
 * capped writable layer over it (an overlay whose upper is a tmpfs, built
 * by the runtime), or read-only when the policy has no layer or the
 * container has no mount namespace of its own to build it in. */
static void rule_readonly_image(struct mrules *a, struct policy_decision *d)
{
	const struct oci_namespace *mnt = spec_find_namespace(a->s, NS_MOUNT);
	_cleanup_free_ char *layer = NULL;

	if (a->p->writable_layer && mnt && !mnt->path) {
		d->writable_layer = a->p->writable_layer;
		layer = xasprintf("a %llu-byte writable layer over the read-only image (policy writableLayer)",
				  (unsigned long long)a->p->writable_layer);
		change(a, "rootfs", "root.readonly", "false (writes to the image)", layer);
		return;
	}
	a->s->root.readonly = true;
	change(a, "rootfs", "root.readonly", "false", "true");
}

static void rule_rootfs(struct mrules *a, bool writable_root, struct policy_decision *d)
{
	if (!writable_root && a->p->readonly_root && !a->s->root.readonly)
		rule_readonly_image(a, d);
	for (size_t i = 0; i < a->p->n_tmpfs; i++)
		if (!find_mount(a->s, a->p->tmpfs[i].path))
			add_tmpfs(a, &a->p->tmpfs[i]);
	/* Every tmpfs capped: at a policy path by its size, elsewhere by the
	 * memory limit (its pages are charged to the container's memory
	 * cgroup anyway; an unlimited one is not left unlimited). */
	for (size_t i = 0; i < a->s->n_mounts; i++) {
		struct oci_mount *m = &a->s->mounts[i];
		const struct policy_tmpfs *t;

		if (!m->type || strcmp(m->type, "tmpfs") || policy_mount_is_bind(m))
			continue;
		t = policy_tmpfs_at(a->p, m->destination);
		cap_tmpfs(a, m, t ? t->size : a->p->memory, t != NULL);
	}
}

/* /sys and cgroupfs are never writable (docker --privileged asks). */
static void rule_ro_pseudo_fs(struct mrules *a)
{
	for (size_t i = 0; i < a->s->n_mounts; i++) {
		struct oci_mount *m = &a->s->mounts[i];
		if (!m->type || (strcmp(m->type, "sysfs") && strcmp(m->type, "cgroup") &&
				 strcmp(m->type, "cgroup2")))
			continue;
		if (policy_strv_has(&m->options, "ro"))
			continue;
		for (size_t j = 0; j < m->options.len; j++)
			if (!strcmp(m->options.items[j], "rw")) {
				free(m->options.items[j]);
				m->options.items[j] = xstrdup("ro");
			}
		if (!policy_strv_has(&m->options, "ro"))
			policy_strv_add(&m->options, "ro");
		change(a, "rootfs", m->destination, "rw", "ro");
	}
}

/* ---- filesystem types and destinations ----------------------------------------- */

static const char *const fs_allowed[] = {
	"proc",
	"sysfs",
	"tmpfs",
	"devpts",
	"mqueue",
	"cgroup",
	"cgroup2",
	NULL,
};

/* The one place of each pseudo filesystem: elsewhere, the masks and
 * read-only paths of its place would not apply (found by the floor's
 * oracle for sysfs on /data). */
static const struct pseudo_place {
	const char *type, *fs, *place;
	bool below; /* the place or under it, else the place itself */
	const char *why;
} pseudo_places[] = {
	{ "proc", "procfs", "/proc", false, "at /proc (where its maskedPaths and readonlyPaths apply)" },
	{ "sysfs", "sysfs", "/sys", false, "at /sys (where its maskedPaths and readonlyPaths apply)" },
	{ "cgroup", "cgroupfs", "/sys/fs/cgroup", true, "under /sys/fs/cgroup (read-only there)" },
	{ "cgroup2", "cgroupfs", "/sys/fs/cgroup", true, "under /sys/fs/cgroup (read-only there)" },
};

static const struct pseudo_place *pseudo_place_of(const char *type)
{
	for (size_t k = 0; k < sizeof(pseudo_places) / sizeof(pseudo_places[0]); k++)
		if (!strcmp(type, pseudo_places[k].type))
			return &pseudo_places[k];
	return NULL;
}

static bool pseudo_dest_ok(const char *clean, const struct pseudo_place *pp)
{
	return pp && (pp->below ? policy_path_under(clean, pp->place) : !strcmp(clean, pp->place));
}

static int judge_fs_type(struct mrules *a, size_t i, const struct oci_mount *m)
{
	_cleanup_free_ char *clean = policy_clean_path(m->destination);
	const char *type = m->type ? m->type : "(none)";
	bool in_pseudo = policy_path_under(clean, "/proc") || policy_path_under(clean, "/sys");

	if (policy_mount_is_bind(m)) {
		if (in_pseudo)
			return error_set(a->err, "policy: mounts[%zu]: bind mount on %s: no mount destination under /proc or /sys is allowed by the policy (%s); the policy's maskedPaths and readonlyPaths are applied by the runtime",
					 i, m->destination, a->p->source);
		return 0;
	}
	if (!strcmp(type, "overlay"))
		return error_set(a->err, "policy: mounts[%zu]: filesystem type overlay on %s is not allowed by the policy (%s): its lowerdir/upperdir/workdir are host paths not judged as bind sources; use bind mounts under bindPrefixes",
				 i, m->destination, a->p->source);
	for (size_t k = 0; fs_allowed[k]; k++) {
		if (strcmp(type, fs_allowed[k]))
			continue;
		const struct pseudo_place *pp = pseudo_place_of(type);

		if (in_pseudo && !pseudo_dest_ok(clean, pp))
			return error_set(a->err, "policy: mounts[%zu]: %s on %s: no mount destination under /proc or /sys is allowed by the policy (%s) but proc at /proc, sysfs at /sys and cgroup at /sys/fs/cgroup",
					 i, type, m->destination, a->p->source);
		if (pp && !pseudo_dest_ok(clean, pp))
			return error_set(a->err, "policy: mounts[%zu]: %s on %s: %s is allowed by the policy (%s) only %s",
					 i, type, m->destination, pp->fs, a->p->source, pp->why);
		return 0;
	}
	return error_set(a->err, "policy: mounts[%zu]: filesystem type %s on %s is not allowed by the policy (%s); allowed: proc, sysfs, tmpfs, devpts, mqueue, cgroup, cgroup2, and bind mounts of host paths under bindPrefixes",
			 i, type, m->destination, a->p->source);
}

static int rule_fs_types(struct mrules *a)
{
	if (WEAK_FS_TYPES)
		return 0;
	for (size_t i = 0; i < a->s->n_mounts; i++)
		if (judge_fs_type(a, i, &a->s->mounts[i]) < 0)
			return -1;
	return 0;
}

static int rule_binds(struct mrules *a)
{
	for (size_t i = 0; i < a->s->n_mounts; i++) {
		const struct oci_mount *m = &a->s->mounts[i];
		if (!policy_mount_is_bind(m) || !m->source)
			continue;
		/* Relative sources were resolved against the bundle
		 * (policy_resolve_bind_sources); one still relative here was
		 * not, and is refused rather than guessed. */
		if (m->source[0] != '/' && WEAK_BIND_RELATIVE)
			continue;
		if (m->source[0] != '/')
			return error_set(a->err, "policy: mounts[%zu]: bind mount of relative path %s on %s: not resolved against the bundle, refused by the policy (%s)",
					 i, m->source, m->destination, a->p->source);
		if (!policy_bind_allowed(&a->p->bind_prefixes, m->source)) {
			_cleanup_free_ char *clean = policy_clean_path(m->source);
			_cleanup_free_ char *advice = NULL;

			if (policy_volume_allowed(&a->p->bind_volume_dirs, clean))
				continue;
			advice = policy_bind_advice(
				&(struct policy_bind_advice_in){ &a->p->bind_prefixes, a->p->source, clean });
			return error_set(a->err, "policy: mounts[%zu]: bind mount of host path %s on %s is not allowed by the policy (%s); %s",
					 i, clean, m->destination, a->p->source, advice);
		}
	}
	return 0;
}

/* Seen through an id mapping, files of other owners become the
 * container's own: the ids the policy bounds would no longer bound it. */
static int rule_idmap(struct mrules *a)
{
	if (a->p->idmapped_mounts)
		return 0;
	for (size_t i = 0; i < a->s->n_mounts; i++) {
		const struct oci_mount *m = &a->s->mounts[i];

		for (size_t j = 0; j < m->options.len; j++)
			if (!strcmp(m->options.items[j], "idmap") ||
			    !strcmp(m->options.items[j], "ridmap"))
				return error_set(a->err, "policy: mounts[%zu]: id-mapped mount (%s) of %s on %s refused by the policy (%s): the mapping would hand the container files of other owners; set idmappedMounts: true in the policy to allow it",
						 i, m->options.items[j], m->source ? m->source : "?",
						 m->destination, a->p->source);
	}
	return 0;
}

/* Nothing is mounted over / itself: the root is the image the policy
 * keeps read-only (under its writable layer), and a mount there would be
 * what the process and every `exec` see instead (found by the floor's
 * oracle: a bind of an allowed directory stacked read-write over the
 * root). */
static int rule_not_over_root(struct mrules *a)
{
	for (size_t i = 0; i < a->s->n_mounts; i++) {
		const struct oci_mount *m = &a->s->mounts[i];
		_cleanup_free_ char *dest = m->destination ? policy_clean_path(m->destination) : NULL;

		if (dest && !strcmp(dest, "/"))
			return error_set(a->err, "policy: mounts[%zu]: a %s mount on / would replace the container's root, the image the policy keeps read-only: refused by the policy (%s); no policy field allows it",
					 i, m->type ? m->type : "bind", a->p->source);
	}
	return 0;
}

int policy_mounts_refuse(const struct policy *p, struct oci_spec *s,
			 struct policy_changes *ch, struct error *err)
{
	struct mrules a = { .p = p, .s = s, .ch = ch, .err = err };

	if (rule_not_over_root(&a) < 0 || rule_idmap(&a) < 0 || rule_binds(&a) < 0 ||
	    rule_fs_types(&a) < 0)
		return -1;
	return 0;
}

void policy_mounts_apply(const struct policy *p, struct oci_spec *s, bool writable_root,
			 struct policy_changes *ch, struct policy_decision *d)
{
	struct mrules a = { .p = p, .s = s, .ch = ch };

	rule_rootfs(&a, writable_root, d);
	rule_ro_pseudo_fs(&a);
}
