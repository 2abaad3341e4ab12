/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The id maps of a container created by an unprivileged caller (rootless,
 * as podman runs crun).  Such a caller may write its own uid and gid, one
 * id each, into the maps of a child's user namespace (gid_map only after
 * "deny" is in setgroups); any other mapping takes the setuid helpers of
 * shadow's uidmap (newuidmap, newgidmap), which check /etc/subuid and
 * /etc/subgid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../internal.h"

#define NEWUIDMAP "/usr/bin/newuidmap"
#define NEWGIDMAP "/usr/bin/newgidmap"

bool rootless_caller(void)
{
	return geteuid() != 0;
}

bool rootless_can_map_more(void)
{
	return access(NEWUIDMAP, X_OK) == 0 && access(NEWGIDMAP, X_OK) == 0;
}

/* Exactly one id, our own, mapped. */
static bool only_own(const struct oci_id_mapping *m, size_t n, unsigned own)
{
	return n == 1 && m[0].size == 1 && m[0].host_id == own;
}

/* newuidmap PID CTR HOST SIZE [CTR HOST SIZE]... */
static int run_helper(const char *helper, pid_t pid, const struct oci_id_mapping *m,
		      size_t n, struct error *err)
{
	char **argv = xcalloc(3 * n + 3, sizeof(*argv));
	int status, r = -1;
	pid_t child;
	size_t k = 0;

	argv[k++] = xstrdup(helper);
	argv[k++] = xasprintf("%d", pid);
	for (size_t i = 0; i < n; i++) {
		argv[k++] = xasprintf("%u", m[i].container_id);
		argv[k++] = xasprintf("%u", m[i].host_id);
		argv[k++] = xasprintf("%u", m[i].size);
	}
	child = fork();
	if (child == 0) {
		execv(helper, argv);
		_exit(127);
	}
	if (child < 0) {
		error_sys(err, "fork for %s", helper);
	} else if (waitpid(child, &status, 0) < 0) {
		error_sys(err, "wait for %s", helper);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && access(helper, X_OK) < 0) {
		error_set(err, "rootless: mapping more than your own id needs %s (Debian package uidmap) and your ranges in /etc/subuid and /etc/subgid", helper);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		error_set(err, "rootless: %s refused the mapping (exit %d): are the ids in your ranges of /etc/subuid and /etc/subgid?",
			  helper, exit_code_of(status));
	} else {
		r = 0;
	}
	for (size_t i = 0; i < k; i++)
		free(argv[i]);
	free(argv);
	return r;
}

int rootless_write_id_maps(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct ctx_record *r, struct error *err)
{
	const struct oci_linux *l = &d->spec.linux;
	pid_t pid = r->pid;
	_cleanup_free_ char *setgroups = xasprintf("%d/setgroups", pid);

	if (!l->n_uid_mappings || !l->n_gid_mappings)
		return error_set(err, "rootless: linux.uidMappings and linux.gidMappings are required (agentsbx spec --rootless writes them)");
	if (only_own(l->gid_mappings, l->n_gid_mappings, getegid())) {
		if (write_file_at(h->host_proc_fd, setgroups, "deny", err) < 0 ||
		    ns_write_id_map(h->host_proc_fd, pid, "gid_map", l->gid_mappings, 1, err) < 0)
			return error_prefix(err, "rootless: write the gid map");
	} else if (run_helper(NEWGIDMAP, pid, l->gid_mappings, l->n_gid_mappings, err) < 0) {
		return -1;
	}
	if (only_own(l->uid_mappings, l->n_uid_mappings, geteuid())) {
		if (ns_write_id_map(h->host_proc_fd, pid, "uid_map", l->uid_mappings, 1, err) < 0)
			return error_prefix(err, "rootless: write the uid map");
		return 0;
	}
	return run_helper(NEWUIDMAP, pid, l->uid_mappings, l->n_uid_mappings, err);
}
