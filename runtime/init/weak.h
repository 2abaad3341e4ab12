/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_RUNTIME_INIT_WEAK_H
#define AGENTSBX_RUNTIME_INIT_WEAK_H

/*
 * The test-only switches of runtime/init/: each is the one defence a `make
 * weak-NAME` build turns off (lib/weaken.h; the escape tests run each
 * attack against that build, where it must succeed).  In a normal build
 * every one is the constant 0.
 */
#include "../../lib/weaken.h"

/* a bind's cloned tree keeps its host peer group under a non-recursive
 * rootfsPropagation */
#define WEAK_BIND_PROPAGATION WEAKENED("bind-propagation")
/* a bind source judged by realpath(), opened again by name in the child */
#define WEAK_BIND_RACE WEAKENED("bind-race")
/* relative bind sources neither resolved nor judged */
#define WEAK_BIND_RELATIVE WEAKENED("bind-relative")
/* a socket, FIFO or device node may be a bind source */
#define WEAK_BIND_SPECIAL WEAKENED("bind-special")
/* the container's cgroupfs left writable */
#define WEAK_CGROUP_RO WEAKENED("cgroup-ro")
/* the console's mount point followed when it is a symlink */
#define WEAK_CONSOLE_NOFOLLOW WEAKENED("console-nofollow")
/* process.cwd entered without staying inside the rootfs */
#define WEAK_CWD_IN_ROOT WEAKENED("cwd-in-root")
/* linux.devices paths may leave /dev */
#define WEAK_DEV_PATH WEAKENED("dev-path")
/* /dev/null not checked to be the character device it claims */
#define WEAK_DEVNULL_CHECK WEAKENED("devnull-check")
/* CVE-2019-5736: init and exec stay dumpable, and exec container code
 * directly, not through the sealed trampoline */
#define WEAK_DUMPABLE WEAKENED("dumpable")
/* no Landlock domain for the init and exec'd processes (landlock.c) */
#define WEAK_EXEC_LANDLOCK WEAKENED("exec-landlock")
/* the trampoline exec'd through the container's /proc/self/fd/N when
 * execveat is refused, whatever /proc is */
#define WEAK_EXEC_PROC_FALLBACK WEAKENED("exec-proc-fallback")
/* a bind allowed only as what a prefix that is a link to a file resolves to
 * (docker-init -> tini-static) may be writable */
#define WEAK_INIT_RW WEAKENED("init-rw")
/* the writable layer on a tmpfs with no size: a disk fill is bounded only by
 * the host's memory */
#define WEAK_LAYER_SIZE WEAKENED("layer-size")
/* a mounted /proc not checked (fstatfs) to be procfs */
#define WEAK_PROC_FSTATFS WEAKENED("proc-fstatfs")
/* a mount target under /proc not checked to stay on the container's procfs */
#define WEAK_PROC_TARGET WEAKENED("proc-target")
/* a non-recursive rootfsPropagation leaves the mounts below / as they were,
 * shared with the host's */
#define WEAK_PROPAGATION WEAKENED("propagation")
/* paths in the rootfs resolved without staying inside it */
#define WEAK_RESOLVE_IN_ROOT WEAKENED("resolve-in-root")
/* the init keeps the caller's session (TIOCSTI into the caller's terminal) */
#define WEAK_SETSID WEAKENED("setsid")

#endif
