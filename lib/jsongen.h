/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_JSONGEN_H
#define AGENTSBX_JSONGEN_H

/*
 * Writing JSON with yajl: the few steps every generator of ours repeats.
 * Allocation cannot fail (aborts, like xmalloc).
 */

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

yajl_gen jgen_new(bool beautify);
/* The document as a NUL-terminated heap string (*len without the NUL when
 * len is not NULL); frees g. */
char *jgen_finish(yajl_gen g, size_t *len);

/* A string; NULL is written as JSON null. */
void jgen_str(yajl_gen g, const char *s);
/* "key": value members of an open map. */
void jgen_key_str(yajl_gen g, const char *key, const char *value);
void jgen_key_int(yajl_gen g, const char *key, long long value);
void jgen_key_bool(yajl_gen g, const char *key, bool value);
/* "key": [ the strings of a NULL-terminated list ] */
void jgen_key_list(yajl_gen g, const char *key, const char *const *items);

/* Re-emit a parsed value (embedded, not pasted as text).  -1 if it nests
 * deeper than max_depth. */
int jgen_tree(yajl_gen g, yajl_val v, int max_depth);

#endif
