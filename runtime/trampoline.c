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
	char fdpath[32];

	while (argv[n])
		n++;
	{
		const char *targv[n + 3];

		targv[0] = "agentsbx-exec";
		targv[1] = path;
		for (size_t i = 0; i <= n; i++)
			targv[i + 2] = argv[i];
		syscall(SYS_execveat, memfd, "", targv, envp, AT_EMPTY_PATH);
		/* A seccomp profile may allow execve but not execveat (with any
		 * errno as its answer): the same file through the container's
		 * procfs, mounted by us and not yet touched by its code. */
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", memfd);
		execve(fdpath, (char *const *)targv, envp);
	}
	return error_sys(err, "exec %s through the exec trampoline", path);
}
