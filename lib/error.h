/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_ERROR_H
#define AGENTSBX_ERROR_H

#include <stdarg.h>

/*
 * One error type carried up the call chain.  A fallible function returns a
 * negative value and fills *err; only cmd/ prints.  The buffer is fixed-size
 * so that the container child can fill it without allocating and send it to
 * the parent over the sync socket as plain bytes.
 */
#define ERROR_MSG_MAX 4096

struct error {
	int code;		 /* errno value, 0 when not from a syscall */
	char msg[ERROR_MSG_MAX]; /* "what was being done: strerror(code)" */
};

/* Fill err with a formatted message (no errno text).  Returns -1. */
int error_set(struct error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Fill err with a formatted message followed by ": strerror(errnum)".
 * Returns -1. */
int error_setc(struct error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* error_setc(err, errno, ...): for the common "syscall just failed" case. */
#define error_sys(err, ...) error_setc((err), errno, __VA_ARGS__)

/* Prefix an existing message: "prefix: old message".  Returns -1. */
int error_prefix(struct error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void error_clear(struct error *err);

#endif
