/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_NOLIBC_H
#define AGENTSBX_NOLIBC_H

/*
 * For the freestanding binaries embedded in agentsbx (the exec trampoline,
 * runtime/init/trampoline/, and the sandbox's PID 1, agent/sandbox/init/):
 * no libc, so the few system calls they make go through this stub.  Static
 * functions only: each binary keeps what it uses.
 */

#if defined(__x86_64__)
#define NR_WRITE 1
#define NR_RT_SIGPROCMASK 14
#define NR_CLONE 56
#define NR_EXECVE 59
#define NR_EXIT 60
#define NR_WAIT4 61
#define NR_KILL 62
#define NR_RT_SIGTIMEDWAIT 128
#define NR_EXIT_GROUP 231
static inline long sys4(long n, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return r;
}
#elif defined(__aarch64__)
#define NR_WRITE 64
#define NR_EXIT 93
#define NR_EXIT_GROUP 94
#define NR_KILL 129
#define NR_RT_SIGPROCMASK 135
#define NR_RT_SIGTIMEDWAIT 137
#define NR_CLONE 220
#define NR_EXECVE 221
#define NR_WAIT4 260
static inline long sys4(long n, long a, long b, long c, long d)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
			 : "memory");
	return x0;
}
#else
#error "no freestanding syscall stub for this architecture"
#endif

static inline long sys3(long n, long a, long b, long c)
{
	return sys4(n, a, b, c, 0);
}

static inline unsigned long nolibc_strlen(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

/* A message on fd 2. */
static inline void nolibc_say(const char *s)
{
	sys3(NR_WRITE, 2, (long)s, (long)nolibc_strlen(s));
}

#endif
