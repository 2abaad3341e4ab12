/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_AGENT_SANDBOX_WEAK_H
#define AGENTSBX_AGENT_SANDBOX_WEAK_H

/*
 * The test-only switches of agent/sandbox/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../../lib/weaken.h"

/* a sandbox's Python value and outputs files opened following a symlink
 * the program planted */
#define WEAK_VALUE_NOFOLLOW WEAKENED("value-nofollow")
/* the sandbox watchdog stays in the caller's process group */
#define WEAK_WATCHDOG_SESSION WEAKENED("watchdog-session")

#endif
