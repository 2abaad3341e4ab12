/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/policy/policy_fields.c: the one field table agrees with what the
 * policy parses and prints, `extend` takes exactly its lists, and the
 * reference page lists every field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "../../lib/util.h"
#include "../../spec/policy/policy.h"
#include "../../spec/policy/policy_fields.h"

static const struct policy_field *field(const char *key)
{
	for (unsigned i = 0; i < policy_n_fields; i++)
		if (!strcmp(policy_fields[i].key, key))
			return &policy_fields[i];
	return NULL;
}

static int parse(const char *json, struct policy *p, struct error *err)
{
	return policy_parse(json, strlen(json), "test", p, err);
}

/* Every key `policy show` prints is in the table, and every field of the
 * table but "extend" is printed; the printed policy parses back. */
static void test_table_matches_show(void **state)
{
	struct policy p, again;
	struct error err = { 0 };
	char *json;
	yajl_val root;

	(void)state;
	policy_default(&p);
	json = policy_to_json(&p);
	root = yajl_tree_parse(json, NULL, 0);
	assert_non_null(root);
	for (size_t i = 0; i < root->u.object.len; i++)
		assert_non_null(field(root->u.object.keys[i]));
	for (unsigned i = 0; i < policy_n_fields; i++) {
		bool printed = false;

		for (size_t k = 0; k < root->u.object.len; k++)
			printed |= !strcmp(root->u.object.keys[k], policy_fields[i].key);
		assert_true(printed || !strcmp(policy_fields[i].key, "extend"));
	}
	assert_int_equal(parse(json, &again, &err), 0);
	policy_free(&again);
	yajl_tree_free(root);
	free(json);
	policy_free(&p);
}

/* `extend` takes the extendable lists, and refuses every other field. */
static void test_extend_takes_the_lists(void **state)
{
	(void)state;
	for (unsigned i = 0; i < policy_n_fields; i++) {
		const struct policy_field *f = &policy_fields[i];
		char *json = xasprintf("{\"extend\": {\"%s\": []}}", f->key);
		struct policy p;
		struct error err = { 0 };
		int r = parse(json, &p, &err);

		if (f->extendable) {
			assert_int_equal(r, 0);
			policy_free(&p);
		} else {
			assert_int_equal(r, -1);
			assert_non_null(strstr(err.msg, f->key));
		}
		free(json);
	}
}

static void test_unknown_key_names_the_nearest(void **state)
{
	struct policy p;
	struct error err = { 0 };

	(void)state;
	assert_int_equal(parse("{\"bindPrefix\": []}", &p, &err), -1);
	assert_non_null(strstr(err.msg, "bindPrefix"));
	assert_non_null(strstr(err.msg, "bindPrefixes"));
}

static void test_page_lists_every_field(void **state)
{
	char *md = policy_fields_markdown();

	(void)state;
	for (unsigned i = 0; i < policy_n_fields; i++) {
		char *row = xasprintf("| `%s` | %s | ", policy_fields[i].key,
				      policy_fields[i].extendable ? "yes" : "no");

		assert_non_null(strstr(md, row));
		assert_non_null(strstr(md, policy_fields[i].doc));
		free(row);
	}
	free(md);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_show),
		cmocka_unit_test(test_extend_takes_the_lists),
		cmocka_unit_test(test_unknown_key_names_the_nearest),
		cmocka_unit_test(test_page_lists_every_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
