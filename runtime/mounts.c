/* SPDX-License-Identifier: Apache-2.0 */
#include "mounts.h"

#include <errno.h>
#include <libmount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "../lib/cleanup.h"
#include "../lib/util.h"
#include "../spec/policy.h"
#include <limits.h>

/* Options libmount does not know: recursive attributes (mount_setattr). */
struct rec_option {
	const char *name;
	uint64_t attr;
	bool clear;
};

static const struct rec_option rec_options[] = {
	{ "rro", MOUNT_ATTR_RDONLY, false },
	{ "rrw", MOUNT_ATTR_RDONLY, true },
	{ "rnosuid", MOUNT_ATTR_NOSUID, false },
	{ "rsuid", MOUNT_ATTR_NOSUID, true },
	{ "rnodev", MOUNT_ATTR_NODEV, false },
	{ "rdev", MOUNT_ATTR_NODEV, true },
	{ "rnoexec", MOUNT_ATTR_NOEXEC, false },
	{ "rexec", MOUNT_ATTR_NOEXEC, true },
	{ "rnodiratime", MOUNT_ATTR_NODIRATIME, false },
	{ "rdiratime", MOUNT_ATTR_NODIRATIME, true },
	{ "rnoatime", MOUNT_ATTR_NOATIME, false },
	{ "rrelatime", MOUNT_ATTR_RELATIME, false },
	{ "rnorelatime", MOUNT_ATTR_RELATIME, true },
	{ "rstrictatime", MOUNT_ATTR_STRICTATIME, false },
	{ "rnostrictatime", MOUNT_ATTR_STRICTATIME, true },
	{ "rnosymfollow", MOUNT_ATTR_NOSYMFOLLOW, false },
	{ "rsymfollow", MOUNT_ATTR_NOSYMFOLLOW, true },
	{ "ratime", MOUNT_ATTR_NOATIME, true },
};

static const char *const supported_options[] = {
	"acl", "async", "atime", "bind", "defaults", "dev", "diratime",
	"dirsync", "exec", "iversion", "lazytime", "loud", "mand", "noacl",
	"noatime", "nodev", "nodiratime", "noexec", "noiversion", "nolazytime",
	"nomand", "norelatime", "nostrictatime", "nosuid", "nosymfollow",
	"private", "ratime", "rbind", "rdev", "rdiratime", "relatime",
	"remount", "rexec", "rnoatime", "rnodev", "rnodiratime", "rnoexec",
	"rnorelatime", "rnostrictatime", "rnosuid", "rnosymfollow", "ro",
	"rprivate", "rrelatime", "rro", "rrw", "rshared", "rslave",
	"rstrictatime", "rsuid", "rsymfollow", "runbindable", "rw", "shared",
	"silent", "slave", "strictatime", "suid", "symfollow", "sync",
	"unbindable", NULL,
};

const char *const *mount_options_supported(void)
{
	return supported_options;
}

uint64_t ms_flags_to_attr(unsigned long flags)
{
	uint64_t attr = 0;

	if (flags & MS_RDONLY)
		attr |= MOUNT_ATTR_RDONLY;
	if (flags & MS_NOSUID)
		attr |= MOUNT_ATTR_NOSUID;
	if (flags & MS_NODEV)
		attr |= MOUNT_ATTR_NODEV;
	if (flags & MS_NOEXEC)
		attr |= MOUNT_ATTR_NOEXEC;
	if (flags & MS_NOATIME)
		attr |= MOUNT_ATTR_NOATIME;
	if (flags & MS_NODIRATIME)
		attr |= MOUNT_ATTR_NODIRATIME;
	if (flags & MS_STRICTATIME)
		attr |= MOUNT_ATTR_STRICTATIME;
	if (flags & MS_NOSYMFOLLOW)
		attr |= MOUNT_ATTR_NOSYMFOLLOW;
	return attr;
}

static const struct rec_option *find_rec_option(const char *name)
{
	for (size_t i = 0; i < sizeof(rec_options) / sizeof(rec_options[0]); i++)
		if (!strcmp(rec_options[i].name, name))
			return &rec_options[i];
	return NULL;
}

#define MS_PROP_MASK (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE)

/* Options that are refused, with the reason, rather than passed on to the
 * filesystem where they would be misread. */
static const char *unsupported_option(const char *opt)
{
	if (!strcmp(opt, "tmpcopyup"))
		return "tmpcopyup is not supported";
	if (!strcmp(opt, "idmap") || !strcmp(opt, "ridmap"))
		return "id-mapped mounts are not supported";
	if (!strcmp(opt, "remount"))
		return "remount is not allowed in a container spec";
	return NULL;
}

static int parse_options(const struct oci_mount *m, size_t idx,
			 struct mount_entry *e, struct error *err)
{
	_cleanup_free_ char *optstr = NULL;
	char *vfs = NULL, *fs = NULL;
	unsigned long flags = 0;
	int r;

	for (size_t i = 0; i < m->options.len; i++) {
		const char *opt = m->options.items[i];
		const struct rec_option *ro = find_rec_option(opt);
		const char *why = unsupported_option(opt);

		if (why)
			return error_set(err, "mounts[%zu].options[%zu]: %s", idx, i, why);
		if (!*opt || strchr(opt, ','))
			return error_set(err, "mounts[%zu].options[%zu]: invalid option \"%s\"",
					 idx, i, opt);
		if (ro) {
			if (ro->clear) {
				e->attr_clr |= ro->attr;
				e->attr_set &= ~ro->attr;
			} else {
				e->attr_set |= ro->attr;
				e->attr_clr &= ~ro->attr;
			}
			continue;
		}
		if (mnt_optstr_append_option(&optstr, opt, NULL) < 0)
			return error_set(err, "mounts[%zu]: cannot add option \"%s\"", idx, opt);
	}
	if (!optstr)
		return 0;
	r = mnt_split_optstr(optstr, NULL, &vfs, &fs, 0, 0);
	if (r < 0)
		return error_setc(err, -r, "mounts[%zu]: parse options \"%s\"", idx, optstr);
	if (vfs && mnt_optstr_get_flags(vfs, &flags,
					mnt_get_builtin_optmap(MNT_LINUX_MAP)) < 0) {
		free(vfs);
		free(fs);
		return error_set(err, "mounts[%zu]: parse options \"%s\"", idx, optstr);
	}
	free(vfs);
	e->data = fs;
	e->propagation = flags & (MS_PROP_MASK | MS_REC);
	if (!(flags & MS_PROP_MASK))
		e->propagation = 0;
	e->recursive = (flags & MS_BIND) && (flags & MS_REC);
	if (flags & MS_BIND)
		e->kind = MOUNT_KIND_BIND;
	e->flags = flags & ~(MS_PROP_MASK | MS_REC | MS_BIND);
	return 0;
}

static enum mount_kind kind_from_type(const char *type)
{
	if (!type)
		return MOUNT_KIND_FS;
	if (!strcmp(type, "bind"))
		return MOUNT_KIND_BIND;
	if (!strcmp(type, "proc"))
		return MOUNT_KIND_PROC;
	if (!strcmp(type, "sysfs"))
		return MOUNT_KIND_SYSFS;
	if (!strcmp(type, "cgroup") || !strcmp(type, "cgroup2"))
		return MOUNT_KIND_CGROUP;
	return MOUNT_KIND_FS;
}

static int prepare_entry(const struct oci_mount *m, size_t idx,
			 const char *bundle, struct mount_entry *e,
			 struct error *err)
{
	e->spec = m;
	e->kind = kind_from_type(m->type);
	if (parse_options(m, idx, e, err) < 0)
		return -1;
	if (e->kind == MOUNT_KIND_BIND) {
		if (!m->source)
			return error_set(err, "mounts[%zu].source: required for a bind mount of %s",
					 idx, m->destination);
		e->source = m->source[0] == '/' ? xstrdup(m->source)
						: xasprintf("%s/%s", bundle, m->source);
		return 0;
	}
	if (!m->type)
		return error_set(err, "mounts[%zu].type: required for a mount of %s that is not a bind",
				 idx, m->destination);
	e->source = xstrdup(m->source ? m->source : m->type);
	return 0;
}

static unsigned long rootfs_propagation_flags(const char *name)
{
	static const struct {
		const char *name;
		unsigned long flags;
	} table[] = {
		{ "shared", MS_SHARED },	{ "rshared", MS_SHARED | MS_REC },
		{ "slave", MS_SLAVE },		{ "rslave", MS_SLAVE | MS_REC },
		{ "private", MS_PRIVATE },	{ "rprivate", MS_PRIVATE | MS_REC },
		{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
	};

	/* Default: rprivate, so that no mount event crosses the boundary. */
	if (!name || !*name)
		return MS_PRIVATE | MS_REC;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return table[i].flags;
	return 0;
}

/* The policy checked the path as written; a symlink inside an allowed
 * directory could still lead anywhere, so check where it really goes. */
static int check_bind_source(const struct mount_entry *e, size_t idx,
			     const struct str_array *prefixes, struct error *err)
{
	char real[PATH_MAX];

	if (!prefixes || e->kind != MOUNT_KIND_BIND || e->spec->source[0] != '/')
		return 0;
	if (!realpath(e->source, real))
		return error_sys(err, "mounts[%zu].source %s", idx, e->source);
	if (!policy_bind_allowed(prefixes, real))
		return error_set(err, "policy: mounts[%zu]: bind source %s resolves to %s, outside the allowed prefixes",
				 idx, e->source, real);
	return 0;
}

int mounts_prepare(const struct oci_spec *spec, const char *bundle,
		   const struct str_array *bind_prefixes, struct mount_plan *plan,
		   struct error *err)
{
	memset(plan, 0, sizeof(*plan));
	plan->rootfs_propagation =
		rootfs_propagation_flags(spec->linux.rootfs_propagation);
	if (!plan->rootfs_propagation)
		return error_set(err, "linux.rootfsPropagation: unknown value \"%s\"",
				 spec->linux.rootfs_propagation);
	plan->items = xcalloc(spec->n_mounts, sizeof(*plan->items));
	for (size_t i = 0; i < spec->n_mounts; i++) {
		plan->len = i + 1;
		if (prepare_entry(&spec->mounts[i], i, bundle, &plan->items[i], err) < 0 ||
		    check_bind_source(&plan->items[i], i, bind_prefixes, err) < 0) {
			mounts_free(plan);
			return error_prefix(err, "config.json");
		}
	}
	return 0;
}

void mounts_free(struct mount_plan *plan)
{
	for (size_t i = 0; i < plan->len; i++) {
		free(plan->items[i].source);
		free(plan->items[i].data);
	}
	free(plan->items);
	memset(plan, 0, sizeof(*plan));
}
