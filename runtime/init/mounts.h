/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MOUNTS_H
#define AGENTSBX_MOUNTS_H

/*
 * The mounts of config.json, parsed once in the parent (options through
 * libmount) into a plan the child applies in order.
 */

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "../../spec/spec.h"

enum mount_kind {
	MOUNT_KIND_FS,	   /* a fresh filesystem: tmpfs, devpts, mqueue, ... */
	MOUNT_KIND_BIND,   /* bind or rbind of a host path */
	MOUNT_KIND_PROC,   /* procfs: target must be a real directory */
	MOUNT_KIND_SYSFS,  /* sysfs: the same */
	MOUNT_KIND_CGROUP, /* the container's cgroup, whatever the host has */
};

struct mount_entry {
	const struct oci_mount *spec;
	enum mount_kind kind;
	char *source;		   /* binds: absolute host path, lexically clean */
	bool source_is_dir;	   /* binds: what the judged source is */
	bool relative;		   /* binds: config.json gave a relative source */
	bool no_sysfs_target;	   /* a policy in force: nothing onto a sysfs */
	unsigned long flags;	   /* MS_* other than propagation and bind */
	unsigned long propagation; /* MS_SHARED|MS_SLAVE|... (| MS_REC) */
	uint64_t attr_set;	   /* MOUNT_ATTR_* applied recursively (rro, ...) */
	uint64_t attr_clr;
	bool recursive;	      /* rbind */
	bool idmap;	      /* binds: "idmap" or "ridmap" */
	bool idmap_recursive; /* "ridmap": every mount of the tree */
	char *data;	      /* filesystem-specific options */
};

struct mount_plan {
	struct mount_entry *items;
	size_t len;
	unsigned long rootfs_propagation; /* MS_* for / (| MS_REC) */
};

/* The binds' detached clones of the judged sources (open_tree in the
 * parent), fd[i] for the plan's items[i], -1 for an entry that is no bind
 * or once closed: attached by the child with move_mount.  Host handles,
 * kept apart from the plan, which is data read by everyone. */
struct mount_trees {
	int *fd;
	size_t len;
};

/* What the policy in force (enforce) asks of the mounts; NULL: none. */
struct mount_policy {
	const char *source;		       /* the policy's name, for errors */
	const struct str_array *bind_prefixes; /* where bind sources may be */
	bool refuse_writable_dir_binds;	       /* rw directory binds not on tmpfs */
	const struct str_array *special_files; /* sockets, FIFOs, devices allowed */
	const struct str_array *volume_dirs;   /* <dir>/<name>/_data allowed */
};

/* Every bind source is opened once, here in the parent, judged on that fd
 * (where it really is, against pol's prefixes) and cloned with open_tree():
 * the child attaches that very tree.  Whatever the policy, no destination
 * under /proc but runc's list. */
int mounts_prepare(const struct oci_spec *spec, const char *bundle,
		   const struct mount_policy *pol, struct mount_plan *plan,
		   struct mount_trees *trees, struct error *err);
/* Close the detached trees (the parent after the clone, the child once
 * they are attached). */
void mounts_close_trees(struct mount_trees *trees);
/* The plan and its trees (closed) freed. */
void mounts_free(struct mount_plan *plan, struct mount_trees *trees);
/* mount_setattr(fd, "", AT_EMPTY_PATH [| AT_RECURSIVE]); nothing to do is 0. */
int mounts_setattr(int fd, bool recursive, uint64_t set, uint64_t clr,
		   uint64_t propagation, const char *what, struct error *err);

/* idmap.c: a user namespace with these maps, as an fd (the process that
 * made it is gone); and the id mapping of a detached tree with it. */
int idmap_userns_open(const struct oci_id_mapping *uids, size_t nu,
		      const struct oci_id_mapping *gids, size_t ng, int *fd,
		      struct error *err);
int idmap_apply(int tree, int userns_fd, bool recursive, const char *what,
		struct error *err);

/* Mount options this build recognises (for `features`). */
const char *const *mount_options_supported(void);

/* MS_* mount flags -> MOUNT_ATTR_* for mount_setattr. */
uint64_t ms_flags_to_attr(unsigned long flags);

/*
 * mount_opts.c: "a,b=c,..." split as libmount splits it: MS_* flags, and
 * the filesystem's data (heap, NULL when none).  _builtin knows the
 * options nearly every spec uses and returns 1 for any other; _libmount
 * opens libmount (first use) and asks it; _split tries them in that order.
 */
int mount_optstr_builtin(const char *optstr, unsigned long *flags, char **data);
int mount_optstr_libmount(const char *optstr, unsigned long *flags,
			  char **data, struct error *err);
int mount_optstr_split(const char *optstr, unsigned long *flags, char **data,
		       struct error *err);

#endif
