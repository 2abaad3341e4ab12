/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Landlock domains that wall off `exec`'d processes (landlock.h).  The
 * ruleset is made in the parent (one syscall) and entered in the child
 * (one more); it handles one filesystem right, making block device nodes,
 * with no rule granting it: a ruleset must handle something, and that one
 * is the least an ordinary program needs (the strict seccomp profile and
 * the device cgroup refuse block devices anyway).  Handling any filesystem
 * right also refuses mount(2) and pivot_root(2) to the domain, hence no
 * domain when the spec grants CAP_SYS_ADMIN.
 */
#include "landlock.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/log.h"
#include "weak.h"
#include "../internal.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

/* <linux/landlock.h>'s first ABI, spelled out: older headers lack it. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_ACCESS_FS_MAKE_BLOCK (1ULL << 11)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
};

/* The policy asks for isolation, and nothing the spec grants needs mount. */
static bool wanted(const struct ctx_decided *d)
{
	if (!d->policy_loaded || d->policy.mode != POLICY_ENFORCE)
		return false;
	/* No process.capabilities: every capability. */
	if (d->caps.set && !(d->caps.bounding & (1ULL << CAP_SYS_ADMIN)))
		return true;
	log_warn("policy: CAP_SYS_ADMIN is granted (the policy's capabilities allow it): no Landlock domain for %s, which would refuse it mount; the container's code of the same uid can open /proc/PID/mem and /proc/PID/fd of exec'd processes once they run",
		 d->is_exec ? "the exec'd process" : "the container");
	return false;
}

int landlock_prepare(const struct ctx_decided *d, struct ctx_handles *h, struct error *err)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = LL_ACCESS_FS_MAKE_BLOCK };
	long abi;
	int fd;

	if (!wanted(d) || WEAK_EXEC_LANDLOCK)
		return 0;
	abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	if (abi < 0 && (errno == ENOSYS || errno == EOPNOTSUPP)) {
		log_warn("Landlock is not available on this kernel (%s): %s processes are not walled off; the container's code of the same uid can open /proc/PID/mem, /proc/PID/fd and environ of exec'd processes once they run (the runtime phase stays non-dumpable)",
			 errno == ENOSYS ? "not built in" : "disabled at boot (lsm=)",
			 d->is_exec ? "exec'd" : "the container's");
		return 0;
	}
	if (abi < 0)
		return error_sys(err, "landlock_create_ruleset (version)");
	fd = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (fd < 0)
		return error_sys(err, "landlock_create_ruleset");
	h->landlock_fd = fd; /* O_CLOEXEC, as every Landlock fd */
	return 0;
}

int landlock_enter(const struct ctx_decided *d, struct ctx_handles *h, struct error *err)
{
	int fd = h->landlock_fd;

	if (fd < 0)
		return 0;
	h->landlock_fd = -1;
	/* Allowed with no_new_privs or CAP_SYS_ADMIN in the current user
	 * namespace: both callers still hold the latter. */
	if (syscall(SYS_landlock_restrict_self, fd, 0) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return error_sys(err, "landlock_restrict_self: a Landlock domain of its own for the %s",
				 d->is_exec ? "exec'd process" : "container init");
	}
	close(fd);
	return 0;
}
