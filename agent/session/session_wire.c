/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CLI session's wire: a message is a line of JSON (its header, with
 * "body_len" when a body follows) and then the body's bytes, so code and
 * files go as they are (binary too) and only the small header is parsed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "session_private.h"

#define CHUNK (64 * 1024)

static int read_some(int fd, char *buf, size_t size, size_t *got, struct error *err)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return error_sys(err, errno == EAGAIN ? "session: no request in time" :
							"session: read");
	*got = (size_t)n;
	return 0;
}

/* The header line into *line (NUL-terminated, no newline); what came
 * after it into *rest. */
static int read_line(int fd, size_t max, char **line, char **rest, size_t *rest_len,
		     struct error *err)
{
	size_t len = 0, cap = CHUNK, got = 0;
	char *buf = xmalloc(cap + 1), *nl;

	for (;;) {
		if (len == cap) {
			if (cap > max) {
				free(buf);
				return error_set(err, "session: a message header over %zu bytes", max);
			}
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
		if (read_some(fd, buf + len, cap - len, &got, err) < 0) {
			free(buf);
			return -1;
		}
		if (!got) {
			free(buf);
			return error_set(err, "session: the other side closed the connection%s",
					 len ? " mid-message" : "");
		}
		nl = memchr(buf + len, '\n', got);
		len += got;
		if (nl)
			break;
	}
	*rest_len = len - (size_t)(nl + 1 - buf);
	*rest = xmalloc(*rest_len + 1);
	memcpy(*rest, nl + 1, *rest_len);
	*nl = '\0';
	*line = buf;
	return 0;
}

static int body_len_of(yajl_val hdr, size_t max, size_t *out, struct error *err)
{
	yajl_val v = jmember(hdr, "body_len");

	*out = 0;
	if (!v)
		return 0;
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 || (size_t)YAJL_GET_INTEGER(v) > max)
		return error_set(err, "session: body_len: expected 0 to %zu bytes", max);
	*out = (size_t)YAJL_GET_INTEGER(v);
	return 0;
}

int session_wire_read(int fd, size_t hdr_max, size_t body_max, yajl_val *hdr,
		      char **hdr_text, char **body, size_t *body_len, struct error *err)
{
	_cleanup_free_ char *line = NULL, *rest = NULL;
	char ebuf[128] = "";
	size_t rest_len = 0, want, got = 0;

	*hdr = NULL;
	if (read_line(fd, hdr_max, &line, &rest, &rest_len, err) < 0)
		return -1;
	*hdr = yajl_tree_parse(line, ebuf, sizeof(ebuf));
	if (!*hdr || !YAJL_IS_OBJECT(*hdr)) {
		yajl_tree_free(*hdr);
		*hdr = NULL;
		return error_set(err, "session: a message header that is not a JSON object: %s", ebuf);
	}
	if (body_len_of(*hdr, body_max, &want, err) < 0 ||
	    (rest_len > want && error_set(err, "session: more bytes than the header announced"))) {
		yajl_tree_free(*hdr);
		*hdr = NULL;
		return -1;
	}
	rest = xrealloc(rest, want + 1);
	for (; rest_len < want; rest_len += got) {
		if (read_some(fd, rest + rest_len, want - rest_len, &got, err) < 0 || !got) {
			if (!got)
				error_set(err, "session: the message ended after %zu of %zu bytes",
					  rest_len, want);
			yajl_tree_free(*hdr);
			*hdr = NULL;
			return -1;
		}
	}
	rest[want] = '\0';
	*body = take_ptr(rest);
	*body_len = want;
	if (hdr_text)
		*hdr_text = take_ptr(line);
	return 0;
}

int session_wire_write(int fd, const char *hdr, size_t hdr_len, const char *body,
		       size_t body_len, struct error *err)
{
	if (write_all(fd, hdr, hdr_len) < 0 || write_all(fd, "\n", 1) < 0 ||
	    (body_len && write_all(fd, body, body_len) < 0))
		return error_sys(err, "session: write");
	return 0;
}
