/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Typed access to the members of a yajl tree, with the JSON path of every
 * value kept for error messages: "config.json: process.user.uid: ...".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cleanup.h"
#include "../lib/util.h"
#include "internal.h"

/* ---- path and messages ------------------------------------------------ */

void jctx_init(struct jctx *c, const char *file, struct error *err)
{
	c->file = file;
	c->err = err;
	c->len = 0;
	c->path[0] = '\0';
}

int jfail(struct jctx *c, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->len == 0)
		return error_set(c->err, "%s: %s", c->file, msg);
	return error_set(c->err, "%s: %s: %s", c->file, c->path, msg);
}

/* Append at most max bytes of s, control bytes replaced, "..." if cut. */
static void path_append(struct jctx *c, const char *s, size_t max)
{
	const size_t limit = sizeof(c->path) - 4; /* room for "..." */
	size_t n = 0;

	for (; *s && c->len < limit; s++, n++) {
		unsigned char ch = (unsigned char)*s;
		if (n == max)
			break;
		c->path[c->len++] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
	}
	if (*s) {
		memcpy(c->path + c->len, "...", 3);
		c->len += 3;
	}
	c->path[c->len] = '\0';
}

size_t jpush_key(struct jctx *c, const char *key)
{
	size_t mark = c->len;

	if (c->len > 0)
		path_append(c, ".", 1);
	path_append(c, key, 64);
	return mark;
}

size_t jpush_index(struct jctx *c, size_t i)
{
	size_t mark = c->len;
	char idx[32];

	snprintf(idx, sizeof(idx), "[%zu]", i);
	path_append(c, idx, sizeof(idx));
	return mark;
}

void jpop(struct jctx *c, size_t mark)
{
	c->len = mark;
	c->path[mark] = '\0';
}

const char *spec_quote(char buf[QUOTE_MAX], const char *s)
{
	const size_t room = QUOTE_MAX - 5; /* the tail "\"..." and NUL */
	size_t n = 0;

	if (!s) {
		snprintf(buf, QUOTE_MAX, "(none)");
		return buf;
	}
	buf[n++] = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char tmp[8];
		size_t k;

		if (ch == '"' || ch == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)ch;
			k = 2;
		} else if (ch < 0x20 || ch >= 0x7f) {
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", ch);
		} else {
			tmp[0] = (char)ch;
			k = 1;
		}
		if (n + k > room) {
			memcpy(buf + n, "\"...", 5);
			return buf;
		}
		memcpy(buf + n, tmp, k);
		n += k;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

const char *spec_json_type_name(yajl_val v)
{
	if (!v)
		return "nothing";
	switch (v->type) {
	case yajl_t_string:
		return "string";
	case yajl_t_number:
		return "number";
	case yajl_t_object:
		return "object";
	case yajl_t_array:
		return "array";
	case yajl_t_true:
	case yajl_t_false:
		return "boolean";
	case yajl_t_null:
		return "null";
	default:
		return "unknown";
	}
}

/* ---- objects ---------------------------------------------------------- */

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *find_duplicate_key(yajl_val v)
{
	size_t n = v->u.object.len;
	const char **keys = v->u.object.keys;
	_cleanup_free_ const char **sorted = NULL;

	if (n <= 16) {
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++)
				if (strcmp(keys[i], keys[j]) == 0)
					return keys[i];
		return NULL;
	}
	sorted = xmalloc(n * sizeof(*sorted));
	memcpy(sorted, keys, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_str_ptr);
	for (size_t i = 1; i < n; i++)
		if (strcmp(sorted[i - 1], sorted[i]) == 0)
			return sorted[i];
	return NULL;
}

int jcheck_object(struct jctx *c, yajl_val v)
{
	const char *dup;
	char q[QUOTE_MAX];

	if (!YAJL_IS_OBJECT(v))
		return jfail(c, "expected an object, got %s",
			     spec_json_type_name(v));
	/* Parsers disagree on which duplicate wins: refuse to pick one. */
	dup = find_duplicate_key(v);
	if (dup)
		return jfail(c, "duplicate key %s", spec_quote(q, dup));
	return 0;
}

yajl_val jmember(yajl_val obj, const char *key)
{
	for (size_t i = 0; i < obj->u.object.len; i++) {
		if (strcmp(obj->u.object.keys[i], key) == 0) {
			yajl_val v = obj->u.object.values[i];
			return YAJL_IS_NULL(v) ? NULL : v;
		}
	}
	return NULL;
}

int jrequire(struct jctx *c, yajl_val obj, const char *key)
{
	size_t mark;

	if (jmember(obj, key))
		return 0;
	mark = jpush_key(c, key);
	jfail(c, "required field is missing");
	jpop(c, mark);
	return -1;
}

/* ---- scalars ---------------------------------------------------------- */

static bool is_integer_literal(const char *r)
{
	if (*r == '-')
		r++;
	if (!*r)
		return false;
	for (; *r; r++)
		if (*r < '0' || *r > '9')
			return false;
	return true;
}

/* The raw literal, shortened: a hostile number can be megabytes long. */
#define LIT_FMT "%.40s%s"
#define LIT_ARG(r) (r), (strlen(r) > 40 ? "..." : "")

/* A number with a fraction or an exponent where an integer belongs. */
static int fail_not_integer(struct jctx *c, const char *r, double min,
			    double max)
{
	double d = strtod(r, NULL);

	if (d < min || d > max)
		return jfail(c, "value out of range: " LIT_FMT, LIT_ARG(r));
	return jfail(c, "expected an integer, got " LIT_FMT, LIT_ARG(r));
}

static int jnum_u64(struct jctx *c, yajl_val v, uint64_t max, uint64_t *out)
{
	const char *r;
	unsigned long long x;

	if (!YAJL_IS_NUMBER(v))
		return jfail(c, "expected an integer, got %s",
			     spec_json_type_name(v));
	r = YAJL_GET_NUMBER(v);
	if (!is_integer_literal(r))
		return fail_not_integer(c, r, 0, (double)max);
	errno = 0;
	x = strtoull(r, NULL, 10);
	if (r[0] == '-' || errno == ERANGE || x > max)
		return jfail(
			c, "value out of range: " LIT_FMT " (must be 0..%llu)",
			LIT_ARG(r), (unsigned long long)max);
	*out = x;
	return 0;
}

static int jnum_i64(struct jctx *c, yajl_val v, int64_t min, int64_t max,
		    int64_t *out)
{
	const char *r;
	long long x;

	if (!YAJL_IS_NUMBER(v))
		return jfail(c, "expected an integer, got %s",
			     spec_json_type_name(v));
	r = YAJL_GET_NUMBER(v);
	if (!is_integer_literal(r))
		return fail_not_integer(c, r, (double)min, (double)max);
	errno = 0;
	x = strtoll(r, NULL, 10);
	if (errno == ERANGE || x < min || x > max)
		return jfail(c,
			     "value out of range: " LIT_FMT
			     " (must be %lld..%lld)",
			     LIT_ARG(r), (long long)min, (long long)max);
	*out = x;
	return 0;
}

int jstring(struct jctx *c, yajl_val obj, const char *key, char **out)
{
	yajl_val v = jmember(obj, key);
	size_t mark;

	if (!v)
		return 0;
	if (!YAJL_IS_STRING(v)) {
		mark = jpush_key(c, key);
		jfail(c, "expected a string, got %s", spec_json_type_name(v));
		jpop(c, mark);
		return -1;
	}
	if (v->u.string[0])
		*out = xstrdup(v->u.string);
	return 0;
}

int jreq_string(struct jctx *c, yajl_val obj, const char *key, char **out)
{
	if (jrequire(c, obj, key) < 0 || jstring(c, obj, key, out) < 0)
		return -1;
	if (!*out) /* "": keep it, so that the lookup names the bad value */
		*out = xstrdup("");
	return 0;
}

int jbool(struct jctx *c, yajl_val obj, const char *key, bool *out)
{
	yajl_val v = jmember(obj, key);
	size_t mark;

	if (!v)
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) {
		mark = jpush_key(c, key);
		jfail(c, "expected a boolean, got %s", spec_json_type_name(v));
		jpop(c, mark);
		return -1;
	}
	*out = YAJL_IS_TRUE(v);
	return 0;
}

int jopt_bool(struct jctx *c, yajl_val obj, const char *key,
	      struct opt_bool *out)
{
	bool present = jmember(obj, key) != NULL;

	if (jbool(c, obj, key, &out->v) < 0)
		return -1;
	out->set = present;
	return 0;
}

int jopt_u64(struct jctx *c, yajl_val obj, const char *key, uint64_t max,
	     struct opt_u64 *out)
{
	yajl_val v = jmember(obj, key);
	size_t mark;
	int rc;

	if (!v)
		return 0;
	mark = jpush_key(c, key);
	rc = jnum_u64(c, v, max, &out->v);
	jpop(c, mark);
	out->set = rc == 0;
	return rc;
}

int jopt_i64(struct jctx *c, yajl_val obj, const char *key, int64_t min,
	     int64_t max, struct opt_i64 *out)
{
	yajl_val v = jmember(obj, key);
	size_t mark;
	int rc;

	if (!v)
		return 0;
	mark = jpush_key(c, key);
	rc = jnum_i64(c, v, min, max, &out->v);
	jpop(c, mark);
	out->set = rc == 0;
	return rc;
}

static int jreq_u64_max(struct jctx *c, yajl_val obj, const char *key,
			uint64_t max, uint64_t *out)
{
	struct opt_u64 v = { 0 };

	if (jrequire(c, obj, key) < 0 || jopt_u64(c, obj, key, max, &v) < 0)
		return -1;
	*out = v.v;
	return 0;
}

int jreq_u32(struct jctx *c, yajl_val obj, const char *key, uint32_t *out)
{
	uint64_t v;

	if (jreq_u64_max(c, obj, key, UINT32_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int jreq_u64(struct jctx *c, yajl_val obj, const char *key, uint64_t *out)
{
	return jreq_u64_max(c, obj, key, UINT64_MAX, out);
}

int jreq_i64(struct jctx *c, yajl_val obj, const char *key, int64_t *out)
{
	struct opt_i64 v = { 0 };

	if (jrequire(c, obj, key) < 0 ||
	    jopt_i64(c, obj, key, INT64_MIN, INT64_MAX, &v) < 0)
		return -1;
	*out = v.v;
	return 0;
}

/* ---- arrays and maps -------------------------------------------------- */

/* obj.key as an array (NULL if absent); the path is left pushed. */
static int enter_array(struct jctx *c, yajl_val obj, const char *key,
		       yajl_val *arr, size_t *mark)
{
	yajl_val v = jmember(obj, key);

	*arr = NULL;
	if (!v)
		return 0;
	*mark = jpush_key(c, key);
	if (!YAJL_IS_ARRAY(v)) {
		jfail(c, "expected an array, got %s", spec_json_type_name(v));
		jpop(c, *mark);
		return -1;
	}
	*arr = v;
	return 0;
}

int jstr_array(struct jctx *c, yajl_val obj, const char *key,
	       struct str_array *out)
{
	yajl_val arr;
	size_t mark, n;

	if (enter_array(c, obj, key, &arr, &mark) < 0)
		return -1;
	if (!arr)
		return 0;
	n = arr->u.array.len;
	if (n > 0) {
		/* NULL-terminated as well, ready for execve() */
		out->items = xcalloc(n + 1, sizeof(*out->items));
		out->len = n;
	}
	for (size_t i = 0; i < n; i++) {
		yajl_val e = arr->u.array.values[i];
		size_t m = jpush_index(c, i);

		if (!YAJL_IS_STRING(e)) {
			jfail(c, "expected a string, got %s",
			      spec_json_type_name(e));
			jpop(c, mark);
			/* Left empty: callers with a local array (the policy
			 * parser) need not free a half-filled one. */
			spec_str_array_free(out);
			return -1;
		}
		out->items[i] = xstrdup(e->u.string);
		jpop(c, m);
	}
	jpop(c, mark);
	return 0;
}

int ju32_array(struct jctx *c, yajl_val obj, const char *key, uint32_t **out,
	       size_t *len)
{
	yajl_val arr;
	size_t mark, n;

	if (enter_array(c, obj, key, &arr, &mark) < 0)
		return -1;
	if (!arr)
		return 0;
	n = arr->u.array.len;
	if (n > 0) {
		*out = xcalloc(n, sizeof(**out));
		*len = n;
	}
	for (size_t i = 0; i < n; i++) {
		size_t m = jpush_index(c, i);
		uint64_t x;

		if (jnum_u64(c, arr->u.array.values[i], UINT32_MAX, &x) < 0) {
			jpop(c, mark);
			free(*out);
			*out = NULL;
			*len = 0;
			return -1;
		}
		(*out)[i] = (uint32_t)x;
		jpop(c, m);
	}
	jpop(c, mark);
	return 0;
}

int jstr_map(struct jctx *c, yajl_val obj, const char *key, struct str_map *out)
{
	yajl_val v = jmember(obj, key);
	size_t mark, n;
	int rc = 0;

	if (!v)
		return 0;
	mark = jpush_key(c, key);
	if (jcheck_object(c, v) < 0) {
		jpop(c, mark);
		return -1;
	}
	n = v->u.object.len;
	if (n > 0) {
		out->keys = xcalloc(n, sizeof(*out->keys));
		out->values = xcalloc(n, sizeof(*out->values));
		out->len = n;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		yajl_val e = v->u.object.values[i];

		if (!YAJL_IS_STRING(e)) {
			jpush_key(c, v->u.object.keys[i]);
			rc = jfail(c, "expected a string, got %s",
				   spec_json_type_name(e));
			break;
		}
		out->keys[i] = xstrdup(v->u.object.keys[i]);
		out->values[i] = xstrdup(e->u.string);
	}
	jpop(c, mark);
	if (rc < 0)
		spec_str_map_free(out);
	return rc;
}

int jobject(struct jctx *c, yajl_val obj, const char *key, jparse_fn fn,
	    void *out, bool *present)
{
	yajl_val v = jmember(obj, key);
	size_t mark;
	int rc;

	if (!v)
		return 0;
	mark = jpush_key(c, key);
	rc = jcheck_object(c, v);
	if (rc == 0) {
		if (present)
			*present = true;
		rc = fn(c, v, out);
	}
	jpop(c, mark);
	return rc;
}

int jobject_array(struct jctx *c, yajl_val obj, const char *key,
		  size_t elem_size, jparse_fn fn, void **items, size_t *len)
{
	yajl_val arr;
	size_t mark, n;
	char *base;

	if (enter_array(c, obj, key, &arr, &mark) < 0)
		return -1;
	if (!arr)
		return 0;
	n = arr->u.array.len;
	if (n == 0) {
		jpop(c, mark);
		return 0;
	}
	base = xcalloc(n, elem_size);
	*items = base;
	*len = n;
	for (size_t i = 0; i < n; i++) {
		yajl_val e = arr->u.array.values[i];
		size_t m = jpush_index(c, i);

		if (jcheck_object(c, e) < 0 ||
		    fn(c, e, base + i * elem_size) < 0) {
			jpop(c, mark);
			return -1;
		}
		jpop(c, m);
	}
	jpop(c, mark);
	return 0;
}
