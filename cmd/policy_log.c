/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy log [--follow] [--container ID]: the audit log's JSON lines
 * (runtime/policy/audit_log.h), those of one container if asked.  --follow
 * keeps reading, and reopens the path when it is rotated (a new inode) or
 * truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../runtime/policy/audit_log.h"
#include "cmd.h"

/* One line printed when it is about that container (or any). */
static void emit(const char *line, const char *container)
{
	if (container) {
		const char *key[] = { "container", NULL };
		yajl_val v = yajl_tree_parse(line, NULL, 0);
		yajl_val c = v ? yajl_tree_get(v, key, yajl_t_string) : NULL;
		const char *id = c ? YAJL_GET_STRING(c) : NULL;
		bool match = id && !strcmp(id, container);

		yajl_tree_free(v);
		if (!match)
			return;
	}
	printf("%s\n", line);
}

/* Print the whole lines of fd from where it is; a partial last line stays
 * in *pending for the next call. */
static int drain(int fd, char **pending, size_t *plen, const char *container,
		 const char *path, struct error *err)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		char *start, *nl;

		*pending = xrealloc(*pending, *plen + (size_t)n + 1);
		memcpy(*pending + *plen, buf, (size_t)n);
		*plen += (size_t)n;
		(*pending)[*plen] = '\0';
		start = *pending;
		while ((nl = memchr(start, '\n', *plen - (size_t)(start - *pending)))) {
			*nl = '\0';
			if (*start)
				emit(start, container);
			start = nl + 1;
		}
		*plen -= (size_t)(start - *pending);
		memmove(*pending, start, *plen);
	}
	fflush(stdout);
	if (n < 0)
		return error_sys(err, "read %s", path);
	return 0;
}

/* The path now names another file, or ours was truncated: reopen. */
static bool rotated(int fd, const char *path)
{
	struct stat now, ours;
	off_t pos = lseek(fd, 0, SEEK_CUR);

	if (stat(path, &now) < 0)
		return false; /* renamed away, not yet recreated: keep ours */
	if (fstat(fd, &ours) < 0)
		return true;
	return now.st_dev != ours.st_dev || now.st_ino != ours.st_ino || now.st_size < pos;
}

static int show(const char *path, bool follow, const char *container, struct error *err)
{
	_cleanup_free_ char *pending = NULL;
	size_t plen = 0;
	int fd = -1, r = 0;

	for (;;) {
		if (fd < 0) {
			fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
			if (fd < 0 && (errno != ENOENT || !follow)) {
				if (errno == ENOENT)
					return 0; /* nothing decided yet */
				return error_sys(err, "open the policy audit log %s", path);
			}
		}
		if (fd >= 0 && (r = drain(fd, &pending, &plen, container, path, err)) < 0)
			break;
		if (!follow)
			break;
		if (fd >= 0 && rotated(fd, path)) {
			/* What was appended to the old file before the rename. */
			if ((r = drain(fd, &pending, &plen, container, path, err)) < 0)
				break;
			close(fd);
			fd = -1;
			plen = 0;
			continue;
		}
		nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
	}
	if (fd >= 0)
		close(fd);
	return r;
}

int policy_log_run(const struct global_opts *g, const struct command *cmd, int argc,
		   char **argv)
{
	static const struct option opts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "container", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *container = NULL, *path;
	bool follow = false;
	struct policy p;
	struct error err;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fc:h", opts, NULL)) != -1) {
		if (c == 'f')
			follow = true;
		else if (c == 'c')
			container = optarg;
		else
			return cmd_usage(cmd, c == 'h');
	}
	if (!cmd_want_args(cmd, argc, optind, 0))
		return 1;
	if (policy_load(g->policy_path, &p, &err) < 0)
		return cmd_fail(&err);
	path = audit_log_path(&p);
	if (!path) {
		error_set(&err, "policy log: the policy (%s) has \"auditLog\": \"\": no audit log is kept",
			  p.source);
		policy_free(&p);
		return cmd_fail(&err);
	}
	r = show(path, follow, container, &err);
	policy_free(&p);
	return r < 0 ? cmd_fail(&err) : 0;
}
