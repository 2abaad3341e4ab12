/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The process that runs sandboxes (sandbox, session server, mcp), set up
 * once before any call: fds 0-2 held, a subreaper for the container inits,
 * a mount namespace of its own for the workspaces, the signals it handles
 * blocked (the mask before is every container's), the watchdog started.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../runtime/container.h"
#include "sandbox_private.h"

/* The signal mask the process had: what every container gets. */
static sigset_t container_sigmask;

/* ---- the process ------------------------------------------------------------- */

/* A closed 0, 1 or 2 would be taken by a pipe and then clobbered. */
static int open_std_fds(struct error *err)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", O_RDWR);
		if (n != fd)
			return error_sys(err, "sandbox: open /dev/null as fd %d", fd);
	}
	return 0;
}

/* Our own mount namespace, receiving the host's mounts but sending none:
 * the workspaces and overlays are never seen on the host, and vanish
 * with this process whatever way it ends. */
const char *sandbox_work_dir(void)
{
	static char *dir;
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (!dir)
		dir = geteuid() == 0 || !xdg || xdg[0] != '/' ?
			      xstrdup(SANDBOX_WORK_DIR) :
			      xasprintf("%s/agentsbx-sandbox", xdg);
	return dir;
}

/* Rootless: a user namespace of our own, our ids mapped to themselves, so
 * that the private mount namespace and its tmpfs and overlays are ours to
 * make.  We stay who we are (the runtime stays rootless); the containers'
 * user namespaces nest in this one. */
static int own_user_namespace(struct error *err)
{
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	char map[64];

	/* Read before: until the maps exist, we are the overflow id. */
	if (unshare(CLONE_NEWUSER) < 0)
		return error_sys(err, "sandbox: rootless: unshare a user namespace");
	snprintf(map, sizeof(map), "%u %u 1", uid, uid);
	if (write_file_at(AT_FDCWD, "/proc/self/uid_map", map, err) < 0)
		return -1;
	if (write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny", err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1", gid, gid);
	return write_file_at(AT_FDCWD, "/proc/self/gid_map", map, err);
}

static int private_mounts(struct error *err)
{
	const char *work = sandbox_work_dir();
	struct stat st;

	if (geteuid() != 0) {
		if (!getenv("XDG_RUNTIME_DIR"))
			return error_set(err, "sandbox: rootless: XDG_RUNTIME_DIR is not set (the workspace and the state go there)");
		if (own_user_namespace(err) < 0)
			return -1;
	}
	if (unshare(CLONE_NEWNS) < 0)
		return error_sys(err, "sandbox: unshare the mount namespace");
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return error_sys(err, "sandbox: make / a slave mount");
	if (mkdir(work, 0700) < 0 && errno != EEXIST)
		return error_sys(err, "sandbox: mkdir %s", work);
	if (lstat(work, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set(err, "sandbox: %s is not a directory", work);
	if (mount("agentsbx-sandbox", work, "tmpfs",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,nr_inodes=8192,mode=0700") < 0)
		return error_sys(err, "sandbox: mount a tmpfs on %s", work);
	return 0;
}

static int block_signals(int *sigfd, struct error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	*sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (*sigfd < 0)
		return error_sys(err, "sandbox: signalfd");
	/* A closed pipe gives EPIPE, not death. */
	sigaddset(&set, SIGPIPE);
	if (sigprocmask(SIG_BLOCK, &set, &container_sigmask) < 0)
		return error_sys(err, "sandbox: block signals");
	return 0;
}

int sandbox_env_init(const struct global_opts *g, int *sigfd, struct error *err)
{
	if (open_std_fds(err) < 0)
		return -1;
	/* The container inits outlive their creating helper: they must be
	 * re-parented to us, not to a PID 1 that may never reap. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		return error_sys(err, "sandbox: prctl(PR_SET_CHILD_SUBREAPER)");
	if (private_mounts(err) < 0 || block_signals(sigfd, err) < 0)
		return -1;
	/* Cached on first use: fill the cache before any thread runs. */
	runtime_warm_caches();
	return sandbox_watchdog_start(g, err);
}

const sigset_t *sandbox_container_sigmask(void)
{
	return &container_sigmask;
}
