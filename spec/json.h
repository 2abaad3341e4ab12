/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SPEC_JSON_H
#define AGENTSBX_SPEC_JSON_H

/*
 * Reading JSON that came from outside (config.json, process.json, the
 * policy file, MCP messages): loading it safely (jscan.c), and typed access
 * to object members that keeps the JSON path of every value for error
 * messages (jparse.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "../lib/error.h"
#include "spec.h"

#define JPATH_MAX 512 /* bytes of "linux.resources.devices[3].major" */
#define QUOTE_MAX 100 /* bytes of a quoted, shortened value in a message */

/* At most this many JSON values in a document: bounds what yajl_tree
 * allocates for a hostile file of the maximum size. */
#define SPEC_MAX_VALUES (1u << 20)

/* Where the parser is: the file name for messages and the JSON path. */
struct jctx {
	const char *file; /* "config.json", "process.json" */
	struct error *err;
	size_t len;
	char path[JPATH_MAX];
};

typedef int (*jparse_fn)(struct jctx *c, yajl_val v, void *out);

/* ---- jscan.c: loading ------------------------------------------------- */

/*
 * Check the raw bytes (size, NUL bytes, strict UTF-8, \u0000 escapes,
 * unpaired surrogates, comments, nesting depth, number of values), then
 * hand them to yajl_tree.  *out must be released with yajl_tree_free().
 */
int spec_json_load(const char *buf, size_t len, const char *file, yajl_val *out,
		   struct error *err);

/* ---- jparse.c: path and messages -------------------------------------- */

void jctx_init(struct jctx *c, const char *file, struct error *err);
/* "file: path: message" into c->err.  Returns -1. */
int jfail(struct jctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append ".key" or "[i]" to the path; jpop() back to the returned mark. */
size_t jpush_key(struct jctx *c, const char *key);
size_t jpush_index(struct jctx *c, size_t i);
void jpop(struct jctx *c, size_t mark);

/* s as a double-quoted, escaped, possibly shortened string, for messages:
 * hostile values must not forge log lines. */
const char *spec_quote(char buf[QUOTE_MAX], const char *s);
const char *spec_json_type_name(yajl_val v);

/* ---- jparse.c: typed members ------------------------------------------ */

/*
 * All take an object `obj` (already checked by jcheck_object()) and a member
 * name.  A member that is absent or JSON null leaves *out untouched and
 * returns 0; a member of the wrong type fails with its path.
 */
int jcheck_object(struct jctx *c, yajl_val v); /* object, no duplicate keys */
yajl_val jmember(yajl_val obj, const char *key);
int jrequire(struct jctx *c, yajl_val obj, const char *key);

/* Empty strings are stored as NULL: "absent" for every optional string. */
int jstring(struct jctx *c, yajl_val obj, const char *key, char **out);
int jbool(struct jctx *c, yajl_val obj, const char *key, bool *out);
int jopt_bool(struct jctx *c, yajl_val obj, const char *key,
	      struct opt_bool *out);
int jopt_u64(struct jctx *c, yajl_val obj, const char *key, uint64_t max,
	     struct opt_u64 *out);
int jopt_i64(struct jctx *c, yajl_val obj, const char *key, int64_t min,
	     int64_t max, struct opt_i64 *out);
/* Required members. */
int jreq_string(struct jctx *c, yajl_val obj, const char *key, char **out);
int jreq_u32(struct jctx *c, yajl_val obj, const char *key, uint32_t *out);
int jreq_u64(struct jctx *c, yajl_val obj, const char *key, uint64_t *out);
int jreq_i64(struct jctx *c, yajl_val obj, const char *key, int64_t *out);

/* Arrays and maps: on failure *out is left empty (nothing to free). */
int jstr_array(struct jctx *c, yajl_val obj, const char *key,
	       struct str_array *out);
int ju32_array(struct jctx *c, yajl_val obj, const char *key, uint32_t **out,
	       size_t *len);
int jstr_map(struct jctx *c, yajl_val obj, const char *key,
	     struct str_map *out);

/* obj.key, an object, parsed by fn into out; *present set if it is there. */
int jobject(struct jctx *c, yajl_val obj, const char *key, jparse_fn fn,
	    void *out, bool *present);
/*
 * obj.key, an array of objects, each parsed by fn into the elements of a
 * zeroed array of elem_size bytes each.  *items and *len are set before the
 * elements are parsed, so that on failure the caller's free releases the
 * part that was filled.
 */
int jobject_array(struct jctx *c, yajl_val obj, const char *key,
		  size_t elem_size, jparse_fn fn, void **items, size_t *len);

#define JOBJECT_ARRAY(c, obj, key, fn, arr, n)                 \
	jobject_array((c), (obj), (key), sizeof(*(arr)), (fn), \
		      (void **)&(arr), &(n))

#endif
