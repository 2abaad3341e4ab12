/* SPDX-License-Identifier: Apache-2.0 */
#include "mounts.h"
#include "../judge/judge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../../spec/policy/policy.h"

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
	"acl",
	"async",
	"atime",
	"bind",
	"defaults",
	"dev",
	"diratime",
	"dirsync",
	"exec",
	"idmap",
	"iversion",
	"lazytime",
	"loud",
	"mand",
	"noacl",
	"noatime",
	"nodev",
	"nodiratime",
	"noexec",
	"noiversion",
	"nolazytime",
	"nomand",
	"norelatime",
	"nostrictatime",
	"nosuid",
	"nosymfollow",
	"private",
	"ratime",
	"rbind",
	"rdev",
	"rdiratime",
	"relatime",
	"remount",
	"rexec",
	"ridmap",
	"rnoatime",
	"rnodev",
	"rnodiratime",
	"rnoexec",
	"rnorelatime",
	"rnostrictatime",
	"rnosuid",
	"rnosymfollow",
	"ro",
	"rprivate",
	"rrelatime",
	"rro",
	"rrw",
	"rshared",
	"rslave",
	"rstrictatime",
	"rsuid",
	"rsymfollow",
	"runbindable",
	"rw",
	"shared",
	"silent",
	"slave",
	"strictatime",
	"suid",
	"symfollow",
	"sync",
	"unbindable",
	NULL,
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
	if (!strcmp(opt, "remount"))
		return "remount is not allowed in a container spec";
	return NULL;
}

static int parse_options(const struct oci_mount *m, size_t idx,
			 struct mount_entry *e, struct error *err)
{
	_cleanup_free_ char *optstr = NULL;
	unsigned long flags = 0;

	for (size_t i = 0; i < m->options.len; i++) {
		const char *opt = m->options.items[i];
		const struct rec_option *ro = find_rec_option(opt);
		const char *why = unsupported_option(opt);

		if (why)
			return error_set(err, "mounts[%zu].options[%zu]: %s", idx, i, why);
		if (!*opt || strchr(opt, ','))
			return error_set(err, "mounts[%zu].options[%zu]: invalid option \"%s\"",
					 idx, i, opt);
		if (!strcmp(opt, "idmap") || !strcmp(opt, "ridmap")) {
			e->idmap = true;
			e->idmap_recursive = opt[0] == 'r';
			continue;
		}
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
		if (optstr) {
			char *more = xasprintf("%s,%s", optstr, opt);

			free(optstr);
			optstr = more;
		} else {
			optstr = xstrdup(opt);
		}
	}
	if (!optstr)
		return 0;
	if (mount_optstr_split(optstr, &flags, &e->data, err) < 0)
		return error_prefix(err, "mounts[%zu]", idx);
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
		/* Relative: the bundle's, cleaned as runc's filepath.Join does;
		 * where ".." lands is judged like any absolute source. */
		e->relative = m->source[0] != '/';
		e->source = policy_bind_source_path(bundle, m->source);
		return 0;
	}
	if (!m->type)
		return error_set(err, "mounts[%zu].type: required for a mount of %s that is not a bind",
				 idx, m->destination);
	if (e->idmap)
		return error_set(err, "mounts[%zu].options: idmap/ridmap: only bind mounts can be id-mapped here (%s is a %s mount)",
				 idx, m->destination, m->type);
	e->source = xstrdup(m->source ? m->source : m->type);
	return 0;
}

static unsigned long rootfs_propagation_flags(const char *name)
{
	static const struct {
		const char *name;
		unsigned long flags;
	} table[] = {
		{ "shared", MS_SHARED },
		{ "rshared", MS_SHARED | MS_REC },
		{ "slave", MS_SLAVE },
		{ "rslave", MS_SLAVE | MS_REC },
		{ "private", MS_PRIVATE },
		{ "rprivate", MS_PRIVATE | MS_REC },
		{ "unbindable", MS_UNBINDABLE },
		{ "runbindable", MS_UNBINDABLE | MS_REC },
	};

	/* Default: rprivate, so that no mount event crosses the boundary. */
	if (!name || !*name)
		return MS_PRIVATE | MS_REC;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return table[i].flags;
	return 0;
}

/* ---- bind sources: opened once, judged on the fd, cloned ---------------------- */

/* Prefixes as written and as they really are (/var/run -> /run): the
 * operator's, trusted, so realpath() is fine here.  *by_link: where is
 * allowed only as what a prefix that is a link to a file resolves to
 * (Debian's /usr/bin/docker-init -> tini-static). */
static bool under_prefixes(const struct str_array *prefixes, const char *where,
			   bool *by_link)
{
	*by_link = false;
	if (policy_bind_allowed(prefixes, where))
		return true;
	for (size_t i = 0; i < prefixes->len; i++) {
		_cleanup_free_ char *real = realpath(prefixes->items[i], NULL);
		struct stat st;
		if (!real || !policy_path_under(where, real))
			continue;
		*by_link = strcmp(real, prefixes->items[i]) && stat(real, &st) == 0 &&
			   S_ISREG(st.st_mode);
		return true;
	}
	return false;
}

static bool bind_writable(const struct mount_entry *e);

/* Outside the prefixes: the error says which are allowed and what to add. */
static int bind_refusal(const struct mount_entry *e, size_t idx, const char *where,
			const struct mount_policy *pol, struct error *err)
{
	_cleanup_free_ char *advice = policy_bind_advice(
		&(struct policy_bind_advice_in){ pol->bind_prefixes, pol->source, where });

	return error_set(err, "policy: mounts[%zu]: bind source %s is %s, outside the %s",
			 idx, e->source, where, advice);
}

/* A socket, FIFO or device node is a way into whatever serves it (a
 * daemon's API, a disk), not a file of the container's: refused as a bind
 * source unless the operator names it in bindSpecialFiles. */
static int judge_source_type(const struct judged *o, size_t idx,
			     const struct mount_policy *pol, struct error *err)
{
	char what[64];

	if (judge_type_bit(o->st.st_mode) & JUDGE_TYPES_PLAIN || WEAK_BIND_SPECIAL)
		return 0;
	if (pol->special_files && policy_bind_allowed(pol->special_files, o->where))
		return 0;
	snprintf(what, sizeof(what), "mounts[%zu].source", idx);
	return judge_require_type(what, o, JUDGE_TYPES_PLAIN,
				  "an entry for it in the policy's bindSpecialFiles", err);
}

static int judge_prefixes(struct mount_entry *e, size_t idx, const struct judged *o,
			  const struct mount_policy *pol, struct error *err)
{
	const char *where = o->where;
	bool by_link;

	if (pol->volume_dirs && policy_volume_allowed(pol->volume_dirs, where))
		return 0;
	if (!under_prefixes(pol->bind_prefixes, where, &by_link))
		return bind_refusal(e, idx, where, pol, err);
	/* An engine's init binary named by its link (docker --init): the
	 * host's tini-static itself, so never writable, whoever the
	 * container runs as. */
	if (by_link && !WEAK_INIT_RW) {
		if (bind_writable(e))
			log_info("policy: mounts[%zu]: %s (%s) bound read-only: an engine-provided binary of the host",
				 idx, e->source, where);
		e->attr_set |= MOUNT_ATTR_RDONLY;
		e->attr_clr &= ~(uint64_t)MOUNT_ATTR_RDONLY;
	}
	return 0;
}

static bool bind_writable(const struct mount_entry *e)
{
	return !(e->flags & MS_RDONLY) && !(e->attr_set & MOUNT_ATTR_RDONLY);
}

/* A writable directory bind can fill the host's disk (RLIMIT_FSIZE caps one
 * file, not their count): allowed on a tmpfs (bounded by memory) or when
 * the operator says so; files (/etc/hosts, resolv.conf...) stay allowed. */
static int judge_writable(struct mount_entry *e, size_t idx, int fd,
			  const struct mount_policy *pol, struct error *err)
{
	struct statfs sf;

	if (e->flags & MS_RDONLY && e->recursive)
		e->attr_set |= MOUNT_ATTR_RDONLY; /* ro rbind: its submounts too */
	if (!e->source_is_dir || !bind_writable(e) || !pol->refuse_writable_dir_binds)
		return 0;
	if (fstatfs(fd, &sf) < 0)
		return error_sys(err, "mounts[%zu].source: statfs %s", idx, e->source);
	if (sf.f_type == TMPFS_MAGIC)
		return 0;
	return error_set(err, "policy: mounts[%zu]: writable directory bind of %s on %s refused by the policy (%s): nothing bounds the disk it can fill; mount it read-only (\"ro\"), from a tmpfs, or set writableBinds: true in the policy",
			 idx, e->source, e->spec->destination, pol->source);
}

/* The old check, for the weak-bind-race build only: realpath() here, the
 * child opens the path again by name. */
static int weak_check_by_name(const struct mount_entry *e, size_t idx,
			      const struct mount_policy *pol, struct error *err)
{
	char real[PATH_MAX];

	if (!realpath(e->source, real))
		return error_sys(err, "mounts[%zu].source %s", idx, e->source);
	if (!policy_bind_allowed(pol->bind_prefixes, real))
		return bind_refusal(e, idx, real, pol, err);
	return 0;
}

/* The clone is a peer (or slave) of the host mount it was made from, as a
 * bind mount is, and so is every mount below it: the whole tree is made
 * private (a slave with rootfsPropagation [r]slave) before it is attached,
 * whatever rootfsPropagation says, so that nothing the container mounts
 * under it reaches the host's mount namespace.  A bind's own propagation
 * option (rshared...) is set after it is attached (rootfs.c): a peer
 * group of the container's own. */
static int set_tree_propagation(const struct mount_entry *e, int tree, unsigned long rootfs_prop,
				struct error *err)
{
	if (!(rootfs_prop & MS_REC) && WEAK_BIND_PROPAGATION)
		return 0;
	return mounts_setattr(tree, true, 0, 0, (rootfs_prop & MS_SLAVE) ? MS_SLAVE : MS_PRIVATE,
			      e->spec->destination, err);
}

/* The mount's own maps, or the container's (validate.c made sure there is
 * a user namespace then). */
static int apply_idmap(const struct mount_entry *e, int tree, size_t idx,
		       const struct oci_spec *spec, struct error *err)
{
	const struct oci_mount *m = e->spec;
	bool own = m->n_uid_mappings > 0;
	_cleanup_close_ int userns = -1;

	if (idmap_userns_open(own ? m->uid_mappings : spec->linux.uid_mappings,
			      own ? m->n_uid_mappings : spec->linux.n_uid_mappings,
			      own ? m->gid_mappings : spec->linux.gid_mappings,
			      own ? m->n_gid_mappings : spec->linux.n_gid_mappings,
			      &userns, err) < 0 ||
	    idmap_apply(tree, userns, e->idmap_recursive, e->source, err) < 0)
		return error_prefix(err, "mounts[%zu]", idx);
	return 0;
}

/* The judged source cloned (open_tree): the tree the child attaches. */
static int clone_bind_tree(const struct mount_entry *e, int *tree, size_t idx, int fd,
			   unsigned long rootfs_prop, const struct oci_spec *spec,
			   struct error *err)
{
	*tree = (int)open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (e->recursive ? AT_RECURSIVE : 0));
	if (*tree < 0)
		return error_sys(err, "mounts[%zu]: clone bind mount source %s", idx, e->source);
	if (e->idmap && apply_idmap(e, *tree, idx, spec, err) < 0)
		return -1;
	/* Plain flags (ro, nosuid, ...) apply to the top mount, r* options to
	 * every mount below it, as runc and crun do. */
	if (set_tree_propagation(e, *tree, rootfs_prop, err) < 0 ||
	    mounts_setattr(*tree, false, ms_flags_to_attr(e->flags), 0, 0,
			   e->spec->destination, err) < 0 ||
	    mounts_setattr(*tree, true, e->attr_set, e->attr_clr, 0,
			   e->spec->destination, err) < 0)
		return error_prefix(err, "mounts[%zu]", idx);
	return 0;
}

static int open_bind_source(struct mount_entry *e, int *tree, size_t idx, unsigned long rootfs_prop,
			    const struct oci_spec *spec, const struct mount_policy *pol,
			    struct error *err)
{
	struct judged o = { .fd = -1 };
	struct statfs sf;
	bool judge = pol && !(e->relative && WEAK_BIND_RELATIVE);
	_cleanup_free_ char *dest = policy_clean_path(e->spec->destination);
	bool at_proc = !strcmp(dest, "/proc");
	char what[64];
	int fd, r = -1;

	/* Symlinks are followed (the final object is what is judged), magic
	 * links (/proc/PID/root/...) are not; judged, the object must also be
	 * where the kernel says it is in this mount namespace. */
	snprintf(what, sizeof(what), "mounts[%zu]: bind mount source", idx);
	if ((judge ? judge_open(what, e->source, JUDGE_SYMLINKS, &o, err) : judge_open_unlocated(what, e->source, JUDGE_SYMLINKS, &o, err)) < 0)
		return -1;
	fd = o.fd;
	e->source_is_dir = S_ISDIR(o.st.st_mode);
	if (at_proc && (fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)) {
		error_set(err, "mounts[%zu]: bind mount of %s on /proc: only a procfs may be mounted there",
			  idx, e->source);
		goto out;
	}
	if (judge && WEAK_BIND_RACE) {
		r = weak_check_by_name(e, idx, pol, err);
		goto out;
	}
	if (judge && (judge_source_type(&o, idx, pol, err) < 0 ||
		      judge_prefixes(e, idx, &o, pol, err) < 0 ||
		      judge_writable(e, idx, fd, pol, err) < 0))
		goto out;
	r = clone_bind_tree(e, tree, idx, fd, rootfs_prop, spec, err);
out:
	judged_close(&o);
	return r;
}

/* runc's checkProcMount, in every policy mode. */
static int check_proc_dest(const struct mount_entry *e, size_t idx, struct error *err)
{
	if (policy_proc_dest_allowed(e->spec->destination, e->spec->type,
				     e->kind == MOUNT_KIND_BIND))
		return 0;
	return error_set(err, "mounts[%zu]: destination %s is under /proc: only proc at /proc and binds onto the files lxcfs provides (/proc/cpuinfo, meminfo, stat, ...) may be mounted there",
			 idx, e->spec->destination);
}

int mounts_prepare(const struct oci_spec *spec, const char *bundle,
		   const struct mount_policy *pol, struct mount_plan *plan,
		   struct mount_trees *trees, struct error *err)
{
	memset(plan, 0, sizeof(*plan));
	memset(trees, 0, sizeof(*trees));
	plan->rootfs_propagation =
		rootfs_propagation_flags(spec->linux.rootfs_propagation);
	if (!plan->rootfs_propagation)
		return error_set(err, "linux.rootfsPropagation: unknown value \"%s\"",
				 spec->linux.rootfs_propagation);
	plan->items = xcalloc(spec->n_mounts, sizeof(*plan->items));
	trees->fd = xcalloc(spec->n_mounts, sizeof(*trees->fd));
	trees->len = spec->n_mounts;
	for (size_t i = 0; i < trees->len; i++)
		trees->fd[i] = -1;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		struct mount_entry *e = &plan->items[i];

		plan->len = i + 1;
		e->no_sysfs_target = pol != NULL;
		if (prepare_entry(&spec->mounts[i], i, bundle, e, err) < 0 ||
		    check_proc_dest(e, i, err) < 0 ||
		    (e->kind == MOUNT_KIND_BIND &&
		     open_bind_source(e, &trees->fd[i], i, plan->rootfs_propagation, spec, pol, err) < 0)) {
			mounts_free(plan, trees);
			return error_prefix(err, "config.json");
		}
	}
	return 0;
}

void mounts_close_trees(struct mount_trees *trees)
{
	for (size_t i = 0; i < trees->len; i++)
		if (trees->fd[i] >= 0) {
			close(trees->fd[i]);
			trees->fd[i] = -1;
		}
}

/* Attributes for mount_setattr: the atime modes are an enum, not bits. */
int mounts_setattr(int fd, bool recursive, uint64_t set, uint64_t clr,
		   uint64_t propagation, const char *what, struct error *err)
{
	struct mount_attr a = {
		.attr_set = set,
		.attr_clr = clr,
		.propagation = propagation,
	};

	if (!set && !clr && !propagation)
		return 0;
	if (a.attr_set & (MOUNT_ATTR_NOATIME | MOUNT_ATTR_STRICTATIME |
			  MOUNT_ATTR_RELATIME))
		a.attr_clr |= MOUNT_ATTR__ATIME;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0),
			  &a, sizeof(a)) < 0)
		return error_sys(err, "set mount attributes of %s", what);
	return 0;
}

void mounts_free(struct mount_plan *plan, struct mount_trees *trees)
{
	mounts_close_trees(trees);
	free(trees->fd);
	memset(trees, 0, sizeof(*trees));
	for (size_t i = 0; i < plan->len; i++) {
		free(plan->items[i].source);
		free(plan->items[i].data);
	}
	free(plan->items);
	memset(plan, 0, sizeof(*plan));
}
