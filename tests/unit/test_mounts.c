/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/init/mounts.c mounts_prepare() on real files (needs root for
 * open_tree(OPEN_TREE_CLONE); skipped otherwise): bind sources opened once
 * and judged where they really are (relative, "..", symlinked), writable
 * directory binds, destinations under /proc in every mode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../runtime/init/mounts.h"
#include "../../spec/policy/policy.h"
#include "../../spec/spec.h"

static char top[] = "/tmp/agentsbx-mounts-XXXXXX";
static char *bundle, *allowed, *outside;

static void write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
}

static int setup(void **state)
{
	char *p;

	(void)state;
	if (!mkdtemp(top))
		return -1;
	/* top/allowed/bundle is the bundle; top/outside is not allowed. */
	allowed = xasprintf("%s/allowed", top);
	bundle = xasprintf("%s/bundle", allowed);
	outside = xasprintf("%s/outside", top);
	mkdir(allowed, 0755);
	mkdir(bundle, 0755);
	mkdir(outside, 0755);
	p = xasprintf("%s/vol", bundle);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/hosts", bundle);
	write_file(p);
	free(p);
	p = xasprintf("%s/escape", allowed);
	assert_int_equal(symlink(outside, p), 0);
	free(p);
	p = xasprintf("%s/inside", allowed);
	assert_int_equal(symlink("bundle/vol", p), 0);
	free(p);
	return 0;
}

static int teardown(void **state)
{
	char *cmd = xasprintf("rm -rf %s", top);

	(void)state;
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", top);
	free(cmd);
	return 0;
}

static bool need_root(void)
{
	if (geteuid() == 0)
		return true;
	fprintf(stderr, "skipped: open_tree(OPEN_TREE_CLONE) needs root\n");
	return false;
}

/* mounts_prepare on one mount; pol_on: the policy in force (allowed
 * prefix top/allowed), writable: writableBinds. */
static int prepare_one(const char *mount_json, bool pol_on, bool writable, struct error *err,
		       bool *is_dir)
{
	char *json = xasprintf("{'ociVersion':'1.0.0','root':{'path':'rootfs'},"
			       "'process':{'cwd':'/','args':['sh']},'mounts':[%s]}",
			       mount_json);
	const char *items[] = { allowed, NULL };
	struct str_array pre = { (char **)items, 1 };
	struct mount_policy pol = { .source = "test policy", .bind_prefixes = &pre,
				    .refuse_writable_dir_binds = !writable };
	struct oci_spec s;
	struct mount_plan plan;
	struct mount_trees trees;
	int rc;

	for (char *c = json; *c; c++)
		if (*c == '\'')
			*c = '"';
	assert_int_equal(spec_parse(json, strlen(json), &s, err), 0);
	free(json);
	rc = mounts_prepare(&s, bundle, pol_on ? &pol : NULL, &plan, &trees, err);
	if (rc == 0) {
		/* A bind has its detached tree, closed by mounts_close_trees. */
		if (plan.items[0].kind == MOUNT_KIND_BIND) {
			struct stat st;
			assert_true(trees.fd[0] >= 0);
			assert_int_equal(fstat(trees.fd[0], &st), 0);
			if (is_dir)
				*is_dir = plan.items[0].source_is_dir;
		}
		mounts_close_trees(&trees);
		assert_int_equal(trees.fd[0], -1);
		mounts_free(&plan, &trees);
	}
	spec_free(&s);
	return rc;
}

#define BIND(src, opts) "{'destination':'/m','type':'bind','source':'" src "','options':[" opts "]}"

static void ok(const char *m, bool pol, bool writable)
{
	struct error err = { 0 };
	if (prepare_one(m, pol, writable, &err, NULL) != 0)
		fail_msg("refused: %s: %s", m, err.msg);
}

static void refused(const char *m, bool pol, bool writable, const char *n1, const char *n2)
{
	struct error err = { 0 };
	if (prepare_one(m, pol, writable, &err, NULL) == 0)
		fail_msg("accepted: %s", m);
	if (!strstr(err.msg, n1) || (n2 && !strstr(err.msg, n2)))
		fail_msg("%s: \"%s\" lacks \"%s\"/\"%s\"", m, err.msg, n1, n2 ? n2 : "");
}

static void test_relative(void **state)
{
	bool dir = false;
	struct error err = { 0 };

	(void)state;
	if (!need_root())
		return;
	assert_int_equal(prepare_one(BIND("vol", "'rbind','ro'"), true, false, &err, &dir), 0);
	assert_true(dir);
	ok(BIND("./x/../vol", "'rbind','ro'"), true, false);
	/* ".." out of the bundle, still inside the prefix. */
	ok(BIND("../bundle/vol", "'rbind','ro'"), true, false);
	/* ".." out of the prefix: judged where it lands. */
	refused(BIND("../../outside", "'rbind','ro'"), true, false, "outside the allowed prefixes",
		NULL);
	refused(BIND("../../../../../../../", "'rbind','ro'"), true, false, "is /,", NULL);
	/* Policy off: mounted as runc would, from the bundle. */
	ok(BIND("../../outside", "'rbind','ro'"), false, false);
}

static void test_symlinks(void **state)
{
	char *m;

	(void)state;
	if (!need_root())
		return;
	/* A symlink inside the prefix to a directory outside: the object is
	 * judged, not the name. */
	m = xasprintf(BIND("%s/escape", "'rbind','ro'"), allowed);
	refused(m, true, false, "outside the allowed prefixes", outside);
	free(m);
	/* ... and to a directory inside: fine. */
	m = xasprintf(BIND("%s/inside", "'rbind','ro'"), allowed);
	ok(m, true, false);
	free(m);
	/* A magic link is not followed. */
	m = xasprintf(BIND("/proc/self/root%s", "'rbind','ro'"), bundle);
	refused(m, true, false, "bind mount source", NULL);
	free(m);
	/* A missing source: the path in the error. */
	refused(BIND("missing", "'bind'"), false, false, "missing", NULL);
}

static void test_writable_dirs(void **state)
{
	(void)state;
	if (!need_root())
		return;
	refused(BIND("vol", "'rbind','rw'"), true, false, "writable directory bind", "writableBinds");
	refused(BIND("vol", "'rbind'"), true, false, "writable directory bind", NULL);
	ok(BIND("vol", "'rbind','ro'"), true, false);
	ok(BIND("vol", "'rbind','rro'"), true, false);
	ok(BIND("vol", "'rbind','rw'"), true, true);   /* writableBinds: true */
	ok(BIND("hosts", "'rbind','rw'"), true, false); /* a file */
	ok(BIND("vol", "'rbind','rw'"), false, false);  /* policy off */
}

static void test_writable_tmpfs(void **state)
{
	char dir[] = "/dev/shm/agentsbx-mounts-XXXXXX";
	const char *items[] = { "/dev/shm", NULL };
	struct str_array pre = { (char **)items, 1 };
	struct mount_policy pol = { .source = "p", .bind_prefixes = &pre,
				    .refuse_writable_dir_binds = true };
	struct oci_spec s;
	struct mount_plan plan;
	struct mount_trees trees;
	struct error err = { 0 };
	char *json;

	(void)state;
	if (!need_root() || !mkdtemp(dir))
		return;
	json = xasprintf("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"rootfs\"},"
			 "\"mounts\":[{\"destination\":\"/m\",\"type\":\"bind\",\"source\":\"%s\","
			 "\"options\":[\"rbind\",\"rw\"]}]}",
			 dir);
	assert_int_equal(spec_parse(json, strlen(json), &s, &err), 0);
	if (mounts_prepare(&s, bundle, &pol, &plan, &trees, &err) != 0)
		fail_msg("a writable bind of a tmpfs directory was refused: %s", err.msg);
	mounts_free(&plan, &trees);
	spec_free(&s);
	free(json);
	rmdir(dir);
}

static void test_proc_destinations(void **state)
{
	(void)state;
	if (!need_root())
		return;
	/* In every mode (policy off here). */
	refused("{'destination':'/proc/sys','type':'tmpfs','source':'tmpfs'}", false, false,
		"destination /proc/sys is under /proc", NULL);
	refused("{'destination':'/proc/sys/kernel/core_pattern','type':'bind','source':'hosts',"
		"'options':['bind']}",
		false, false, "under /proc", NULL);
	refused("{'destination':'/proc','type':'bind','source':'vol','options':['rbind']}", false,
		false, "only a procfs", NULL);
	refused("{'destination':'/proc/.','type':'bind','source':'vol','options':['rbind']}", false,
		false, "only a procfs", NULL);
	ok("{'destination':'/proc/meminfo','type':'bind','source':'hosts','options':['bind']}",
	   false, false);
	ok("{'destination':'/proc','type':'bind','source':'/proc','options':['rbind']}", false,
	   false);
	ok("{'destination':'/proc','type':'proc','source':'proc'}", false, false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative),
		cmocka_unit_test(test_symlinks),
		cmocka_unit_test(test_writable_dirs),
		cmocka_unit_test(test_writable_tmpfs),
		cmocka_unit_test(test_proc_destinations),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
