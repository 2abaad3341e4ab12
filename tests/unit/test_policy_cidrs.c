/* SPDX-License-Identifier: Apache-2.0 */
/* spec/policy/policy_cidrs.c: denyCidrs as egress applies them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../spec/policy/policy.h"

static bool has(const struct str_array *a, const char *s)
{
	for (size_t i = 0; i < a->len; i++)
		if (!strcmp(a->items[i], s))
			return true;
	return false;
}

static void list_free(struct str_array *a)
{
	for (size_t i = 0; i < a->len; i++)
		free(a->items[i]);
	free(a->items);
	memset(a, 0, sizeof(*a));
}

static void test_translations_of_the_default(void **state)
{
	struct policy p;
	struct str_array out = { 0 };
	struct error err = { 0 };
	(void)state;

	policy_default(&p);
	assert_int_equal(policy_egress_deny_list(&p.deny_cidrs, &out, &err), 0);
	/* the holes, each a range of the list */
	assert_true(has(&out, "168.63.129.16/32"));
	assert_true(has(&out, "192.0.0.0/24"));
	assert_true(has(&out, "198.18.0.0/15"));
	assert_true(has(&out, "64:ff9b::a9fe:0/112")); /* NAT64 of 169.254/16 */
	assert_true(has(&out, "2002:a9fe::/32"));      /* 6to4 of it */
	assert_true(has(&out, "64:ff9b:1::/48"));
	assert_true(has(&out, "2001::/32"));
	assert_true(has(&out, "::ffff:0.0.0.0/96"));
	/* inside another: dropped (no overlapping nft intervals) */
	assert_false(has(&out, "fd00:ec2::254/128")); /* in fc00::/7 */
	assert_false(has(&out, "::1/128"));	      /* in ::/96 */
	list_free(&out);
	policy_free(&p);
}

static void test_an_operators_list_and_bad_ranges(void **state)
{
	char *items[] = { "11.99.0.0/24", "11.99.0.0/16", "11.99.0.0/16", NULL };
	struct str_array deny = { items, 3 }, out = { 0 };
	char *bad[] = { "11.99.0.0/33", NULL };
	struct str_array worse = { bad, 1 };
	char *none[] = { NULL };
	struct str_array empty = { none, 0 };
	struct error err = { 0 };
	(void)state;

	assert_int_equal(policy_egress_deny_list(&deny, &out, &err), 0);
	assert_true(has(&out, "11.99.0.0/16"));
	assert_false(has(&out, "11.99.0.0/24"));
	assert_true(has(&out, "64:ff9b::b63:0/112"));
	assert_true(has(&out, "2002:b63::/32"));
	/* one of two equal ranges */
	size_t n = 0;
	for (size_t i = 0; i < out.len; i++)
		n += !strcmp(out.items[i], "11.99.0.0/16");
	assert_int_equal(n, 1);
	list_free(&out);
	assert_int_equal(policy_egress_deny_list(&worse, &out, &err), -1);
	assert_non_null(strstr(err.msg, "denyCidrs[0]"));
	/* nothing denied: nothing added */
	assert_int_equal(policy_egress_deny_list(&empty, &out, &err), 0);
	assert_int_equal(out.len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translations_of_the_default),
		cmocka_unit_test(test_an_operators_list_and_bad_ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
