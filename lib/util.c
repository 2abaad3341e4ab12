/* SPDX-License-Identifier: Apache-2.0 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

static void oom(void)
{
	static const char msg[] = "agentsbx: out of memory\n";
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 8;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	if (n > ((size_t)-1) / size)
		oom();
	*cap = n;
	return xrealloc(p, n * size);
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	va_end(ap);
	return p;
}

int read_all_fd(int fd, size_t max, char **out, size_t *len,
		struct error *err)
{
	size_t cap = 4096, n = 0;
	_cleanup_free_ char *buf = xmalloc(cap);

	for (;;) {
		if (n + 1 >= cap) {
			if (cap > max)
				return error_set(err, "file larger than %zu bytes",
						 max);
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return error_sys(err, "read");
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return error_set(err, "file larger than %zu bytes", max);
	}
	buf[n] = '\0';
	*out = take_ptr(buf);
	if (len)
		*len = n;
	return 0;
}

int read_regular_fd(int fd, const char *name, size_t max, char **out,
		    size_t *len, struct error *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return error_sys(err, "stat %s", name);
	if (!S_ISREG(st.st_mode))
		return error_set(err, "%s: not a regular file", name);
	if ((unsigned long long)st.st_size > max)
		return error_set(err, "%s: too large: %lld bytes (at most %zu)",
				 name, (long long)st.st_size, max);
	if (read_all_fd(fd, max, out, len, err) < 0)
		return error_prefix(err, "read %s", name);
	return 0;
}

int read_file_at(int dirfd, const char *path, size_t max, char **out,
		 size_t *len, struct error *err)
{
	/* O_NONBLOCK and the type check: a FIFO or a device planted in place
	 * of config.json, process.json or state.json must not hang us. */
	_cleanup_close_ int fd =
		openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return error_sys(err, "open %s", path);
	if (fstat(fd, &st) < 0)
		return error_sys(err, "stat %s", path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, "%s: not a regular file", path);
	if (read_all_fd(fd, max, out, len, err) < 0)
		return error_prefix(err, "read %s", path);
	return 0;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int write_file_at(int dirfd, const char *path, const char *data,
		  struct error *err)
{
	_cleanup_close_ int fd =
		openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return error_sys(err, "open %s", path);
	if (write_all(fd, data, strlen(data)) < 0)
		return error_sys(err, "write %s to %s", data, path);
	return 0;
}

bool str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int parse_i64(const char *s, long long *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int exit_code_of(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return 255;
}

unsigned long long keyed_value(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *line = text; line && *line;) {
		if (!strncmp(line, key, n) && line[n] == ' ')
			return strtoull(line + n + 1, NULL, 10);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

void xappend_comma_list(char **list, const char *item)
{
	char *more = *list ? xasprintf("%s,%s", *list, item) : xstrdup(item);

	free(*list);
	*list = more;
}
