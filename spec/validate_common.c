/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every part of the spec's checks uses: the error's form, the path
 * and string rules, the id-mapping rule (mounts[] and linux. alike).
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

#define CFG "config.json: "

int spec_vfail(struct error *err, const char *prefix, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(err, "%s%s", prefix, msg);
}

bool spec_path_is_absolute(const char *p)
{
	return p && p[0] == '/';
}

bool spec_has_control_chars(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* Shared by mounts[].uidMappings and linux.uidMappings. */
int spec_check_id_mappings(const struct oci_id_mapping *m, size_t n,
			   const char *field, struct error *err)
{
	/* the kernel's limit on lines in /proc/PID/uid_map */
	const size_t max_extents = 340;

	if (n > max_extents)
		return spec_vfail(err, CFG, "%s: more than %zu mappings", field,
				  max_extents);
	for (size_t i = 0; i < n; i++) {
		uint64_t end_c = (uint64_t)m[i].container_id + m[i].size;
		uint64_t end_h = (uint64_t)m[i].host_id + m[i].size;

		if (m[i].size == 0)
			return spec_vfail(err, CFG,
					  "%s[%zu].size: must not be 0", field,
					  i);
		if (end_c > (1ull << 32) || end_h > (1ull << 32))
			return spec_vfail(
				err, CFG,
				"%s[%zu]: range goes past ID 4294967295", field,
				i);
		for (size_t j = 0; j < i; j++) {
			bool c_overlap = m[i].container_id <
						 (uint64_t)m[j].container_id +
							 m[j].size &&
					 m[j].container_id < end_c;
			bool h_overlap = m[i].host_id < (uint64_t)m[j].host_id +
								m[j].size &&
					 m[j].host_id < end_h;
			if (c_overlap || h_overlap)
				return spec_vfail(err, CFG,
						  "%s[%zu]: overlaps %s[%zu]",
						  field, i, field, j);
		}
	}
	return 0;
}
