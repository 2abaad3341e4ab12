/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/init/pathres.c: lookups inside an attacker-made rootfs.  A temp dir
 * holds a "host" directory with decoy files and a "root" the lookups are
 * confined to, full of hostile entries:
 *
 *   root/etc/passwd          a regular file
 *   root/abs   -> /etc       absolute symlink (means root/etc)
 *   root/up    -> ../../..   relative symlink climbing out
 *   root/esc   -> ../host/secret
 *   root/out   -> TMP/host   absolute symlink to the real host dir
 *   root/dang  -> TMP/host/created   dangling, to a host path
 *   root/loop1 -> loop2, root/loop2 -> loop1
 *   root/file  a regular file (a component that is not a directory)
 *
 * Nothing may ever be opened or created under TMP/host.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/util.h"
#include "../../runtime/init/pathres.h"

static char tmpdir[] = "/tmp/agentsbx-pathres-XXXXXX";
static int rootfd = -1;

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

static void make_file(const char *rel, const char *text)
{
	char *p = tmp_path(rel);
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(p);
}

static void make_link(const char *target, const char *rel)
{
	char *p = tmp_path(rel);

	assert_int_equal(symlink(target, p), 0);
	free(p);
}

static void make_dir(const char *rel)
{
	char *p = tmp_path(rel);

	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
}

static int group_setup(void **state)
{
	char *host;

	if (!mkdtemp(tmpdir))
		return -1;
	make_dir("host");
	make_file("host/secret", "host secret\n");
	make_dir("root");
	make_dir("root/etc");
	make_file("root/etc/passwd", "root:x:0:0::/root:/bin/sh\n");
	make_file("root/file", "not a directory\n");
	make_link("/etc", "root/abs");
	make_link("../../..", "root/up");
	make_link("../host/secret", "root/esc");
	host = tmp_path("host");
	make_link(host, "root/out");
	free(host);
	host = tmp_path("host/created");
	make_link(host, "root/dang");
	free(host);
	make_link("loop2", "root/loop1");
	make_link("loop1", "root/loop2");
	{
		char *r = tmp_path("root");
		rootfd = open(r, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(r);
	}
	return rootfd < 0 ? -1 : 0;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p);
}

static int group_teardown(void **state)
{
	close(rootfd);
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The fd is the file at rel (under tmpdir), compared by inode. */
static void assert_same_file(int fd, const char *rel)
{
	struct stat a, b;
	char *p = tmp_path(rel);

	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(lstat(p, &b), 0);
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		fail_msg("fd is not %s", p);
	free(p);
}

/* The host decoys are as the setup left them. */
static void assert_host_untouched(void)
{
	char *p = tmp_path("host"), *buf = NULL;
	struct stat st;
	size_t n = 0;
	struct error err;
	int count = 0;
	DIR *d = opendir(p);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			count++;
	closedir(d);
	assert_int_equal(count, 1);
	free(p);
	p = tmp_path("host/secret");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(read_file_at(AT_FDCWD, p, 100, &buf, &n, &err), 0);
	assert_string_equal(buf, "host secret\n");
	free(buf);
	free(p);
}

static int open_in_root(const char *path, bool no_symlinks, int *fd,
			struct error *err)
{
	*fd = -1;
	return path_open_in_root(rootfd, path, O_PATH, no_symlinks, fd, err);
}

/* ---- path_open_in_root ------------------------------------------------- */

static void test_plain_file(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("/etc/passwd", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	assert_int_equal(open_in_root("etc/passwd", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	close(fd);
}

static void test_root_itself(void **state)
{
	const char *paths[] = { "", "/", "//", ".", "/..", "../../.." };
	struct error err = { 0 };
	int fd;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (open_in_root(paths[i], false, &fd, &err) < 0)
			fail_msg("\"%s\": %s", paths[i], err.msg);
		assert_same_file(fd, "root");
		close(fd);
	}
}

static void test_dotdot_stays_inside(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("../../../../etc/passwd", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	close(fd);
	assert_int_equal(open_in_root("etc/../../etc/passwd", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	close(fd);
	/* ../host/secret from the root is root/host/secret: missing. */
	assert_int_equal(open_in_root("../host/secret", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_host_untouched();
}

static void test_absolute_symlink_means_root(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("abs/passwd", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	close(fd);
	assert_int_equal(open_in_root("abs", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc");
	close(fd);
}

static void test_relative_symlink_cannot_climb(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("up/etc/passwd", false, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	close(fd);
	assert_int_equal(open_in_root("up/host/secret", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_int_equal(open_in_root("esc", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_host_untouched();
}

static void test_symlink_to_host_path(void **state)
{
	struct error err = { 0 };
	int fd;

	/* TMP/host is read as ROOT/TMP/host: not there. */
	assert_int_equal(open_in_root("out/secret", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_int_equal(open_in_root("dang", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_host_untouched();
}

static void test_symlink_loop(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("loop1", false, &fd, &err), -1);
	assert_int_equal(err.code, ELOOP);
	assert_int_equal(open_in_root("loop2/x", false, &fd, &err), -1);
	assert_int_equal(err.code, ELOOP);
}

static void test_missing_and_not_a_directory(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("/no/such/file", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	/* The message names the path. */
	assert_non_null(strstr(err.msg, "/no/such/file"));
	assert_int_equal(open_in_root("file/x", false, &fd, &err), -1);
	assert_int_equal(err.code, ENOTDIR);
	assert_int_equal(path_open_in_root(rootfd, "file", O_RDONLY | O_DIRECTORY, false,
					   &fd, &err), -1);
	assert_int_equal(err.code, ENOTDIR);
}

static void test_no_symlinks(void **state)
{
	struct error err = { 0 };
	int fd;

	assert_int_equal(open_in_root("abs/passwd", true, &fd, &err), -1);
	assert_int_equal(err.code, ELOOP);
	assert_int_equal(open_in_root("up", true, &fd, &err), -1);
	assert_int_equal(err.code, ELOOP);
	assert_int_equal(open_in_root("etc/passwd", true, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	close(fd);
}

/* /proc/self/... are magic links: refused even with the real / as root. */
static void test_magic_links_refused(void **state)
{
	struct error err = { 0 };
	int slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -1;

	assert_true(slash >= 0);
	assert_int_equal(path_open_in_root(slash, "/proc/self/root/etc", O_PATH, false,
					   &fd, &err), -1);
	assert_int_equal(err.code, ELOOP);
	assert_int_equal(path_open_in_root(slash, "/proc/self/cwd", O_PATH, false, &fd,
					   &err), -1);
	assert_int_equal(err.code, ELOOP);
	close(slash);
}

/* ---- path_mkdir_in_root ------------------------------------------------ */

static void test_mkdir_creates_parents(void **state)
{
	struct error err = { 0 };
	int fd = -1;
	struct stat st;
	char *p = tmp_path("root/a/b/c");

	assert_int_equal(path_mkdir_in_root(rootfd, "/a/b/c", 0700, &fd, &err), 0);
	assert_same_file(fd, "root/a/b/c");
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	/* Again: it exists, same directory. */
	assert_int_equal(path_mkdir_in_root(rootfd, "a//b/./c/", 0700, &fd, &err), 0);
	assert_same_file(fd, "root/a/b/c");
	close(fd);
	free(p);
}

static void test_mkdir_through_symlinks_stays_inside(void **state)
{
	struct error err = { 0 };
	int fd = -1;

	/* abs -> /etc: the new directory is root/etc/new. */
	assert_int_equal(path_mkdir_in_root(rootfd, "abs/new", 0755, &fd, &err), 0);
	assert_same_file(fd, "root/etc/new");
	close(fd);
	/* up -> ../../..: root/climbed, never TMP/../climbed. */
	assert_int_equal(path_mkdir_in_root(rootfd, "up/climbed", 0755, &fd, &err), 0);
	assert_same_file(fd, "root/climbed");
	close(fd);
	assert_host_untouched();
}

/* A dangling path through an absolute symlink to a host directory: made
 * where the link points, read inside the root (root/TMP/host/new), as runc
 * and crun make mount targets; the host directory itself is never used. */
static void test_mkdir_through_symlink_to_host_stays_inside(void **state)
{
	struct error err = { 0 };
	char *inside = xasprintf("%s/root%s/host/new", tmpdir, tmpdir);
	struct stat a, b;
	int fd = -1;

	assert_int_equal(path_mkdir_in_root(rootfd, "out/new", 0755, &fd, &err), 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(inside, &b), 0);
	assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(fd);
	assert_host_untouched();
	free(inside);
}

static void test_mkdir_refusals(void **state)
{
	struct error err = { 0 };
	int fd = -1;

	/* ".." is read inside the root: x/../y is y. */
	assert_int_equal(path_mkdir_in_root(rootfd, "x/../y", 0755, &fd, &err), 0);
	close(fd);
	fd = -1;
	assert_int_equal(path_mkdir_in_root(rootfd, "file/sub", 0755, &fd, &err), -1);
	assert_int_equal(path_mkdir_in_root(rootfd, "loop1/sub", 0755, &fd, &err), -1);
	assert_int_equal(err.code, ELOOP);
	assert_int_equal(fd, -1);
	assert_host_untouched();
}

static void test_mkdir_path_too_long(void **state)
{
	struct error err = { 0 };
	char *p = xmalloc(5000);
	int fd = -1;

	memset(p, 'a', 4999);
	p[4999] = '\0';
	for (size_t i = 100; i < 4999; i += 100)
		p[i] = '/';
	assert_int_equal(path_mkdir_in_root(rootfd, p, 0755, &fd, &err), -1);
	assert_int_equal(fd, -1);
	free(p);
}

/* ---- path_mkfile_in_root ----------------------------------------------- */

static void test_mkfile(void **state)
{
	struct error err = { 0 };
	int fd = -1;
	struct stat st;
	char *p = tmp_path("root/dev/null-target");

	assert_int_equal(path_mkfile_in_root(rootfd, "/dev/null-target", 0600, &fd, &err), 0);
	assert_same_file(fd, "root/dev/null-target");
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 0);
	close(fd);
	free(p);
	/* An existing file is not truncated. */
	assert_int_equal(path_mkfile_in_root(rootfd, "etc/passwd", 0600, &fd, &err), 0);
	assert_same_file(fd, "root/etc/passwd");
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(st.st_size > 0);
	close(fd);
}

/* A dangling symlink to a host path is not followed to create the file. */
/* A dangling symlink to a host path: the file is made where the link
 * points, inside the root; nothing appears on the host. */
static void test_mkfile_dangling_symlink(void **state)
{
	struct error err = { 0 };
	int fd = -1;
	struct stat st;
	char *p = tmp_path("host/created");
	char *inside = xasprintf("%s/root%s/host/created", tmpdir, tmpdir);

	assert_int_equal(path_mkfile_in_root(rootfd, "dang", 0600, &fd, &err), 0);
	close(fd);
	assert_int_equal(stat(p, &st), -1);
	assert_int_equal(stat(inside, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_host_untouched();
	free(p);
	free(inside);
}

/* ---- helpers ------------------------------------------------------------ */

static void test_path_split(void **state)
{
	char parent[64];
	const char *base;

	path_split("/a/b/c", parent, sizeof(parent), &base);
	assert_string_equal(parent, "a/b");
	assert_string_equal(base, "c");
	path_split("/c", parent, sizeof(parent), &base);
	assert_string_equal(parent, ".");
	assert_string_equal(base, "c");
	path_split("", parent, sizeof(parent), &base);
	assert_string_equal(parent, ".");
	assert_string_equal(base, ".");
	path_split("a/", parent, sizeof(parent), &base);
	assert_string_equal(parent, "a");
	assert_string_equal(base, "");
	/* Truncated to the buffer, never past it. */
	path_split("/abcdefgh/x", parent, 4, &base);
	assert_string_equal(parent, "abc");
	assert_string_equal(base, "x");
}

static void test_fd_path(void **state)
{
	char buf[FD_PATH_MAX];

	assert_string_equal(fd_path(7, buf), "/proc/self/fd/7");
	assert_string_equal(fd_path(INT_MAX, buf), "/proc/self/fd/2147483647");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_file),
		cmocka_unit_test(test_root_itself),
		cmocka_unit_test(test_dotdot_stays_inside),
		cmocka_unit_test(test_absolute_symlink_means_root),
		cmocka_unit_test(test_relative_symlink_cannot_climb),
		cmocka_unit_test(test_symlink_to_host_path),
		cmocka_unit_test(test_symlink_loop),
		cmocka_unit_test(test_missing_and_not_a_directory),
		cmocka_unit_test(test_no_symlinks),
		cmocka_unit_test(test_magic_links_refused),
		cmocka_unit_test(test_mkdir_creates_parents),
		cmocka_unit_test(test_mkdir_through_symlinks_stays_inside),
		cmocka_unit_test(test_mkdir_through_symlink_to_host_stays_inside),
		cmocka_unit_test(test_mkdir_refusals),
		cmocka_unit_test(test_mkdir_path_too_long),
		cmocka_unit_test(test_mkfile),
		cmocka_unit_test(test_mkfile_dangling_symlink),
		cmocka_unit_test(test_path_split),
		cmocka_unit_test(test_fd_path),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
