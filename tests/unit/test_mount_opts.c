/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/init/mount_opts.c: the built-in split of mount options must be the
 * one libmount makes (flags and data) for every option it takes, alone and
 * in the combinations specs use; anything else is left to libmount.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../runtime/init/mounts.h"

static void same_as_libmount(const char *optstr)
{
	unsigned long fb = 0xdead, fl = 0xbeef;
	char *db = NULL, *dl = NULL;
	struct error err;

	if (mount_optstr_builtin(optstr, &fb, &db) != 0)
		fail_msg("built-in table does not take \"%s\"", optstr);
	if (mount_optstr_libmount(optstr, &fl, &dl, &err) < 0)
		fail_msg("libmount: %s", err.msg);
	if (fb != fl)
		fail_msg("\"%s\": flags %#lx built in, %#lx by libmount", optstr, fb, fl);
	if ((db == NULL) != (dl == NULL) || (db && strcmp(db, dl)))
		fail_msg("\"%s\": data \"%s\" built in, \"%s\" by libmount", optstr,
			 db ? db : "(none)", dl ? dl : "(none)");
	free(db);
	free(dl);
}

static void test_each_option(void **state)
{
	static const char *const one[] = {
		"defaults", "ro", "rw", "nosuid", "suid", "nodev", "dev", "noexec",
		"exec", "sync", "async", "dirsync", "mand", "nomand", "noatime",
		"atime", "nodiratime", "diratime", "relatime", "norelatime",
		"strictatime", "nostrictatime", "bind", "rbind", "private",
		"rprivate", "slave", "rslave", "shared", "rshared", "unbindable",
		"runbindable", "mode=755", "size=65536k", "uid=0", "gid=5",
		"ptmxmode=0666", "nr_inodes=1k", "nr_blocks=100", "newinstance", "max=64",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(one) / sizeof(*one); i++)
		same_as_libmount(one[i]);
}

static void test_spec_combinations(void **state)
{
	(void)state;
	same_as_libmount("nosuid,strictatime,mode=755,size=65536k");
	same_as_libmount("nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5");
	same_as_libmount("nosuid,noexec,newinstance,ptmxmode=0666,mode=0620,gid=5,max=64");
	same_as_libmount("nosuid,noexec,nodev,mode=1777,size=65536k");
	same_as_libmount("nosuid,noexec,nodev,ro");
	same_as_libmount("rbind,rprivate,ro");
	same_as_libmount("ro,rw");
	same_as_libmount("rw,ro");
	same_as_libmount("noexec,exec,nosuid");
	same_as_libmount("bind,rbind");
	same_as_libmount("defaults,ro,uid=1000,gid=1000");
}

static void test_rest_left_to_libmount(void **state)
{
	static const char *const other[] = {
		"acl", "x-foo", "context=system_u:object_r:tmp_t", "mode=\"755\"",
		"size=", "nosuid,user_xattr", "remount", "lazytime", "nosymfollow",
		"uid=0,comment=x",
	};
	unsigned long f;
	char *d = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(other) / sizeof(*other); i++) {
		if (mount_optstr_builtin(other[i], &f, &d) != 1)
			fail_msg("\"%s\" was taken by the built-in table", other[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_option),
		cmocka_unit_test(test_spec_combinations),
		cmocka_unit_test(test_rest_left_to_libmount),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
