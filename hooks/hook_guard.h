/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_HOOK_GUARD_H
#define AGENTSBX_HOOK_GUARD_H

/* Internal to hooks/: the policy's hooks rule on opened files. */

#include <stdbool.h>
#include <stddef.h>

#include "../lib/error.h"
#include "../spec/policy/policy.h"
#include "hooks.h"

/* The rule is in force in this process (enforce). */
bool hooks_guarded(void);
/* The fd create pinned for this hook, or -1 (not pinned: open it now). */
int hooks_pinned_fd(const struct oci_hook *hook, enum hook_kind kind,
		    size_t index);
/* Open hook->path and judge the file it is; *fd: O_PATH|O_CLOEXEC. */
int hooks_open_judged(const struct oci_hook *hook, enum hook_kind kind,
		      size_t index, int *fd, struct error *err);

#endif
