/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/lifecycle/state.c: the state directory and state.json.  A round trip
 * keeps every field; a hostile or broken state.json (huge, not JSON,
 * fields missing or of the wrong type) is a clear error, never a crash,
 * and the container it describes reads as stopped unless its init is
 * really alive.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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
#include "../../runtime/lifecycle/state.h"

static char tmpdir[] = "/tmp/agentsbx-state-XXXXXX";
static int rootfd = -1;

static int group_setup(void **state)
{
	if (!mkdtemp(tmpdir))
		return -1;
	rootfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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

/* A fresh, locked state directory per test. */
static int setup(void **state)
{
	static int dirfd;
	struct error err;
	char id[32];
	static int n;

	snprintf(id, sizeof(id), "c%d", n++);
	if (state_dir_create(rootfd, id, &dirfd, &err) < 0)
		return -1;
	*state = &dirfd;
	return 0;
}

static int teardown(void **state)
{
	close(*(int *)*state);
	return 0;
}

static void write_state(int dirfd, const char *data, size_t len)
{
	int fd = openat(dirfd, STATE_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, data, len), 0);
	close(fd);
}

static void write_state_str(int dirfd, const char *data)
{
	write_state(dirfd, data, strlen(data));
}

static void test_round_trip(void **state)
{
	int dirfd = *(int *)*state;
	char *keys[] = { "org.example/a", "b" }, *values[] = { "1", "\"quoted\"\n" };
	struct container_state st = {
		.id = "round",
		.pid = getpid(),
		.start_time = proc_start_time(getpid()),
		.bundle = "/bundles/round",
		.rootfs = "/bundles/round/rootfs",
		.created = "2026-12-01T15:00:00.000000000Z",
		.owner = "",
		.annotations = { .keys = keys, .values = values, .len = 2 },
		.cgroup_path = "/agentsbx/round",
		.cgroup_manager = CGROUP_MANAGER_FS,
		.started = true,
		.status = STATUS_RUNNING,
	};
	struct container_state got;
	struct error err = { 0 };

	assert_true(st.start_time > 0);
	assert_int_equal(state_write(dirfd, &st, &err), 0);
	assert_int_equal(faccessat(dirfd, STATE_FILE ".tmp", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(state_read(dirfd, &got, &err), 0);
	assert_string_equal(got.id, st.id);
	assert_int_equal(got.pid, st.pid);
	assert_int_equal(got.start_time, st.start_time);
	assert_string_equal(got.bundle, st.bundle);
	assert_string_equal(got.rootfs, st.rootfs);
	assert_string_equal(got.created, st.created);
	assert_string_equal(got.owner, "");
	assert_string_equal(got.cgroup_path, st.cgroup_path);
	assert_int_equal(got.cgroup_manager, CGROUP_MANAGER_FS);
	assert_true(got.started);
	assert_int_equal(got.annotations.len, 2);
	assert_string_equal(got.annotations.keys[0], "org.example/a");
	assert_string_equal(got.annotations.values[1], "\"quoted\"\n");
	/* This process is alive with that start time: running (it has no
	 * real cgroup, so not paused). */
	assert_int_equal(got.status, STATUS_RUNNING);
	state_free(&got);
	assert_null(got.id);
}

/* The public JSON is valid and holds the OCI fields. */
static void test_public_json(void **state)
{
	struct container_state st = {
		.id = "pub\"lic", .pid = 42, .bundle = "/b", .status = STATUS_STOPPED,
	};
	char *json = state_to_json(&st, false);

	assert_non_null(strstr(json, "\"id\":\"pub\\\"lic\""));
	/* A stopped container has no pid. */
	assert_non_null(strstr(json, "\"pid\":0"));
	assert_non_null(strstr(json, "\"status\":\"stopped\""));
	assert_non_null(strstr(json, "\"ociVersion\":\"" OCI_VERSION_MAX "\""));
	assert_null(strstr(json, "initStartTime"));
	free(json);
}

/* The init is gone (or its pid was reused: other start time): stopped. */
static void test_dead_or_reused_pid_is_stopped(void **state)
{
	int dirfd = *(int *)*state;
	struct container_state got;
	struct error err = { 0 };
	char *json;

	json = xasprintf("{\"id\":\"x\",\"bundle\":\"/b\",\"initPid\":%d,"
			 "\"initStartTime\":%llu,\"started\":true}",
			 getpid(), proc_start_time(getpid()) + 1);
	write_state_str(dirfd, json);
	free(json);
	assert_int_equal(state_read(dirfd, &got, &err), 0);
	assert_int_equal(got.status, STATUS_STOPPED);
	state_free(&got);

	write_state_str(dirfd, "{\"id\":\"x\",\"bundle\":\"/b\",\"initPid\":-1,"
			       "\"initStartTime\":0}");
	assert_int_equal(state_read(dirfd, &got, &err), 0);
	assert_int_equal(got.status, STATUS_STOPPED);
	state_free(&got);
}

/* Alive, not started, exec.fifo present: created. */
static void test_created(void **state)
{
	int dirfd = *(int *)*state;
	struct container_state got;
	struct error err = { 0 };
	char *json;

	json = xasprintf("{\"id\":\"x\",\"bundle\":\"/b\",\"initPid\":%d,"
			 "\"initStartTime\":%llu,\"started\":false}",
			 getpid(), proc_start_time(getpid()));
	write_state_str(dirfd, json);
	free(json);
	assert_int_equal(mkfifoat(dirfd, STATE_FIFO, 0600), 0);
	assert_int_equal(state_read(dirfd, &got, &err), 0);
	assert_int_equal(got.status, STATUS_CREATED);
	state_free(&got);
	assert_int_equal(unlinkat(dirfd, STATE_FIFO, 0), 0);
}

static void test_missing_file(void **state)
{
	int dirfd = *(int *)*state;
	struct container_state got;
	struct error err = { 0 };

	assert_int_equal(state_read(dirfd, &got, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_non_null(strstr(err.msg, STATE_FILE));
}

static void test_not_json(void **state)
{
	static const char *const bad[] = {
		"", "{", "not json", "{\"id\":\"x\",\"bundle\":\"/b\"", "[1,2]x", "\xff\xfe",
	};
	int dirfd = *(int *)*state;
	struct container_state got;
	struct error err = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_state_str(dirfd, bad[i]);
		if (state_read(dirfd, &got, &err) == 0)
			fail_msg("state.json \"%s\" read", bad[i]);
		assert_non_null(strstr(err.msg, "corrupt state file"));
	}
}

static void test_missing_or_mistyped_fields(void **state)
{
	static const char *const bad[] = {
		"{}",
		"[]",
		"\"id\"",
		"{\"id\":\"x\"}",
		"{\"bundle\":\"/b\"}",
		"{\"id\":1,\"bundle\":\"/b\"}",
		"{\"id\":\"x\",\"bundle\":[\"/b\"]}",
		"{\"id\":null,\"bundle\":null}",
	};
	int dirfd = *(int *)*state;
	struct container_state got;
	struct error err = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_state_str(dirfd, bad[i]);
		if (state_read(dirfd, &got, &err) == 0)
			fail_msg("state.json %s read", bad[i]);
		assert_string_equal(err.msg, "corrupt state file: missing id or bundle");
	}
}

/* Wrong types in the optional fields: ignored (absent), not misread. */
static void test_mistyped_optional_fields(void **state)
{
	int dirfd = *(int *)*state;
	struct container_state got;
	struct error err = { 0 };

	write_state_str(dirfd, "{\"id\":\"x\",\"bundle\":\"/b\",\"initPid\":\"1\","
			       "\"initStartTime\":1.5,\"rootfs\":7,\"cgroupPath\":{},"
			       "\"started\":\"yes\",\"annotations\":{\"a\":1,\"b\":\"2\",\"c\":null}}");
	assert_int_equal(state_read(dirfd, &got, &err), 0);
	assert_int_equal(got.pid, 0);
	assert_int_equal(got.start_time, 0);
	assert_null(got.rootfs);
	assert_null(got.cgroup_path);
	assert_false(got.started);
	assert_int_equal(got.annotations.len, 1);
	assert_string_equal(got.annotations.keys[0], "b");
	assert_int_equal(got.status, STATUS_STOPPED);
	state_free(&got);
}

/* Over the 4 MiB cap: refused without reading it all. */
static void test_huge(void **state)
{
	int dirfd = *(int *)*state;
	size_t len = 5u * 1024 * 1024;
	char *big = xmalloc(len);
	struct container_state got;
	struct error err = { 0 };

	memset(big, ' ', len);
	memcpy(big, "{\"id\":\"x\",\"bundle\":\"/b\"}", 24);
	write_state(dirfd, big, len);
	free(big);
	assert_int_equal(state_read(dirfd, &got, &err), -1);
	assert_non_null(strstr(err.msg, STATE_FILE));
}

/* Deeply nested JSON must not exhaust the stack. */
static void test_deeply_nested(void **state)
{
	int dirfd = *(int *)*state;
	size_t depth = 100000;
	char *deep = xmalloc(2 * depth + 64);
	struct container_state got;
	struct error err = { 0 };
	size_t n = 0;

	n += (size_t)sprintf(deep, "{\"id\":\"x\",\"bundle\":\"/b\",\"z\":");
	memset(deep + n, '[', depth);
	memset(deep + n + depth, ']', depth);
	n += 2 * depth;
	deep[n++] = '}';
	write_state(dirfd, deep, n);
	free(deep);
	/* Either answer is fine; surviving is the test. */
	if (state_read(dirfd, &got, &err) == 0)
		state_free(&got);
}

/* ---- the state directory ---------------------------------------------- */

static void test_dir_create_exists(void **state)
{
	struct error err = { 0 };
	int fd = -1, fd2 = -1;

	assert_int_equal(state_dir_create(rootfd, "dup", &fd, &err), 0);
	assert_int_equal(state_dir_create(rootfd, "dup", &fd2, &err), -1);
	assert_string_equal(err.msg, "container with id exists: dup");
	assert_int_equal(state_dir_remove(rootfd, "dup", fd, &err), 0);
	close(fd);
	assert_int_equal(state_dir_open(rootfd, "dup", false, &fd2, &err), -1);
	assert_string_equal(err.msg, "container \"dup\" does not exist");
}

/* A symlink in place of a state directory is not followed. */
static void test_dir_open_symlink(void **state)
{
	struct error err = { 0 };
	int fd = -1;

	assert_int_equal(symlinkat("/", rootfd, "link"), 0);
	assert_int_equal(state_dir_open(rootfd, "link", false, &fd, &err), -1);
	/* O_NOFOLLOW|O_DIRECTORY on a symlink: ENOTDIR (ELOOP without
	 * O_DIRECTORY). */
	assert_true(err.code == ENOTDIR || err.code == ELOOP);
	assert_int_equal(unlinkat(rootfd, "link", 0), 0);
}

/* Remove takes everything in the directory (files, fifos, symlinks) and
 * never follows a symlink in it. */
static void test_dir_remove(void **state)
{
	struct error err = { 0 };
	int fd = -1, keep;
	char *keep_path = xasprintf("%s/keep", tmpdir);
	struct stat st;

	keep = open(keep_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(keep >= 0);
	close(keep);
	assert_int_equal(state_dir_create(rootfd, "rm", &fd, &err), 0);
	write_state_str(fd, "{}");
	assert_int_equal(mkfifoat(fd, STATE_FIFO, 0600), 0);
	assert_int_equal(symlinkat(keep_path, fd, "config.json"), 0);
	assert_int_equal(state_dir_remove(rootfd, "rm", fd, &err), 0);
	close(fd);
	assert_int_equal(fstatat(rootfd, "rm", &st, AT_SYMLINK_NOFOLLOW), -1);
	assert_int_equal(stat(keep_path, &st), 0);
	unlink(keep_path);
	free(keep_path);
}

static void test_root_open(void **state)
{
	struct error err = { 0 };
	char *p = xasprintf("%s/a/b/root", tmpdir);
	struct stat st;
	int fd = -1;

	assert_int_equal(state_root_open(p, false, &fd, &err), -1);
	assert_int_equal(err.code, ENOENT);
	assert_int_equal(state_root_open(p, true, &fd, &err), 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(fd);
	free(p);
}

static void test_status_names(void **state)
{
	assert_string_equal(status_name(STATUS_CREATING), "creating");
	assert_string_equal(status_name(STATUS_CREATED), "created");
	assert_string_equal(status_name(STATUS_RUNNING), "running");
	assert_string_equal(status_name(STATUS_PAUSED), "paused");
	assert_string_equal(status_name(STATUS_STOPPED), "stopped");
}

static void test_rfc3339(void **state)
{
	char *t = rfc3339_now();
	int y, mo, d, h, mi, s;
	long ns;
	char z;

	assert_int_equal(strlen(t), 30);
	assert_int_equal(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%9ld%c", &y, &mo, &d, &h, &mi, &s,
				&ns, &z), 8);
	assert_int_equal(z, 'Z');
	free(t);
}

static void test_proc_is_same(void **state)
{
	unsigned long long me = proc_start_time(getpid());

	assert_true(me > 0);
	assert_true(proc_is_same(getpid(), me));
	assert_false(proc_is_same(getpid(), me + 1));
	assert_false(proc_is_same(0, 0));
	assert_false(proc_is_same(-1, 0));
	assert_int_equal(proc_start_time(-5), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_round_trip),
		cmocka_unit_test(test_public_json),
		T(test_dead_or_reused_pid_is_stopped),
		T(test_created),
		T(test_missing_file),
		T(test_not_json),
		T(test_missing_or_mistyped_fields),
		T(test_mistyped_optional_fields),
		T(test_huge),
		T(test_deeply_nested),
		cmocka_unit_test(test_dir_create_exists),
		cmocka_unit_test(test_dir_open_symlink),
		cmocka_unit_test(test_dir_remove),
		cmocka_unit_test(test_root_open),
		cmocka_unit_test(test_status_names),
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_proc_is_same),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
