/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_TRAMPOLINE_H
#define AGENTSBX_TRAMPOLINE_H

/*
 * Every container process reaches its command through the exec trampoline
 * (runtime/trampoline/trampoline.c), exec'd from a sealed memfd: the
 * process image that execs container code is then never the host's
 * agentsbx binary, so "#!/proc/self/exe" in the image cannot run (and then
 * rewrite) it (CVE-2019-5736).  The cost is one small extra execve, not a
 * re-exec of the runtime.
 */

#include "../lib/error.h"

/* A sealed memfd holding the trampoline, O_CLOEXEC.  Made once per runtime
 * process, before clone(). */
int trampoline_memfd(int *out, struct error *err);

/* execve(path, argv, envp) through the trampoline in memfd, exec'd with
 * execveat(memfd, "", AT_EMPTY_PATH) and nothing else.  Returns only on
 * failure (err set); never falls back to a direct execve, nor to a path. */
int trampoline_exec(int memfd, const char *path, char *const argv[],
		    char *const envp[], struct error *err);

#endif
