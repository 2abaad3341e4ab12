/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_TRAMPOLINE_H
#define AGENTSBX_TRAMPOLINE_H

/*
 * Every container process reaches its command through the exec trampoline
 * (runtime/init/trampoline/trampoline.c), exec'd from a sealed memfd: the
 * process image that execs container code is then never the host's
 * agentsbx binary, so "#!/proc/self/exe" in the image cannot run (and then
 * rewrite) it (CVE-2019-5736).  The cost is one small extra execve, not a
 * re-exec of the runtime.
 */

#include <stdbool.h>

#include "../../lib/error.h"

/* A sealed memfd holding the trampoline, O_CLOEXEC.  Made once per runtime
 * process, before clone(). */
int trampoline_memfd(int *out, struct error *err);

/*
 * The fallback when execveat is refused (a seccomp profile that allows only
 * execve) is a path, /proc/self/fd/N, looked up in the container's own
 * mount namespace: allowed only if /proc is the root of a procfs -- not a
 * symlink, nor a directory of the image with files of its own.  Asked
 * after pivot_root or setns and before any seccomp filter is loaded (the
 * filter may refuse the very open that checks).
 */
bool trampoline_proc_fallback_ok(void);

/* execve(path, argv, envp) through the trampoline in memfd: execveat(memfd,
 * "", AT_EMPTY_PATH), or, when that is refused and proc_fallback is set,
 * /proc/self/fd/N.  Returns only on failure (err set); never falls back to
 * a direct execve. */
int trampoline_exec(int memfd, const char *path, char *const argv[],
		    char *const envp[], bool proc_fallback, struct error *err);

#endif
