/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container init, from clone() to execve().  Its work is one ordered
 * list of steps, each a function with one job; a failing step's error goes
 * to the parent over the sync socket (or, after `create` has returned, to
 * the container's stderr) and the init exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/keyctl.h>
#include <unistd.h>

#include "../../hooks/hooks.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "landlock.h"
#include "terminal.h"

struct child_step {
	const char *name;
	int (*run)(struct container_ctx *c, struct error *err);
};

static int step_wait_go(struct container_ctx *c, struct error *err)
{
	long long pid;
	/* A rootless runtime writes the id maps of our new user namespace
	 * itself, which it may only while we are dumpable (/proc/PID/uid_map
	 * of a non-dumpable process is root's): so it waits until GO, when
	 * the maps are written.  Before GO nothing of the container runs. */
	bool late = c->new_userns && rootless_caller();

	/* Until its execve this process is the runtime's image: nothing in the
	 * container (a shared pid namespace) may open its /proc/PID/exe or
	 * ptrace it (CVE-2019-5736). */
	if (!late && !WEAK_DUMPABLE && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_DUMPABLE)");
	/* Die with the runtime while it sets us up; cleared at READY. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	close(c->sync_parent);
	c->sync_parent = -1;
	/* The flock of the state directory belongs to the runtime process:
	 * a copy kept here would hold it for the container's lifetime. */
	close(c->state_dir_fd);
	c->state_dir_fd = -1;
	if (c->restore_sigmask)
		sigprocmask(SIG_SETMASK, &c->saved_sigmask, NULL);
	if (sync_expect_value(c->sync_child, SYNC_GO, &pid, err) < 0)
		return -1;
	if (late && !WEAK_DUMPABLE && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_DUMPABLE)");
	c->pid = (pid_t)pid;
	/* Nodes and files are created with the modes we give them. */
	umask(0);
	return 0;
}

/* Into the cgroup the runtime made (cgroup.h: v1's tasks files; on
 * cgroup2 the init was born there), before anything can fork. */
static int step_cgroup(struct container_ctx *c, struct error *err)
{
	return cgroup_place_self(&c->cg_birth, err);
}

static int step_runtime_hooks(struct container_ctx *c, struct error *err)
{
	if (!c->spec->hooks[HOOK_PRESTART].len &&
	    !c->spec->hooks[HOOK_CREATE_RUNTIME].len)
		return 0;
	if (sync_send(c->sync_child, SYNC_RUN_HOOKS, NULL, err) < 0)
		return -1;
	return sync_expect(c->sync_child, SYNC_HOOKS_DONE, err);
}

/* In the container's mount namespace, before pivot_root. */
/* The state for hooks that run in the container's namespaces: its pid as
 * seen there (1 in a new pid namespace), as runc gives them. */
static void container_side_state_json(struct container_ctx *c,
				      enum container_status status)
{
	pid_t host_pid = c->pid;

	c->pid = getpid();
	c->render_state_json(c, status);
	c->pid = host_pid;
}

static int step_create_container_hooks(struct container_ctx *c, struct error *err)
{
	int r = 0;

	if (c->spec->hooks[HOOK_CREATE_CONTAINER].len) {
		container_side_state_json(c, STATUS_CREATING);
		r = hooks_run(&c->spec->hooks[HOOK_CREATE_CONTAINER],
			      HOOK_CREATE_CONTAINER, c->state_json, err);
	}
	/* The host files create judged the hooks on: not the container's. */
	hooks_unpin();
	return r;
}

/* A session keyring of the container's own, so that keys of the caller's
 * session are not reachable from inside (unless --no-new-keyring). */
static int step_session_keyring(struct container_ctx *c, struct error *err)
{
	_cleanup_free_ char *name = NULL;

	if (c->opts->no_new_keyring)
		return 0;
	name = xasprintf("_ses.%s", c->id);
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) < 0 && errno != ENOSYS)
		return error_sys(err, "join a new session keyring");
	return 0;
}

static int step_egress_filter(struct container_ctx *c, struct error *err)
{
	if (!c->decision.egress_filter)
		return 0;
	return netfilter_install_egress(&c->policy, c->decision.inbound_only, c->id, err);
}

/* No network: whatever a prestart/createRuntime/createContainer hook put
 * in the namespace goes (Docker configures its bridge network that way). */
static int step_only_loopback(struct container_ctx *c, struct error *err)
{
	if (!c->decision.only_loopback)
		return 0;
	return netfilter_only_loopback(err);
}

static int step_egress_names(struct container_ctx *c, struct error *err)
{
	if (!c->decision.egress_proxy)
		return 0;
	return egress_net_setup(&c->policy, c->id, c->sync_child, err);
}

static int step_hostname(struct container_ctx *c, struct error *err)
{
	const char *h = c->spec->hostname, *d = c->spec->domainname;

	if (h && sethostname(h, strlen(h)) < 0)
		return error_sys(err, "set hostname %s", h);
	/* kernel.domainname in linux.sysctl wins over the field, as in runc
	 * (which writes the sysctls after the names). */
	if (str_map_get(&c->spec->linux.sysctl, "kernel.domainname"))
		d = NULL;
	if (d && setdomainname(d, strlen(d)) < 0)
		return error_sys(err, "set domainname %s", d);
	return 0;
}

static int step_ready(struct container_ctx *c, struct error *err)
{
	if (prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	if (sync_send(c->sync_child, SYNC_READY, NULL, err) < 0)
		return -1;
	close(c->sync_child);
	c->sync_child = -1;
	return 0;
}

/* Block until `start` writes to exec.fifo (opened O_RDWR by the parent, so
 * that neither side's open ever blocks). */
static int step_wait_start(struct container_ctx *c, struct error *err)
{
	char b;
	ssize_t n;

	do
		n = read(c->fifo_fd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return error_sys(err, "wait for start on exec.fifo");
	close(c->fifo_fd);
	c->fifo_fd = -1;
	return 0;
}

static int step_start_container_hooks(struct container_ctx *c, struct error *err)
{
	if (!c->spec->hooks[HOOK_START_CONTAINER].len)
		return 0;
	container_side_state_json(c, STATUS_CREATED);
	hooks_set_cwd(NULL); /* the bundle is not in the container's view */
	return hooks_run(&c->spec->hooks[HOOK_START_CONTAINER],
			 HOOK_START_CONTAINER, c->state_json, err);
}

/*
 * Without no_new_privs, loading a filter needs CAP_SYS_ADMIN, so it must
 * come before the capabilities are dropped; with it, the filter is the very
 * last step (process_exec).  Either way the cwd is resolved (openat2) and
 * the fds closed (close_range) before it: the spec's profile may be one
 * written for runc, which lists neither.
 *
 * What the init calls after this filter, without no_new_privs (strace -f of
 * tests/integration/test_conformance.py's bundle): prctl (PR_CAPBSET_DROP,
 * PR_SET_KEEPCAPS, PR_CAP_AMBIENT), setgroups, setresgid, setresuid,
 * capget, capset, umask, fchdir, close, rt_sigaction, rt_sigprocmask,
 * execveat -- and, when execveat is refused, execve of /proc/self/fd/N (the
 * trampoline, which calls execve only).  Only when the cwd could not be
 * looked up before it (EACCES as the runtime's root): open, openat2, and
 * chdir + getcwd when openat2 is refused.  On an error: write (exec.done,
 * the log, stderr), exit_group.
 */
static int step_seccomp_before_creds(struct container_ctx *c, struct error *err)
{
	int listener = -1;

	if (c->locked_down)
		return 0;
	if (process_open_cwd(c, err) < 0)
		return -1;
	if (c->spec->process.no_new_privileges)
		return 0;
	if (process_prepare_fds(c, err) < 0)
		return -1;
	return process_load_seccomp(c, &listener, err);
}

/* After the last mount and hook, before the container's code: a Landlock
 * domain of the container's own (landlock.h).  The listener path (locked
 * down before READY) enters it there. */
static int step_landlock(struct container_ctx *c, struct error *err)
{
	return landlock_enter(c, err);
}

static int step_credentials(struct container_ctx *c, struct error *err)
{
	if (c->locked_down)
		return 0;
	return process_apply_credentials(c, err);
}

/*
 * A seccomp notify listener must reach listenerPath while the runtime is
 * still there to send it, so such a container is locked down (credentials,
 * then the filter) before READY, as runc does, and the fd goes to the
 * parent.  Without a listener, the filter waits for the last step.
 */
static int step_seccomp_listener(struct container_ctx *c, struct error *err)
{
	int listener = -1;

	if (!c->has_seccomp || !c->seccomp.needs_listener)
		return 0;
	if (c->spec->hooks[HOOK_START_CONTAINER].len)
		return error_set(err, "linux.seccomp: a notify listener together with startContainer hooks is not supported");
	if (landlock_enter(c, err) < 0 || process_open_cwd(c, err) < 0)
		return -1;
	if (!c->spec->process.no_new_privileges &&
	    process_load_seccomp(c, &listener, err) < 0)
		return -1;
	if (process_apply_credentials(c, err) < 0)
		return -1;
	if (c->spec->process.no_new_privileges &&
	    process_load_seccomp(c, &listener, err) < 0)
		return -1;
	c->locked_down = true;
	if (listener < 0)
		return error_set(err, "linux.seccomp: the filter gave no notify listener");
	if (sync_send_fd(c->sync_child, SYNC_SECCOMP_FD, listener, err) < 0)
		return -1;
	close(listener);
	return sync_expect(c->sync_child, SYNC_GO, err);
}

static int step_session(struct container_ctx *c, struct error *err)
{
	/* Its own session, even without a terminal: no TIOCSTI into the
	 * caller's terminal (CVE-2017-5226). */
	if (!c->spec->process.terminal && !WEAK_SETSID && setsid() < 0)
		return error_sys(err, "setsid");
	return 0;
}

static const struct child_step setup_steps[] = {
	{ "wait for the runtime", step_wait_go },
	{ "cgroup", step_cgroup },
	{ "join namespaces", ns_child_join },
	{ "enter new namespaces", ns_child_after_go },
	{ "loopback", ns_loopback_up },
	{ "egress filter", step_egress_filter },
	{ "session keyring", step_session_keyring },
	{ "mounts", rootfs_prepare_mounts },
	{ "prestart and createRuntime hooks", step_runtime_hooks },
	{ "createContainer hooks", step_create_container_hooks },
	{ "network policy", step_only_loopback },
	{ "egress by name", step_egress_names },
	{ "sysctl", sysctl_apply },
	{ "process attributes", process_setup_early },
	{ "root filesystem", rootfs_finalize },
	{ "hostname", step_hostname },
	{ "session", step_session },
	{ "terminal", terminal_setup_child },
	{ "executable", process_resolve_exec },
	{ "home directory", process_resolve_home },
	{ "seccomp notify listener", step_seccomp_listener },
	{ "ready", step_ready },
};

static const struct child_step start_steps[] = {
	{ "wait for start", step_wait_start },
	{ "startContainer hooks", step_start_container_hooks },
	{ "landlock", step_landlock },
	{ "seccomp", step_seccomp_before_creds },
	{ "credentials", step_credentials },
};

void child_main(struct container_ctx *c)
{
	struct error err;

	error_clear(&err);
	for (size_t i = 0; i < sizeof(setup_steps) / sizeof(setup_steps[0]); i++) {
		if (setup_steps[i].run(c, &err) < 0) {
			struct error ignored;
			if (c->sync_child >= 0)
				sync_send(c->sync_child, SYNC_ERROR, &err, &ignored);
			_exit(1);
		}
	}
	for (size_t i = 0; i < sizeof(start_steps) / sizeof(start_steps[0]); i++) {
		if (start_steps[i].run(c, &err) < 0) {
			process_report_start_failure(c, &err);
			log_error("%s", err.msg);
			if (log_get_fd() != STDERR_FILENO)
				dprintf(STDERR_FILENO, "agentsbx: %s\n", err.msg);
			_exit(127);
		}
	}
	process_exec(c);
}
