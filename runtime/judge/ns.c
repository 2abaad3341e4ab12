/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Namespace files judged by what they are (judge.h): an nsfs object of
 * the kind asked for, and whether it is the host's.  The fd opened here is
 * the one that is joined (runtime/init/namespaces.c) and that the egress
 * table goes into (runtime/policy/netfilter.c): nothing opens the path a
 * second time.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "judge.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

static bool same_object(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int judge_ns_open(const char *path, int nstype, const char *name, int *out,
		  struct error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct statfs sfs;
	int type;

	if (fd < 0)
		return error_sys(err, "open %s namespace %s", name, path);
	if (fstatfs(fd, &sfs) < 0)
		return error_sys(err, "statfs %s namespace %s", name, path);
	if (sfs.f_type != NSFS_MAGIC)
		return error_set(err, "linux.namespaces[%s].path %s: not a namespace file (not on nsfs)",
				 name, path);
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type < 0)
		return error_sys(err, "ioctl(NS_GET_NSTYPE) on %s namespace %s", name, path);
	if (type != nstype)
		return error_set(err, "linux.namespaces[%s].path %s: not a %s namespace (type 0x%x)",
				 name, path, name, type);
	*out = take_fd(fd);
	return 0;
}

int judge_ns_is_host(int fd, int proc_fd, const char *file, bool *host,
		     struct error *err)
{
	char path[64];
	struct stat theirs, ours, init;

	*host = false;
	if (fstat(fd, &theirs) < 0)
		return error_sys(err, "stat %s namespace fd", file);
	snprintf(path, sizeof(path), "self/ns/%s", file);
	if (fstatat(proc_fd, path, &ours, 0) < 0)
		return error_sys(err, "stat /proc/%s", path);
	if (same_object(&theirs, &ours)) {
		*host = true;
		return 0;
	}
	/* PID 1's: the host's even when the runtime runs in namespaces of
	 * its own (a daemon's).  Unreadable (no ptrace access): only ours. */
	snprintf(path, sizeof(path), "1/ns/%s", file);
	if (fstatat(proc_fd, path, &init, 0) < 0) {
		log_debug("stat /proc/%s: %s (compared with the runtime's own only)",
			  path, strerror(errno));
		return 0;
	}
	*host = same_object(&theirs, &init);
	return 0;
}
