/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The sandbox's PID 1 (`agentsbx sandbox` and `agentsbx mcp` only).  The
 * program must not be the init of its pid namespace: the kernel gives an
 * init no default signal actions, so abort() would die by the SIGSEGV
 * that follows (139, not 134), a SIGTERM it sends itself would be ignored,
 * and nobody would reap its orphans.  So the container's process is this
 * init, from /.agentsbx/init (written there by the sandbox at create):
 *
 *   argv: [init, COMMAND, ARGS...]
 *
 * It blocks every signal, forks, and the child (every signal unblocked)
 * execs COMMAND -- searched in $PATH when it has no '/', as a shell does.
 * Then it waits in rt_sigtimedwait: SIGCHLD reaps every child (orphans
 * included); any other signal is forwarded to the program.  When the
 * program ends, the init exits with its status (128+N for a signal N, as a
 * shell reports it), which ends the pid namespace and so every process
 * left in it.  Blocked signals are queued even for an init, so none is
 * lost to the init's special treatment.
 *
 * No libc: a freestanding static binary of a few kilobytes, embedded in
 * agentsbx by the Makefile like the exec trampoline.
 */

#define SIGCHLD_ 17
#define ENOENT_ 2
#define EACCES_ 13
#define EINTR_ 4
#define EAGAIN_ 11
#define WNOHANG_ 1
#define PATH_MAX_ 4096

#include "../../../lib/nolibc.h"

#define SIG_BLOCK_ 0
#define SIG_SETMASK_ 2

__attribute__((noreturn)) static void leave(int code)
{
	for (;;)
		sys4(NR_EXIT_GROUP, code, 0, 0, 0);
}

static int has_slash(const char *s)
{
	for (; *s; s++)
		if (*s == '/')
			return 1;
	return 0;
}

/* $PATH from envp, or the default. */
static const char *search_path(char **envp)
{
	for (; *envp; envp++) {
		const char *e = *envp;
		if (e[0] == 'P' && e[1] == 'A' && e[2] == 'T' && e[3] == 'H' && e[4] == '=')
			return e + 5;
	}
	return "/usr/local/bin:/usr/bin:/bin";
}

/* execvp: the first directory of $PATH where execve works. */
__attribute__((noreturn)) static void run(char **argv, char **envp)
{
	static char buf[PATH_MAX_];
	const char *p = search_path(envp);
	long r = -ENOENT_, seen_eacces = 0;
	unsigned long n = nolibc_strlen(argv[0]);

	if (has_slash(argv[0])) {
		r = sys4(NR_EXECVE, (long)argv[0], (long)argv, (long)envp, 0);
	} else {
		while (*p) {
			unsigned long d = 0;
			while (p[d] && p[d] != ':')
				d++;
			if (d + 1 + n + 1 <= sizeof(buf)) {
				unsigned long i;
				for (i = 0; i < d; i++)
					buf[i] = p[i];
				if (d == 0)
					buf[d++] = '.';
				buf[d] = '/';
				for (i = 0; i <= n; i++)
					buf[d + 1 + i] = argv[0][i];
				r = sys4(NR_EXECVE, (long)buf, (long)argv, (long)envp, 0);
				if (r == -EACCES_)
					seen_eacces = 1;
			}
			while (*p && *p != ':')
				p++;
			if (*p == ':')
				p++;
		}
		if (seen_eacces)
			r = -EACCES_;
	}
	nolibc_say("agentsbx: exec \"");
	nolibc_say(argv[0]);
	nolibc_say(r == -EACCES_ ? "\": permission denied\n" : r == -ENOENT_ ? "\": executable file not found in $PATH\n" :
									       "\": failed\n");
	leave(r == -EACCES_ ? 126 : 127);
}

static int status_code(int status)
{
	if ((status & 0x7f) == 0)
		return (status >> 8) & 0xff; /* exited */
	return 128 + (status & 0x7f);	     /* killed by a signal */
}

__attribute__((noreturn, used)) void init_main(long *sp)
{
	long argc = sp[0];
	char **argv = (char **)(sp + 1);
	char **envp = argv + argc + 1;
	unsigned long all = ~0ul, none = 0;
	long child, sig, pid;
	int status;
	char info[128];

	if (argc < 2) {
		nolibc_say("agentsbx init: no command\n");
		leave(127);
	}
	sys4(NR_RT_SIGPROCMASK, SIG_BLOCK_, (long)&all, 0, 8);
	child = sys4(NR_CLONE, SIGCHLD_, 0, 0, 0);
	if (child < 0) {
		nolibc_say("agentsbx init: fork failed\n");
		leave(126);
	}
	if (child == 0) {
		sys4(NR_RT_SIGPROCMASK, SIG_SETMASK_, (long)&none, 0, 8);
		run(argv + 1, envp);
	}
	for (;;) {
		sig = sys4(NR_RT_SIGTIMEDWAIT, (long)&all, (long)info, 0, 8);
		if (sig < 0)
			continue; /* EINTR, EAGAIN */
		if (sig != SIGCHLD_) {
			sys4(NR_KILL, child, sig, 0, 0);
			continue;
		}
		while ((pid = sys4(NR_WAIT4, -1, (long)&status, WNOHANG_, 0)) > 0)
			if (pid == child)
				leave(status_code(status));
	}
}

/* The entry point: hand the initial stack pointer to C. */
#if defined(__x86_64__)
__asm__(".text\n.global _start\n_start:\n"
	"  mov %rsp, %rdi\n  and $-16, %rsp\n  call init_main\n  hlt\n");
#else
__asm__(".text\n.global _start\n_start:\n"
	"  mov x0, sp\n  bl init_main\n");
#endif
