/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgplace: the kernel cost of putting a new process in a new cgroup, the
 * ways a runtime can do it (bench/profile.sh runs it under hyperfine).
 *
 *   cgplace none|migrate|born N CGROUP-DIR [CGROUP-DIR...]
 *
 * N times: mkdir CGROUP-DIR/abxb-cgp-<pid>-<i> in every directory given,
 * start a child and place it:
 *   none     not at all (the baseline: mkdir + fork + exit + rmdir);
 *   migrate  clone(), then write its pid to cgroup.procs of every new
 *            directory while the child waits on a pipe (what runc does, and
 *            crun on v1; each write takes cgroup_threadgroup_rwsem for write,
 *            the first after a quiet spell waits for an RCU grace period);
 *   born     what agentsbx does: clone3(CLONE_INTO_CGROUP) into the new
 *            cgroup2 directory (if the first one given is on cgroup2), and
 *            the child writes "0" into the "tasks" file of every new v1
 *            directory itself (the calling thread moves without that lock).
 * then the child exits, is reaped, and every new directory is removed.
 * CGPLACE_GAP_MS=M sleeps M ms before each iteration (as containers start
 * in practice, not back to back: a migration then finds the lock's grace
 * period over and waits for a new one; the same sleep for every mode).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

static char (*dirs)[4096];
static int ndirs;

/* Report, remove what this iteration made, exit. */
static void die(const char *what)
{
	fprintf(stderr, "cgplace: %s: %s\n", what, strerror(errno));
	for (int d = ndirs - 1; dirs && d >= 0; d--)
		if (dirs[d][0])
			rmdir(dirs[d]);
	exit(1);
}

static void write_pid(const char *dir, pid_t pid)
{
	char path[4096], buf[32];
	int fd, n;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	n = snprintf(buf, sizeof(buf), "%d", (int)pid);
	if (write(fd, buf, (size_t)n) != n)
		die(path);
	close(fd);
}

/* A v1 cpuset starts empty: no task can join it until it is filled in. */
static void fill_cpuset(const char *parent, const char *dir)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
	char path[4096], buf[4096];
	struct statfs sf;

	if (statfs(dir, &sf) < 0)
		die(dir);
	if (sf.f_type == CGROUP2_SUPER_MAGIC)
		return; /* cgroup2: an empty cpuset inherits its parent's */

	for (int i = 0; i < 2; i++) {
		int fd;
		ssize_t n;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return; /* not a cpuset hierarchy */
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n > 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, files[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die(path);
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n <= 0)
			die(path);
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, buf, (size_t)n) != n)
			die(path);
		close(fd);
	}
}

static bool on_cgroup2(const char *dir)
{
	struct statfs sf;

	return statfs(dir, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* The child's part of "born": "0" into the tasks file of every v1 directory. */
static void enter_v1_dirs(int first)
{
	for (int d = first; d < ndirs; d++) {
		char path[4096 + 8];
		int fd;

		snprintf(path, sizeof(path), "%s/tasks", dirs[d]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(1);
		close(fd);
	}
}

/* A child that waits on a pipe until placed (or places itself), then exits. */
static pid_t spawn(const char *mode)
{
	bool born = strcmp(mode, "born") == 0, into = born && on_cgroup2(dirs[0]);
	struct clone_args ca;
	int p[2], cfd = -1;
	pid_t pid;
	char c;

	if (pipe(p) < 0)
		die("pipe");
	memset(&ca, 0, sizeof(ca));
	ca.exit_signal = SIGCHLD;
	if (into) {
		cfd = open(dirs[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cfd < 0)
			die(dirs[0]);
		ca.flags = CLONE_INTO_CGROUP;
		ca.cgroup = (uint64_t)cfd;
	}
	pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0)
		die("clone3");
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(1);
		if (born)
			enter_v1_dirs(into ? 1 : 0);
		_exit(0);
	}
	if (cfd >= 0)
		close(cfd);
	close(p[0]);
	if (strcmp(mode, "migrate") == 0)
		for (int d = 0; d < ndirs; d++)
			write_pid(dirs[d], pid);
	if (write(p[1], "x", 1) != 1)
		die("write");
	close(p[1]);
	return pid;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: cgplace none|migrate|born N CGROUP-DIR...\n");
		return 2;
	}
	const char *mode = argv[1], *gap = getenv("CGPLACE_GAP_MS");
	int n = atoi(argv[2]);

	ndirs = argc - 3;
	dirs = calloc((size_t)ndirs, 4096);

	if (!dirs)
		die("calloc");
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;

		if (gap)
			usleep((useconds_t)atoi(gap) * 1000);
		for (int d = 0; d < ndirs; d++)
			dirs[d][0] = 0;
		for (int d = 0; d < ndirs; d++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/abxb-cgp-%d-%d", argv[3 + d], (int)getpid(), i);
			if (mkdir(path, 0755) < 0)
				die(path);
			memcpy(dirs[d], path, sizeof(path));
			fill_cpuset(argv[3 + d], dirs[d]);
		}
		pid = spawn(mode);
		if (waitpid(pid, &st, 0) < 0)
			die("waitpid");
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			errno = EIO;
			die("the child failed to enter its cgroup");
		}
		for (int d = 0; d < ndirs; d++)
			while (rmdir(dirs[d]) < 0) {
				if (errno != EBUSY)
					die(dirs[d]);
				usleep(100); /* the exited child is still being uncharged */
			}
	}
	free(dirs);
	return 0;
}
