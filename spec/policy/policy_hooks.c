/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hooks rule of the policy (issue 12, row 14).  An OCI hook runs on the
 * host as root with every capability and the argv config.json gives it, so
 * under enforce only binaries the operator listed in hookPrefixes may be
 * hooks.  runtime/ opens each hook path, asks the kernel where that file
 * really is (the /proc/self/fd link), judges that path here, and executes
 * the very fd it judged.
 *
 * startContainer hooks are refused whatever their path: the spec has them
 * resolved in the container's namespace, i.e. looked up in the image, which
 * is hostile, and they run before the process's capabilities are dropped.
 * createContainer hooks resolve in the runtime's namespace (config.md), so
 * they are judged like the host-side kinds.
 */
#include <string.h>

#include "policy.h"

bool policy_hook_allowed(const struct policy *p, const char *real_path)
{
	if (!real_path || real_path[0] != '/')
		return false;
	return policy_bind_allowed(&p->hook_prefixes, real_path);
}

int policy_hook_refuse(const struct policy *p, enum hook_kind kind,
		       size_t index, const char *path, const char *real_path,
		       struct error *err)
{
	const char *name = hook_kind_name(kind);
	const char *src = p->source ? p->source : "policy";

	if (!name)
		name = "unknown";
	if (kind == HOOK_START_CONTAINER || !real_path)
		return error_set(err,
				 "policy: hooks.%s[%zu] %s: refused by the hooks rule (%s): a startContainer hook is looked up in the container's root filesystem and runs with the runtime's capabilities; no hookPrefixes entry allows it",
				 name, index, path ? path : "(null)", src);
	return error_set(err,
			 "policy: hooks.%s[%zu] %s (the file %s) is not allowed by the hooks rule (%s): a hook runs on the host as root; allowed: the binaries under the policy's hookPrefixes",
			 name, index, path ? path : "(null)", real_path, src);
}
