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
 * Names: dumpable (CVE-2019-5736: init and exec stay dumpable, and exec
 * container code directly, not through the sealed trampoline),
 * proc-target, resolve-in-root, cwd-in-root, devnull-check,
 * console-nofollow, proc-fstatfs, cgroup-ro, setsid, hook-prefixes (hooks
 * not judged against the policy's hookPrefixes), watchdog-session (the
 * sandbox watchdog stays in the caller's process group), socket-proto (the
 * strict profile's socket() rules without their protocol test), ns-host
 * (the host's namespaces, and a mount namespace not a container's, or a
 * network namespace neither a container's nor empty, may be joined under
 * enforce), dev-path (linux.devices paths may leave /dev),
 * rootfs-host (root.path may be the host's root or hold --root),
 * bind-relative (relative bind sources not resolved nor judged),
 * fs-types (any filesystem type anywhere under enforce),
 * bind-race (bind source judged by realpath(), opened again by name in
 * the child), exec-landlock (no Landlock domain for the init and exec'd
 * processes, runtime/init/landlock.c), exec-proc-fallback (the trampoline exec'd
 * through the container's /proc/self/fd/N when execveat is refused,
 * whatever /proc is), value-nofollow (a sandbox's Python value and
 * outputs files opened following a symlink the program planted,
 * agent/sandbox/sandbox_outputs.c), init-rw (a bind allowed only as what a prefix
 * that is a link to a file resolves to, e.g. docker-init -> tini-static,
 * may be writable), ns-absent (a missing network/pid/ipc/uts namespace
 * entry, the host's, is let through), pod-egress (no table dropping new
 * outbound connections in a kept pod namespace), layer-size (the policy's
 * writable layer on a tmpfs with no size: a disk fill is bounded only by
 * the host's memory), propagation (a non-recursive rootfsPropagation
 * leaves the mounts below / as they were, shared with the host's),
 * locate (the judge trusts the path /proc/self/fd/N shows, without
 * opening it again and comparing: a file of another mount namespace
 * passes as the path it has there), bind-special (a socket, FIFO or
 * device node may be a bind source), bind-propagation (a bind's cloned
 * tree keeps its host peer group under a non-recursive rootfsPropagation),
 * rootfs-anywhere (root.path may be any host directory), seccomp-listener
 * (linux.seccomp.listenerPath may be any socket), engine-parents (the old
 * default bindPrefixes: every tenant's engine directories).
 */
#ifdef AGENTSBX_WEAKEN
#include <string.h>
#define WEAKENED(name) (strcmp(AGENTSBX_WEAKEN, (name)) == 0)
#else
#define WEAKENED(name) 0
#endif

#endif
