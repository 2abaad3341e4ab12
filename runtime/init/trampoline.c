/* SPDX-License-Identifier: Apache-2.0 */
#include "trampoline.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "weak.h"

#ifndef PROC_ROOT_INO
#define PROC_ROOT_INO 1
#endif

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

/* A mount point cannot be renamed away: once /proc is a procfs root, only
 * mounting (CAP_SYS_ADMIN over the container's mount namespace; under
 * enforce, seccomp and the Landlock domain refuse mount to every container
 * process) can change where /proc/self/fd/N leads. */
bool trampoline_proc_fallback_ok(void)
{
	struct statfs sfs;
	struct stat st;
	int fd = open("/proc", O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC &&
	     fstat(fd, &st) == 0 && st.st_ino == PROC_ROOT_INO;
	close(fd);
	return ok;
}

int trampoline_exec(int memfd, const char *path, char *const argv[],
		    char *const envp[], bool proc_fallback, struct error *err)
{
	size_t n = 0;
	char fdpath[32];
	int e;

	while (argv[n])
		n++;
	{
		const char *targv[n + 3];

		targv[0] = "agentsbx-exec";
		targv[1] = path;
		for (size_t i = 0; i <= n; i++)
			targv[i + 2] = argv[i];
		syscall(SYS_execveat, memfd, "", targv, envp, AT_EMPTY_PATH);
		e = errno;
		if (!WEAK_EXEC_PROC_FALLBACK && !proc_fallback) {
			errno = e;
			return error_sys(err, "exec %s through the exec trampoline: execveat refused, and /proc is not a procfs to exec it through instead (allow execveat in linux.seccomp, or mount proc at /proc)",
					 path);
		}
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", memfd);
		execve(fdpath, (char *const *)targv, envp);
	}
	return error_sys(err, "exec %s through the exec trampoline (execveat: %s; then %s)",
			 path, strerror(e), fdpath);
}
