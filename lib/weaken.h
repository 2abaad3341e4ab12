/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_WEAKEN_H
#define AGENTSBX_WEAKEN_H

/*
 * Test-only switch for the escape regression tests: a build made with
 * -DAGENTSBX_WEAKEN='"name"' (make weak-NAME, into build-weak-NAME/) turns
 * off the one named defence, so that each test can show its attack works
 * against the weakened build and fails against the real one, and so cannot
 * pass vacuously.  Normal builds never define it: WEAKENED() is then the
 * constant 0 and the compiler drops the weakened branch.
 *
 * Each room lists its own switches, with what each turns off, in its
 * weak.h (runtime/init/weak.h, spec/policy/weak.h, agent/.../weak.h, ...):
 * product code names a switch only through those (WEAK_DUMPABLE), never
 * WEAKENED() itself (tests/layering/check.sh).
 */
#ifdef AGENTSBX_WEAKEN
#include <string.h>
#define WEAKENED(name) (strcmp(AGENTSBX_WEAKEN, (name)) == 0)
#else
#define WEAKENED(name) 0
#endif

#endif
