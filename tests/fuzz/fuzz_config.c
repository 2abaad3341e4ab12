/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.json (hostile: written by the agent or its `docker run` flags):
 * spec_parse(), spec_validate(), then the built-in policy's policy_apply()
 * on whatever validated, as `create` does.
 */
#include <string.h>

#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy_changes changes = { 0 };
	struct policy_decision d;
	struct oci_spec spec;
	struct policy p;
	struct error err;

	if (spec_parse((const char *)data, size, &spec, &err) < 0) {
		fuzz_assert(memchr(err.msg, '\0', sizeof(err.msg)));
		return 0;
	}
	if (spec_validate(&spec, &err) == 0) {
		policy_default(&p);
		memset(&d, 0, sizeof(d));
		policy_apply(&p, &spec, &changes, &d, &err);
		policy_decision_free(&d);
		policy_changes_free(&changes);
		policy_free(&p);
	}
	spec_free(&spec);
	return 0;
}
