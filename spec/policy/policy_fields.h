/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_POLICY_FIELDS_H
#define AGENTSBX_POLICY_FIELDS_H

/*
 * The policy file's fields, one table: the parser's known keys (an unknown
 * key is an error), the list fields `extend` may add to, and the reference
 * `agentsbx policy fields` prints (docs/policy-fields.md is that output).
 */
#include <stdbool.h>

struct policy_field {
	const char *key;
	/* A list that `extend` adds to; as a key of its own it replaces the
	 * default list. */
	bool extendable;
	const char *doc;
};

/* In the order `policy show` prints them. */
extern const struct policy_field policy_fields[];
extern const unsigned policy_n_fields;

#endif
