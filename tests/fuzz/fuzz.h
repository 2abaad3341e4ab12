/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_FUZZ_H
#define AGENTSBX_FUZZ_H

/*
 * Shared by the libFuzzer targets (tests/fuzz/fuzz_*.c, `make fuzz`).
 * Each target feeds one parser that reads outside input; a crash, a
 * sanitizer report, a leak or a broken invariant (fuzz_assert) is a bug.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken invariant: abort, so libFuzzer keeps the input as a crash. */
#define fuzz_assert(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",       \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

/* The runtime's warnings would flood the fuzzer's output. */
static inline void fuzz_quiet_log(void)
{
	log_init("/dev/null", false, false);
}

#endif
