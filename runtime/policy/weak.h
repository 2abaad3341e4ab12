/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_RUNTIME_POLICY_WEAK_H
#define AGENTSBX_RUNTIME_POLICY_WEAK_H

/*
 * The test-only switches of runtime/policy/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../../lib/weaken.h"

/* the host's namespaces, a mount namespace not a container's, or a network
 * namespace neither a container's nor empty, may be joined under enforce */
#define WEAK_NS_HOST WEAKENED("ns-host")
/* root.path may be any host directory */
#define WEAK_ROOTFS_ANYWHERE WEAKENED("rootfs-anywhere")
/* root.path may be the host's root or hold --root */
#define WEAK_ROOTFS_HOST WEAKENED("rootfs-host")
/* linux.seccomp.listenerPath may be any socket */
#define WEAK_SECCOMP_LISTENER WEAKENED("seccomp-listener")

#endif
