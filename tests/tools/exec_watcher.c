/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec_watcher: the `agentsbx exec` race attacker,
 * run inside a container by tests/integration/test_policy_exec_race.py.
 *
 *   exec_watcher [--target COMM] [--timeout SECS] [--ready FILE] [--stay]
 *
 * Polls the pid namespace for new processes (the pids around
 * /proc/sys/kernel/ns_last_pid in a tight loop, all of /proc every so often)
 * and, for each one that is not its own, tries what the container's code
 * would try on a process that `exec` brings in:
 *   open(/proc/PID/exe, O_RDONLY)          the runtime binary, or the memfd
 *   open(/proc/PID/fd/N, O_RDONLY)          the caller's stdio, reopened
 *   open(/proc/PID/mem, O_RDWR)             read and write its memory
 *   open(/proc/PID/environ, O_RDONLY)       its environment
 *   ptrace(PTRACE_ATTACH)                   (the strict profile filters it)
 * Every handle is closed at once: nothing is read or written through it.
 *
 * Each attempt is filed under the phase the process is in, from its
 * /proc/PID/exe (or, when that is refused, its comm):
 *   runtime  a clone of the runtime, or the exec trampoline (exe names
 *            "agentsbx", comm "agentsbx" or the trampoline's fd number)
 *   exec     the command exec'd (comm is COMM, default "sleep")
 * and counted once per pid and kind.
 *
 * Output: a line per first success of a kind on a pid
 *   got phase=P pid=N what=K [exe=PATH]
 * then, on SIGTERM/SIGINT or at the timeout:
 *   result runtime_seen=N runtime_exe=N runtime_fd=N runtime_mem=N
 *          runtime_ptrace=N exec_seen=N exec_exe=N exec_fd=N exec_mem_rw=N
 *          exec_environ=N exec_ptrace=N ptrace_errno=E
 * --stay: after the result, wait for SIGTERM (a pid namespace's init).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PID 65536

enum phase { PH_RUNTIME, PH_EXEC, N_PHASES };
enum what { W_SEEN, W_EXE, W_FD, W_MEM, W_ENVIRON, W_PTRACE, N_WHAT };

static const char *phase_name[N_PHASES] = { "runtime", "exec" };
static const char *what_name[N_WHAT] = { "seen", "exe", "fd", "mem", "environ", "ptrace" };

static unsigned char done[N_PHASES][N_WHAT][MAX_PID / 8];
static int count[N_PHASES][N_WHAT];
static const char *target = "sleep";
static pid_t self;
static int ptrace_errno;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Count (phase, what) once for pid; 1 if it is the first time. */
static int mark(enum phase ph, enum what w, pid_t pid)
{
	unsigned idx = (unsigned)pid % MAX_PID;
	unsigned char *b = &done[ph][w][idx / 8];

	if (*b & (1u << (idx % 8)))
		return 0;
	*b |= (unsigned char)(1u << (idx % 8));
	count[ph][w]++;
	return 1;
}

static int read_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* The phase pid is in, or -1 for a process of no interest. */
static int classify(pid_t pid, char *exe, size_t size)
{
	char path[64], comm[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, size - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (read_comm(pid, comm, sizeof(comm)) < 0)
		return -1;
	if (strstr(exe, "agentsbx") || !strcmp(comm, "agentsbx") ||
	    !strcmp(comm, "agentsbx-exec") || all_digits(comm))
		return PH_RUNTIME;
	if (!strcmp(comm, target))
		return PH_EXEC;
	return -1;
}

/* A success.  The phase is checked again after it: a process seen in the
 * runtime phase before the attempt may have exec'd during it, and only one
 * still in the runtime phase after it was surely caught in it. */
static void got(enum phase ph, enum what w, pid_t pid, const char *exe)
{
	char now_exe[4096];

	if (ph == PH_RUNTIME && classify(pid, now_exe, sizeof(now_exe)) == PH_EXEC) {
		ph = PH_EXEC;
		exe = now_exe;
	}
	if (mark(ph, w, pid))
		printf("got phase=%s pid=%d what=%s%s%s\n", phase_name[ph], pid,
		       what_name[w], *exe ? " exe=" : "", exe);
}

static void try_open(enum phase ph, enum what w, pid_t pid, const char *name,
		     int flags, const char *exe)
{
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	fd = open(path, flags | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0) {
		close(fd);
		got(ph, w, pid, exe);
	}
}

static void try_fds(enum phase ph, pid_t pid, const char *exe)
{
	char path[64], name[300];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(name, sizeof(name), "fd/%s", de->d_name);
			try_open(ph, W_FD, pid, name, O_RDONLY, exe);
		}
	closedir(d);
}

static void try_ptrace(enum phase ph, pid_t pid, const char *exe)
{
	if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0) {
		if (!ptrace_errno)
			ptrace_errno = errno;
		return;
	}
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	got(ph, W_PTRACE, pid, exe);
}

static void try_pid(pid_t pid)
{
	char exe[4096];
	int ph;

	if (pid <= 0 || pid == self || pid >= MAX_PID)
		return;
	ph = classify(pid, exe, sizeof(exe));
	if (ph < 0)
		return;
	mark((enum phase)ph, W_SEEN, pid);
	try_open((enum phase)ph, W_EXE, pid, "exe", O_RDONLY, exe);
	try_open((enum phase)ph, W_MEM, pid, "mem", O_RDWR, exe);
	try_fds((enum phase)ph, pid, exe);
	try_open((enum phase)ph, W_ENVIRON, pid, "environ", O_RDONLY, exe);
	try_ptrace((enum phase)ph, pid, exe);
}

static pid_t last_pid(void)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

static void scan_all(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (!*end && pid > 0)
			try_pid((pid_t)pid);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	double timeout = 60, deadline;
	const char *ready = NULL;
	unsigned long iter = 0;
	int stay = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--target") && i + 1 < argc)
			target = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready = argv[++i];
		else if (!strcmp(argv[i], "--stay"))
			stay = 1;
		else {
			fprintf(stderr, "usage: exec_watcher [--target COMM] [--timeout SECS] "
				"[--ready FILE] [--stay]\n");
			return 2;
		}
	}
	self = getpid();
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (ready) {
		int fd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	deadline = now() + timeout;
	while (!stop && now() < deadline) {
		pid_t last = last_pid();

		if (last > 0)
			for (pid_t p = last - 3; p <= last + 3; p++)
				try_pid(p);
		if (++iter % 64 == 0 || last <= 0)
			scan_all();
	}
	printf("result");
	for (int ph = 0; ph < N_PHASES; ph++)
		for (int w = 0; w < N_WHAT; w++)
			printf(" %s_%s%s=%d", phase_name[ph], what_name[w],
			       w == W_MEM && ph == PH_EXEC ? "_rw" : "", count[ph][w]);
	printf(" ptrace_errno=%s\n", ptrace_errno ? strerrorname_np(ptrace_errno) : "none");
	while (stay && !stop)
		pause();
	return 0;
}
