/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SPEC_INTERNAL_H
#define AGENTSBX_SPEC_INTERNAL_H

/*
 * Private to spec/: the per-section parsers and validators that
 * spec_parse()/spec_validate() are made of.  The JSON reading they use is
 * json.h, which the rest of agentsbx may use too.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "json.h"
#include "spec.h"

/* ---- per-section parsers ---------------------------------------------- */

int jparse_id_mapping(struct jctx *c, yajl_val v, void *out);
/* obj.type, a one-letter string among `allowed` ("cbup"), into *out;
 * left untouched when absent and not required. */
int jparse_device_type(struct jctx *c, yajl_val obj, const char *allowed,
		       bool required, char *out);
int jparse_process(struct jctx *c, yajl_val v, void *out);
int jparse_linux(struct jctx *c, yajl_val v, void *out);
int jparse_resources(struct jctx *c, yajl_val v, void *out);
int jparse_seccomp(struct jctx *c, yajl_val v, void *out);

/* ---- validators: prefix is "config.json: " or "process.json: " --------- */

/* "<prefix><path>: <message>" into err.  Returns -1. */
int spec_vfail(struct error *err, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool spec_path_is_absolute(const char *p);
bool spec_has_control_chars(const char *s);

/* field: "linux.uidMappings", for messages */
int spec_check_id_mappings(const struct oci_id_mapping *m, size_t n,
			   const char *field, struct error *err);
int spec_check_process(const struct oci_process *p, const char *prefix,
		       struct error *err);
int spec_check_linux(const struct oci_spec *s, struct error *err);
int spec_check_resources(const struct oci_resources *r, struct error *err);
int spec_check_seccomp(const struct oci_seccomp *sc, struct error *err);

/* ---- free.c ----------------------------------------------------------- */

void spec_str_array_free(struct str_array *a);
void spec_str_map_free(struct str_map *m);

#endif
