/* SPDX-License-Identifier: Apache-2.0 */
/*
 * open_exe: try, from inside a container, what CVE-2019-5736 did: get hold
 * of /proc/PID/exe of another process (the runtime, or a process it is
 * still setting up) in a form that can be written.  Nothing is ever written:
 * every fd obtained is closed at once.
 *
 *   open_exe            every pid in /proc but our own
 *   open_exe PID...     only these
 *
 * One line per pid:
 *   pid=N comm=NAME wronly=R path=R reopen=R link=TARGET
 * where R is "OK" or the errno name (ENOENT, EACCES, ETXTBSY, ...):
 *   wronly  open("/proc/PID/exe", O_WRONLY)
 *   path    open("/proc/PID/exe", O_PATH)
 *   reopen  open("/proc/self/fd/<the O_PATH fd>", O_WRONLY) ("-" when the
 *           O_PATH open failed): the re-open trick of the exploit
 *   link    readlink("/proc/PID/exe"), or "!" and the errno name
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *ename(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

static void comm_of(int pid, char *buf, size_t n)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	snprintf(buf, n, "?");
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	for (char *p = buf; *p; p++)
		if (!isgraph((unsigned char)*p))
			*p = '_';
}

static void probe(int pid)
{
	char exe[64], fdpath[64], comm[64], link[4096];
	char wronly[32], path[32], reopen[32];
	int fd, pfd;
	ssize_t n;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", pid);
	comm_of(pid, comm, sizeof(comm));

	fd = open(exe, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		snprintf(wronly, sizeof(wronly), "OK");
	} else {
		snprintf(wronly, sizeof(wronly), "%s", ename(errno));
	}

	snprintf(reopen, sizeof(reopen), "-");
	pfd = open(exe, O_PATH | O_CLOEXEC);
	if (pfd >= 0) {
		snprintf(path, sizeof(path), "OK");
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", pfd);
		fd = open(fdpath, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			snprintf(reopen, sizeof(reopen), "OK");
		} else {
			snprintf(reopen, sizeof(reopen), "%s", ename(errno));
		}
		close(pfd);
	} else {
		snprintf(path, sizeof(path), "%s", ename(errno));
	}

	n = readlink(exe, link, sizeof(link) - 1);
	if (n >= 0)
		link[n] = '\0';
	else
		snprintf(link, sizeof(link), "!%s", ename(errno));

	printf("pid=%d comm=%s wronly=%s path=%s reopen=%s link=%s\n", pid, comm,
	       wronly, path, reopen, link);
}

int main(int argc, char **argv)
{
	int self = getpid();

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			probe(atoi(argv[i]));
		return 0;
	}
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d) {
		perror("open_exe: /proc");
		return 2;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == self)
			continue;
		probe((int)pid);
	}
	closedir(d);
	return 0;
}
