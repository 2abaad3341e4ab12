/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_RUNTIME_JUDGE_WEAK_H
#define AGENTSBX_RUNTIME_JUDGE_WEAK_H

/*
 * The test-only switches of runtime/judge/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../../lib/weaken.h"

/* the judge trusts the path /proc/self/fd/N shows, without opening it again
 * and comparing: a file of another mount namespace passes as the path it has
 * there */
#define WEAK_LOCATE WEAKENED("locate")

#endif
