/* SPDX-License-Identifier: Apache-2.0 */
#include "jsongen.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

yajl_gen jgen_new(bool beautify)
{
	yajl_gen g = yajl_gen_alloc(NULL);

	if (!g)
		abort();
	if (beautify)
		yajl_gen_config(g, yajl_gen_beautify, 1);
	return g;
}

char *jgen_finish(yajl_gen g, size_t *len)
{
	const unsigned char *buf;
	size_t n;
	char *out;

	if (yajl_gen_get_buf(g, &buf, &n) != yajl_gen_status_ok) {
		buf = (const unsigned char *)"";
		n = 0;
	}
	out = xstrndup((const char *)buf, n);
	if (len)
		*len = n;
	yajl_gen_free(g);
	return out;
}

void jgen_str(yajl_gen g, const char *s)
{
	if (s)
		yajl_gen_string(g, (const unsigned char *)s, strlen(s));
	else
		yajl_gen_null(g);
}

void jgen_key_str(yajl_gen g, const char *key, const char *value)
{
	jgen_str(g, key);
	jgen_str(g, value);
}

void jgen_key_int(yajl_gen g, const char *key, long long value)
{
	jgen_str(g, key);
	yajl_gen_integer(g, value);
}

void jgen_key_bool(yajl_gen g, const char *key, bool value)
{
	jgen_str(g, key);
	yajl_gen_bool(g, value);
}

void jgen_key_list(yajl_gen g, const char *key, const char *const *items)
{
	jgen_str(g, key);
	yajl_gen_array_open(g);
	for (; *items; items++)
		jgen_str(g, *items);
	yajl_gen_array_close(g);
}

int jgen_tree(yajl_gen g, yajl_val v, int max_depth)
{
	if (max_depth < 0)
		return -1;
	switch (v->type) {
	case yajl_t_string:
		jgen_str(g, v->u.string);
		return 0;
	case yajl_t_number:
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
		return 0;
	case yajl_t_true:
	case yajl_t_false:
		yajl_gen_bool(g, v->type == yajl_t_true);
		return 0;
	case yajl_t_object:
		yajl_gen_map_open(g);
		for (size_t i = 0; i < v->u.object.len; i++) {
			jgen_str(g, v->u.object.keys[i]);
			if (jgen_tree(g, v->u.object.values[i], max_depth - 1) < 0)
				return -1;
		}
		yajl_gen_map_close(g);
		return 0;
	case yajl_t_array:
		yajl_gen_array_open(g);
		for (size_t i = 0; i < v->u.array.len; i++)
			if (jgen_tree(g, v->u.array.values[i], max_depth - 1) < 0)
				return -1;
		yajl_gen_array_close(g);
		return 0;
	default:
		yajl_gen_null(g);
		return 0;
	}
}
