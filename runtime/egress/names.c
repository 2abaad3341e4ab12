/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The names a container may reach: egress.allowDomains (exact names and
 * "*.suffix", which is every name below suffix, never suffix itself), and
 * egress.denyDomains, which wins.  A name is compared as DNS compares it:
 * case-insensitively, without the root's trailing dot.  Pure functions.
 */
#include <ctype.h>
#include <string.h>

#include "egress.h"

static bool one_matches(const char *pattern, const char *name)
{
	size_t pn, nn;

	if (pattern[0] == '*' && pattern[1] == '.') {
		pn = strlen(pattern + 1); /* ".suffix" */
		nn = strlen(name);
		return nn > pn && !strcasecmp(name + nn - pn, pattern + 1);
	}
	return !strcasecmp(pattern, name);
}

static bool any_matches(const struct str_array *list, const char *name)
{
	for (size_t i = 0; i < list->len; i++)
		if (one_matches(list->items[i], name))
			return true;
	return false;
}

enum egress_verdict egress_name_allowed(const struct egress_names *n, const char *name)
{
	if (any_matches(&n->deny, name))
		return EGRESS_DENIED;
	return any_matches(&n->allow, name) ? EGRESS_ALLOWED : EGRESS_NOT_LISTED;
}

bool egress_pattern_valid(const char *p)
{
	const char *s = p[0] == '*' && p[1] == '.' ? p + 2 : p;
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > EGRESS_NAME_MAX || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (; *s; s++) {
		if (*s == '.') {
			if (label == 0)
				return false;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*s) || *s == '-' || *s == '_') || ++label > 63)
			return false;
	}
	return true;
}

bool egress_pattern_within(const struct egress_names *n, const char *p)
{
	if (p[0] == '*' && p[1] == '.') {
		/* a wildcard is within the list only under one of its wildcards */
		for (size_t i = 0; i < n->allow.len; i++) {
			const char *a = n->allow.items[i];
			if (a[0] == '*' && a[1] == '.' &&
			    (!strcasecmp(a, p) || one_matches(a, p + 2)))
				return true;
		}
		return false;
	}
	return egress_name_allowed(n, p) == EGRESS_ALLOWED;
}
