/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Creating a sandbox's container from a process that may have threads.
 *
 * create_container() does everything a runtime does (parse config.json,
 * load the policy, malloc, log, libseccomp...) in a process forked for the
 * purpose: its init inherits that process's stdio, which must be the
 * sandbox's pipes.  After fork() in a threaded process only
 * async-signal-safe calls are allowed before exec, so the MCP server
 * (a thread per call) may not fork that helper itself.  Instead, before
 * any thread exists, it forks a creator: a single-threaded process that
 * receives requests (the id, the bundle, and the four fds as SCM_RIGHTS)
 * on a SOCK_SEQPACKET socket and forks the helper from there, where fork
 * is as safe as in the one-shot `agentsbx sandbox`, which forks the helper
 * directly.
 *
 * Either way the helper writes a create_reply on the reply pipe and exits;
 * the container init is re-parented to the sandbox process (the nearest
 * child subreaper; the creator is none), which then reaps it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/fds.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../runtime/container.h"
#include "sandbox_private.h"

#define REPARENT_WAIT_NS (2ll * 1000000000)

struct create_reply {
	int ok;
	int created; /* ok, or a start that failed after the create */
	pid_t pid;
	char cgroup_path[PATH_MAX];
	int cgroup_manager, poststop; /* container_known without its path */
	dev_t dir_dev;
	ino_t dir_ino;
	struct error err;
};

struct creator_request {
	char id[64];
	char bundle[PATH_MAX];
	int background; /* at SANDBOX_BACKGROUND_NICE (a pool's refill) */
	int start;	/* started by the create (create_opts.start) */
};

static int creator_sock = -1;
static pid_t creator_pid = -1;

/* ---- the helper (a fresh single-threaded child) ---------------------------- */

/* Log lines go to a copy of the log fd, never to fd 2 once that is the
 * container's stderr pipe: --debug or an audit policy must not write into
 * the program's output. */
static void keep_log_off_stdio(void)
{
	int fd = log_get_fd();

	if (fd > 2)
		return;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (fd >= 0)
		log_redirect(fd);
}

static void reply_made(struct create_reply *r, const struct created_container *made)
{
	r->created = made->pid > 0;
	r->pid = made->pid;
	snprintf(r->cgroup_path, sizeof(r->cgroup_path), "%s",
		 made->known.cgroup_path ? made->known.cgroup_path : "");
	r->cgroup_manager = made->known.cgroup_manager;
	r->poststop = made->known.poststop;
	r->dir_dev = made->known.dir_dev;
	r->dir_ino = made->known.dir_ino;
}

/*
 * The container init inherits the stdio of the process that clones it:
 * the pipes go on 0, 1 and 2, every other fd of ours is closed (the pipes
 * of other sandboxes, the MCP client's channel), and the container is
 * created; a cold call's (start) is started too, as `run` starts it.
 */
__attribute__((noreturn)) static void create_helper(const struct global_opts *g,
						    const char *id, const char *bundle,
						    const int stdio[3], int reply_fd, bool background,
						    bool start)
{
	/* A session's files are bound from the sandbox's own bundle (under
	 * SANDBOX_WORK_DIR, made by us, not by a caller). */
	struct create_opts o = {
		.id = id,
		.bundle = bundle,
		.own_bind_prefix = bundle,
		.init_sigmask = sandbox_container_sigmask(),
		.no_writable_layer = true,
		/* the workspace holds the identity (sandbox_workspace_make) */
		.identity_dir = bundle,
		.start = start,
	};
	struct created_container made;
	struct create_reply r;

	memset(&r, 0, sizeof(r));
	/* The container init inherits it: its warm-up yields to the runs in
	 * flight until sandbox_run gives the normal priority back. */
	if (background && setpriority(PRIO_PROCESS, 0, SANDBOX_BACKGROUND_NICE) < 0)
		log_debug("sandbox: nice the create helper: %s", strerror(errno));
	keep_log_off_stdio();
	for (int i = 0; i < 3; i++)
		if (stdio[i] != i && dup2(stdio[i], i) < 0) {
			error_sys(&r.err, "sandbox: dup2 onto fd %d", i);
			goto reply;
		}
	fds_close_all_but(reply_fd, log_get_fd());
	r.ok = container_create_detailed(g, &o, &made, &r.err) == 0;
	reply_made(&r, &made);
	created_container_free(&made);
reply:
	if (write_all(reply_fd, &r, sizeof(r)) < 0)
		_exit(1);
	_exit(0);
}

/* ---- the creator process -------------------------------------------------------- */

static void reap_helpers(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* One request: its fds are ours until the helper is forked. */
static void serve_request(const struct global_opts *g, const struct creator_request *req,
			  const int fds[4])
{
	pid_t pid = fork();

	if (pid == 0)
		create_helper(g, req->id, req->bundle, fds, fds[3], req->background != 0,
			      req->start != 0);
	if (pid < 0) {
		struct create_reply r;

		memset(&r, 0, sizeof(r));
		error_sys(&r.err, "sandbox: fork the create helper");
		if (write_all(fds[3], &r, sizeof(r)) < 0)
			log_warn("sandbox creator: reply: %s", strerror(errno));
	}
}

static int recv_request(int sock, struct creator_request *req, int fds[4])
{
	char cbuf[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { .iov_base = req, .iov_len = sizeof(*req) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);

	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	cm = CMSG_FIRSTHDR(&m);
	if (n != (ssize_t)sizeof(*req) || !cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(4 * sizeof(int))) {
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
				close(((int *)CMSG_DATA(cm))[i]);
		return 0;
	}
	memcpy(fds, CMSG_DATA(cm), 4 * sizeof(int));
	req->id[sizeof(req->id) - 1] = req->bundle[sizeof(req->bundle) - 1] = '\0';
	return 1;
}

__attribute__((noreturn)) static void creator_main(const struct global_opts *g, pid_t parent,
						   int sock)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* Nothing of the MCP client's: not its stdin, not the stdout it reads. */
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
	}
	fds_close_all_but(sock, log_get_fd());
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	for (;;) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		struct creator_request req;
		int fds[4], r;

		reap_helpers();
		if (poll(&p, 1, 500) <= 0)
			continue;
		r = recv_request(sock, &req, fds);
		if (r < 0)
			_exit(0); /* the server closed its end */
		if (r == 0)
			continue;
		serve_request(g, &req, fds);
		for (int i = 0; i < 4; i++)
			close(fds[i]);
	}
}

int sandbox_creator_start(const struct global_opts *g, struct error *err)
{
	pid_t parent = getpid();
	int sv[2];

	if (creator_pid > 0)
		return 0;
	/* Here, before any thread: sandbox_create_container's check is then
	 * a read of a variable no thread writes. */
	if (sandbox_watchdog_armed(err) < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return error_sys(err, "sandbox: socketpair for the creator");
	creator_pid = fork();
	if (creator_pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return error_sys(err, "sandbox: fork the creator");
	}
	if (creator_pid == 0)
		creator_main(g, parent, sv[1]);
	close(sv[1]);
	creator_sock = sv[0];
	return 0;
}

bool sandbox_creator_running(void)
{
	return creator_pid > 0;
}

void sandbox_creator_stop(void)
{
	if (creator_pid <= 0)
		return;
	close(creator_sock);
	creator_sock = -1;
	kill(creator_pid, SIGKILL);
	while (waitpid(creator_pid, NULL, 0) < 0 && errno == EINTR)
		;
	creator_pid = -1;
}

/* ---- asking for a container ---------------------------------------------------- */

static int send_request(const struct sandbox *sb, const int stdio[3], int reply_fd,
			struct error *err)
{
	struct creator_request req;
	int fds[4] = { stdio[0], stdio[1], stdio[2], reply_fd };
	char cbuf[CMSG_SPACE(sizeof(fds))];
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(&req, 0, sizeof(req));
	memset(cbuf, 0, sizeof(cbuf));
	snprintf(req.id, sizeof(req.id), "%s", sb->id);
	snprintf(req.bundle, sizeof(req.bundle), "%s", sb->dir);
	req.background = sb->background;
	req.start = sb->start_on_create;
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	while (sendmsg(creator_sock, &m, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return error_sys(err, "sandbox: send a request to the creator");
	return 0;
}

static int read_reply(int fd, struct create_reply *r)
{
	size_t got = 0;

	while (got < sizeof(*r)) {
		ssize_t n = read(fd, (char *)r + got, sizeof(*r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* The creator's helper exits right after its reply (the init it cloned
 * still holds the reply pipe, so no EOF tells when); until the kernel has
 * re-parented the init to us, waitid() on it says ECHILD. */
static int wait_adopted(pid_t pid, struct error *err)
{
	long long until = sandbox_now_ns() + REPARENT_WAIT_NS;
	siginfo_t si;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0)
			return 0;
		if (errno != ECHILD && errno != EINTR)
			return error_sys(err, "sandbox: waitid %d", pid);
		if (sandbox_now_ns() > until)
			return error_set(err, "sandbox: the container init %d was not re-parented to us",
					 pid);
		usleep(200);
	}
}

/* Fork the helper here (no threads) or have the creator fork it. */
static int start_helper(const struct global_opts *g, const struct sandbox *sb,
			const int stdio[3], int reply_fd, pid_t *helper, struct error *err)
{
	*helper = -1;
	if (creator_pid > 0)
		return send_request(sb, stdio, reply_fd, err);
	*helper = fork();
	if (*helper < 0)
		return error_sys(err, "sandbox: fork");
	if (*helper == 0)
		create_helper(g, sb->id, sb->dir, stdio, reply_fd, sb->background,
			      sb->start_on_create);
	return 0;
}

static void take_reply(struct sandbox *sb, const struct create_reply *r)
{
	sb->pid = r->pid;
	sb->created = true;
	sb->known = (struct container_known){
		.cgroup_path = r->cgroup_path[0] ? xstrdup(r->cgroup_path) : NULL,
		.cgroup_manager = r->cgroup_manager,
		.poststop = r->poststop != 0,
		.dir_dev = r->dir_dev,
		.dir_ino = r->dir_ino,
	};
}

int sandbox_create_container(const struct global_opts *g, struct sandbox *sb,
			     const int stdio[3], struct error *err)
{
	_cleanup_free_ struct create_reply *r = xcalloc(1, sizeof(*r));
	_cleanup_close_ int rd = -1;
	int rp[2], status = 0, got;
	pid_t helper;

	if (sandbox_watchdog_armed(err) < 0)
		return -1;
	if (pipe2(rp, O_CLOEXEC) < 0)
		return error_sys(err, "sandbox: pipe");
	rd = rp[0];
	if (start_helper(g, sb, stdio, rp[1], &helper, err) < 0) {
		close(rp[1]);
		return -1;
	}
	close(rp[1]);
	got = read_reply(rd, r);
	if (helper > 0)
		while (waitpid(helper, &status, 0) < 0 && errno == EINTR)
			;
	if (got < 0) {
		struct error ignored;
		/* It may have died after its create (or its start): whatever
		 * it made under this id goes, not at this process's exit. */
		container_delete(g, sb->id, true, &ignored);
		return error_set(err, "sandbox: the create helper died (status %d)", status);
	}
	if (!r->created) {
		*err = r->err;
		return -1;
	}
	/* Ours from here, also when its start failed: destroy deletes it. */
	take_reply(sb, r);
	if (helper < 0 && wait_adopted(sb->pid, err) < 0)
		return -1;
	if (!r->ok) {
		*err = r->err;
		return -1;
	}
	if (sb->start_on_create)
		sb->run_started_ns = sandbox_now_ns();
	/* A zombie already (a quick program started by the create) has a
	 * pidfd too: only a reaped process has none. */
	sb->pidfd = (int)syscall(SYS_pidfd_open, sb->pid, 0);
	if (sb->pidfd < 0)
		return error_sys(err, "sandbox: pidfd_open %d", sb->pid);
	return 0;
}
