/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_MOUNTS_H
#define AGENTSBX_MOUNTS_H

/*
 * The mounts of config.json, parsed once in the parent (options through
 * libmount) into a plan the child applies in order.
 */

#include <stdbool.h>
#include <stdint.h>

#include "../lib/error.h"
#include "../spec/spec.h"

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
	char *source;		 /* binds: absolute host path */
	unsigned long flags;	 /* MS_* other than propagation and bind */
	unsigned long propagation; /* MS_SHARED|MS_SLAVE|... (| MS_REC) */
	uint64_t attr_set;	 /* MOUNT_ATTR_* applied recursively (rro, ...) */
	uint64_t attr_clr;
	bool recursive;		 /* rbind */
	char *data;		 /* filesystem-specific options */
};

struct mount_plan {
	struct mount_entry *items;
	size_t len;
	unsigned long rootfs_propagation; /* MS_* for / (| MS_REC) */
};

/* bind_prefixes: when not NULL (a policy in force), every bind source is
 * resolved with realpath() and must lie under one of them. */
int mounts_prepare(const struct oci_spec *spec, const char *bundle,
		   const struct str_array *bind_prefixes, struct mount_plan *plan,
		   struct error *err);
void mounts_free(struct mount_plan *plan);

/* Mount options this build recognises (for `features`). */
const char *const *mount_options_supported(void);

/* MS_* mount flags -> MOUNT_ATTR_* for mount_setattr. */
uint64_t ms_flags_to_attr(unsigned long flags);

#endif
