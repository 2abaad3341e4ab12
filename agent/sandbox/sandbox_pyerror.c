/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Python program's uncaught exception, read back from its stderr as
 * frameworks want it: {name, value, traceback}.  The interpreter prints
 * "Traceback (most recent call last):", the frames, and last the line
 * "Name: value" (or just "Name"); a SyntaxError in the main file has no
 * traceback header, only the location lines and "SyntaxError: ...".  This
 * is the program's own output, parsed: a program may print anything, so
 * it is a convenience for the model, never a fact the runtime vouches for.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/util.h"
#include "sandbox_private.h"

#define TRACEBACK_HEADER "Traceback (most recent call last):\n"

/* The start of the last line of [s, s + n) that is not empty. */
static const char *last_line(const char *s, size_t *n)
{
	while (*n && (s[*n - 1] == '\n' || s[*n - 1] == '\r'))
		(*n)--;
	for (size_t i = *n; i > 0; i--)
		if (s[i - 1] == '\n')
			return s + i;
	return s;
}

/* "Name" or "pkg.Name", then ':' or the end of the line. */
static size_t exception_name(const char *line, size_t len)
{
	size_t i = 0;

	if (!len || !(isalpha((unsigned char)line[0]) || line[0] == '_'))
		return 0;
	while (i < len && (isalnum((unsigned char)line[i]) || line[i] == '_' || line[i] == '.'))
		i++;
	return i == len || line[i] == ':' ? i : 0;
}

static const char *last_header(const char *err, size_t len)
{
	const char *found = NULL, *p = err;

	while ((p = memmem(p, len - (size_t)(p - err), TRACEBACK_HEADER,
			   strlen(TRACEBACK_HEADER)))) {
		if (p == err || p[-1] == '\n')
			found = p;
		p++;
	}
	return found;
}

bool sandbox_python_error(const struct sandbox_result *res, struct sandbox_pyerror *out)
{
	const char *err = res->err, *tb, *line;
	size_t len = res->err_len, line_len, name_len;

	memset(out, 0, sizeof(*out));
	if (res->exit_code != 1 || res->timed_out || !err || !len)
		return false;
	tb = last_header(err, len);
	line = last_line(err, &len);
	line_len = (size_t)(err + len - line);
	name_len = exception_name(line, line_len);
	if (!name_len || (!tb && !strstr(line, "Error")))
		return false;
	out->name = xstrndup(line, name_len);
	if (name_len + 2 <= line_len && line[name_len] == ':')
		out->value = xstrndup(line + name_len + 2, line_len - name_len - 2);
	else
		out->value = xstrdup("");
	out->traceback = xstrndup(tb ? tb : err, len - (size_t)((tb ? tb : err) - err));
	return true;
}

void sandbox_pyerror_free(struct sandbox_pyerror *e)
{
	free(e->name);
	free(e->value);
	free(e->traceback);
	memset(e, 0, sizeof(*e));
}
