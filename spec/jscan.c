/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading untrusted JSON.
 *
 * yajl is lenient where a hostile file can hurt: it accepts overlong and
 * surrogate UTF-8, turns "\u0000" into a string truncated at the NUL,
 * accepts comments, and frees its tree recursively (so nesting depth is
 * stack depth).  json_scan() refuses all of that before yajl sees the
 * bytes; duplicate keys are refused later, by jcheck_object().
 */
#include <stdio.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/utf8.h"
#include "../lib/util.h"
#include "internal.h"

/* ---- raw byte scan ---------------------------------------------------- */

struct scan {
	const unsigned char *p;
	size_t len;
	size_t pos;
	const char *file;
	struct error *err;
};

static int scan_fail(struct scan *s, const char *what)
{
	return error_set(s->err, "%s: %s at byte offset %zu", s->file, what,
			 s->pos);
}

static int hex_digit(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* The 4 hex digits of a \u escape at p, or -1. */
static long hex4(const unsigned char *p, size_t n)
{
	long v = 0;

	if (n < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int d = hex_digit(p[i]);
		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* s->pos is at a backslash inside a string. */
static int scan_escape(struct scan *s)
{
	const unsigned char *p = s->p + s->pos;
	size_t left = s->len - s->pos;
	long cp, low;

	if (left < 2 || p[1] == 0 || p[1] >= 0x80) {
		/* let the main loop judge the next byte; yajl rejects it */
		s->pos++;
		return 0;
	}
	if (p[1] != 'u') {
		s->pos += 2;
		return 0;
	}
	cp = hex4(p + 2, left - 2);
	if (cp < 0) {
		s->pos += 2; /* malformed: yajl reports it */
		return 0;
	}
	if (cp == 0)
		return scan_fail(s,
				 "escaped NUL character (\\u0000) in a string");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return scan_fail(s, "unpaired UTF-16 surrogate in a string");
	if (cp >= 0xd800 && cp <= 0xdbff) {
		low = (left >= 12 && p[6] == '\\' && p[7] == 'u') ? hex4(p + 8, left - 8) : -1;
		if (low < 0xdc00 || low > 0xdfff)
			return scan_fail(
				s, "unpaired UTF-16 surrogate in a string");
		s->pos += 12;
		return 0;
	}
	s->pos += 6;
	return 0;
}

/* One byte outside strings: track nesting and count values. */
static int scan_structural(struct scan *s, size_t *depth, size_t *values,
			   bool *in_string)
{
	switch (s->p[s->pos]) {
	case '"':
		*in_string = true;
		break;
	case '[':
	case '{':
		if (++*depth > SPEC_MAX_DEPTH) {
			char what[64];
			snprintf(what, sizeof(what),
				 "JSON nested deeper than %d levels",
				 SPEC_MAX_DEPTH);
			return scan_fail(s, what);
		}
		++*values;
		break;
	case ']':
	case '}':
		if (*depth > 0)
			--*depth;
		break;
	case ',':
		++*values;
		break;
	case '/':
		return scan_fail(s, "comments are not allowed in JSON");
	}
	if (*values > SPEC_MAX_VALUES) {
		char what[64];
		snprintf(what, sizeof(what), "more than %u JSON values",
			 SPEC_MAX_VALUES);
		return scan_fail(s, what);
	}
	s->pos++;
	return 0;
}

static int json_scan(struct scan *s)
{
	size_t depth = 0, values = 0;
	bool in_string = false;

	while (s->pos < s->len) {
		unsigned char b = s->p[s->pos];

		if (b == 0)
			return scan_fail(s, "NUL byte");
		if (b >= 0x80) {
			size_t n = utf8_seq_len(s->p + s->pos, s->len - s->pos);
			if (n == 0)
				return scan_fail(s, "invalid UTF-8");
			s->pos += n;
			continue;
		}
		if (!in_string) {
			if (scan_structural(s, &depth, &values, &in_string) < 0)
				return -1;
			continue;
		}
		if (b == '\\') {
			if (scan_escape(s) < 0)
				return -1;
			continue;
		}
		if (b == '"')
			in_string = false;
		s->pos++;
	}
	return 0;
}

/* yajl's verbose message quotes the input on later lines: keep line one. */
static const char *first_line(char *msg)
{
	size_t n = strcspn(msg, "\n");

	msg[n] = '\0';
	while (n > 0 && msg[n - 1] == ' ')
		msg[--n] = '\0';
	return msg[0] ? msg : "unknown error";
}

int spec_json_load(const char *buf, size_t len, const char *file, yajl_val *out,
		   struct error *err)
{
	struct scan s = {
		.p = (const unsigned char *)buf,
		.len = len,
		.file = file,
		.err = err,
	};
	_cleanup_free_ char *copy = NULL;
	char ebuf[256] = "";
	yajl_val v;

	*out = NULL;
	if (len > SPEC_MAX_FILE_SIZE)
		return error_set(err, "%s: too large: %zu bytes (at most %u)",
				 file, len, SPEC_MAX_FILE_SIZE);
	if (!buf || len == 0)
		return error_set(err, "%s: empty file", file);
	if (json_scan(&s) < 0)
		return -1;

	copy = xmalloc(len + 1);
	memcpy(copy, buf, len);
	copy[len] = '\0';
	v = yajl_tree_parse(copy, ebuf, sizeof(ebuf));
	if (!v)
		return error_set(err, "%s: invalid JSON: %s", file,
				 first_line(ebuf));
	*out = v;
	return 0;
}
