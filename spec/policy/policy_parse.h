/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_POLICY_PARSE_H
#define AGENTSBX_POLICY_PARSE_H

/* Internal to spec/policy/: the policy file's parsing shared between its
 * files (policy.c parses the document, policy_hooks.c the hook rules). */

#include <stdbool.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../json.h"
#include "policy.h"

/* Every key of obj is one of known (NULL-terminated), or an error naming it. */
int policy_check_known_keys(struct jctx *c, yajl_val obj, const char *const known[]);
/* The same against the field table (policy_fields.h): every field, or
 * (lists_only, for "extend") the extendable lists. */
int policy_check_known_fields(struct jctx *c, yajl_val obj, bool lists_only);

/* root.hookRules: replaces the rules, or (extend) adds to them. */
int policy_parse_hook_rules(struct jctx *c, yajl_val root, struct policy *p, bool extend);
void policy_hook_rules_free(struct policy *p);
/* "key": [items...] */
void policy_gen_strv(yajl_gen g, const char *key, const struct str_array *a);
void policy_hook_rules_gen(yajl_gen g, const struct policy *p);
/* policy_egress.c: the "egress" object, and its JSON (policy show). */
int policy_parse_egress(struct jctx *c, yajl_val root, struct policy *p);
void policy_egress_gen(yajl_gen g, const struct policy *p);

#endif
