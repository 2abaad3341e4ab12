/* SPDX-License-Identifier: Apache-2.0 */
/* `update --resources FILE|-`: spec_parse_resources() (which validates),
 * as cmd/update.c reads it. */
#include "../../spec/spec.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_resources r;
	struct error err;

	if (spec_parse_resources((const char *)data, size, &r, &err) < 0)
		return 0;
	fuzz_assert(r.present);
	resources_free(&r);
	return 0;
}
