/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/policy/policy_kernel.c through policy_apply() with the built-in default
 * policy: the process user, kernelTCP, devpts max=, and the rule that
 * linux.resources.unified cannot undo the floor -- checked down to the
 * cgroup v2 and v1 settings the runtime would write (a unified
 * "memory.max": "max" is written after memory.max: it must not be there).
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
#include "../../runtime/cgroup/internal.h"
#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"

#define BASE "{'ociVersion':'1.0.0','root':{'path':'rootfs'},"               \
	     "'process':{'cwd':'/','args':['sh'],'user':%s},"                 \
	     "'mounts':[{'destination':'/dev/pts','type':'devpts','source':'devpts'," \
	     "'options':%s}],"                                                \
	     "'linux':{'namespaces':[{'type':'pid'},{'type':'mount'},{'type':'network'},"      \
	     "{'type':'ipc'},{'type':'uts'}%s]%s}}"

static void load(struct oci_spec *s, const char *user, const char *pts_opts,
		 const char *more_ns, const char *linux_more)
{
	char *json = xasprintf(BASE, user, pts_opts, more_ns, linux_more);
	struct error err = { 0 };

	for (char *p = json; *p; p++)
		if (*p == '\'')
			*p = '"';
	if (spec_parse(json, strlen(json), s, &err) < 0)
		fail_msg("parse: %s\n%s", err.msg, json);
	free(json);
}

static void apply(struct policy *p, struct oci_spec *s, struct policy_changes *ch)
{
	struct policy_decision d;
	struct error err = { 0 };

	if (policy_apply(p, s, ch, &d, &err) < 0)
		fail_msg("policy_apply: %s", err.msg);
	if (spec_validate(s, &err) < 0)
		fail_msg("the spec after the policy does not validate: %s", err.msg);
}

static bool changed(const struct policy_changes *ch, const char *field)
{
	for (size_t i = 0; i < ch->len; i++)
		if (!strcmp(ch->items[i].field, field))
			return true;
	return false;
}

/* ---- user ------------------------------------------------------------------- */

static void apply_d(struct policy *p, struct oci_spec *s, struct policy_changes *ch,
		    struct policy_decision *d)
{
	struct error err = { 0 };

	if (policy_apply(p, s, ch, d, &err) < 0)
		fail_msg("policy_apply: %s", err.msg);
}

/* identities (the default): whatever the spec names, the process gets the
 * container's own uid and gid (the runtime's to fill in; nobody until
 * then) and no supplementary group. */
static void test_user_identity(void **state)
{
	static const char *const users[] = {
		"{'uid':0,'gid':0,'additionalGids':[0,10,0]}",
		"{'uid':1000,'gid':0,'additionalGids':[0]}",
		"{'uid':1000,'gid':1000,'additionalGids':[999]}",
	};
	struct policy p;
	(void)state;

	policy_default(&p);
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		struct oci_spec s;
		struct policy_changes ch = { 0 };
		struct policy_decision d;

		load(&s, users[i], "[]", "", "");
		apply_d(&p, &s, &ch, &d);
		assert_true(d.identity);
		assert_int_equal(s.process.user.uid, POLICY_IDENTITY_PLACEHOLDER);
		assert_int_equal(s.process.user.gid, POLICY_IDENTITY_PLACEHOLDER);
		assert_int_equal(s.process.user.n_additional_gids, 0);
		assert_true(changed(&ch, "process.user"));
		spec_free(&s);
		policy_changes_free(&ch);
	}
	/* A user namespace of its own: its map says who it is on the host. */
	{
		struct oci_spec s;
		struct policy_changes ch = { 0 };
		struct policy_decision d;

		load(&s, "{'uid':0,'gid':0}", "[]", ",{'type':'user'}",
		     ",'uidMappings':[{'containerID':0,'hostID':100000,'size':65536}],"
		     "'gidMappings':[{'containerID':0,'hostID':100000,'size':65536}]");
		apply_d(&p, &s, &ch, &d);
		assert_false(d.identity);
		assert_int_equal(s.process.user.uid, 0);
		spec_free(&s);
		policy_changes_free(&ch);
	}
	/* Off: not the runtime's to fill in. */
	{
		struct oci_spec s;
		struct policy_changes ch = { 0 };
		struct policy_decision d;

		p.mode = POLICY_OFF;
		load(&s, "{'uid':0,'gid':0}", "[]", "", "");
		apply_d(&p, &s, &ch, &d);
		assert_false(d.identity);
		assert_int_equal(s.process.user.uid, 0);
		spec_free(&s);
	}
	policy_free(&p);
}

/* identities null: the policy's uid replaces host root, and root's group
 * goes whatever the uid (row 6 of the floor issue: uid 1000, gid 0). */
static void test_user(void **state)
{
	struct policy p;
	struct oci_spec s;
	struct policy_changes ch = { 0 };
	struct error err = { 0 };
	static const char nulled[] = "{\"identities\": null}";
	(void)state;

	assert_int_equal(policy_parse(nulled, strlen(nulled), "t", &p, &err), 0);
	load(&s, "{'uid':0,'gid':0,'additionalGids':[0,10,0]}", "[]", "", "");
	apply(&p, &s, &ch);
	assert_int_equal(s.process.user.uid, 65534);
	assert_int_equal(s.process.user.gid, 65534);
	assert_int_equal(s.process.user.n_additional_gids, 1);
	assert_int_equal(s.process.user.additional_gids[0], 10);
	assert_true(changed(&ch, "process.user.uid"));
	spec_free(&s);
	policy_changes_free(&ch);

	/* Not root: the uid stays, root's group does not. */
	load(&s, "{'uid':1000,'gid':0,'additionalGids':[0]}", "[]", "", "");
	apply(&p, &s, &ch);
	assert_int_equal(s.process.user.uid, 1000);
	assert_int_equal(s.process.user.gid, 65534);
	assert_int_equal(s.process.user.n_additional_gids, 0);
	assert_true(changed(&ch, "process.user.gid"));
	assert_false(changed(&ch, "process.user.uid"));
	spec_free(&s);
	policy_changes_free(&ch);

	/* Root of a new user namespace mapped to an unprivileged host uid. */
	load(&s, "{'uid':0,'gid':0}", "[]", ",{'type':'user'}",
	     ",'uidMappings':[{'containerID':0,'hostID':100000,'size':65536}],"
	     "'gidMappings':[{'containerID':0,'hostID':100000,'size':65536}]");
	apply(&p, &s, &ch);
	assert_int_equal(s.process.user.uid, 0);
	assert_int_equal(s.process.user.gid, 0);
	spec_free(&s);
	policy_changes_free(&ch);
	/* ... but not one mapped to host root: replaced, and then refused
	 * (65534 is not mapped) by the check after the policy. */
	load(&s, "{'uid':0,'gid':0}", "[]", ",{'type':'user'}",
	     ",'uidMappings':[{'containerID':0,'hostID':0,'size':1}],"
	     "'gidMappings':[{'containerID':0,'hostID':0,'size':1}]");
	{
		struct policy_decision d;

		assert_int_equal(policy_apply(&p, &s, &ch, &d, &err), 0);
		assert_int_equal(s.process.user.uid, 65534);
		assert_int_equal(spec_validate(&s, &err), -1);
		assert_non_null(strstr(err.msg, "65534 is not mapped"));
	}
	spec_free(&s);
	policy_changes_free(&ch);
	policy_free(&p);
}

static void test_identities_syntax(void **state)
{
	static const char *const bad[] = {
		"{\"identities\": {\"first\": 0, \"count\": 10}}",
		"{\"identities\": {\"first\": 60000, \"count\": 10000}}",
		"{\"identities\": {\"first\": 4294967290, \"count\": 10}}",
		"{\"identities\": {\"first\": 100000}}",
		"{\"identities\": {\"first\": 100000, \"count\": 0}}",
		"{\"identities\": {\"first\": 100000, \"count\": 1, \"x\": 1}}",
		"{\"identities\": 5}",
	};
	static const char good[] = "{\"identities\": {\"first\": 200000, \"count\": 1000}}";
	struct policy p;
	struct error err = { 0 };
	(void)state;

	policy_default(&p);
	assert_int_equal(p.identity_first, POLICY_IDENTITY_FIRST);
	assert_int_equal(p.identity_count, POLICY_IDENTITY_COUNT);
	policy_free(&p);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (policy_parse(bad[i], strlen(bad[i]), "t", &p, &err) == 0)
			fail_msg("accepted: %s", bad[i]);
	assert_int_equal(policy_parse(good, strlen(good), "t", &p, &err), 0);
	assert_int_equal(p.identity_first, 200000);
	assert_int_equal(p.identity_count, 1000);
	policy_free(&p);
}

static void test_policy_uid_syntax(void **state)
{
	struct policy p;
	struct error err = { 0 };
	(void)state;

	static const char null_uid[] = "{\"uid\": null, \"identities\": null}";
	static const char uid_1000[] = "{\"uid\": 1000, \"identities\": null}";

	assert_int_equal(policy_parse(null_uid, strlen(null_uid), "t", &p, &err), 0);
	assert_false(p.uid.set);
	policy_free(&p);
	assert_int_equal(policy_parse(uid_1000, strlen(uid_1000), "t", &p, &err), 0);
	assert_true(p.uid.set);
	assert_int_equal(p.uid.v, 1000);
	policy_free(&p);
	/* "uid" alone would be ignored under identities: refused, saying so */
	assert_int_equal(policy_parse("{\"uid\": 1000}", 13, "t", &p, &err), -1);
	assert_non_null(strstr(err.msg, "\"identities\": null"));
	assert_int_equal(policy_parse("{}", 2, "t", &p, &err), 0);
	assert_true(p.uid.set);
	assert_int_equal(p.uid.v, 65534);
	assert_int_equal(p.ptys, 64);
	policy_free(&p);
	assert_int_equal(policy_parse("{\"uid\": -1}", 11, "t", &p, &err), -1);
	assert_int_equal(policy_parse("{\"limits\":{\"ptys\":0}}", 21, "t", &p, &err), -1);
	assert_int_equal(policy_parse("{\"limits\":{\"ptys\":16}}", 22, "t", &p, &err), 0);
	assert_int_equal(p.ptys, 16);
	policy_free(&p);
}

/* ---- devpts max= ------------------------------------------------------------- */

static const char *pts_max(const struct oci_spec *s)
{
	const char *last = NULL;

	for (size_t i = 0; i < s->mounts[0].options.len; i++)
		if (!strncmp(s->mounts[0].options.items[i], "max=", 4))
			last = s->mounts[0].options.items[i];
	return last;
}

static void test_devpts_max(void **state)
{
	static const struct {
		const char *opts, *want;
	} cases[] = {
		{ "[]", "max=64" },
		{ "['newinstance','max=100000']", "max=64" },
		{ "['max=8']", "max=8" },
		{ "['max=8','max=9999']", "max=64" }, /* the kernel takes the last */
		{ "['max=0']", "max=64" },	      /* 0: no limit */
		{ "['max=-1']", "max=64" },
		{ "['max=abc']", "max=64" },
	};
	struct policy p;
	(void)state;

	policy_default(&p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct oci_spec s;
		struct policy_changes ch = { 0 };
		size_t n = 0;

		load(&s, "{'uid':0,'gid':0}", cases[i].opts, "", "");
		apply(&p, &s, &ch);
		assert_string_equal(pts_max(&s), cases[i].want);
		for (size_t j = 0; j < s.mounts[0].options.len; j++)
			n += !strncmp(s.mounts[0].options.items[j], "max=", 4);
		assert_int_equal(n, 1);
		spec_free(&s);
		policy_changes_free(&ch);
	}
	policy_free(&p);
}

/* A hybrid host with the memory controller on v1 (as tests/unit/test_cgroup.c). */
static struct cg_host v1_host(void)
{
	struct cg_host h = { .mode = CGROUP_MODE_HYBRID, .v2_mnt = CGROUP_HYBRID_UNIFIED };
	static const enum cg1_ctrl c[] = { CG1_CPU, CG1_CPUACCT, CG1_MEMORY, CG1_PIDS };

	for (size_t i = 0; i < sizeof(c) / sizeof(*c); i++)
		h.v1_ctrls |= 1u << c[i];
	h.hier[0].ctrls = h.v1_ctrls;
	h.hier[0].mnt = (char *)"/sys/fs/cgroup/x";
	h.n_hier = 1;
	return h;
}

/* ---- kernelTCP ------------------------------------------------------------------ */

static void test_kernel_tcp(void **state)
{
	static const struct {
		const char *mem;
		int64_t want;
	} cases[] = {
		{ "", 256ll << 20 },
		{ ",'resources':{'memory':{'limit':1073741824,'kernelTCP':-1}}", 256ll << 20 },
		{ ",'resources':{'memory':{'limit':67108864}}", 64ll << 20 },
		{ ",'resources':{'memory':{'limit':67108864,'kernelTCP':1048576}}", 1 << 20 },
	};
	struct policy p;
	(void)state;

	policy_default(&p);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct oci_spec s;
		struct policy_changes ch = { 0 };
		struct cg_settings cg = { 0 }, v2 = { 0 };
		struct cg_host h = v1_host();
		struct error err = { 0 };
		const struct cg_setting *t;

		load(&s, "{'uid':0,'gid':0}", "[]", "", cases[i].mem);
		apply(&p, &s, &ch);
		assert_true(s.linux.resources.memory.kernel_tcp.set);
		assert_int_equal(s.linux.resources.memory.kernel_tcp.v, cases[i].want);
		/* What cgroup v1 writes. */
		assert_int_equal(cg1_build_settings(&s.linux.resources, false, &h, &cg, &v2, &err), 0);
		t = cg_settings_find(&cg, "memory.kmem.tcp.limit_in_bytes");
		assert_non_null(t);
		assert_int_equal(strtoll(t->value, NULL, 10), cases[i].want);
		cg_settings_free(&cg);
		cg_settings_free(&v2);
		spec_free(&s);
		policy_changes_free(&ch);
	}
	policy_free(&p);
}

/* ---- unified ---------------------------------------------------------------------- */

static void test_unified_key_rule(void **state)
{
	static const char *const refused[] = {
		"memory.max", "memory.swap.max", "memory.zswap.max", "memory.min",
		"memory.low", "pids.max", "cpu.max", "cpu.max.burst", "cpu.uclamp.min",
	};
	static const char *const kept[] = {
		"memory.high", "memory.oom.group", "memory.swap.high", "cpu.weight",
		"cpu.idle", "io.weight", "cpuset.cpus", "hugetlb.2MB.max",
		"cgroup.max.descendants",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
		if (policy_unified_key_allowed(refused[i]))
			fail_msg("unified key %s allowed", refused[i]);
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++)
		if (!policy_unified_key_allowed(kept[i]))
			fail_msg("unified key %s refused", kept[i]);
}

/* Every write to file in the v2 settings has value want (none lifts it). */
static void assert_v2_writes(const struct cg_settings *cg, const char *file,
			     const char *want)
{
	size_t n = 0;

	for (size_t i = 0; i < cg->n; i++) {
		if (strcmp(cg->items[i].file, file))
			continue;
		n++;
		if (strcmp(cg->items[i].value, want))
			fail_msg("%s written as %s, want %s", file, cg->items[i].value, want);
	}
	if (!n)
		fail_msg("%s not written", file);
}

static void test_unified_cannot_undo_the_floor(void **state)
{
	struct policy p;
	struct oci_spec s;
	struct policy_changes ch = { 0 };
	struct cg_settings cg = { 0 };
	struct error err = { 0 };
	(void)state;

	policy_default(&p);
	load(&s, "{'uid':0,'gid':0}", "[]", "",
	     ",'resources':{'unified':{'memory.max':'max','memory.swap.max':'max',"
	     "'pids.max':'max','cpu.max':'max 100000','memory.high':'100000000',"
	     "'io.weight':'50'}}");
	apply(&p, &s, &ch);
	assert_true(changed(&ch, "linux.resources.unified[memory.max]"));
	assert_true(changed(&ch, "linux.resources.unified[pids.max]"));
	assert_false(changed(&ch, "linux.resources.unified[memory.high]"));
	assert_int_equal(s.linux.resources.unified.len, 2);
	assert_int_equal(cg2_build_settings(&s.linux.resources, false, &cg, &err), 0);
	assert_v2_writes(&cg, "memory.max", "268435456");
	assert_v2_writes(&cg, "memory.swap.max", "0");
	assert_v2_writes(&cg, "pids.max", "128");
	assert_v2_writes(&cg, "cpu.max", "100000 100000");
	assert_v2_writes(&cg, "memory.high", "100000000");
	cg_settings_free(&cg);
	spec_free(&s);
	policy_changes_free(&ch);
	policy_free(&p);
}

/* ---- update --------------------------------------------------------------------------- */

static void test_update_capped(void **state)
{
	struct policy p;
	struct oci_resources r = { .present = true, .has_memory = true, .has_cpu = true };
	struct policy_changes ch = { 0 };
	struct error err = { 0 };
	(void)state;

	policy_default(&p);
	p.on_request = ON_REQUEST_CLAMP; /* capped, not refused */
	r.memory.limit = (struct opt_i64){ true, -1 };
	r.memory.swap = (struct opt_i64){ true, -1 };
	r.pids_limit = (struct opt_i64){ true, 0 };
	r.cpu.quota = (struct opt_i64){ true, 50000 };
	r.cpu.period = (struct opt_u64){ true, 10000 }; /* 5 cpus */
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), 0);
	assert_int_equal(r.memory.limit.v, 256ll << 20);
	assert_int_equal(r.memory.swap.v, 256ll << 20);
	assert_int_equal(r.memory.kernel_tcp.v, 256ll << 20);
	assert_int_equal(r.pids_limit.v, 128);
	assert_int_equal(r.cpu.period.v, 100000);
	assert_int_equal(r.cpu.quota.v, 100000);
	policy_changes_free(&ch);

	/* Lower values stay; what the update leaves out stays unset. */
	memset(&r, 0, sizeof(r));
	r.present = r.has_memory = true;
	r.memory.limit = (struct opt_i64){ true, 64 << 20 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), 0);
	assert_int_equal(r.memory.limit.v, 64 << 20);
	assert_int_equal(r.memory.swap.v, 64 << 20);
	assert_false(r.pids_limit.set);
	assert_int_equal(ch.len, 0);

	/* An engine's update sends what it does not change as 0 (docker
	 * update --cpus 0.5: memory 0, swap 0): left alone, not the cap in
	 * place of the container's own lower limit.  pids 0 is unlimited. */
	memset(&r, 0, sizeof(r));
	r.present = r.has_memory = r.has_cpu = true;
	r.memory.limit = (struct opt_i64){ true, 0 };
	r.memory.swap = (struct opt_i64){ true, 0 };
	r.cpu.quota = (struct opt_i64){ true, 0 };
	r.cpu.period = (struct opt_u64){ true, 100000 };
	r.pids_limit = (struct opt_i64){ true, 0 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), 0);
	assert_false(r.memory.limit.set);
	assert_false(r.memory.swap.set);
	assert_false(r.cpu.quota.set);
	assert_int_equal(r.pids_limit.v, 128);
	policy_changes_free(&ch);

	/* Swap alone would lift the no-swap floor. */
	memset(&r, 0, sizeof(r));
	r.present = r.has_memory = true;
	r.memory.swap = (struct opt_i64){ true, -1 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), -1);
	assert_non_null(strstr(err.msg, "memory.swap without memory.limit"));

	/* refuse (the default): a value above the cap is refused naming the
	 * cap; unlimited (-1) is still capped quietly. */
	p.on_request = ON_REQUEST_REFUSE;
	memset(&r, 0, sizeof(r));
	r.present = r.has_memory = true;
	r.memory.limit = (struct opt_i64){ true, 1ll << 30 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), -1);
	assert_non_null(strstr(err.msg, "above the cap limits.memory = 268435456"));
	assert_non_null(strstr(err.msg, "\"limits\": {\"memory\"}"));
	memset(&r, 0, sizeof(r));
	r.present = true;
	r.pids_limit = (struct opt_i64){ true, 1000 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), -1);
	assert_non_null(strstr(err.msg, "limits.pids = 128"));
	memset(&r, 0, sizeof(r));
	r.present = r.has_memory = true;
	r.memory.limit = (struct opt_i64){ true, -1 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), 0);
	assert_int_equal(r.memory.limit.v, 256ll << 20);
	policy_changes_free(&ch);

	/* off: untouched. */
	p.mode = POLICY_OFF;
	memset(&r, 0, sizeof(r));
	r.present = r.has_memory = true;
	r.memory.limit = (struct opt_i64){ true, -1 };
	assert_int_equal(policy_cap_update(&p, &r, &ch, &err), 0);
	assert_int_equal(r.memory.limit.v, -1);
	policy_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user),
		cmocka_unit_test(test_user_identity),
		cmocka_unit_test(test_identities_syntax),
		cmocka_unit_test(test_policy_uid_syntax),
		cmocka_unit_test(test_devpts_max),
		cmocka_unit_test(test_kernel_tcp),
		cmocka_unit_test(test_unified_key_rule),
		cmocka_unit_test(test_unified_cannot_undo_the_floor),
		cmocka_unit_test(test_update_capped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
