/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_CAPS_H
#define AGENTSBX_CAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/error.h"
#include "../../spec/spec.h"

/* The five capability sets as bitmasks, computed once in the parent. */
struct caps_plan {
	bool set; /* always: absent process.capabilities means none */
	uint64_t bounding;
	uint64_t effective;
	uint64_t permitted;
	uint64_t inheritable;
	uint64_t ambient;
	int last_cap; /* /proc/sys/kernel/cap_last_cap */
};

/* Names to bits.  An unknown name is an error; a name the running kernel
 * does not know is skipped with a warning. */
int caps_prepare(const struct oci_capabilities *c, bool present,
		 struct caps_plan *out, struct error *err);

/* Drop the bounding set (before changing user). */
int caps_drop_bounding(const struct caps_plan *p, struct error *err);
/* Set effective/permitted/inheritable, then ambient (after changing user). */
int caps_apply(const struct caps_plan *p, struct error *err);

#endif
