/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spec/policy/policy_mounts.c: the mount rules of the policy, pure data.
 * Relative, ".." and "." bind sources; every refused filesystem type;
 * destinations under /proc and /sys; tmpfs sizes as mm/shmem.c reads them.
 *
 * Mount entries are written with single quotes, turned into double quotes,
 * and put in a minimal config.
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

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define BUNDLE "/srv/bundles/b1"

/* Parse a config with these mounts and apply the built-in policy with
 * bindPrefixes = { "/srv/bundles", "/data" } (and writableBinds as given).
 * Returns policy_apply()'s result; *errmsg and *ch filled. */
static int apply_mounts(const char *mounts, struct oci_spec *s, struct policy_changes *ch,
			struct error *err)
{
	char *json = xasprintf("{'ociVersion':'1.0.0','root':{'path':'rootfs'},"
			       "'process':{'cwd':'/','args':['sh']},'mounts':[%s],"
			       "'linux':{'namespaces':[{'type':'pid'},{'type':'network'},"
			       "{'type':'ipc'},{'type':'uts'},{'type':'mount'}]}}",
			       mounts);
	struct policy p;
	struct policy_decision d;
	int rc;

	for (char *c = json; *c; c++)
		if (*c == '\'')
			*c = '"';
	assert_int_equal(spec_parse(json, strlen(json), s, err), 0);
	free(json);
	policy_default(&p);
	for (size_t i = 0; i < p.bind_prefixes.len; i++)
		free(p.bind_prefixes.items[i]);
	free(p.bind_prefixes.items);
	p.bind_prefixes.items = xcalloc(3, sizeof(char *));
	p.bind_prefixes.items[0] = xstrdup("/srv/bundles");
	p.bind_prefixes.items[1] = xstrdup("/data/");
	p.bind_prefixes.len = 2;
	memset(ch, 0, sizeof(*ch));
	policy_resolve_bind_sources(s, BUNDLE);
	rc = policy_apply(&p, s, ch, &d, err);
	if (rc == 0)
		assert_true(d.refuse_writable_dir_binds);
	policy_free(&p);
	return rc;
}

static void expect_refused(const char *mounts, const char *needle1, const char *needle2)
{
	struct oci_spec s;
	struct policy_changes ch;
	struct error err = { 0 };

	if (apply_mounts(mounts, &s, &ch, &err) == 0)
		fail_msg("accepted: %s", mounts);
	if (!strstr(err.msg, needle1) || (needle2 && !strstr(err.msg, needle2)))
		fail_msg("%s: error \"%s\" lacks \"%s\"/\"%s\"", mounts, err.msg, needle1,
			 needle2 ? needle2 : "");
	policy_changes_free(&ch);
	spec_free(&s);
}

static void expect_allowed(const char *mounts)
{
	struct oci_spec s;
	struct policy_changes ch;
	struct error err = { 0 };

	if (apply_mounts(mounts, &s, &ch, &err) != 0)
		fail_msg("refused: %s: %s", mounts, err.msg);
	policy_changes_free(&ch);
	spec_free(&s);
}

/* ---- paths --------------------------------------------------------------- */

static void test_clean_path(void **state)
{
	static const char *const cases[][2] = {
		{ "/", "/" },		      { "/a/b", "/a/b" },
		{ "/a/./b/", "/a/b" },	      { "/a/b/../c", "/a/c" },
		{ "/../../..", "/" },	      { "//a//b", "/a/b" },
		{ "/a/b/../../../etc", "/etc" }, { "/a/..", "/" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		char *c = policy_clean_path(cases[i][0]);
		assert_string_equal(c, cases[i][1]);
		free(c);
	}
}

static void test_bind_source_path(void **state)
{
	static const char *const cases[][2] = {
		{ "data", BUNDLE "/data" },
		{ "./x/../y", BUNDLE "/y" },
		{ "../../../../../", "/" },
		{ "../../../../../../etc", "/etc" },
		{ "../b2/vol", "/srv/bundles/b2/vol" },
		{ "/abs/./p/..", "/abs" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		char *c = policy_bind_source_path(BUNDLE, cases[i][0]);
		assert_string_equal(c, cases[i][1]);
		free(c);
	}
}

static void test_bind_allowed(void **state)
{
	const char *items[] = { "/data/", "/srv/x", NULL };
	struct str_array pre = { (char **)items, 2 };

	(void)state;
	assert_true(policy_bind_allowed(&pre, "/data"));
	assert_true(policy_bind_allowed(&pre, "/data/a/b"));
	assert_true(policy_bind_allowed(&pre, "/srv/x/../x/y"));
	assert_false(policy_bind_allowed(&pre, "/srv/xy"));
	assert_false(policy_bind_allowed(&pre, "/data/../etc"));
	assert_false(policy_bind_allowed(&pre, "data/a")); /* relative: never */
	assert_false(policy_bind_allowed(&pre, "/"));
}

/* ---- bind sources through policy_apply ----------------------------------------- */

#define BIND(src, dst, opts) "{'destination':'" dst "','type':'bind','source':'" src "','options':[" opts "]}"

static void test_relative_sources(void **state)
{
	(void)state;
	/* Climbing out of the bundle is judged where it lands. */
	expect_refused(BIND("../../../../../", "/host", "'rbind','ro'"), "bind mount of host path /",
		       "bindPrefixes");
	expect_refused(BIND("../../../../../../etc", "/e", "'rbind','ro'"), "host path /etc", NULL);
	expect_refused(BIND("../../../../etc/../root", "/e", "'bind','ro'"), "host path /root", NULL);
	/* Inside the bundle (under /srv/bundles): fine, also through "..". */
	expect_allowed(BIND("vol", "/v", "'rbind','ro'"));
	expect_allowed(BIND("./a/../vol", "/v", "'rbind','ro'"));
	expect_allowed(BIND("../b2/vol", "/v", "'rbind','ro'"));
	/* Without the type, the option makes it a bind. */
	expect_refused("{'destination':'/h','source':'../../../..','options':['rbind']}",
		       "host path /", NULL);
}

static void test_absolute_sources(void **state)
{
	(void)state;
	expect_allowed(BIND("/data/x", "/x", "'rbind','ro'"));
	expect_refused(BIND("/data/../etc", "/x", "'rbind','ro'"), "host path /etc", NULL);
	expect_refused(BIND("/", "/x", "'rbind','ro'"), "host path /", NULL);
	/* A symlinked source is judged by the runtime on the opened fd
	 * (runtime/init/mounts.c); lexically it is inside. */
	expect_allowed(BIND("/data/link-to-etc", "/x", "'rbind','ro'"));
}

/* ---- filesystem types and destinations ------------------------------------------- */

#define FS(type, dst) "{'destination':'" dst "','type':'" type "','source':'" type "'}"

static void test_refused_types(void **state)
{
	static const char *const types[] = {
		"ext4", "xfs", "btrfs", "vfat", "binfmt_misc", "tracefs", "debugfs",
		"devtmpfs", "securityfs", "bpf", "configfs", "fusectl", "nfs", "nfs4",
		"cifs", "smb3", "9p", "fuse", "fuse.sshfs", "pstore", "efivarfs", "hugetlbfs",
		"ramfs", "autofs", "squashfs", "iso9660", "none", "overlay",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(types); i++) {
		char *m = xasprintf("{'destination':'/mnt/x','type':'%s','source':'/dev/vda'}",
				    types[i]);
		char *needle = xasprintf("filesystem type %s on /mnt/x", types[i]);
		expect_refused(m, needle, "policy");
		free(m);
		free(needle);
	}
	expect_refused(FS("overlay", "/o"), "lowerdir", NULL);
	expect_refused("{'destination':'/mnt/x','source':'/dev/vda'}", "filesystem type (none)", NULL);
}

static void test_allowed_types(void **state)
{
	(void)state;
	expect_allowed(FS("proc", "/proc"));
	expect_allowed(FS("sysfs", "/sys"));
	expect_allowed(FS("tmpfs", "/dev"));
	expect_allowed(FS("devpts", "/dev/pts"));
	expect_allowed(FS("mqueue", "/dev/mqueue"));
	expect_allowed(FS("cgroup", "/sys/fs/cgroup"));
	expect_allowed(FS("cgroup2", "/sys/fs/cgroup"));
	expect_allowed(FS("tmpfs", "/run"));
}

static void test_pseudo_destinations(void **state)
{
	(void)state;
	expect_refused(FS("proc", "/hp"), "proc on /hp", "only at /proc");
	expect_refused(FS("proc", "/proc/sys"), "/proc/sys", "/proc or /sys");
	expect_refused(FS("proc", "/proc/1/../../hp"), "only at /proc", NULL);
	expect_refused(FS("tmpfs", "/proc/sys"), "/proc/sys", "/proc or /sys");
	expect_refused(FS("tmpfs", "/sys/kernel"), "/sys/kernel", NULL);
	expect_refused(FS("sysfs", "/sys/x"), "/sys/x", NULL);
	expect_refused(BIND("/data/x", "/proc/sys/kernel/core_pattern", "'bind'"), "/proc or /sys",
		       NULL);
	expect_refused(BIND("/data/x", "/sys/fs/cgroup", "'rbind'"), "/proc or /sys", NULL);
	expect_refused(BIND("/data/x", "/proc/meminfo", "'bind'"), "/proc or /sys", NULL);
}

/* runc's checkProcMount, applied in every mode by runtime/mounts.c. */
static void test_proc_dest_allowed(void **state)
{
	(void)state;
	assert_true(policy_proc_dest_allowed("/proc", "proc", false));
	assert_true(policy_proc_dest_allowed("/proc/", "proc", false));
	assert_false(policy_proc_dest_allowed("/proc", "tmpfs", false));
	assert_true(policy_proc_dest_allowed("/proc", "bind", true));
	assert_true(policy_proc_dest_allowed("/proc/meminfo", "bind", true));
	assert_true(policy_proc_dest_allowed("/proc/./cpuinfo", NULL, true));
	assert_true(policy_proc_dest_allowed("/proc/sys/kernel/ns_last_pid", "bind", true));
	assert_true(policy_proc_dest_allowed("/proc/net/dev", "bind", true));
	assert_false(policy_proc_dest_allowed("/proc/meminfo", "tmpfs", false));
	assert_false(policy_proc_dest_allowed("/proc/sys", "bind", true));
	assert_false(policy_proc_dest_allowed("/proc/sys/kernel/core_pattern", "bind", true));
	assert_false(policy_proc_dest_allowed("/proc/self/attr", "bind", true));
	assert_false(policy_proc_dest_allowed("/proc/x/../sysrq-trigger", "bind", true));
	assert_true(policy_proc_dest_allowed("/procx", "tmpfs", false));
	assert_true(policy_proc_dest_allowed("/hp", "proc", false));
}

/* ---- tmpfs sizes --------------------------------------------------------------- */

#define KiB 1024ull
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define TiB (1024 * GiB)

static void test_tmpfs_size_parse(void **state)
{
	static const struct {
		const char *opt;
		int rc;
		uint64_t bytes;
	} cases[] = {
		{ "size=0", 0, 0 },		     /* unlimited */
		{ "size=", 0, 0 },		     /* empty: 0, unlimited */
		{ "size=1", 0, 4096 },		     /* rounded up to a page */
		{ "size=4096", 0, 4096 },
		{ "size=1k", 0, 4096 },
		{ "size=64K", 0, 64 * KiB },
		{ "size=10m", 0, 10 * MiB },
		{ "size=10M", 0, 10 * MiB },
		{ "size=2g", 0, 2 * GiB },
		{ "size=1t", 0, TiB },
		{ "size=1T", 0, TiB },
		{ "size=1p", 0, 1024 * TiB },
		{ "size=1e", 0, 1024 * 1024 * TiB },
		{ "size=16e", 0, 0 },		     /* 16 << 60 wraps to 0: unlimited */
		{ "size=0x100000", 0, MiB },	     /* base from the prefix */
		{ "size=010", 0, 4096 },	     /* octal 8 */
		{ "size=18446744073709551615", 0, 0 }, /* DIV_ROUND_UP wraps */
		{ "size=50%", 0, 8 * GiB },	     /* of 16 GiB */
		{ "size=0%", 0, 0 },
		{ "size=10mb", -1, 0 },
		{ "size=ten", -1, 0 },
		{ "size=-1", -1, 0 },
		{ "size= 1", -1, 0 },
		{ "size=1%%", -1, 0 },
		{ "nr_blocks=0", 0, 0 },
		{ "nr_blocks=256", 0, MiB },
		{ "nr_blocks=1k", 0, 4 * MiB },
		{ "nr_blocks=16e", 0, 0 },
		{ "nr_blocks=9223372036854775808", -1, 0 }, /* > LONG_MAX */
		{ "nr_blocks=x", -1, 0 },
		{ "size", -1, 0 },
		{ "mode=1777", -1, 0 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		uint64_t b = 12345;
		int rc = policy_tmpfs_size(cases[i].opt, 16 * GiB, 4096, &b);
		if (rc != cases[i].rc || (rc == 0 && b != cases[i].bytes))
			fail_msg("%s: rc %d bytes %llu, expected rc %d bytes %llu", cases[i].opt, rc,
				 (unsigned long long)b, cases[i].rc,
				 (unsigned long long)cases[i].bytes);
	}
	/* Relative to RAM, RAM unknown. */
	{
		uint64_t b;
		assert_int_equal(policy_tmpfs_size("size=10%", 0, 4096, &b), -2);
	}
}

/* The size a tmpfs at dest ends up with, and whether a change was logged. */
static char *tmpfs_result(const char *dest, const char *opts, bool *changed)
{
	char *m = xasprintf("{'destination':'%s','type':'tmpfs','source':'tmpfs','options':[%s]}",
			    dest, opts);
	struct oci_spec s;
	struct policy_changes ch;
	struct error err = { 0 };
	char *out = NULL;

	assert_int_equal(apply_mounts(m, &s, &ch, &err), 0);
	*changed = false;
	for (size_t i = 0; i < ch.len; i++)
		if (!strcmp(ch.items[i].field, dest))
			*changed = true;
	for (size_t i = 0; i < s.n_mounts; i++) {
		if (strcmp(s.mounts[i].destination, dest))
			continue;
		for (size_t j = 0; j < s.mounts[i].options.len; j++) {
			const char *o = s.mounts[i].options.items[j];
			if (policy_tmpfs_size_option(o)) {
				assert_null(out); /* one size option left */
				out = xstrdup(o);
			}
		}
	}
	policy_changes_free(&ch);
	spec_free(&s);
	free(m);
	return out;
}

static void test_tmpfs_caps(void **state)
{
	static const struct {
		const char *dest, *opts, *want;
		bool changed;
	} cases[] = {
		/* /tmp: the policy's 32 MiB */
		{ "/tmp", "'size=0'", "size=33554432", true },
		{ "/tmp", "'size=1t'", "size=33554432", true },
		{ "/tmp", "'size=1T'", "size=33554432", true },
		{ "/tmp", "'size=16e'", "size=33554432", true },
		{ "/tmp", "'size=50%'", "size=33554432", true },
		{ "/tmp", "'size=0%'", "size=33554432", true },
		{ "/tmp", "'size=junk'", "size=33554432", true },
		{ "/tmp", "'size='", "size=33554432", true },
		{ "/tmp", "'nr_blocks=0'", "size=33554432", true },
		{ "/tmp", "'nr_blocks=1m'", "size=33554432", true },
		{ "/tmp", "'size=0x100000000'", "size=33554432", true },
		{ "/tmp", "", "size=33554432", true },
		{ "/tmp", "'size=10m'", "size=10m", false },
		{ "/tmp", "'nr_blocks=100'", "nr_blocks=100", false },
		{ "/tmp", "'size=32m'", "size=32m", false },
		/* elsewhere: the memory limit (256 MiB) */
		{ "/dev/shm", "'size=0'", "size=268435456", true },
		{ "/dev/shm", "'size=64m'", "size=64m", false },
		{ "/run", "", "size=268435456", true },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		bool changed;
		char *got = tmpfs_result(cases[i].dest, cases[i].opts, &changed);
		if (!got || strcmp(got, cases[i].want) || changed != cases[i].changed)
			fail_msg("%s [%s]: got %s (changed %d), want %s (changed %d)", cases[i].dest,
				 cases[i].opts, got ? got : "(none)", changed, cases[i].want,
				 cases[i].changed);
		free(got);
	}
}

/* Two size options: the kernel takes the last; every one is judged. */
static void test_tmpfs_two_sizes(void **state)
{
	struct oci_spec s;
	struct policy_changes ch;
	struct error err = { 0 };

	(void)state;
	assert_int_equal(apply_mounts("{'destination':'/tmp','type':'tmpfs','options':"
				      "['size=1m','size=0']}",
				      &s, &ch, &err),
			 0);
	for (size_t i = 0; i < s.mounts[0].options.len; i++)
		assert_string_not_equal(s.mounts[0].options.items[i], "size=0");
	policy_changes_free(&ch);
	spec_free(&s);
}

/* The image is never written: a writable root gets the writable layer
 * (in the decision, root.readonly left false) when the container has a new
 * mount namespace and the policy a layer size; else a read-only root. */
static void root_rule(const char *ns_mount, bool spec_ro, uint64_t layer, uint64_t want_layer,
		      bool want_ro)
{
	char *json = xasprintf("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\",\"readonly\":%s},"
			       "\"process\":{\"cwd\":\"/\",\"args\":[\"sh\"]},"
			       "\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},"
			       "{\"type\":\"ipc\"},{\"type\":\"uts\"}%s]}}",
			       spec_ro ? "true" : "false", ns_mount);
	struct oci_spec s;
	struct policy p;
	struct policy_decision d;
	struct policy_changes ch = { 0 };
	struct error err = { 0 };

	assert_int_equal(spec_parse(json, strlen(json), &s, &err), 0);
	free(json);
	policy_default(&p);
	assert_int_equal(p.writable_layer, 32ull << 20);
	p.writable_layer = layer;
	p.on_request = ON_REQUEST_CLAMP; /* a joined mount namespace: not refused here */
	if (policy_apply(&p, &s, &ch, &d, &err) < 0)
		fail_msg("refused: %s", err.msg);
	assert_int_equal(d.writable_layer, want_layer);
	assert_int_equal(s.root.readonly, want_ro);
	policy_changes_free(&ch);
	policy_free(&p);
	spec_free(&s);
}

static void test_writable_layer_rule(void **state)
{
	const char *mnt = ",{\"type\":\"mount\"}";

	(void)state;
	root_rule(mnt, false, 32ull << 20, 32ull << 20, false); /* the layer */
	root_rule(mnt, false, 4096, 4096, false);
	root_rule(mnt, true, 32ull << 20, 0, true);  /* --read-only: plain read-only */
	root_rule(mnt, false, 0, 0, true);	      /* writableLayer 0 */
	root_rule("", false, 32ull << 20, 32ull << 20, false); /* the policy adds one */
	/* a joined mount namespace (a pod's): nowhere to build a layer in */
	root_rule(",{\"type\":\"mount\",\"path\":\"/run/ns/mnt\"}", false, 32ull << 20, 0, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_path),
		cmocka_unit_test(test_bind_source_path),
		cmocka_unit_test(test_bind_allowed),
		cmocka_unit_test(test_relative_sources),
		cmocka_unit_test(test_absolute_sources),
		cmocka_unit_test(test_refused_types),
		cmocka_unit_test(test_allowed_types),
		cmocka_unit_test(test_pseudo_destinations),
		cmocka_unit_test(test_proc_dest_allowed),
		cmocka_unit_test(test_tmpfs_size_parse),
		cmocka_unit_test(test_tmpfs_caps),
		cmocka_unit_test(test_tmpfs_two_sizes),
		cmocka_unit_test(test_writable_layer_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
