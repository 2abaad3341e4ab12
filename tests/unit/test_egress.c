/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/egress/: the name rules, the sniffers (TLS SNI, HTTP Host,
 * CONNECT, absolute URI) and the DNS answers, on hand-made bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/egress/egress.h"
#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"

static char *allow_items[] = { "pypi.org", "*.pythonhosted.org", "allowed.test", NULL };
static char *deny_items[] = { "evil.pythonhosted.org", NULL };
static const struct policy_egress_names names = {
	.allow = { allow_items, 3 },
	.deny = { deny_items, 1 },
};

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(policy_egress_name(&names, "pypi.org"), EGRESS_ALLOWED);
	assert_int_equal(policy_egress_name(&names, "PyPI.org"), EGRESS_ALLOWED);
	assert_int_equal(policy_egress_name(&names, "files.pythonhosted.org"), EGRESS_ALLOWED);
	assert_int_equal(policy_egress_name(&names, "a.b.pythonhosted.org"), EGRESS_ALLOWED);
	/* a wildcard is every name below, never the suffix itself */
	assert_int_equal(policy_egress_name(&names, "pythonhosted.org"), EGRESS_NOT_LISTED);
	assert_int_equal(policy_egress_name(&names, "xpythonhosted.org"), EGRESS_NOT_LISTED);
	assert_int_equal(policy_egress_name(&names, "evil.pythonhosted.org"), EGRESS_DENIED);
	assert_int_equal(policy_egress_name(&names, "pypi.org.evil.com"), EGRESS_NOT_LISTED);
	assert_int_equal(policy_egress_name(&names, "sub.pypi.org"), EGRESS_NOT_LISTED);
	/* patterns */
	assert_true(policy_egress_pattern_valid("pypi.org"));
	assert_true(policy_egress_pattern_valid("*.pythonhosted.org"));
	assert_false(policy_egress_pattern_valid("*"));
	assert_false(policy_egress_pattern_valid("a..b"));
	assert_false(policy_egress_pattern_valid("a b"));
	assert_false(policy_egress_pattern_valid("*.*.org"));
	assert_false(policy_egress_pattern_valid(""));
	/* narrowing */
	assert_true(policy_egress_pattern_within(&names, "pypi.org"));
	assert_true(policy_egress_pattern_within(&names, "files.pythonhosted.org"));
	assert_true(policy_egress_pattern_within(&names, "*.pythonhosted.org"));
	assert_true(policy_egress_pattern_within(&names, "*.a.pythonhosted.org"));
	assert_false(policy_egress_pattern_within(&names, "*.org"));
	assert_false(policy_egress_pattern_within(&names, "*.pypi.org"));
	assert_false(policy_egress_pattern_within(&names, "github.com"));
}

/* A ClientHello with one extension, server_name = host (NULL: none). */
static size_t client_hello(unsigned char *b, const char *host)
{
	size_t hl = host ? strlen(host) : 0, ext = host ? 4 + 2 + 1 + 2 + hl : 0;
	size_t body = 2 + 32 + 1 + 2 + 2 + 1 + 1 + (host ? 2 + ext : 0);
	size_t n = 0;

	b[n++] = 22, b[n++] = 3, b[n++] = 1;
	b[n++] = (unsigned char)((body + 4) >> 8), b[n++] = (unsigned char)(body + 4);
	b[n++] = 1, b[n++] = 0, b[n++] = (unsigned char)(body >> 8), b[n++] = (unsigned char)body;
	b[n++] = 3, b[n++] = 3;
	memset(b + n, 0xab, 32), n += 32;
	b[n++] = 0;			     /* session id */
	b[n++] = 0, b[n++] = 2, b[n++] = 0x13, b[n++] = 0x01; /* one suite */
	b[n++] = 1, b[n++] = 0;			     /* null compression */
	if (host) {
		b[n++] = (unsigned char)(ext >> 8), b[n++] = (unsigned char)ext;
		b[n++] = 0, b[n++] = 0; /* server_name */
		b[n++] = (unsigned char)((ext - 4) >> 8), b[n++] = (unsigned char)(ext - 4);
		b[n++] = (unsigned char)((hl + 3) >> 8), b[n++] = (unsigned char)(hl + 3);
		b[n++] = 0;
		b[n++] = (unsigned char)(hl >> 8), b[n++] = (unsigned char)hl;
		memcpy(b + n, host, hl), n += hl;
	}
	return n;
}

static void test_tls_sni(void **state)
{
	unsigned char b[512];
	char name[EGRESS_NAME_MAX + 1];
	size_t n;
	(void)state;

	n = client_hello(b, "Allowed.Test");
	assert_int_equal(egress_sniff_tls(b, n, name, sizeof(name)), SNIFF_NAME);
	assert_string_equal(name, "allowed.test");
	/* every prefix is "more", never a misread */
	for (size_t k = 0; k < n; k++)
		assert_int_not_equal(egress_sniff_tls(b, k, name, sizeof(name)), SNIFF_NAME);
	assert_int_equal(egress_sniff_tls(b, 4, name, sizeof(name)), SNIFF_MORE);
	n = client_hello(b, NULL);
	assert_int_equal(egress_sniff_tls(b, n, name, sizeof(name)), SNIFF_NO_NAME);
	n = client_hello(b, "bad name");
	assert_int_equal(egress_sniff_tls(b, n, name, sizeof(name)), SNIFF_BAD);
	memcpy(b, "GET / HTTP/1.1\r\n", 16);
	assert_int_equal(egress_sniff_tls(b, 16, name, sizeof(name)), SNIFF_BAD);
}

static enum sniff_result http(const char *req, struct http_target *t)
{
	return egress_sniff_http((const unsigned char *)req, strlen(req), t);
}

static void test_http(void **state)
{
	struct http_target t;
	const char *abs = "GET http://allowed.test:8080/simple/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
	(void)state;

	assert_int_equal(http("GET / HTTP/1.1\r\nHost: Allowed.test\r\nX: y\r\n\r\n", &t), SNIFF_NAME);
	assert_string_equal(t.name, "allowed.test");
	assert_int_equal(t.port, 0);
	assert_false(t.connect || t.absolute);
	assert_int_equal(http("GET / HTTP/1.1\r\nhost:  a.test:81 \r\n\r\n", &t), SNIFF_NAME);
	assert_string_equal(t.name, "a.test");
	assert_int_equal(t.port, 81);
	assert_int_equal(http("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n", &t),
			 SNIFF_NAME);
	assert_true(t.connect);
	assert_int_equal(t.port, 443);
	assert_int_equal(http(abs, &t), SNIFF_NAME);
	assert_true(t.absolute);
	assert_string_equal(t.name, "allowed.test");
	assert_int_equal(t.port, 8080);
	assert_memory_equal(abs + t.path_off, "/simple/", 8);
	assert_memory_equal(abs + t.uri_off, "http://", 7);
	/* not yet, and not HTTP */
	assert_int_equal(http("GET / HTTP/1.1\r\nHost: a", &t), SNIFF_MORE);
	assert_int_equal(http("GET / HTTP/1.1\r\n\r\n", &t), SNIFF_BAD); /* no Host */
	assert_int_equal(http("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n", &t), SNIFF_BAD);
	assert_int_equal(http("GET / HTTP/1.1\r\nHost: 1.2.3.4:99999\r\n\r\n", &t), SNIFF_BAD);
	assert_int_equal(http("get / HTTP/1.1\r\nHost: a\r\n\r\n", &t), SNIFF_BAD);
	assert_int_equal(http("CONNECT pypi.org HTTP/1.1\r\n\r\n", &t), SNIFF_BAD); /* no port */
	assert_int_equal(http("SSH-2.0-OpenSSH\r\n\r\n", &t), SNIFF_BAD);
}

/* A query for name of type qtype. */
static size_t query(unsigned char *q, const char *name, unsigned qtype)
{
	size_t n = 12;
	const char *p = name;

	memset(q, 0, 12);
	q[0] = 0x12, q[1] = 0x34, q[2] = 0x01; /* RD */
	q[5] = 1;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		q[n++] = (unsigned char)l;
		memcpy(q + n, p, l), n += l;
		p += l + (dot ? 1 : 0);
	}
	q[n++] = 0;
	q[n++] = (unsigned char)(qtype >> 8), q[n++] = (unsigned char)qtype;
	q[n++] = 0, q[n++] = 1;
	return n;
}

static void test_dns(void **state)
{
	static const unsigned char proxy[4] = { 127, 0, 0, 2 };
	unsigned char q[512], a[512];
	char asked[EGRESS_NAME_MAX + 1];
	size_t qn, an;
	(void)state;

	qn = query(q, "files.PythonHosted.org", 1);
	an = egress_dns_answer(q, qn, &names, proxy, a, sizeof(a), asked, sizeof(asked));
	assert_int_equal(an, qn + 16);
	assert_string_equal(asked, "files.pythonhosted.org");
	assert_int_equal(a[0], 0x12);
	assert_int_equal(a[2] & 0x80, 0x80); /* a response */
	assert_int_equal(a[3] & 0x0f, 0);   /* NOERROR */
	assert_int_equal(a[7], 1);	    /* one answer */
	assert_memory_equal(a + an - 4, proxy, 4);
	/* AAAA: the name is there, no record */
	qn = query(q, "pypi.org", 28);
	an = egress_dns_answer(q, qn, &names, proxy, a, sizeof(a), asked, sizeof(asked));
	assert_int_equal(an, qn);
	assert_int_equal(a[3] & 0x0f, 0);
	assert_int_equal(a[7], 0);
	/* off the list, denied: NXDOMAIN */
	qn = query(q, "x.exfil.example", 1);
	an = egress_dns_answer(q, qn, &names, proxy, a, sizeof(a), asked, sizeof(asked));
	assert_int_equal(a[3] & 0x0f, 3);
	qn = query(q, "evil.pythonhosted.org", 1);
	an = egress_dns_answer(q, qn, &names, proxy, a, sizeof(a), asked, sizeof(asked));
	assert_int_equal(a[3] & 0x0f, 3);
	/* malformed: FORMERR; truncated header: nothing */
	qn = query(q, "pypi.org", 1);
	an = egress_dns_answer(q, qn - 3, &names, proxy, a, sizeof(a), asked, sizeof(asked));
	assert_int_equal(an, 12);
	assert_int_equal(a[3] & 0x0f, 1);
	assert_int_equal(egress_dns_answer(q, 5, &names, proxy, a, sizeof(a), asked, sizeof(asked)),
			 0);
	/* a response is never answered */
	q[2] |= 0x80;
	assert_int_equal(egress_dns_answer(q, qn, &names, proxy, a, sizeof(a), asked, sizeof(asked)),
			 0);
}

/* ---- the policy's rule (spec/policy/policy_egress.c) ---------------------------------- */

#define SPEC "{'ociVersion':'1.0.2','root':{'path':'rootfs'},'process':{'cwd':'/','args':['sh']," \
	     "'user':{'uid':0,'gid':0},'env':['PATH=/bin'%s]},%s'linux':{'namespaces':[" \
	     "{'type':'pid'},{'type':'mount'},{'type':'ipc'},{'type':'uts'},{'type':'network'%s}]}}"

static int apply_egress(const char *policy_json, const char *env, const char *annotations,
			const char *netns_path, struct policy_decision *d, struct oci_spec *s,
			struct error *err)
{
	struct policy p;
	struct policy_changes ch = { 0 };
	char *json = NULL;
	int r;

	if (asprintf(&json, SPEC, env, annotations, netns_path) < 0)
		fail();
	for (char *q = json; *q; q++)
		if (*q == '\'')
			*q = '"';
	if (spec_parse(json, strlen(json), s, err) < 0)
		fail_msg("spec: %s", err->msg);
	free(json);
	if (policy_parse(policy_json, strlen(policy_json), "t", &p, err) < 0)
		fail_msg("policy: %s", err->msg);
	r = policy_apply(&p, s, &ch, d, err);
	policy_changes_free(&ch);
	policy_free(&p);
	return r;
}

static bool env_has(const struct oci_spec *s, const char *e)
{
	for (size_t i = 0; i < s->process.env.len; i++)
		if (!strcmp(s->process.env.items[i], e))
			return true;
	return false;
}

static void test_policy_rule(void **state)
{
	static const char pol[] = "{\"egress\": {\"allowDomains\": [\"pypi.org\", \"*.pythonhosted.org\"]}}";
	struct policy_decision d;
	struct oci_spec s;
	struct error err = { 0 };
	(void)state;

	/* the policy's list: a proxy, only lo, the proxy variables */
	assert_int_equal(apply_egress(pol, "", "", "", &d, &s, &err), 0);
	assert_true(d.egress_proxy && d.only_loopback && !d.egress_filter);
	assert_int_equal(d.egress_allow.len, 2);
	assert_true(env_has(&s, "HTTPS_PROXY=http://127.0.0.2:3128"));
	policy_decision_free(&d);
	spec_free(&s);
	/* the spec's own proxy variable is kept */
	assert_int_equal(apply_egress(pol, ",'https_proxy=http://mine:1'", "", "", &d, &s, &err), 0);
	assert_true(env_has(&s, "https_proxy=http://mine:1"));
	assert_false(env_has(&s, "https_proxy=http://127.0.0.2:3128"));
	policy_decision_free(&d);
	spec_free(&s);
	/* narrowed by the annotation */
	assert_int_equal(apply_egress(pol, "", "'annotations':{'agentsbx.egress.allow':'files.pythonhosted.org'},",
				      "", &d, &s, &err), 0);
	assert_int_equal(d.egress_allow.len, 1);
	assert_string_equal(d.egress_allow.items[0], "files.pythonhosted.org");
	policy_decision_free(&d);
	spec_free(&s);
	/* more than the list: refused, naming the field */
	assert_int_equal(apply_egress(pol, "", "'annotations':{'agentsbx.egress.allow':'github.com'},",
				      "", &d, &s, &err), -1);
	assert_non_null(strstr(err.msg, "egress.allowDomains (list github.com)"));
	policy_decision_free(&d);
	spec_free(&s);
	/* no list at all: an annotation asks for more than nothing */
	assert_int_equal(apply_egress("{}", "", "'annotations':{'agentsbx.egress.allow':'pypi.org'},",
				      "", &d, &s, &err), -1);
	policy_decision_free(&d);
	spec_free(&s);
	/* a joined namespace (a pod's): no proxy, every new outbound
	 * connection dropped instead; asked by annotation: refused */
	assert_int_equal(apply_egress(pol, "", "", ",'path':'/run/netns/x'", &d, &s, &err), 0);
	assert_false(d.egress_proxy);
	assert_true(d.egress_filter && d.inbound_only);
	policy_decision_free(&d);
	spec_free(&s);
	assert_int_equal(apply_egress(pol, "", "'annotations':{'agentsbx.egress.allow':'pypi.org'},",
				      ",'path':'/run/netns/x'", &d, &s, &err), -1);
	assert_non_null(strstr(err.msg, "network namespace of the container's own"));
	policy_decision_free(&d);
	spec_free(&s);
	/* no list: off */
	assert_int_equal(apply_egress("{}", "", "", "", &d, &s, &err), 0);
	assert_false(d.egress_proxy);
	policy_decision_free(&d);
	spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_tls_sni),
		cmocka_unit_test(test_http),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_policy_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
