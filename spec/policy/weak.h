/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SPEC_POLICY_WEAK_H
#define AGENTSBX_SPEC_POLICY_WEAK_H

/*
 * The test-only switches of spec/policy/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../../lib/weaken.h"

/* relative bind sources neither resolved nor judged */
#define WEAK_BIND_RELATIVE WEAKENED("bind-relative")
/* the old default bindPrefixes: every tenant's engine directories */
#define WEAK_ENGINE_PARENTS WEAKENED("engine-parents")
/* any filesystem type anywhere under enforce */
#define WEAK_FS_TYPES WEAKENED("fs-types")
/* the user rule of old: only a host-root uid replaced, root's group kept for
 * any other uid; no identities */
#define WEAK_GROUP_ZERO WEAKENED("group-zero")
/* a missing network/pid/ipc/uts namespace entry, the host's, is let through */
#define WEAK_NS_ABSENT WEAKENED("ns-absent")
/* no table dropping new outbound connections in a kept pod namespace */
#define WEAK_POD_EGRESS WEAKENED("pod-egress")
/* no identities: every container runs as the policy's one uid */
#define WEAK_SHARED_IDENTITY WEAKENED("shared-identity")
/* the agent filters for every x86 ABI (i386 and x32 too), as Docker's */
#define WEAK_COMPAT_ABI WEAKENED("compat-abi")
/* the strict profile's socket() rules without their protocol test */
#define WEAK_SOCKET_PROTO WEAKENED("socket-proto")

#endif
