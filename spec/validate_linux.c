/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic checks of the linux section: namespaces and what needs them
 * (ID mappings, time offsets, sysctls), devices, paths, and the features
 * agentsbx refuses.  Resources and seccomp: validate_resources.c.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/util.h"
#include "internal.h"

#define CFG "config.json: "
#define NOT_SUPPORTED "not supported by agentsbx"

static int check_namespaces(const struct oci_linux *l, struct error *err)
{
	bool seen[NS_TYPE_MAX] = { false };
	char q[QUOTE_MAX];

	for (size_t i = 0; i < l->n_namespaces; i++) {
		const struct oci_namespace *ns = &l->namespaces[i];

		if (!ns_type_name(ns->type))
			return spec_vfail(err, CFG,
					  "linux.namespaces[%zu].type: "
					  "unknown namespace type %d",
					  i, (int)ns->type);
		if (seen[ns->type])
			return spec_vfail(err, CFG,
					  "linux.namespaces[%zu].type: "
					  "duplicate namespace type \"%s\"",
					  i, ns_type_name(ns->type));
		seen[ns->type] = true;
		if (ns->path && !spec_path_is_absolute(ns->path))
			return spec_vfail(err, CFG,
					  "linux.namespaces[%zu].path: "
					  "must be an absolute path, got %s",
					  i, spec_quote(q, ns->path));
	}
	return 0;
}

static bool id_is_mapped(const struct oci_id_mapping *m, size_t n,
			 uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (id >= m[i].container_id &&
		    id - m[i].container_id < m[i].size)
			return true;
	return false;
}

/* setuid() to an ID the new user namespace does not map fails (EINVAL):
 * say so now, by name, rather than from inside the container later. */
static int check_process_ids_mapped(const struct oci_spec *s,
				    struct error *err)
{
	const struct oci_linux *l = &s->linux;
	const struct oci_user *u = &s->process.user;

	if (!id_is_mapped(l->uid_mappings, l->n_uid_mappings, u->uid))
		return spec_vfail(err, CFG,
				  "process.user.uid: %u is not mapped by "
				  "linux.uidMappings",
				  u->uid);
	if (!id_is_mapped(l->gid_mappings, l->n_gid_mappings, u->gid))
		return spec_vfail(err, CFG,
				  "process.user.gid: %u is not mapped by "
				  "linux.gidMappings",
				  u->gid);
	for (size_t i = 0; i < u->n_additional_gids; i++)
		if (!id_is_mapped(l->gid_mappings, l->n_gid_mappings,
				  u->additional_gids[i]))
			return spec_vfail(err, CFG,
					  "process.user.additionalGids[%zu]: "
					  "%u is not mapped by "
					  "linux.gidMappings",
					  i, u->additional_gids[i]);
	return 0;
}

static int check_user_mappings(const struct oci_spec *s, struct error *err)
{
	const struct oci_linux *l = &s->linux;
	const struct oci_namespace *userns = spec_find_namespace(s, NS_USER);
	bool mapped = l->n_uid_mappings > 0 || l->n_gid_mappings > 0;

	if (mapped && !userns)
		return spec_vfail(err, CFG,
				  "linux.%s: set without a user "
				  "namespace",
				  l->n_uid_mappings ? "uidMappings" : "gidMappings");
	/* A new user namespace without a map runs everything as nobody. */
	if (userns && !userns->path &&
	    (l->n_uid_mappings == 0 || l->n_gid_mappings == 0))
		return spec_vfail(err, CFG,
				  "linux.%s: required with a new user "
				  "namespace",
				  l->n_uid_mappings ? "gidMappings" : "uidMappings");
	if (spec_check_id_mappings(l->uid_mappings, l->n_uid_mappings,
				   "linux.uidMappings", err) < 0 ||
	    spec_check_id_mappings(l->gid_mappings, l->n_gid_mappings,
				   "linux.gidMappings", err) < 0)
		return -1;
	if (userns && !userns->path && s->has_process)
		return check_process_ids_mapped(s, err);
	return 0;
}

static int check_time_offsets(const struct oci_spec *s, struct error *err)
{
	const struct oci_linux *l = &s->linux;
	const struct oci_namespace *timens = spec_find_namespace(s, NS_TIME);
	const struct oci_time_offset *offs[] = { &l->time_monotonic,
						 &l->time_boottime };
	const char *names[] = { "monotonic", "boottime" };

	for (size_t i = 0; i < 2; i++) {
		if (!offs[i]->set)
			continue;
		if (!timens)
			return spec_vfail(err, CFG,
					  "linux.timeOffsets.%s: set "
					  "without a time namespace",
					  names[i]);
		if (timens->path)
			return spec_vfail(
				err, CFG,
				"linux.timeOffsets.%s: cannot "
				"be set when joining an existing time "
				"namespace",
				names[i]);
		if (offs[i]->nanosecs >= 1000000000u)
			return spec_vfail(err, CFG,
					  "linux.timeOffsets.%s.nanosecs: "
					  "must be below 1000000000",
					  names[i]);
	}
	return 0;
}

/* ---- sysctl ----------------------------------------------------------- */

/* The sysctls that a namespace of the container's isolates from the host. */
static const struct {
	const char *prefix;
	enum ns_type ns;
} namespaced_sysctls[] = {
	{ "net.", NS_NETWORK },
	{ "kernel.msg", NS_IPC },
	{ "kernel.sem", NS_IPC },
	{ "kernel.shm", NS_IPC },
	{ "fs.mqueue.", NS_IPC },
	/* no field of its own before domainname: runc and crun take it */
	{ "kernel.domainname", NS_UTS },
};

bool spec_sysctl_namespace(const char *key, enum ns_type *ns)
{
	for (size_t i = 0; i < sizeof(namespaced_sysctls) / sizeof(namespaced_sysctls[0]); i++)
		if (str_has_prefix(key, namespaced_sysctls[i].prefix)) {
			*ns = namespaced_sysctls[i].ns;
			return true;
		}
	return false;
}

/* "net.ipv4.ip_forward": dot-separated non-empty names, no '/'. */
static bool sysctl_key_valid(const char *k)
{
	bool empty = true;

	for (; *k; k++) {
		if (*k == '/' || (unsigned char)*k <= ' ' || *k == 0x7f)
			return false;
		if (*k == '.') {
			if (empty)
				return false;
			empty = true;
		} else {
			empty = false;
		}
	}
	return !empty;
}

static bool sysctl_value_valid(const char *v)
{
	for (; *v; v++)
		if (((unsigned char)*v < 0x20 && *v != '\t') || *v == 0x7f)
			return false;
	return true;
}

static int check_sysctl(const struct oci_spec *s, const char *key,
			const char *value, struct error *err)
{
	char q[QUOTE_MAX];
	enum ns_type ns;

	if (!sysctl_key_valid(key))
		return spec_vfail(err, CFG,
				  "linux.sysctl[%s]: not a sysctl name",
				  spec_quote(q, key));
	if (!sysctl_value_valid(value))
		return spec_vfail(err, CFG,
				  "linux.sysctl[%s]: the value has "
				  "control characters",
				  spec_quote(q, key));
	if (strcmp(key, "kernel.hostname") == 0)
		return spec_vfail(err, CFG,
				  "linux.sysctl[%s]: refused: use the "
				  "\"hostname\" field",
				  spec_quote(q, key));
	if (spec_sysctl_namespace(key, &ns)) {
		if (!spec_find_namespace(s, ns))
			return spec_vfail(
				err, CFG,
				"linux.sysctl[%s]: needs a "
				"\"%s\" namespace (it would change the "
				"host's)",
				spec_quote(q, key), ns_type_name(ns));
		return 0;
	}
	return spec_vfail(err, CFG,
			  "linux.sysctl[%s]: not namespaced: setting it "
			  "would change the host",
			  spec_quote(q, key));
}

static int check_sysctls(const struct oci_spec *s, struct error *err)
{
	const struct str_map *m = &s->linux.sysctl;

	for (size_t i = 0; i < m->len; i++)
		if (check_sysctl(s, m->keys[i], m->values[i], err) < 0)
			return -1;
	return 0;
}

/* ---- devices, paths --------------------------------------------------- */

/* The S_IFMT bits of a device type (c, u: char; b: block; p: fifo). */
static uint64_t device_type_bits(char type)
{
	return type == 'b' ? S_IFBLK : type == 'p' ? S_IFIFO :
						     S_IFCHR;
}

static int check_devices(const struct oci_linux *l, struct error *err)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < l->n_devices; i++) {
		const struct oci_device *d = &l->devices[i];

		if (!d->path)
			return spec_vfail(err, CFG,
					  "linux.devices[%zu].path: "
					  "required field is missing",
					  i);
		if (!spec_path_is_absolute(d->path))
			return spec_vfail(err, CFG,
					  "linux.devices[%zu].path: must "
					  "be an absolute path, got %s",
					  i, spec_quote(q, d->path));
		if (!d->type || !strchr("cbup", d->type))
			return spec_vfail(err, CFG,
					  "linux.devices[%zu].type: must "
					  "be one of c, b, u, p",
					  i);
		if (d->type != 'p' && (d->major < 0 || d->minor < 0))
			return spec_vfail(err, CFG,
					  "linux.devices[%zu]: negative "
					  "major or minor number",
					  i);
		/* podman writes the whole st_mode (020644 for a char device):
		 * the type bits of the device's own type are accepted. */
		if (d->file_mode.set && d->file_mode.v > 0777 &&
		    (d->file_mode.v & ~(uint64_t)0777) != device_type_bits(d->type))
			return spec_vfail(
				err, CFG,
				"linux.devices[%zu].fileMode: "
				"%llu is not a permission mode (0..0777, "
				"written in decimal: 0..511)",
				i, (unsigned long long)d->file_mode.v);
	}
	return 0;
}

static int check_abs_paths(const struct str_array *a, const char *field,
			   struct error *err)
{
	char q[QUOTE_MAX];

	for (size_t i = 0; i < a->len; i++)
		if (!spec_path_is_absolute(a->items[i]))
			return spec_vfail(err, CFG,
					  "linux.%s[%zu]: must be an "
					  "absolute path, got %s",
					  field, i, spec_quote(q, a->items[i]));
	return 0;
}

/* cgroupsPath is resolved under the cgroup root: no way up from there. */
static int check_cgroups_path(const struct oci_linux *l, struct error *err)
{
	const char *p = l->cgroups_path;
	char q[QUOTE_MAX];

	if (!p)
		return 0;
	if (spec_has_control_chars(p))
		return spec_vfail(err, CFG,
				  "linux.cgroupsPath: %s has control "
				  "characters",
				  spec_quote(q, p));
	while (*p) {
		size_t n = strcspn(p, "/:");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return spec_vfail(err, CFG,
					  "linux.cgroupsPath: %s must not "
					  "have \"..\" components",
					  spec_quote(q, l->cgroups_path));
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

static int check_misc(const struct oci_linux *l, struct error *err)
{
	unsigned long flags;
	char q[QUOTE_MAX];

	if (l->rootfs_propagation &&
	    rootfs_propagation_from_name(l->rootfs_propagation, &flags) < 0)
		return spec_vfail(
			err, CFG,
			"linux.rootfsPropagation: unknown value "
			"%s (expected [r]shared, [r]slave, [r]private or "
			"[r]unbindable)",
			spec_quote(q, l->rootfs_propagation));
	if (l->personality.set) {
		if (personality_domain_from_name(l->personality.domain) < 0)
			return spec_vfail(
				err, CFG,
				"linux.personality.domain: "
				"unknown domain %s (expected LINUX or "
				"LINUX32)",
				spec_quote(q, l->personality.domain));
		if (l->personality.flags.len > 0)
			return spec_vfail(
				err, CFG,
				"linux.personality.flags[0]: "
				"%s: " NOT_SUPPORTED,
				spec_quote(q, l->personality.flags.items[0]));
	}
	return 0;
}

static int check_unsupported(const struct oci_linux *l, struct error *err)
{
	if (l->has_intel_rdt)
		return spec_vfail(err, CFG, "linux.intelRdt: " NOT_SUPPORTED);
	if (l->has_net_devices)
		return spec_vfail(err, CFG, "linux.netDevices: " NOT_SUPPORTED);
	if (l->mount_label)
		return spec_vfail(err, CFG,
				  "linux.mountLabel: not supported: this "
				  "build has no AppArmor/SELinux support");
	return 0;
}

int spec_check_linux(const struct oci_spec *s, struct error *err)
{
	const struct oci_linux *l = &s->linux;

	if (check_namespaces(l, err) < 0 || check_user_mappings(s, err) < 0 ||
	    check_time_offsets(s, err) < 0 || check_sysctls(s, err) < 0 ||
	    check_devices(l, err) < 0 ||
	    check_abs_paths(&l->masked_paths, "maskedPaths", err) < 0 ||
	    check_abs_paths(&l->readonly_paths, "readonlyPaths", err) < 0 ||
	    check_cgroups_path(l, err) < 0 || check_misc(l, err) < 0 ||
	    check_unsupported(l, err) < 0)
		return -1;
	if (l->memory_policy.set) {
		struct spec_mempolicy mp;

		if (spec_memory_policy(&l->memory_policy, &mp, err) < 0)
			return -1;
	}
	if (l->resources.present &&
	    spec_check_resources(&l->resources, err) < 0)
		return -1;
	if (l->seccomp.present && spec_check_seccomp(&l->seccomp, err) < 0)
		return -1;
	return 0;
}
