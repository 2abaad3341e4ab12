/* SPDX-License-Identifier: Apache-2.0 */
/*
 * procinfo: print what a container process was given, as key=value lines,
 * for the things busybox cannot show exactly (real/effective/saved ids,
 * supplementary groups, umask, every rlimit with soft and hard, scheduler,
 * nice, I/O priority, personality, open file descriptors).
 *
 *   procinfo            everything
 *   procinfo KEY...     only the lines whose key starts with one of KEY
 *
 * Lines:
 *   pid=N ppid=N
 *   uid=R,E,S gid=R,E,S groups=G1,G2,... (empty when none)
 *   umask=0022
 *   cwd=/path
 *   nonewprivs=0|1 dumpable=0|1
 *   rlimit.NOFILE=SOFT,HARD            ("unlimited" for RLIM_INFINITY)
 *   sched.policy=SCHED_OTHER sched.priority=N nice=N
 *   ioprio.class=N ioprio.level=N
 *   personality=0xN
 *   fd.N=TARGET                         (every open fd but the one used to
 *                                        list /proc/self/fd)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int nfilters;
static char **filters;

static int wanted(const char *key)
{
	if (nfilters == 0)
		return 1;
	for (int i = 0; i < nfilters; i++)
		if (strncmp(key, filters[i], strlen(filters[i])) == 0)
			return 1;
	return 0;
}

#define OUT(key, ...)                                    \
	do {                                             \
		if (wanted(key)) {                       \
			printf("%s=", key);              \
			printf(__VA_ARGS__);             \
			putchar('\n');                   \
		}                                        \
	} while (0)

static const struct {
	const char *name;
	int res;
} rlimits[] = {
	{ "AS", RLIMIT_AS },	       { "CORE", RLIMIT_CORE },
	{ "CPU", RLIMIT_CPU },	       { "DATA", RLIMIT_DATA },
	{ "FSIZE", RLIMIT_FSIZE },     { "LOCKS", RLIMIT_LOCKS },
	{ "MEMLOCK", RLIMIT_MEMLOCK }, { "MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "NICE", RLIMIT_NICE },       { "NOFILE", RLIMIT_NOFILE },
	{ "NPROC", RLIMIT_NPROC },     { "RSS", RLIMIT_RSS },
	{ "RTPRIO", RLIMIT_RTPRIO },   { "RTTIME", RLIMIT_RTTIME },
	{ "SIGPENDING", RLIMIT_SIGPENDING }, { "STACK", RLIMIT_STACK },
};

static void lim(char *buf, size_t n, rlim_t v)
{
	if (v == RLIM_INFINITY)
		snprintf(buf, n, "unlimited");
	else
		snprintf(buf, n, "%llu", (unsigned long long)v);
}

static const char *policy_name(int p)
{
	switch (p & ~SCHED_RESET_ON_FORK) {
	case SCHED_OTHER: return "SCHED_OTHER";
	case SCHED_FIFO: return "SCHED_FIFO";
	case SCHED_RR: return "SCHED_RR";
	case SCHED_BATCH: return "SCHED_BATCH";
	case SCHED_IDLE: return "SCHED_IDLE";
#ifdef SCHED_DEADLINE
	case SCHED_DEADLINE: return "SCHED_DEADLINE";
#endif
	default: return "unknown";
	}
}

static void fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char key[64], path[PATH_MAX], target[PATH_MAX];

	if (!d) {
		OUT("fd.error", "%s", strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		int fd;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		fd = atoi(e->d_name);
		if (fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			snprintf(target, sizeof(target), "?%s", strerror(errno));
		else
			target[n] = '\0';
		snprintf(key, sizeof(key), "fd.%d", fd);
		OUT(key, "%s", target);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg, groups[NGROUPS_MAX];
	char buf[PATH_MAX], key[64], s[32], h[32];
	int n;

	filters = argv + 1;
	nfilters = argc - 1;

	OUT("pid", "%d", (int)getpid());
	OUT("ppid", "%d", (int)getppid());
	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	OUT("uid", "%u,%u,%u", ru, eu, su);
	OUT("gid", "%u,%u,%u", rg, eg, sg);
	n = getgroups(NGROUPS_MAX, groups);
	if (wanted("groups")) {
		printf("groups=");
		for (int i = 0; i < n; i++)
			printf("%s%u", i ? "," : "", groups[i]);
		putchar('\n');
	}
	mode_t m = umask(0);
	umask(m);
	OUT("umask", "%04o", (unsigned)m);
	if (getcwd(buf, sizeof(buf)))
		OUT("cwd", "%s", buf);
	else
		OUT("cwd", "?%s", strerror(errno));
	OUT("nonewprivs", "%d", prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
	OUT("dumpable", "%d", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	for (size_t i = 0; i < sizeof(rlimits) / sizeof(rlimits[0]); i++) {
		struct rlimit rl;

		if (getrlimit(rlimits[i].res, &rl) < 0)
			continue;
		lim(s, sizeof(s), rl.rlim_cur);
		lim(h, sizeof(h), rl.rlim_max);
		snprintf(key, sizeof(key), "rlimit.%s", rlimits[i].name);
		OUT(key, "%s,%s", s, h);
	}
	int pol = sched_getscheduler(0);
	struct sched_param sp;
	sched_getparam(0, &sp);
	OUT("sched.policy", "%s", policy_name(pol));
	OUT("sched.priority", "%d", sp.sched_priority);
	errno = 0;
	OUT("nice", "%d", getpriority(PRIO_PROCESS, 0));
	long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
	OUT("ioprio.class", "%ld", io < 0 ? -1 : (io >> 13));
	OUT("ioprio.level", "%ld", io < 0 ? -1 : (io & 0x1fff));
	OUT("personality", "0x%x", (unsigned)personality(0xffffffff));
	fds();
	return 0;
}
