/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy file's reading and writing rules that its parsers share
 * (policy.c for the document, policy_hooks.c for the hook rules): unknown
 * keys are errors, lists of strings are written one way.
 */
#include <ctype.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "policy_fields.h"
#include "policy_parse.h"

/* Edit distance, case folded: "networkAlowed" and "bindprefixes" are one
 * step from the key meant. */
static size_t key_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (la >= 63 || lb >= 63)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/*
 * A policy file is the operator's floor: a misspelt key that is silently
 * ignored leaves the default in force while the operator believes
 * otherwise.  So an unknown key is an error naming it, with the nearest
 * known key when one is close.
 */
int policy_check_known_keys(struct jctx *c, yajl_val obj, const char *const known[])
{
	char q[QUOTE_MAX];

	for (size_t i = 0; YAJL_IS_OBJECT(obj) && i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		const char *near = NULL;
		size_t best = 3; /* at most 2 edits away */
		bool ok = false;

		for (size_t k = 0; known[k] && !ok; k++) {
			size_t d = key_distance(key, known[k]);
			ok = !strcmp(key, known[k]);
			if (d < best) {
				best = d;
				near = known[k];
			}
		}
		if (ok)
			continue;
		jpush_key(c, key);
		if (!strcmp(key, "hookPrefixes"))
			return jfail(c, "no longer a policy key: a hook is judged as a whole command, not a binary; list dockerd binaries in dockerHook and write other hooks as hookRules entries (binary, kinds, args, env)");
		if (near)
			return jfail(c, "unknown key %s (did you mean \"%s\"?)",
				     spec_quote(q, key), near);
		return jfail(c, "unknown key %s", spec_quote(q, key));
	}
	return 0;
}

void policy_gen_strv(yajl_gen g, const char *key, const struct str_array *a)
{
	jgen_str(g, key);
	yajl_gen_array_open(g);
	for (size_t i = 0; i < a->len; i++)
		jgen_str(g, a->items[i]);
	yajl_gen_array_close(g);
}

int policy_check_known_fields(struct jctx *c, yajl_val obj, bool lists_only)
{
	const char *known[64];
	size_t n = 0;

	for (unsigned i = 0; i < policy_n_fields && n + 1 < sizeof(known) / sizeof(known[0]); i++)
		if (!lists_only || policy_fields[i].extendable)
			known[n++] = policy_fields[i].key;
	known[n] = NULL;
	return policy_check_known_keys(c, obj, known);
}
