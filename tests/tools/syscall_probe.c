/* SPDX-License-Identifier: Apache-2.0 */
/*
 * syscall_probe: run inside a container, print what the seccomp filter (and
 * the kernel) answer to the syscalls an escape or a host attack would use.
 *
 *   syscall_probe [NAME...]      one line per probe: "NAME ok", "NAME EPERM",
 *                                "NAME SIGSYS" (killed by the filter), ...
 *   syscall_probe --list         the probe names
 *
 * A NAME argument selects the probes called NAME or NAME(...): "socket" runs
 * every socket probe.  Exit status 0 unless an argument matches nothing.
 *
 * Every call is made so that it cannot do harm even when both the filter
 * and the kernel let it through, as root on a host: bad pointers (EFAULT),
 * bad flags or magic numbers (EINVAL) that the kernel checks before acting,
 * and state-changing calls (unshare, personality, clone3) in a throwaway
 * child.  The point is the errno: the filter's (EPERM, ENOSYS) against the
 * kernel's (EFAULT, EINVAL, EBADF, ...).  Each probe runs in a forked child,
 * so a KILL action shows as SIGSYS and the next probe still runs.
 *
 * Static, libc only: it must run in a bare busybox rootfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define BAD_PTR ((void *)1) /* never mapped: the kernel answers EFAULT */

static long sys6(long nr, long a, long b, long c, long d, long e, long f)
{
	return syscall(nr, a, b, c, d, e, f);
}

static long p_mount(void)
{
	/* the fs type is copied first: EFAULT before anything is looked at */
	return syscall(SYS_mount, "none", "/nonexistent-probe", BAD_PTR, 0, NULL);
}

static long p_umount2(void)
{
	return syscall(SYS_umount2, "/nonexistent-probe", 0x80000000); /* EINVAL */
}

static long p_unshare_user(void)
{
	return unshare(CLONE_NEWUSER); /* in the throwaway child */
}

static long p_unshare_ns(void)
{
	return unshare(CLONE_NEWNS);
}

static long p_setns(void)
{
	return setns(-1, 0); /* EBADF */
}

static long p_keyctl(void)
{
	return syscall(SYS_keyctl, 0x7fffffff, 0, 0, 0, 0); /* EOPNOTSUPP */
}

static long p_add_key(void)
{
	return syscall(SYS_add_key, BAD_PTR, "probe", NULL, 0, -1);
}

static long p_request_key(void)
{
	return syscall(SYS_request_key, BAD_PTR, "probe", NULL, 0);
}

static long p_bpf(void)
{
	return syscall(SYS_bpf, 0x7fffffff, NULL, 0); /* EINVAL */
}

static long p_perf_event_open(void)
{
	return syscall(SYS_perf_event_open, BAD_PTR, 0, -1, -1, 0);
}

static long p_userfaultfd(void)
{
	return syscall(SYS_userfaultfd, ~0u); /* EINVAL: no such flags */
}

static long p_io_uring_setup(void)
{
	return syscall(SYS_io_uring_setup, 1, BAD_PTR);
}

/* Attach to a child of ours that sleeps (a descendant, so that Yama's
 * ptrace_scope=1 does not answer EPERM in the filter's place). */
static long p_ptrace(void)
{
	pid_t pid = fork();
	long r;
	int e;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	e = errno;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	errno = e;
	return r;
}

static long p_process_vm_readv(void)
{
	char buf[1];
	struct iovec local = { buf, 1 }, remote = { BAD_PTR, 1 };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
}

static long p_kexec_load(void)
{
	/* 0 segments would unload the loaded image: give too many instead,
	 * and a foreign arch, both EINVAL. */
	return syscall(SYS_kexec_load, 0, 1000, BAD_PTR, 0xdead0000);
}

static long p_init_module(void)
{
	return syscall(SYS_init_module, BAD_PTR, 0, ""); /* ENOEXEC */
}

static long p_finit_module(void)
{
	return syscall(SYS_finit_module, -1, "", 0); /* EBADF */
}

static long p_delete_module(void)
{
	return syscall(SYS_delete_module, "agentsbx_no_such_module",
		       O_NONBLOCK); /* ENOENT */
}

static long p_reboot(void)
{
	return syscall(SYS_reboot, 0, 0, 0, NULL); /* bad magic: EINVAL */
}

static long p_swapon(void)
{
	return syscall(SYS_swapon, BAD_PTR, 0);
}

static long p_clock_settime(void)
{
	return syscall(SYS_clock_settime, 0 /* REALTIME */, BAD_PTR);
}

static long p_settimeofday(void)
{
	return syscall(SYS_settimeofday, BAD_PTR, NULL);
}

static long p_adjtimex(void)
{
	/* Setting a mode, with a tick the kernel rejects (EINVAL) before it
	 * changes anything; EPERM without CAP_SYS_TIME. */
	struct timex tx = { .modes = ADJ_TICK, .tick = 1 };

	return syscall(SYS_adjtimex, &tx);
}

static long p_open_by_handle_at(void)
{
	return syscall(SYS_open_by_handle_at, AT_FDCWD, BAD_PTR, O_RDONLY);
}

static long p_name_to_handle_at(void)
{
	return syscall(SYS_name_to_handle_at, AT_FDCWD, "/", BAD_PTR, BAD_PTR, 0);
}

static long clone3_with(uint64_t flags)
{
	struct clone_args ca = { .flags = flags, .exit_signal = SIGCHLD };
	long pid = syscall(SYS_clone3, &ca, sizeof(ca));

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid;
}

static long p_clone3(void)
{
	return clone3_with(0);
}

static long p_clone3_newuser(void)
{
	return clone3_with(CLONE_NEWUSER);
}

static long open_socket(int domain, int type, int proto)
{
	int fd = socket(domain, type, proto);

	if (fd >= 0)
		close(fd);
	return fd;
}

static long p_socket_packet(void)
{
	return open_socket(AF_PACKET, SOCK_RAW, 0);
}

static long p_socket_raw(void)
{
	return open_socket(AF_INET, SOCK_RAW, 1 /* ICMP */);
}

static long p_socket_netlink_route(void)
{
	return open_socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

static long p_socket_netlink_audit(void)
{
	return open_socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
}

static long p_socket_vsock(void)
{
	return open_socket(40 /* AF_VSOCK */, SOCK_STREAM, 0);
}

static long p_tiocsti(void)
{
	/* The character is read from a bad pointer after the permission
	 * checks: nothing is ever pushed into a terminal. */
	return ioctl(0, TIOCSTI, BAD_PTR);
}

static long p_personality_query(void)
{
	return syscall(SYS_personality, 0xffffffffUL);
}

static long p_personality_rie(void)
{
	return syscall(SYS_personality, (unsigned long)READ_IMPLIES_EXEC);
}

static long p_acct(void)
{
	return syscall(SYS_acct, BAD_PTR); /* NULL would switch it off */
}

static long p_pivot_root(void)
{
	return syscall(SYS_pivot_root, BAD_PTR, BAD_PTR);
}

static long p_chroot(void)
{
	return syscall(SYS_chroot, BAD_PTR);
}

static long p_mknod(void)
{
	return syscall(SYS_mknodat, AT_FDCWD, BAD_PTR, S_IFCHR | 0600,
		       makedev(1, 3));
}

static long p_syslog(void)
{
	return syscall(SYS_syslog, 10 /* SIZE_BUFFER: read-only */, NULL, 0);
}

static long p_syscall_470(void)
{
	return sys6(470, 0, 0, 0, 0, 0, 0);
}

static long p_syscall_1000(void)
{
	return sys6(1000, 0, 0, 0, 0, 0, 0);
}

/* getpid through the i386 entry (int $0x80) of a 64-bit process: the
 * filter sees AUDIT_ARCH_I386.  A kernel without IA32 emulation answers
 * ENOSYS (or kills with SIGSEGV). */
static long p_int80_getpid(void)
{
#if defined(__x86_64__)
	long r = 20; /* __NR_getpid on i386 */

	__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return 0;
#else
	errno = ENOSYS;
	return -1;
#endif
}

struct probe {
	const char *name;
	long (*run)(void);
};

static const struct probe probes[] = {
	{ "mount", p_mount },
	{ "umount2", p_umount2 },
	{ "unshare(CLONE_NEWUSER)", p_unshare_user },
	{ "unshare(CLONE_NEWNS)", p_unshare_ns },
	{ "setns", p_setns },
	{ "keyctl", p_keyctl },
	{ "add_key", p_add_key },
	{ "request_key", p_request_key },
	{ "bpf", p_bpf },
	{ "perf_event_open", p_perf_event_open },
	{ "userfaultfd", p_userfaultfd },
	{ "io_uring_setup", p_io_uring_setup },
	{ "ptrace", p_ptrace },
	{ "process_vm_readv", p_process_vm_readv },
	{ "kexec_load", p_kexec_load },
	{ "init_module", p_init_module },
	{ "finit_module", p_finit_module },
	{ "delete_module", p_delete_module },
	{ "reboot", p_reboot },
	{ "swapon", p_swapon },
	{ "clock_settime", p_clock_settime },
	{ "settimeofday", p_settimeofday },
	{ "adjtimex", p_adjtimex },
	{ "open_by_handle_at", p_open_by_handle_at },
	{ "name_to_handle_at", p_name_to_handle_at },
	{ "clone3", p_clone3 },
	{ "clone3(CLONE_NEWUSER)", p_clone3_newuser },
	{ "socket(AF_PACKET)", p_socket_packet },
	{ "socket(AF_INET,SOCK_RAW)", p_socket_raw },
	{ "socket(AF_NETLINK,NETLINK_ROUTE)", p_socket_netlink_route },
	{ "socket(AF_NETLINK,NETLINK_AUDIT)", p_socket_netlink_audit },
	{ "socket(AF_VSOCK)", p_socket_vsock },
	{ "ioctl(TIOCSTI)", p_tiocsti },
	{ "personality(query)", p_personality_query },
	{ "personality(READ_IMPLIES_EXEC)", p_personality_rie },
	{ "acct", p_acct },
	{ "pivot_root", p_pivot_root },
	{ "chroot", p_chroot },
	{ "mknod(char)", p_mknod },
	{ "syslog", p_syslog },
	{ "syscall(470)", p_syscall_470 },
	{ "syscall(1000)", p_syscall_1000 },
	{ "int80(getpid)", p_int80_getpid },
};

#define N_PROBES (sizeof(probes) / sizeof(probes[0]))

static const char *errno_text(int e)
{
	const char *s = strerrorname_np(e);
	static char buf[32];

	if (s)
		return s;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* The child reports its errno in its exit status: 0 ok, else errno. */
static void run_probe(const struct probe *p)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) { /* no fork under this filter: run it here */
		long r = p->run();
		printf("%s %s\n", p->name, r == -1 ? errno_text(errno) : "ok");
		return;
	}
	if (pid == 0) {
		long r = p->run();
		_exit(r == -1 ? (errno > 0 && errno < 256 ? errno : 255) : 0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		printf("%s waitpid-failed\n", p->name);
	} else if (WIFSIGNALED(status)) {
		printf("%s %s\n", p->name, sigabbrev_np(WTERMSIG(status)) ?
				  sigabbrev_np(WTERMSIG(status)) : "signal");
	} else if (WEXITSTATUS(status) == 0) {
		printf("%s ok\n", p->name);
	} else {
		printf("%s %s\n", p->name, errno_text(WEXITSTATUS(status)));
	}
}

static int matches(const char *name, const char *arg)
{
	size_t n = strlen(arg);

	return strcmp(name, arg) == 0 ||
	       (strncmp(name, arg, n) == 0 && name[n] == '(');
}

int main(int argc, char **argv)
{
	int status = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < N_PROBES; i++)
			printf("%s\n", probes[i].name);
		return 0;
	}
	if (argc == 1) {
		for (size_t i = 0; i < N_PROBES; i++)
			run_probe(&probes[i]);
		return 0;
	}
	for (int a = 1; a < argc; a++) {
		int found = 0;
		for (size_t i = 0; i < N_PROBES; i++) {
			if (matches(probes[i].name, argv[a])) {
				run_probe(&probes[i]);
				found = 1;
			}
		}
		if (!found) {
			fprintf(stderr, "syscall_probe: no probe %s\n", argv[a]);
			status = 2;
		}
	}
	return status;
}
