/* SPDX-License-Identifier: Apache-2.0 */
#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* msg[n..] = sep + text, truncated to the buffer. */
static void append_text(char *msg, size_t n, const char *sep, const char *text)
{
	size_t cap = ERROR_MSG_MAX;

	for (const char *p = sep; n + 1 < cap && *p; p++)
		msg[n++] = *p;
	for (const char *p = text; n + 1 < cap && *p; p++)
		msg[n++] = *p;
	if (n < cap)
		msg[n] = '\0';
}

__attribute__((format(printf, 3, 0))) static void error_vformat(struct error *err, int errnum, const char *fmt,
								va_list ap)
{
	int n;

	if (!err)
		return;
	err->code = errnum;
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	if (n < 0)
		n = 0;
	if (n >= ERROR_MSG_MAX)
		n = ERROR_MSG_MAX - 1;
	if (errnum)
		append_text(err->msg, (size_t)n, ": ", strerror(errnum));
}

int error_set(struct error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vformat(err, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int error_setc(struct error *err, int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vformat(err, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int error_prefix(struct error *err, const char *fmt, ...)
{
	char old[ERROR_MSG_MAX];
	va_list ap;
	int n;

	if (!err)
		return -1;
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n >= ERROR_MSG_MAX)
		n = ERROR_MSG_MAX - 1;
	append_text(err->msg, (size_t)n, ": ", old);
	return -1;
}

void error_clear(struct error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->msg[0] = '\0';
}
