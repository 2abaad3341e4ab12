/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_RUNTIME_LIFECYCLE_WEAK_H
#define AGENTSBX_RUNTIME_LIFECYCLE_WEAK_H

/*
 * The test-only switches of runtime/lifecycle/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../../lib/weaken.h"

/* process.cwd entered without staying inside the rootfs */
#define WEAK_CWD_IN_ROOT WEAKENED("cwd-in-root")
/* CVE-2019-5736: init and exec stay dumpable, and exec container code
 * directly, not through the sealed trampoline */
#define WEAK_DUMPABLE WEAKENED("dumpable")

#endif
