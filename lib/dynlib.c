/* SPDX-License-Identifier: Apache-2.0 */
/* Libraries opened when a call needs them: see dynlib.h. */
#include "dynlib.h"

#include <dlfcn.h>
#include <stdlib.h>

int dynlib_load(void **handle, const char *soname, const char *why,
		const char *hint, const struct dynlib_sym *syms, size_t n,
		struct error *err)
{
	void *h, **vals;
	const char *msg;

	if (*handle)
		return 0;
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		msg = dlerror();
		return error_set(err, "%s needs %s (%s), which cannot be loaded: %s",
				 why, soname, hint, msg ? msg : "not found");
	}
	vals = calloc(n, sizeof(*vals));
	if (!vals) {
		dlclose(h);
		return error_set(err, "%s: out of memory loading %s", why, soname);
	}
	for (size_t i = 0; i < n; i++) {
		vals[i] = dlsym(h, syms[i].name);
		if (!vals[i]) {
			error_set(err, "%s needs %s with the symbol %s (%s)", why,
				  soname, syms[i].name, hint);
			free(vals);
			dlclose(h);
			return -1;
		}
	}
	/* All or nothing: a half-filled table is never seen. */
	for (size_t i = 0; i < n; i++)
		*syms[i].slot = vals[i];
	free(vals);
	*handle = h;
	return 0;
}
