/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runtime/lifecycle/state.c, record before create: the staged state
 * directory published whole, the sweep of a dead creator's staged one, the
 * "creating" status told from the creating process, removal with state.json
 * last.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/util.h"
#include "../../runtime/lifecycle/state.h"

static char tmpdir[] = "/tmp/agentsbx-state-record-XXXXXX";
static int rootfd = -1;

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int group_setup(void **state)
{
	(void)state;
	if (!mkdtemp(tmpdir))
		return -1;
	rootfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return rootfd < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	close(rootfd);
	return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool exists(const char *name)
{
	struct stat st;

	return fstatat(rootfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The number of staged (.new.*) directories under the root. */
static int count_staged(void)
{
	int dfd = dup(rootfd), n = 0;
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	assert_non_null(d);
	rewinddir(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, STATE_STAGING_PREFIX, strlen(STATE_STAGING_PREFIX));
	closedir(d);
	return n;
}

static void write_str(int dirfd, const char *name, const char *data)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, data, strlen(data)), 0);
	close(fd);
}

/* A staged directory appears under the id only when published, with what
 * was put in it, and still locked by its creator. */
static void test_stage_publish(void **state)
{
	struct error err = { 0 };
	char *name = NULL;
	int fd = -1, other;

	(void)state;
	assert_int_equal(state_dir_stage(rootfd, &name, &fd, &err), 0);
	assert_non_null(strstr(name, STATE_STAGING_PREFIX));
	write_str(fd, STATE_FILE, "{\"id\":\"pub\",\"bundle\":\"/b\"}");
	assert_false(exists("pub"));
	assert_int_equal(state_dir_publish(rootfd, name, "pub", fd, &err), 0);
	assert_false(exists(name));
	assert_true(exists("pub/" STATE_FILE));
	other = openat(rootfd, "pub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(other >= 0);
	assert_int_equal(flock(other, LOCK_SH | LOCK_NB), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	close(other);
	assert_int_equal(state_dir_remove(rootfd, "pub", fd, &err), 0);
	assert_false(exists("pub"));
	close(fd);
	free(name);
}

/* Never over an existing directory, even an empty one (a killed delete's):
 * "container with id exists", and the staged one is gone. */
static void test_publish_never_replaces(void **state)
{
	struct error err = { 0 };
	char *name = NULL;
	int fd = -1;

	(void)state;
	assert_int_equal(mkdirat(rootfd, "taken", 0700), 0);
	assert_int_equal(state_dir_stage(rootfd, &name, &fd, &err), 0);
	write_str(fd, STATE_FILE, "{}");
	assert_int_equal(state_dir_publish(rootfd, name, "taken", fd, &err), -1);
	assert_string_equal(err.msg, "container with id exists: taken");
	assert_false(exists(name));
	assert_int_equal(count_staged(), 0);
	assert_int_equal(unlinkat(rootfd, "taken", AT_REMOVEDIR), 0);
	close(fd);
	free(name);
}

/* A pid that is certainly gone: a child of ours, reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* Swept: a dead creator's staged directory.  Kept: one whose creator lives
 * (it may be between its mkdir and its flock), and what is not staged. */
static void test_sweep_staged(void **state)
{
	char dead[64], live[64];
	int fd;

	(void)state;
	snprintf(dead, sizeof(dead), STATE_STAGING_PREFIX "%d.0000abcd", (int)dead_pid());
	snprintf(live, sizeof(live), STATE_STAGING_PREFIX "%d.0000abcd", (int)getpid());
	assert_int_equal(mkdirat(rootfd, dead, 0700), 0);
	fd = openat(rootfd, dead, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	write_str(fd, STATE_FILE, "{}");
	assert_int_equal(mkfifoat(fd, STATE_FIFO, 0600), 0);
	close(fd);
	assert_int_equal(mkdirat(rootfd, live, 0700), 0);
	assert_int_equal(mkdirat(rootfd, ".new.notapid", 0700), 0);
	state_dir_sweep_staged(rootfd);
	assert_false(exists(dead));
	assert_true(exists(live));
	assert_true(exists(".new.notapid"));
	assert_int_equal(unlinkat(rootfd, live, AT_REMOVEDIR), 0);
	assert_int_equal(unlinkat(rootfd, ".new.notapid", AT_REMOVEDIR), 0);
}

static enum container_status read_status(int dirfd)
{
	struct container_state got;
	struct error err = { 0 };
	enum container_status s;

	assert_int_equal(state_read(dirfd, &got, &err), 0);
	s = got.status;
	state_free(&got);
	return s;
}

/* "creating" while the creating process lives; once it is gone "stopped",
 * even with the init (here: us) alive: it was never handed over. */
static void test_creating_status(void **state)
{
	struct container_state st = {
		.id = "cr", .bundle = "/b", .status = STATUS_CREATING,
		.pid = getpid(), .start_time = proc_start_time(getpid()),
		.creator_pid = getpid(), .creator_start_time = proc_start_time(getpid()),
	};
	struct container_state got;
	struct error err = { 0 };
	int fd;

	(void)state;
	assert_int_equal(state_dir_create(rootfd, "cr", &fd, &err), 0);
	assert_int_equal(mkfifoat(fd, STATE_FIFO, 0600), 0);
	assert_int_equal(state_write(fd, &st, &err), 0);
	assert_int_equal(state_read(fd, &got, &err), 0);
	assert_true(got.creating);
	assert_int_equal(got.creator_pid, getpid());
	assert_int_equal(got.status, STATUS_CREATING);
	state_free(&got);

	st.creator_pid = dead_pid();
	assert_int_equal(state_write(fd, &st, &err), 0);
	assert_int_equal(read_status(fd), STATUS_STOPPED);

	/* A reused creator pid (other start time) is not the creator. */
	st.creator_pid = getpid();
	st.creator_start_time++;
	assert_int_equal(state_write(fd, &st, &err), 0);
	assert_int_equal(read_status(fd), STATUS_STOPPED);

	/* Once created, the init decides. */
	st.status = STATUS_CREATED;
	assert_int_equal(state_write(fd, &st, &err), 0);
	assert_int_equal(read_status(fd), STATUS_CREATED);

	assert_int_equal(state_dir_remove(rootfd, "cr", fd, &err), 0);
	close(fd);
}

/* Removal takes whatever a killed command left: a half-written temp file,
 * no state.json at all. */
static void test_remove_leftovers(void **state)
{
	struct error err = { 0 };
	int fd;

	(void)state;
	assert_int_equal(state_dir_create(rootfd, "left", &fd, &err), 0);
	write_str(fd, STATE_FILE ".tmp", "{\"id\":\"le");
	assert_int_equal(mkfifoat(fd, STATE_DONE_FIFO, 0600), 0);
	assert_int_equal(state_dir_remove(rootfd, "left", fd, &err), 0);
	assert_false(exists("left"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_publish),
		cmocka_unit_test(test_publish_never_replaces),
		cmocka_unit_test(test_sweep_staged),
		cmocka_unit_test(test_creating_status),
		cmocka_unit_test(test_remove_leftovers),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
