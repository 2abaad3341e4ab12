/* SPDX-License-Identifier: Apache-2.0 */
/* `exec --process process.json`: spec_parse_process() and
 * spec_validate_process(), as runtime/lifecycle/exec.c reads it. */
#include "../../spec/spec.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_process p;
	struct error err;

	if (spec_parse_process((const char *)data, size, &p, &err) < 0)
		return 0;
	spec_validate_process(&p, &err);
	process_free(&p);
	return 0;
}
