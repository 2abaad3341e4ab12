/* SPDX-License-Identifier: Apache-2.0 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int log_fd = STDERR_FILENO;
static bool log_to_stderr = true;
static bool log_json;
static bool log_debug_on;

static const char *const level_names[] = {
	[LOG_LVL_ERROR] = "error",
	[LOG_LVL_WARN] = "warning",
	[LOG_LVL_INFO] = "info",
	[LOG_LVL_DEBUG] = "debug",
};

int log_init(const char *path, bool json, bool debug)
{
	log_json = json;
	log_debug_on = debug;
	if (!path || !*path)
		return 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "agentsbx: open log file %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	log_fd = fd;
	log_to_stderr = false;
	return 0;
}

void log_redirect(int fd)
{
	log_fd = fd;
}

bool log_debug_enabled(void)
{
	return log_debug_on;
}

int log_get_fd(void)
{
	return log_fd;
}

/* Append s to out as a JSON string body (no quotes).  Control bytes are
 * escaped; bytes >= 0x80 pass through (containerd reads them as UTF-8). */
static size_t json_escape(char *out, size_t cap, const char *s)
{
	size_t n = 0;

	for (; *s && n + 7 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c == '\n') {
			out[n++] = '\\';
			out[n++] = 'n';
		} else if (c == '\t') {
			out[n++] = '\\';
			out[n++] = 't';
		} else if (c < 0x20) {
			n += (size_t)snprintf(out + n, cap - n, "\\u%04x", c);
		} else {
			out[n++] = (char)c;
		}
	}
	out[n] = '\0';
	return n;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char msg[8192], line[16384 + 256];
	int saved = errno;
	va_list ap;
	int n;

	/* On a terminal's stderr, info lines (policy changes and the like) are
	 * noise unless asked for; with --log they are all kept. */
	if (level == LOG_LVL_INFO && log_to_stderr && !log_debug_on)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	if (log_json) {
		char esc[16384], ts[64];
		struct timeval tv;
		struct tm tm;

		gettimeofday(&tv, NULL);
		gmtime_r(&tv.tv_sec, &tm);
		n = (int)strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(ts + n, sizeof(ts) - (size_t)n, ".%06ldZ",
			 (long)tv.tv_usec);
		json_escape(esc, sizeof(esc), msg);
		n = snprintf(line, sizeof(line),
			     "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
			     level_names[level], esc, ts);
	} else if (log_to_stderr && level == LOG_LVL_ERROR) {
		n = snprintf(line, sizeof(line), "agentsbx: %s\n", msg);
	} else {
		n = snprintf(line, sizeof(line), "agentsbx: %s: %s\n",
			     level_names[level], msg);
	}
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	/* One write(2) per line so that concurrent writers do not interleave. */
	if (write(log_fd, line, (size_t)n) < 0) {
		/* nowhere left to report it */
	}
	errno = saved;
}
