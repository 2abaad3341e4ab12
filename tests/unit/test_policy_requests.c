/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/policy/policy_requests.c and policy_advice.c: which engine wrote a
 * spec, what it asks for above the floor (told from what the engine filled
 * in), the one refusal, and what a bind refusal says to do.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/util.h"
#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"

#define ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DOCKER_CAPS "['CAP_CHOWN','CAP_DAC_OVERRIDE','CAP_FSETID','CAP_FOWNER','CAP_MKNOD'," \
		    "'CAP_NET_RAW','CAP_SETGID','CAP_SETUID','CAP_SETFCAP','CAP_SETPCAP',"    \
		    "'CAP_NET_BIND_SERVICE','CAP_SYS_CHROOT','CAP_KILL','CAP_AUDIT_WRITE'"
#define NS "[{'type':'pid'},{'type':'network'},{'type':'ipc'},{'type':'uts'},{'type':'mount'}]"
#define DOCKER_BIND "{'destination':'/etc/hostname','type':'bind','source':'/var/lib/docker/containers/" ID "/hostname'}"

/* caps_more: appended to Docker's list; linux_more, mounts_more,
 * process_more, top_more: JSON members (with a leading comma) or "". */
static void load(struct oci_spec *s, const char *caps_more, const char *process_more,
		 const char *mounts, const char *linux_more, const char *top_more)
{
	char *json = xasprintf("{'ociVersion':'1.0.0','root':{'path':'rootfs'},"
			       "'process':{'cwd':'/','args':['sh'],'user':{'uid':0,'gid':0},"
			       "'capabilities':{'bounding':" DOCKER_CAPS "%s]}%s},"
			       "'mounts':[%s],'linux':{'namespaces':" NS "%s}%s}",
			       caps_more, process_more, mounts, linux_more, top_more);
	struct error err = { 0 };

	for (char *p = json; *p; p++)
		if (*p == '\'')
			*p = '"';
	if (spec_parse(json, strlen(json), s, &err) < 0)
		fail_msg("parse: %s\n%s", err.msg, json);
	free(json);
}

static const char *const seccomp = ",'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}";

static void test_engine_of(void **state)
{
	struct oci_spec s;
	(void)state;

	load(&s, "", "", DOCKER_BIND, seccomp, "");
	assert_int_equal(policy_engine_of(&s, ID), ENGINE_DOCKER);
	assert_int_equal(policy_engine_of(&s, "another-id"), ENGINE_UNKNOWN);
	spec_free(&s);
	load(&s, "", "", "", "", ",'annotations':{'io.container.manager':'libpod','io.kubernetes.cri-o.TTY':'false'}");
	assert_int_equal(policy_engine_of(&s, ID), ENGINE_PODMAN);
	spec_free(&s);
	load(&s, "", "", "", "", ",'annotations':{'io.kubernetes.cri.container-type':'container'}");
	assert_int_equal(policy_engine_of(&s, ID), ENGINE_CRI);
	spec_free(&s);
}

static size_t requests_of(const char *caps_more, const char *process_more, const char *mounts,
			  const char *linux_more, const char *top_more, char **first)
{
	struct policy p;
	struct oci_spec s;
	struct policy_requests r;
	size_t n;

	policy_default(&p);
	load(&s, caps_more, process_more, mounts, linux_more, top_more);
	policy_requests(&p, &s, ID, false, &r);
	n = r.len;
	*first = n ? xstrdup(r.items[0].what) : NULL;
	policy_requests_free(&r);
	spec_free(&s);
	policy_free(&p);
	return n;
}

static void test_docker_defaults_are_not_requests(void **state)
{
	char *w;
	(void)state;

	/* Docker's 14 caps, its profile, /dev and a 64 MiB /dev/shm. */
	assert_int_equal(requests_of("", "", DOCKER_BIND
				     ",{'destination':'/dev','type':'tmpfs','source':'tmpfs','options':['size=65536k']}"
				     ",{'destination':'/dev/shm','type':'tmpfs','source':'shm','options':['size=67108864']}",
				     seccomp, "", &w), 0);
	assert_null(w);
}

static void test_docker_requests(void **state)
{
	char *w;
	(void)state;

	assert_int_equal(requests_of(",'CAP_NET_ADMIN'", "", DOCKER_BIND, seccomp, "", &w), 1);
	assert_non_null(strstr(w, "CAP_NET_ADMIN (--cap-add)"));
	free(w);
	/* no profile from Docker: asked (seccomp=unconfined) */
	assert_int_equal(requests_of("", "", DOCKER_BIND, "", "", &w), 1);
	assert_non_null(strstr(w, "no seccomp filter"));
	free(w);
	assert_int_equal(requests_of("", ",'rlimits':[{'type':'RLIMIT_NOFILE','hard':4096,'soft':4096}]",
				     DOCKER_BIND, seccomp, "", &w), 1);
	assert_non_null(strstr(w, "RLIMIT_NOFILE 4096 (--ulimit nofile)"));
	free(w);
	assert_int_equal(requests_of("", "", DOCKER_BIND ",{'destination':'/dev/shm','type':'tmpfs','source':'shm','options':['size=1g']}",
				     seccomp, "", &w), 1);
	assert_non_null(strstr(w, "on /dev/shm"));
	free(w);
	assert_int_equal(requests_of("", "", DOCKER_BIND,
				     ",'resources':{'memory':{'limit':1073741824},'cpu':{'quota':200000,'period':100000}}"
				     ",'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}", "", &w), 2);
	assert_non_null(strstr(w, "memory limit of 1073741824"));
	free(w);
}

static void test_other_engines(void **state)
{
	static const char *const podman = ",'annotations':{'io.container.manager':'libpod'}";
	static const char *const cri = ",'annotations':{'io.kubernetes.cri.container-type':'container'}";
	char *w;
	(void)state;

	/* podman: rlimits and pids from containers.conf are defaults */
	assert_int_equal(requests_of("", ",'rlimits':[{'type':'RLIMIT_NOFILE','hard':1048576,'soft':1048576}]",
				     "", ",'resources':{'pids':{'limit':2048}}" ",'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}",
				     podman, &w), 0);
	/* CRI: no profile is Kubernetes' default */
	assert_int_equal(requests_of("", "", "", "", cri, &w), 0);
	assert_int_equal(requests_of(",'CAP_SYS_ADMIN'", "", "", "", cri, &w), 1);
	assert_non_null(strstr(w, "CAP_SYS_ADMIN"));
	assert_null(strstr(w, "--cap-add")); /* no Docker flag named for CRI */
	free(w);
}

static void test_refusal_names_everything(void **state)
{
	struct policy p;
	struct oci_spec s;
	struct policy_requests r;
	struct error err = { 0 };
	(void)state;

	policy_default(&p);
	load(&s, ",'CAP_NET_ADMIN'", "", DOCKER_BIND, "", "");
	policy_requests(&p, &s, ID, true, &r); /* and the host's network */
	assert_int_equal(r.len, 3);
	assert_int_equal(policy_requests_refuse(&p, &r, &err), -1);
	assert_non_null(strstr(err.msg, "policy: refused: the container asks for capabilities"));
	assert_non_null(strstr(err.msg, "[rule seccomp; the policy field \"strictSeccomp\": false would allow it]"));
	assert_non_null(strstr(err.msg, "the host's network namespace (--network host) [rule network; no policy field allows it"));
	assert_non_null(strstr(err.msg, "The policy in force (built-in default) does not grant these"));
	policy_requests_free(&r);
	/* the policy's own list allows it: no longer a request */
	policy_strv_add(&p.capabilities, "CAP_NET_ADMIN");
	policy_requests(&p, &s, ID, false, &r);
	assert_int_equal(r.len, 1);
	policy_requests_free(&r);
	/* off: nothing is a request */
	p.mode = POLICY_OFF;
	policy_requests(&p, &s, ID, true, &r);
	assert_int_equal(r.len, 0);
	spec_free(&s);
	policy_free(&p);
}

static void test_bind_advice(void **state)
{
	struct str_array pre = { 0 };
	char *a;
	(void)state;

	policy_strv_add(&pre, "/var/lib/docker/containers");
	a = policy_engine_dir_of("/srv/docker/containers/" ID "/resolv.conf");
	assert_string_equal(a, "/srv/docker/containers");
	free(a);
	assert_null(policy_engine_dir_of("/etc/passwd"));
	a = policy_bind_advice(&(struct policy_bind_advice_in){ &pre, "P", "/srv/docker/containers/" ID "/hosts" });
	assert_non_null(strstr(a, "allowed prefixes (bindPrefixes of the policy P): /var/lib/docker/containers."));
	assert_non_null(strstr(a, "needs \"/srv/docker/containers\" added to \"bindPrefixes\""));
	free(a);
	a = policy_bind_advice(&(struct policy_bind_advice_in){ &pre, "P", "/etc" });
	assert_non_null(strstr(a, "add its directory to \"bindPrefixes\""));
	free(a);
	for (size_t i = 0; i < pre.len; i++)
		free(pre.items[i]);
	free(pre.items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_of),
		cmocka_unit_test(test_docker_defaults_are_not_requests),
		cmocka_unit_test(test_docker_requests),
		cmocka_unit_test(test_other_engines),
		cmocka_unit_test(test_refusal_names_everything),
		cmocka_unit_test(test_bind_advice),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
