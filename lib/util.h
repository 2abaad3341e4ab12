/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_UTIL_H
#define AGENTSBX_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Allocation that cannot fail: aborts the process on ENOMEM. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* *list (NULL or malloc'd "a,b") with ",item" added (or item alone). */
void xappend_comma_list(char **list, const char *item);
/* Room for need elements of size bytes in p, whose room is *cap elements:
 * doubled when short (appending n elements one by one is O(n), not the
 * O(n^2) of a realloc per element). */
void *xgrow(void *p, size_t *cap, size_t need, size_t size);

/* Read a whole file (relative to dirfd; AT_FDCWD for a plain path), at most
 * max bytes, NUL-terminated.  *len gets the size without the NUL. */
int read_file_at(int dirfd, const char *path, size_t max, char **out,
		 size_t *len, struct error *err);
/* Read a file from an fd opened O_NONBLOCK (a FIFO or a device planted in
 * its place must not hang us): it must be a regular file and, by fstat
 * before anything is read, at most max bytes.  Errors name `name`. */
int read_regular_fd(int fd, const char *name, size_t max, char **out,
		    size_t *len, struct error *err);
/* Read everything from an open fd, at most max bytes, NUL-terminated. */
int read_all_fd(int fd, size_t max, char **out, size_t *len,
		struct error *err);
/* write(2) until done, retrying EINTR.  Returns 0 or -1 with errno. */
int write_all(int fd, const void *buf, size_t len);
/* Write a small string to an existing file (procfs, cgroupfs) at dirfd/path,
 * O_NOFOLLOW.  The error names the path. */
int write_file_at(int dirfd, const char *path, const char *data,
		  struct error *err);

bool str_has_prefix(const char *s, const char *prefix);
/* Parse a decimal int64/uint64, whole string, no overflow.  0 or -1. */
int parse_i64(const char *s, long long *out);
int parse_u64(const char *s, unsigned long long *out);

/* A waitpid() status as a shell reports it: the exit code, 128+N for a
 * signal N, 255 for anything else. */
int exit_code_of(int wait_status);

/* N of the line "key N" in text ("key value" files: cpu.stat,
 * memory.events, memory.oom_control); 0 when there is none. */
unsigned long long keyed_value(const char *text, const char *key);

#endif
