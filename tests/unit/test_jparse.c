/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/jparse.c's list readers on bad input: the error names the element,
 * and the output is left empty (a caller with a local list, like the
 * policy parser, has nothing to free).  Found by make fuzz (policy target:
 * a non-string in "relaxable" leaked the list); `make asan` checks the
 * leak itself.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../spec/internal.h"
#include "../../spec/policy/policy.h"

static yajl_val load(const char *json)
{
	struct error err;
	yajl_val v;

	if (spec_json_load(json, strlen(json), "test", &v, &err) < 0)
		fail_msg("%s", err.msg);
	return v;
}

static void test_str_array_bad_element(void **state)
{
	yajl_val v = load("{\"a\":[\"x\",\"y\",3,\"z\"]}");
	struct str_array a = { 0 };
	struct error err;
	struct jctx c;

	jctx_init(&c, "test", &err);
	assert_int_equal(jstr_array(&c, v, "a", &a), -1);
	assert_string_equal(err.msg, "test: a[2]: expected a string, got number");
	assert_null(a.items);
	assert_int_equal(a.len, 0);
	yajl_tree_free(v);
}

static void test_u32_array_bad_element(void **state)
{
	yajl_val v = load("{\"g\":[1,2,4294967296]}");
	uint32_t *g = NULL;
	size_t n = 0;
	struct error err;
	struct jctx c;

	jctx_init(&c, "test", &err);
	assert_int_equal(ju32_array(&c, v, "g", &g, &n), -1);
	assert_non_null(strstr(err.msg, "g[2]"));
	assert_null(g);
	assert_int_equal(n, 0);
	yajl_tree_free(v);
}

static void test_str_map_bad_value(void **state)
{
	yajl_val v = load("{\"m\":{\"k1\":\"v1\",\"k2\":[],\"k3\":\"v3\"}}");
	struct str_map m = { 0 };
	struct error err;
	struct jctx c;

	jctx_init(&c, "test", &err);
	assert_int_equal(jstr_map(&c, v, "m", &m), -1);
	assert_string_equal(err.msg, "test: m.k2: expected a string, got array");
	assert_null(m.keys);
	assert_null(m.values);
	assert_int_equal(m.len, 0);
	yajl_tree_free(v);
}

/* The fuzzer's input, reduced: refused, nothing held. */
static void test_policy_relaxable_not_string(void **state)
{
	static const char *const bad[] = {
		"{\"relaxable\":[\"network\",[\"/data\"]]}",
		"{\"bindPrefixes\":[\"/data\",1]}",
		"{\"capabilities\":[\"CAP_CHOWN\",null]}",
		"{\"denyCidrs\":[\"10.0.0.0/8\",{}]}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct policy p;
		struct error err;

		if (policy_parse(bad[i], strlen(bad[i]), "policy.json", &p, &err) == 0)
			fail_msg("%s: accepted", bad[i]);
		assert_non_null(strstr(err.msg, "expected a string"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_str_array_bad_element),
		cmocka_unit_test(test_u32_array_bad_element),
		cmocka_unit_test(test_str_map_bad_value),
		cmocka_unit_test(test_policy_relaxable_not_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
