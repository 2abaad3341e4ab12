/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared by the live cgroup tests (test_cgroup_live.c,
 * test_cgroup_behaviour.c): a throw-away parent cgroup
 * /agentsbx-test-<random>, removed with everything under it at the end;
 * control files by controller whatever the host's cgroup mode; children
 * to put in the cgroups.
 */
#ifndef TEST_CGROUP_HELPERS_H
#define TEST_CGROUP_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <cmocka.h>

#include "../../lib/cleanup.h"
#include "../../lib/util.h"
#include "../../runtime/cgroup/internal.h"

static char base[64];		/* "/agentsbx-test-1a2b3c4d" */
static char *root_ctl_before;	/* hybrid: the cgroup2 root's subtree_control */
static enum cgroup_mode mode;
static const struct cg_host *host;

static inline const char *mode_name(void)
{
	return mode == CGROUP_MODE_V2 ? "v2" :
	       mode == CGROUP_MODE_HYBRID ? "hybrid" : "v1";
}

/* A fresh path under the test parent. */
static inline char *cg_path(const char *name)
{
	return xasprintf("%s/%s", base, name);
}

/* The directory of path for controller ctrl ("unified": the cgroup2 side
 * of a hybrid host); NULL when that controller is not mounted. */
static inline char *ctrl_dir(const char *ctrl, const char *path)
{
	int c;
	const struct cg1_hier *h;

	if (mode == CGROUP_MODE_V2 || !strcmp(ctrl, "unified"))
		return host->v2_mnt ? xasprintf("%s%s", host->v2_mnt, path) : NULL;
	c = cg1_ctrl_from_name(ctrl);
	h = c >= 0 ? cg1_host_hier(host, (enum cg1_ctrl)c) : NULL;
	return h ? xasprintf("%s%s", h->mnt, path) : NULL;
}

/* Contents of ctrl's file in path, trailing newline cut; NULL if absent. */
static inline char *read_ctrl(const char *ctrl, const char *path, const char *file)
{
	_cleanup_free_ char *dir = ctrl_dir(ctrl, path);
	_cleanup_free_ char *p = dir ? xasprintf("%s/%s", dir, file) : NULL;
	struct error err;
	char *out = NULL;
	size_t len;

	if (!p || read_file_at(AT_FDCWD, p, 1 << 20, &out, &len, &err) < 0)
		return NULL;
	while (len > 0 && out[len - 1] == '\n')
		out[--len] = '\0';
	return out;
}

static inline void assert_ctrl(const char *ctrl, const char *path, const char *file,
			const char *want)
{
	_cleanup_free_ char *got = read_ctrl(ctrl, path, file);

	if (!got || strcmp(got, want))
		fail_msg("%s of %s: \"%s\", want \"%s\"", file, path,
			 got ? got : "(absent)", want);
}

static inline long long ctrl_keyed(const char *ctrl, const char *path,
			    const char *file, const char *key)
{
	_cleanup_free_ char *text = read_ctrl(ctrl, path, file);
	size_t k = strlen(key);

	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, key, k) && l[k] == ' ')
			return strtoll(l + k + 1, NULL, 10);
	fail_msg("no %s in %s of %s", key, file, path);
	return -1;
}

static inline bool dir_exists(const char *ctrl, const char *path)
{
	_cleanup_free_ char *dir = ctrl_dir(ctrl, path);
	struct stat st;

	return dir && stat(dir, &st) == 0;
}

/* Gone from every hierarchy. */
static inline void assert_gone(const char *path)
{
	for (size_t i = 0; mode != CGROUP_MODE_V2 && i < host->n_hier; i++) {
		_cleanup_free_ char *d = xasprintf("%s%s", host->hier[i].mnt, path);
		struct stat st;

		if (stat(d, &st) == 0)
			fail_msg("%s is still there", d);
	}
	if (host->v2_mnt && dir_exists("unified", path))
		fail_msg("%s%s is still there", host->v2_mnt, path);
}

/* Is pid in path (in the v2 hierarchy and in the memory/pids ones)? */
static inline bool pid_in_cgroup(pid_t pid, const char *path)
{
	_cleanup_free_ char *f = xasprintf("/proc/%d/cgroup", (int)pid);
	_cleanup_free_ char *text = NULL, *v2 = NULL, *mem = NULL;
	struct error err;

	if (read_file_at(AT_FDCWD, f, 65536, &text, NULL, &err) < 0)
		return false;
	v2 = xasprintf("0::%s\n", path);
	mem = xasprintf(":pids:%s\n", path);
	if (host->v2_mnt && !strstr(text, v2))
		return false;
	return mode == CGROUP_MODE_V2 || strstr(text, mem);
}

/* ---- children ---------------------------------------------------------- */

/* Shared with the children: a counter each one bumps while it runs. */
static volatile uint64_t *counter;

static inline void map_counter(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	counter = p;
	*counter = 0;
}

/* A child that counts, 1 ms apart, until killed. */
static inline pid_t spawn_counter(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;) {
			__atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
			usleep(1000);
		}
	}
	return pid;
}

static inline void reap(pid_t pid, int want_sig)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (want_sig) {
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), want_sig);
	}
}

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static inline struct oci_resources no_resources(void)
{
	return (struct oci_resources){ .present = true };
}

/* Tests that change the root cgroup's subtree_control (and put it back)
 * hold this lock, so that two runs on one host do not undo each other.
 * The lock is on the cgroup2 root directory itself: no file to leave. */
static inline int root_lock(void)
{
	int fd = open(host->v2_mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	return fd;
}

static inline void root_unlock(int fd)
{
	close(fd); /* releases the lock */
}

/* ---- group setup --------------------------------------------------------- */

/* Not root, or no cgroups: say so loudly and let the run pass. */
static inline bool cg_tests_runnable(void)
{
	enum cgroup_mode m;
	struct error err;

	if (geteuid() != 0) {
		fprintf(stderr, "SKIPPED: the live cgroup tests need root\n");
		return false;
	}
	if (cgroup_detect_mode(&m, &err) < 0) {
		fprintf(stderr, "SKIPPED: no usable cgroups: %s\n", err.msg);
		return false;
	}
	return true;
}

static inline int cg_group_setup(void **state)
{
	struct error err;
	uint32_t r = 0;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "cgroup tests need root: skipped\n");
		return -1;
	}
	if (cgroup_detect_mode(&mode, &err) < 0 || !(host = cg_host_get(&err))) {
		fprintf(stderr, "no usable cgroups: %s\n", err.msg);
		return -1;
	}
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	snprintf(base, sizeof(base), "/agentsbx-test-%08x", r);
	if (mode == CGROUP_MODE_HYBRID) {
		int lock = root_lock();

		root_ctl_before = read_ctrl("unified", "", "cgroup.subtree_control");
		root_unlock(lock);
	}
	fprintf(stderr, "cgroup mode: %s, test parent %s\n", mode_name(), base);
	return 0;
}

/* A failed test may have left a controller on in the hybrid cgroup2
 * root: take back what was not there at the start. */
static inline void restore_root_ctl(void)
{
	_cleanup_free_ char *now = NULL;
	_cleanup_free_ char *f = NULL;
	char *save = NULL;
	int lock;

	if (mode != CGROUP_MODE_HYBRID || !root_ctl_before)
		return;
	lock = root_lock();
	now = read_ctrl("unified", "", "cgroup.subtree_control");
	f = xasprintf("%s/cgroup.subtree_control", host->v2_mnt);
	for (char *w = strtok_r(now, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		_cleanup_free_ char *minus = xasprintf("-%s", w);
		struct error err;

		if (!cg_word_in(root_ctl_before, w) &&
		    write_file_at(AT_FDCWD, f, minus, &err) < 0)
			fprintf(stderr, "teardown: %s\n", err.msg);
	}
	root_unlock(lock);
	free(root_ctl_before);
	root_ctl_before = NULL;
}

/* Everything under the test parent, and the parent, everywhere. */
static inline int cg_group_teardown(void **state)
{
	struct error err;

	(void)state;
	if (!base[0])
		return 0;
	if (cgroup_destroy(base, CGROUP_MANAGER_FS, true, &err) < 0) {
		fprintf(stderr, "teardown: %s\n", err.msg);
		return -1;
	}
	for (size_t i = 0; mode != CGROUP_MODE_V2 && i < host->n_hier; i++) {
		_cleanup_free_ char *d = xasprintf("%s%s", host->hier[i].mnt, base);
		struct stat st;

		if (stat(d, &st) == 0) {
			fprintf(stderr, "teardown: %s left behind\n", d);
			return -1;
		}
	}
	restore_root_ctl();
	return 0;
}

#endif
