/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic checks of a parsed spec: the top level (version, root, hostname,
 * mounts, hooks, annotations).  The process is checked in
 * validate_process.c, the linux section in validate_linux.c.
 *
 * spec_validate() does not require a process: a config without one is
 * valid (the spec requires it only for `start`), so `create` checks
 * has_process itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CFG "config.json: "
#define HOST_NAME_MAX_LEN 64 /* sethostname(2)/setdomainname(2) limit */

/* ---- ociVersion ------------------------------------------------------- */

/* ctype.h answers by locale: SemVer is ASCII. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '-';
}

/* A SemVer pre-release or build part: dot-separated non-empty
 * identifiers of [0-9A-Za-z-].  Advances *pp past it. */
static bool semver_idents(const char **pp)
{
	const char *p = *pp;
	bool empty = true;

	for (;; p++) {
		if (is_ident_char(*p)) {
			empty = false;
		} else if (*p == '.' && !empty) {
			empty = true;
		} else {
			break;
		}
	}
	*pp = p;
	return !empty;
}

/* SemVer 2.0.0: MAJOR.MINOR.PATCH[-pre][+build], no leading zeros. */
static bool semver_major(const char *v, unsigned long *major)
{
	const char *p = v;

	for (int i = 0; i < 3; i++) {
		char *end;
		unsigned long n;

		if (!is_digit(*p) || (*p == '0' && is_digit(p[1])))
			return false;
		errno = 0;
		n = strtoul(p, &end, 10);
		if (errno)
			return false;
		if (i == 0)
			*major = n;
		p = end;
		if (i < 2 && *p++ != '.')
			return false;
	}
	if (*p == '-' && (++p, !semver_idents(&p)))
		return false;
	if (*p == '+' && (++p, !semver_idents(&p)))
		return false;
	return *p == '\0';
}

static int validate_version(const struct oci_spec *s, struct error *err)
{
	char q[QUOTE_MAX];
	unsigned long major = 0;

	if (!s->oci_version)
		return spec_vfail(err, CFG,
				  "ociVersion: required field is missing");
	if (!semver_major(s->oci_version, &major))
		return spec_vfail(err, CFG,
				  "ociVersion: %s is not a SemVer version",
				  spec_quote(q, s->oci_version));
	if (major != 1)
		return spec_vfail(
			err, CFG,
			"ociVersion: unsupported version %s (agentsbx "
			"supports 1.x and implements %s)",
			spec_quote(q, s->oci_version), OCI_VERSION_MAX);
	return 0;
}

/* ---- root, hostname --------------------------------------------------- */

static int validate_root(const struct oci_spec *s, struct error *err)
{
	if (!s->root.path)
		return spec_vfail(
			err, CFG,
			"root.path: required field is missing (root is "
			"required on Linux)");
	return 0;
}

/* hostname or domainname: only in a uts namespace of the container's. */
static int validate_uts_name(const struct oci_spec *s, const char *field,
			     const char *value, struct error *err)
{
	if (!value)
		return 0;
	if (!spec_find_namespace(s, NS_UTS))
		return spec_vfail(err, CFG,
				  "%s: set without a uts namespace (it would "
				  "change the host's)",
				  field);
	if (strlen(value) > HOST_NAME_MAX_LEN)
		return spec_vfail(err, CFG, "%s: longer than %d bytes", field,
				  HOST_NAME_MAX_LEN);
	return 0;
}

/* ---- mounts ----------------------------------------------------------- */

static bool has_option(const struct str_array *opts, const char *name)
{
	for (size_t i = 0; i < opts->len; i++)
		if (strcmp(opts->items[i], name) == 0)
			return true;
	return false;
}

static int validate_mount(const struct oci_spec *s, size_t i, struct error *err)
{
	const struct oci_mount *m = &s->mounts[i];
	char field[64];
	bool idmap = has_option(&m->options, "idmap") ||
		     has_option(&m->options, "ridmap");

	if (!m->destination)
		return spec_vfail(err, CFG,
				  "mounts[%zu].destination: required field is "
				  "missing",
				  i);
	/* A relative destination is taken from "/", as runc does (the spec
	 * allowed it before 1.0); it is resolved inside the rootfs anyway. */
	if (!*m->destination)
		return spec_vfail(err, CFG, "mounts[%zu].destination: empty path", i);
	if ((m->n_uid_mappings == 0) != (m->n_gid_mappings == 0))
		return spec_vfail(
			err, CFG,
			"mounts[%zu]: uidMappings and gidMappings must "
			"be set together",
			i);
	if (idmap && m->n_uid_mappings == 0 && !spec_find_namespace(s, NS_USER))
		return spec_vfail(
			err, CFG,
			"mounts[%zu].options: idmap without uidMappings "
			"needs a user namespace",
			i);
	snprintf(field, sizeof(field), "mounts[%zu].uidMappings", i);
	if (spec_check_id_mappings(m->uid_mappings, m->n_uid_mappings, field,
				   err) < 0)
		return -1;
	snprintf(field, sizeof(field), "mounts[%zu].gidMappings", i);
	return spec_check_id_mappings(m->gid_mappings, m->n_gid_mappings, field,
				      err);
}

/* ---- hooks, annotations ----------------------------------------------- */

static int validate_hooks(const struct oci_spec *s, struct error *err)
{
	char q[QUOTE_MAX];

	for (int k = 0; k < HOOK_KIND_MAX; k++) {
		const char *kind = hook_kind_name(k);

		for (size_t i = 0; i < s->hooks[k].len; i++) {
			const struct oci_hook *h = &s->hooks[k].items[i];

			if (!h->path)
				return spec_vfail(
					err, CFG,
					"hooks.%s[%zu].path: required "
					"field is missing",
					kind, i);
			if (!spec_path_is_absolute(h->path))
				return spec_vfail(
					err, CFG,
					"hooks.%s[%zu].path: must be an "
					"absolute path, got %s",
					kind, i, spec_quote(q, h->path));
			if (h->timeout.set && h->timeout.v <= 0)
				return spec_vfail(
					err, CFG,
					"hooks.%s[%zu].timeout: must be "
					"greater than 0, got %lld",
					kind, i, (long long)h->timeout.v);
		}
	}
	return 0;
}

static int validate_annotations(const struct oci_spec *s, struct error *err)
{
	for (size_t i = 0; i < s->annotations.len; i++)
		if (!s->annotations.keys[i] || !s->annotations.keys[i][0])
			return spec_vfail(
				err, CFG,
				"annotations: keys must not be empty");
	return 0;
}

int spec_validate(const struct oci_spec *s, struct error *err)
{
	if (validate_version(s, err) < 0 || validate_root(s, err) < 0)
		return -1;
	if (s->has_process &&
	    spec_check_process(&s->process, CFG "process.", err) < 0)
		return -1;
	if (validate_uts_name(s, "hostname", s->hostname, err) < 0 ||
	    validate_uts_name(s, "domainname", s->domainname, err) < 0)
		return -1;
	for (size_t i = 0; i < s->n_mounts; i++)
		if (validate_mount(s, i, err) < 0)
			return -1;
	if (validate_hooks(s, err) < 0 || validate_annotations(s, err) < 0 ||
	    spec_check_linux(s, err) < 0)
		return -1;
	return 0;
}

int spec_validate_process(const struct oci_process *proc, struct error *err)
{
	return spec_check_process(proc, "process.json: ", err);
}
