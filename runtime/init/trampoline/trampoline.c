/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The exec trampoline (CVE-2019-5736).  The container's process is a clone
 * of the runtime until its execve(): were that execve to reach a script
 * whose interpreter is "#!/proc/self/exe", the kernel would run the host's
 * agentsbx binary inside the container, which could then reopen it for
 * writing through /proc/PID/exe.  So the runtime first execs this program,
 * from a sealed memfd, and this program execs the container's command:
 * from here on /proc/self/exe is a sealed, private copy of these few bytes.
 *
 *   argv: [name, PATH, ARGV0, ARGV1, ...]  ->  execve(PATH, [ARGV0, ...], envp)
 *
 * No libc: a freestanding static binary of a few hundred bytes, embedded in
 * agentsbx by the Makefile.  It runs only when exec'd from an fd (AT_EXECFN
 * "/dev/fd/N" or "/proc/self/fd/N"): reached as "#!/proc/self/exe" from a
 * script, it exits 126 instead of exec'ing again.
 */

#define AT_EXECFN 31

#include "../../../lib/nolibc.h"

static int has_prefix(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return 0;
	return 1;
}

__attribute__((noreturn)) static void leave(int code)
{
	for (;;)
		sys3(NR_EXIT, code, 0, 0);
}

__attribute__((noreturn, used)) void trampoline_main(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	char **p = envp;
	const char *execfn = 0;
	long r;

	while (*p)
		p++;
	for (unsigned long *aux = (unsigned long *)(p + 1); aux[0]; aux += 2)
		if (aux[0] == AT_EXECFN)
			execfn = (const char *)aux[1];
	if (!execfn || !(has_prefix(execfn, "/dev/fd/") || has_prefix(execfn, "/proc/self/fd/")))
		leave(126);
	if (argc < 3)
		leave(127);
	r = sys3(NR_EXECVE, (long)argv[1], (long)(argv + 2), (long)envp);
	nolibc_say("agentsbx: exec ");
	nolibc_say(argv[1]);
	nolibc_say(r == -13 ? ": permission denied\n" : r == -2 ? ": no such file or directory\n" :
								  ": failed\n");
	leave(r == -13 ? 126 : 127);
}

/* The entry point: hand the initial stack pointer to C. */
#if defined(__x86_64__)
__asm__(".text\n.global _start\n_start:\n"
	"  mov %rsp, %rdi\n  and $-16, %rsp\n  call trampoline_main\n  hlt\n");
#else
__asm__(".text\n.global _start\n_start:\n"
	"  mov x0, sp\n  bl trampoline_main\n");
#endif
