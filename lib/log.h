/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_LOG_H
#define AGENTSBX_LOG_H

#include <stdbool.h>

/*
 * The runtime's log: --log FILE (default stderr), --log-format text|json.
 * In json format each line is {"level":"error","msg":"...","time":"..."},
 * as runc writes it; containerd shows the last error line to the user.
 * The log fd is O_CLOEXEC, so a container process never inherits it.
 */
enum log_level {
	LOG_LVL_ERROR,
	LOG_LVL_WARN,
	LOG_LVL_INFO,
	LOG_LVL_DEBUG,
};

/* path NULL: stderr.  Returns -1 (and writes to stderr) if path cannot be
 * opened. */
int log_init(const char *path, bool json, bool debug);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool log_debug_enabled(void);
/* The fd log lines go to (for children that must keep logging). */
int log_get_fd(void);
/* Write log lines to fd from now on, formatted as they were (a copy of
 * stderr moved off fd 2 stays "stderr"). */
void log_redirect(int fd);

#define log_error(...) log_msg(LOG_LVL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)                                       \
	do {                                                 \
		if (log_debug_enabled())                     \
			log_msg(LOG_LVL_DEBUG, __VA_ARGS__); \
	} while (0)

#endif
