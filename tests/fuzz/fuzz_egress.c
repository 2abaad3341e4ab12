/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's readers of a container's bytes (runtime/egress/):
 * the first bytes of a connection as a TLS ClientHello (SNI) and as an
 * HTTP/1 request (Host, CONNECT, absolute URI), and a datagram as a DNS
 * query answered from a list.  What they hand back must hold: a name is a
 * plain DNS name, offsets lie inside the input, an answer fits its buffer.
 */
#include <ctype.h>
#include <string.h>

#include "../../runtime/egress/egress.h"
#include "fuzz.h"

static char *allow_items[] = { "allowed.test", "*.pythonhosted.org", NULL };
static char *deny_items[] = { "evil.pythonhosted.org", NULL };
static const struct policy_egress_names names = {
	.allow = { allow_items, 2 },
	.deny = { deny_items, 1 },
};

static void check_name(const char *n)
{
	size_t len = strlen(n);

	fuzz_assert(len > 0 && len <= EGRESS_NAME_MAX);
	for (const char *p = n; *p; p++)
		fuzz_assert(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' ||
			    *p == '.' || *p == '_');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char proxy[4] = { 127, 0, 0, 2 };
	char name[EGRESS_NAME_MAX + 1], asked[EGRESS_NAME_MAX + 1];
	unsigned char out[1500];
	struct http_target t;
	size_t an;

	if (egress_sniff_tls(data, size, name, sizeof(name)) == SNIFF_NAME)
		check_name(name);
	if (egress_sniff_http(data, size, &t) == SNIFF_NAME) {
		check_name(t.name);
		fuzz_assert(t.header_len <= size);
		fuzz_assert(!t.absolute || (t.path_off <= size && t.uri_off <= t.path_off));
	}
	an = egress_dns_answer(data, size, &names, proxy, out, sizeof(out), asked, sizeof(asked));
	fuzz_assert(an <= sizeof(out));
	if (*asked)
		check_name(asked);
	return 0;
}
