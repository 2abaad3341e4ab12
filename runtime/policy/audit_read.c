/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading the policy's audit log (`agentsbx policy log [--follow]
 * [--container ID]`): its JSON lines, those of one container if asked.
 * --follow keeps reading, and reopens the path when it is rotated (a new
 * inode) or truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../container.h"
#include "audit_log.h"

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

int container_policy_log(const struct global_opts *g, bool follow, const char *container,
			 struct error *err)
{
	struct policy p;
	const char *path;
	int r;

	if (policy_load(g->policy_path, &p, err) < 0)
		return -1;
	path = audit_log_path(&p);
	if (!path)
		r = error_set(err, "policy log: the policy (%s) has \"auditLog\": \"\": no audit log is kept",
			      p.source);
	else
		r = show(path, follow, container, err);
	policy_free(&p);
	return r;
}
