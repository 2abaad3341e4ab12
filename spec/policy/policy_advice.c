/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a bind refusal tells the operator to do: the prefixes in
 * force, the field, and -- when the source sits in an engine's per-container
 * directory outside the defaults (a dockerd data-root or a podman/containerd
 * root elsewhere) -- the directory to add.  Pure data, like spec/.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "policy.h"

/* A path component of 64 hex digits: an engine's container id. */
static bool is_engine_id(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

char *policy_engine_dir_of(const char *path)
{
	const char *p = path;

	while (p && *p) {
		const char *start = p + (*p == '/'), *end = strchr(start, '/');
		size_t n = end ? (size_t)(end - start) : strlen(start);

		if (is_engine_id(start, n) && start - 1 > path)
			return xstrndup(path, (size_t)(start - 1 - path));
		p = end;
	}
	return NULL;
}

char *policy_bind_advice(const struct policy_bind_advice_in *in)
{
	_cleanup_free_ char *list = xstrdup("");
	_cleanup_free_ char *dir = policy_engine_dir_of(in->where);

	for (size_t i = 0; i < in->prefixes->len; i++) {
		char *n = xasprintf("%s%s%s", list, i ? ", " : "", in->prefixes->items[i]);
		free(list);
		list = n;
	}
	if (dir)
		return xasprintf("allowed prefixes (bindPrefixes of the policy %s): %s. %s is an engine's per-container directory: a dockerd data-root (or a containerd/podman root) outside the defaults needs \"%s\" added to \"bindPrefixes\" in the policy file (`agentsbx policy show` prints the policy in force)",
				 in->source, list[0] ? list : "(none)", dir, dir);
	return xasprintf("allowed prefixes (bindPrefixes of the policy %s): %s. To allow it, add its directory to \"bindPrefixes\" in the policy file (`agentsbx policy show` prints the policy in force)",
			 in->source, list[0] ? list : "(none)");
}
