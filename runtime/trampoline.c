/* SPDX-License-Identifier: Apache-2.0 */
#include "trampoline.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/util.h"
#include "../lib/weaken.h"

extern const unsigned char agentsbx_trampoline[];
extern const size_t agentsbx_trampoline_len;

int trampoline_memfd(int *out, struct error *err)
{
	_cleanup_close_ int fd = memfd_create("agentsbx-exec", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return error_sys(err, "memfd_create for the exec trampoline");
	if (write_all(fd, agentsbx_trampoline, agentsbx_trampoline_len) < 0)
		return error_sys(err, "write the exec trampoline");
	/* Nobody, the container included, can change it after this. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0)
		return error_sys(err, "seal the exec trampoline");
	*out = take_fd(fd);
	return 0;
}

int trampoline_exec(int memfd, const char *path, char *const argv[],
		    char *const envp[], struct error *err)
{
	size_t n = 0;

	while (argv[n])
		n++;
	{
		const char *targv[n + 3];

		targv[0] = "agentsbx-exec";
		targv[1] = path;
		for (size_t i = 0; i <= n; i++)
			targv[i + 2] = argv[i];
		/* From the fd only.  No fallback through a path: the only one
		 * naming the memfd is /proc/self/fd/N in the container's own
		 * mount namespace, which its code (or, without a procfs mount,
		 * its image) can make name something else. */
		syscall(SYS_execveat, memfd, "", targv, envp, AT_EMPTY_PATH);
		if (WEAKENED("exec-proc-fallback")) {
			char fdpath[32];
			snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", memfd);
			execve(fdpath, (char *const *)targv, envp);
		}
	}
	if (errno == EPERM || errno == ENOSYS || errno == EACCES)
		return error_sys(err, "exec %s through the exec trampoline: execveat(AT_EMPTY_PATH) refused (the seccomp profile, linux.seccomp, must allow execveat as it allows execve)",
				 path);
	return error_sys(err, "exec %s through the exec trampoline", path);
}
