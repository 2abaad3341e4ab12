/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy file (trusted, but a typo must give an error, never a crash):
 * policy_parse(), then policy_to_json() (`policy show`), whose output
 * must parse back to the same policy.
 */
#include <string.h>

#include "../../spec/policy/policy.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy p, again;
	struct error err;
	char *json, *json2;

	if (policy_parse((const char *)data, size, "fuzz", &p, &err) < 0)
		return 0;
	json = policy_to_json(&p);
	fuzz_assert(json);
	/* `policy show` output is a policy file that means the same (same
	 * source name: "source" is printed). */
	if (policy_parse(json, strlen(json), "fuzz", &again, &err) < 0) {
		fprintf(stderr, "policy show output does not parse: %s\n%s\n",
			err.msg, json);
		abort();
	}
	json2 = policy_to_json(&again);
	fuzz_assert(!strcmp(json, json2));
	free(json);
	free(json2);
	policy_free(&again);
	policy_free(&p);
	return 0;
}
