/* SPDX-License-Identifier: Apache-2.0 */
/*
 * linux.memoryPolicy (runtime-spec v1.3): the mode, flags and node list as
 * set_mempolicy(2) takes them.  Pure data: the validator calls it for the
 * errors, runtime/init/mempolicy.c for the values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CFG "config.json: linux.memoryPolicy"

static const struct {
	const char *name;
	int mode;
	int nodes; /* 0: none allowed, 1: at least one, 2: either */
} modes[] = {
	{ "MPOL_DEFAULT", 0, 0 },
	{ "MPOL_PREFERRED", 1, 2 },
	{ "MPOL_BIND", 2, 1 },
	{ "MPOL_INTERLEAVE", 3, 1 },
	{ "MPOL_LOCAL", 4, 0 },
	{ "MPOL_PREFERRED_MANY", 5, 1 },
	{ "MPOL_WEIGHTED_INTERLEAVE", 6, 1 },
};

static const struct {
	const char *name;
	unsigned flag;
} flags[] = {
	{ "MPOL_F_STATIC_NODES", 1u << 15 },
	{ "MPOL_F_RELATIVE_NODES", 1u << 14 },
	{ "MPOL_F_NUMA_BALANCING", 1u << 13 },
};

static void set_node(struct spec_mempolicy *mp, unsigned long n)
{
	mp->nodes[n / (8 * sizeof(long))] |= 1ul << (n % (8 * sizeof(long)));
	mp->n_nodes++;
}

/* A decimal node number below SPEC_MPOL_MAX_NODES; *s advanced past it. */
static int node_number(const char **s, unsigned long *out)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -1;
	*out = strtoul(*s, &end, 10);
	if (*out >= SPEC_MPOL_MAX_NODES)
		return -1;
	*s = end;
	return 0;
}

/* "0-3,7" */
static int parse_nodes(const char *text, struct spec_mempolicy *mp, struct error *err)
{
	const char *s = text;
	char q[QUOTE_MAX];

	while (*s) {
		unsigned long a, b;

		if (node_number(&s, &a) < 0)
			goto bad;
		b = a;
		if (*s == '-') {
			s++;
			if (node_number(&s, &b) < 0 || b < a)
				goto bad;
		}
		for (unsigned long n = a; n <= b; n++)
			set_node(mp, n);
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			goto bad;
	}
	return 0;
bad:
	return spec_vfail(err, CFG, ".nodes: %s is not a list of node numbers below %d (\"0-3,7\")",
			  spec_quote(q, text), SPEC_MPOL_MAX_NODES);
}

int spec_memory_policy(const struct oci_memory_policy *in, struct spec_mempolicy *out,
		       struct error *err)
{
	char q[QUOTE_MAX];
	int need = -1;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (in->mode && !strcmp(in->mode, modes[i].name)) {
			out->mode = modes[i].mode;
			need = modes[i].nodes;
		}
	if (need < 0)
		return spec_vfail(err, CFG, ".mode: unknown mode %s", spec_quote(q, in->mode));
	for (size_t i = 0; i < in->flags.len; i++) {
		bool found = false;

		for (size_t j = 0; j < sizeof(flags) / sizeof(flags[0]); j++)
			if (!strcmp(in->flags.items[i], flags[j].name)) {
				out->flags |= flags[j].flag;
				found = true;
			}
		if (!found)
			return spec_vfail(err, CFG, ".flags[%zu]: unknown flag %s", i,
					  spec_quote(q, in->flags.items[i]));
	}
	if ((out->flags & flags[0].flag) && (out->flags & flags[1].flag))
		return spec_vfail(err, CFG, ".flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES together");
	if (in->nodes && parse_nodes(in->nodes, out, err) < 0)
		return -1;
	if (need == 0 && out->n_nodes)
		return spec_vfail(err, CFG, ".nodes: %s takes no nodes", in->mode);
	if (need == 1 && !out->n_nodes)
		return spec_vfail(err, CFG, ".nodes: %s needs at least one node", in->mode);
	return 0;
}
