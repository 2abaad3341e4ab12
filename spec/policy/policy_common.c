/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The words every rule of the policy speaks: a path cleaned textually and
 * whether it lies under a prefix, lists of strings, and the record of a
 * change the policy made to the spec (what `policy explain` shows).
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "policy.h"

char *policy_clean_path(const char *path)
{
	char *out = xcalloc(1, strlen(path) + 2);
	char *copy = xstrdup(path), *save = NULL;
	size_t n = 0;

	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			out[n] = '\0';
			continue;
		}
		out[n++] = '/';
		strcpy(out + n, c);
		n += strlen(c);
	}
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	free(copy);
	return out;
}

bool policy_path_under(const char *clean, const char *prefix)
{
	size_t n = strlen(prefix);

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (n == 1 && prefix[0] == '/')
		return clean[0] == '/';
	return !strncmp(clean, prefix, n) && (clean[n] == '\0' || clean[n] == '/');
}

bool policy_bind_allowed(const struct str_array *prefixes, const char *source)
{
	_cleanup_free_ char *clean = NULL;

	if (source[0] != '/')
		return false; /* resolve it against the bundle first */
	clean = policy_clean_path(source);
	for (size_t i = 0; i < prefixes->len; i++)
		if (policy_path_under(clean, prefixes->items[i]))
			return true;
	return false;
}

void policy_change_add(struct policy_changes *ch, const char *rule, const char *field,
		       const char *from, const char *to)
{
	struct policy_change *c;

	ch->items = xrealloc(ch->items, (ch->len + 1) * sizeof(*ch->items));
	c = &ch->items[ch->len++];
	c->rule = xstrdup(rule);
	c->field = xstrdup(field);
	c->from = xstrdup(from ? from : "(unset)");
	c->to = xstrdup(to);
}

void policy_changes_free(struct policy_changes *c)
{
	for (size_t i = 0; i < c->len; i++) {
		free(c->items[i].rule);
		free(c->items[i].field);
		free(c->items[i].from);
		free(c->items[i].to);
	}
	free(c->items);
	memset(c, 0, sizeof(*c));
}

bool policy_strv_has(const struct str_array *a, const char *s)
{
	for (size_t i = 0; i < a->len; i++)
		if (!strcmp(a->items[i], s))
			return true;
	return false;
}

char *policy_strv_join(const struct str_array *a)
{
	size_t n = 1;
	char *out;

	for (size_t i = 0; i < a->len; i++)
		n += strlen(a->items[i]) + 1;
	out = xcalloc(1, n);
	for (size_t i = 0; i < a->len; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, a->items[i]);
	}
	return out;
}

void policy_strv_add(struct str_array *a, const char *s)
{
	a->items = xrealloc(a->items, (a->len + 2) * sizeof(char *));
	a->items[a->len++] = xstrdup(s);
	a->items[a->len] = NULL;
}
