/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/policy/policy_process.c: realtime scheduling classes, RT I/O priority and
 * RLIMIT_RTPRIO refused under the built-in policy, naming the field;
 * ordinary classes kept; realtimeScheduling allows them; policy_apply()
 * runs the rule.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "../../lib/util.h"
#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"

#define BASE "{'ociVersion':'1.0.0','root':{'path':'rootfs'},'process':{'cwd':'/','args':['sh']"

/* Parse BASE + process members (single quotes become double quotes). */
static void parse(const char *process_members, struct oci_spec *s)
{
	char *json = xasprintf(BASE "%s%s},'linux':{'namespaces':[{'type':'pid'},"
			       "{'type':'network'},{'type':'ipc'},{'type':'uts'}]}}",
			       process_members ? "," : "",
			       process_members ? process_members : "");
	struct error err;

	for (char *p = json; *p; p++)
		if (*p == '\'')
			*p = '"';
	if (spec_parse(json, strlen(json), s, &err) < 0)
		fail_msg("parse %s: %s", json, err.msg);
	free(json);
}

/* The rule's verdict: NULL if allowed, else the error text (static). */
static const char *verdict(const char *members, bool realtime)
{
	static struct error err;
	struct policy p;
	struct oci_spec s;
	int r;

	policy_default(&p);
	p.realtime_scheduling = realtime;
	parse(members, &s);
	r = policy_rule_scheduling(&p, &s, &err);
	spec_free(&s);
	policy_free(&p);
	return r < 0 ? err.msg : NULL;
}

static void test_refused(void **state)
{
	static const struct {
		const char *members, *field;
	} cases[] = {
		{ "'scheduler':{'policy':'SCHED_DEADLINE','runtime':900000,'deadline':1000000,'period':1000000}",
		  "process.scheduler.policy SCHED_DEADLINE" },
		{ "'scheduler':{'policy':'SCHED_FIFO','priority':1}", "process.scheduler.policy SCHED_FIFO" },
		{ "'scheduler':{'policy':'SCHED_RR','priority':99}", "process.scheduler.policy SCHED_RR" },
		{ "'ioPriority':{'class':'IOPRIO_CLASS_RT','priority':0}",
		  "process.ioPriority.class IOPRIO_CLASS_RT" },
		{ "'rlimits':[{'type':'RLIMIT_RTPRIO','soft':0,'hard':1}]",
		  "process.rlimits RLIMIT_RTPRIO above 0" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *msg = verdict(cases[i].members, false);
		assert_non_null(msg);
		assert_non_null(strstr(msg, cases[i].field));
		assert_non_null(strstr(msg, "refused by the policy (built-in default)"));
		assert_non_null(strstr(msg, "realtimeScheduling"));
		/* The policy field allows each. */
		assert_null(verdict(cases[i].members, true));
	}
}

static void test_allowed(void **state)
{
	static const char *const ok[] = {
		NULL,
		"'scheduler':{'policy':'SCHED_OTHER','nice':-5}",
		"'scheduler':{'policy':'SCHED_BATCH'}",
		"'scheduler':{'policy':'SCHED_IDLE'}",
		"'ioPriority':{'class':'IOPRIO_CLASS_BE','priority':0}",
		"'ioPriority':{'class':'IOPRIO_CLASS_IDLE','priority':7}",
		"'rlimits':[{'type':'RLIMIT_RTPRIO','soft':0,'hard':0}]",
		"'rlimits':[{'type':'RLIMIT_NOFILE','soft':99,'hard':99}]",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *msg = verdict(ok[i], false);
		if (msg)
			fail_msg("%s: refused: %s", ok[i] ? ok[i] : "(nothing)", msg);
	}
}

/* policy_apply() runs the rule; with the policy off it does not. */
static void test_policy_apply_runs_it(void **state)
{
	struct policy p;
	struct oci_spec s;
	struct policy_changes ch = { 0 };
	struct policy_decision d;
	struct error err;
	(void)state;

	policy_default(&p);
	parse("'scheduler':{'policy':'SCHED_FIFO','priority':1}", &s);
	assert_int_equal(policy_apply(&p, &s, &ch, &d, &err), -1);
	assert_non_null(strstr(err.msg, "SCHED_FIFO"));
	policy_changes_free(&ch);
	p.mode = POLICY_OFF;
	assert_int_equal(policy_apply(&p, &s, &ch, &d, &err), 0);
	policy_changes_free(&ch);
	spec_free(&s);
	policy_free(&p);
}

static void test_policy_file_field(void **state)
{
	static const char doc[] = "{\"realtimeScheduling\": true}";
	struct policy p;
	struct error err;
	char *json;
	(void)state;

	policy_default(&p);
	assert_false(p.realtime_scheduling);
	policy_free(&p);
	assert_int_equal(policy_parse(doc, strlen(doc), "test", &p, &err), 0);
	assert_true(p.realtime_scheduling);
	json = policy_to_json(&p);
	assert_non_null(strstr(json, "\"realtimeScheduling\": true"));
	free(json);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_policy_apply_runs_it),
		cmocka_unit_test(test_policy_file_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
