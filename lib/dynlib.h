/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_DYNLIB_H
#define AGENTSBX_DYNLIB_H

/*
 * Libraries only some calls need (libnftables for egress rules, libsystemd
 * for --systemd-cgroup, libmicrohttpd for `agentsbx mcp --listen`) are opened when they are needed, not at every
 * start: the dynamic linker's symbol binding for them was most of the cost
 * of a `run`.  The headers still give the types: each user keeps
 * a table of pointers typed with __typeof__ of the real declarations.
 *
 * Only ever called in the runtime's own process on the host's filesystem,
 * before any pivot_root or setns into a mount namespace: a library opened
 * inside a container's root would be the container's code.
 */

#include <stddef.h>

#include "error.h"

struct dynlib_sym {
	const char *name;
	void **slot;
};

/*
 * Open soname (once per process; later calls return at once) and fill
 * every slot.  On failure: "WHY needs SONAME (HINT): dlerror" in err, and
 * no slot is touched.  *handle caches the library across calls.
 */
int dynlib_load(void **handle, const char *soname, const char *why,
		const char *hint, const struct dynlib_sym *syms, size_t n,
		struct error *err);

#endif
