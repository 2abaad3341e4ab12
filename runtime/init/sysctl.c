/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes into /proc from the container init: sysctls, hostname.  Each
 * write goes through the runtime's own procfs, opened once and checked to
 * be procfs (CVE-2025-52881: a shared-mount race could otherwise redirect
 * a write to another /proc file), with O_NOFOLLOW on the last component.
 * /proc/sys files act on the writer's namespaces, so the values land in the
 * container's network, ipc and uts namespaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"

int proc_check_fd(int fd, const char *what, struct error *err)
{
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0)
		return error_sys(err, "statfs %s", what);
	if (sfs.f_type != PROC_SUPER_MAGIC)
		return error_set(err, "%s is not on procfs (f_type 0x%lx)", what,
				 (unsigned long)sfs.f_type);
	return 0;
}

/* "net.ipv4.ip_forward" -> "sys/net/ipv4/ip_forward".  Dots become
 * slashes; a key with "/" in it keeps them (runc accepts both forms). */
static int sysctl_path(const char *key, char *out, size_t size,
		       struct error *err)
{
	size_t n;

	if (strstr(key, "..") || key[0] == '.' || key[0] == '/')
		return error_set(err, "linux.sysctl: invalid key \"%s\"", key);
	n = (size_t)snprintf(out, size, "sys/%s", key);
	if (n >= size)
		return error_set(err, "linux.sysctl: key too long");
	if (!strchr(key, '/'))
		for (char *p = out + 4; *p; p++)
			if (*p == '.')
				*p = '/';
	return 0;
}

static int write_sysctl(int procfd, const char *key, const char *value,
			struct error *err)
{
	char path[512];
	_cleanup_close_ int fd = -1;

	if (sysctl_path(key, path, sizeof(path), err) < 0)
		return -1;
	fd = openat(procfd, path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, "linux.sysctl: open /proc/%s", path);
	if (!WEAK_PROC_FSTATFS && proc_check_fd(fd, path, err) < 0)
		return -1;
	if (write_all(fd, value, strlen(value)) < 0)
		return error_sys(err, "linux.sysctl: write %s to /proc/%s", value, path);
	return 0;
}

int sysctl_apply(const struct ctx_decided *d, const struct ctx_handles *h, struct error *err)
{
	const struct str_map *m = &d->spec.linux.sysctl;

	for (size_t i = 0; i < m->len; i++)
		if (write_sysctl(h->host_proc_fd, m->keys[i], m->values[i], err) < 0)
			return -1;
	return 0;
}

static const char *joined_path(const struct oci_spec *spec, enum ns_type t)
{
	const struct oci_namespace *ns = spec_find_namespace(spec, t);

	return ns && ns->path ? ns->path : "?";
}

/* "A namespace is present" is not enough: a path may name the host's, and
 * the write would change the host (runc refuses net sysctls in the host's
 * network namespace).  Judged on the fds ns_open_joined() opened. */
int sysctl_check_host_namespaces(const struct ctx_decided *d, struct error *err)
{
	const struct oci_spec *s = &d->spec;
	const struct str_map *m = &s->linux.sysctl;
	enum ns_type ns;

	for (size_t i = 0; i < m->len; i++)
		if (spec_sysctl_namespace(m->keys[i], &ns) && d->ns_host[ns])
			return error_set(err, "linux.sysctl[%s]: linux.namespaces[%s].path %s is the host's %s namespace: setting it would change the host's",
					 m->keys[i], ns_type_name(ns), joined_path(s, ns),
					 ns_type_name(ns));
	if ((s->hostname || s->domainname) && d->ns_host[NS_UTS])
		return error_set(err, "%s: linux.namespaces[uts].path %s is the host's uts namespace: setting it would change the host's",
				 s->hostname ? "hostname" : "domainname", joined_path(s, NS_UTS));
	return 0;
}
