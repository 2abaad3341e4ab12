/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_HOOKS_WEAK_H
#define AGENTSBX_HOOKS_WEAK_H

/*
 * The test-only switches of hooks/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../lib/weaken.h"

/* hooks not judged as commands against the policy's rules */
#define WEAK_HOOK_PREFIXES WEAKENED("hook-prefixes")

#endif
