/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One of a user namespace's maps (/proc/PID/uid_map or gid_map) written
 * from the spec's mappings: the step that the container's namespace
 * (namespaces.c), a rootless caller's (rootless.c) and an id-mapped
 * mount's (idmap.c) all end in.
 */
#include <stdio.h>

#include "../../lib/util.h"
#include "../internal.h"

int ns_write_id_map(int proc_fd, pid_t pid, const char *file,
		    const struct oci_id_mapping *m, size_t n, struct error *err)
{
	char buf[8192], path[64];
	size_t len = 0;

	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(buf + len, sizeof(buf) - len, "%u %u %u\n",
				 m[i].container_id, m[i].host_id, m[i].size);
		if (w < 0 || (size_t)w >= sizeof(buf) - len)
			return error_set(err, "%s: too many mappings", file);
		len += (size_t)w;
	}
	snprintf(path, sizeof(path), "%d/%s", pid, file);
	if (write_file_at(proc_fd, path, buf, err) < 0)
		return error_prefix(err, "write user namespace mapping");
	return 0;
}
