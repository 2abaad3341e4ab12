/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A linux.seccomp profile: the spec's parser (jparse_seccomp), its
 * validation (spec_check_seccomp), then seccomp_prepare() without a cache,
 * which checks the profile again, resolves names with libseccomp and
 * compiles it to BPF.  Nothing is loaded: seccomp_prog_load() is never
 * called.
 */
#include <string.h>

#include "../../runtime/seccomp/seccomp.h"
#include "../../spec/internal.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_spec spec = { 0 }; /* spec_free() frees linux.seccomp */
	struct oci_seccomp *sc = &spec.linux.seccomp;
	struct seccomp_prog prog;
	struct error err;
	yajl_val root;
	struct jctx c;
	int rc;

	if (spec_json_load((const char *)data, size, "seccomp", &root, &err) < 0)
		return 0;
	jctx_init(&c, "seccomp", &err);
	rc = jcheck_object(&c, root);
	if (rc == 0)
		rc = jparse_seccomp(&c, root, sc);
	yajl_tree_free(root);
	sc->present = true;
	if (rc == 0 && spec_check_seccomp(sc, &err) == 0 &&
	    seccomp_prepare(sc, NULL, &prog, &err) == 0) {
		fuzz_assert(prog.len > 0 && prog.insns);
		seccomp_prog_free(&prog);
	}
	spec_free(&spec);
	return 0;
}
