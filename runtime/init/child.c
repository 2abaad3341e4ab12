/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container init, from clone() to execve().  Its work is one ordered
 * list of steps (setup_steps, start_steps), each a function with one job
 * that takes the parts of the context it reads, const, and those it
 * writes (context.h); a failing step's error goes to the parent over the
 * sync socket (or, after `create` has returned, to the container's stderr)
 * and the init exits.
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

static int step_wait_go(const struct ctx_decided *d, struct ctx_handles *h,
			struct ctx_init *i, struct error *err)
{
	/* A rootless runtime writes the id maps of our new user namespace
	 * itself, which it may only while we are dumpable (/proc/PID/uid_map
	 * of a non-dumpable process is root's): so it waits until GO, when
	 * the maps are written.  Before GO nothing of the container runs. */
	bool late = d->new_userns && rootless_caller();

	/* Until its execve this process is the runtime's image: nothing in the
	 * container (a shared pid namespace) may open its /proc/PID/exe or
	 * ptrace it (CVE-2019-5736). */
	if (!late && !WEAK_DUMPABLE && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_DUMPABLE)");
	/* Die with the runtime while it sets us up; cleared at READY. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	close(h->sync_parent);
	h->sync_parent = -1;
	/* The flock of the state directory belongs to the runtime process:
	 * a copy kept here would hold it for the container's lifetime. */
	close(h->state_dir_fd);
	h->state_dir_fd = -1;
	if (d->restore_sigmask)
		sigprocmask(SIG_SETMASK, &d->saved_sigmask, NULL);
	if (sync_expect(h->sync_child, SYNC_GO, err) < 0)
		return -1;
	if (late && !WEAK_DUMPABLE && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_DUMPABLE)");
	/* Nodes and files are created with the modes we give them. */
	umask(0);
	return 0;
}

/* Into the cgroup the runtime made (cgroup.h: v1's tasks files; on
 * cgroup2 the init was born there), before anything can fork. */
static int step_cgroup(struct ctx_handles *h, struct error *err)
{
	return cgroup_place_self(&h->cg_birth, err);
}

static int step_runtime_hooks(const struct ctx_decided *d, const struct ctx_handles *h,
			      struct error *err)
{
	if (!d->spec.hooks[HOOK_PRESTART].len &&
	    !d->spec.hooks[HOOK_CREATE_RUNTIME].len)
		return 0;
	if (sync_send(h->sync_child, SYNC_RUN_HOOKS, NULL, err) < 0)
		return -1;
	return sync_expect(h->sync_child, SYNC_HOOKS_DONE, err);
}

/* The hooks of kind k that run in the container's namespaces, given the
 * state with its pid as seen there (1 in a new pid namespace), as runc
 * gives them: rendered by the lifecycle's callback. */
static int run_container_side_hooks(const struct ctx_decided *d, const struct ctx_record *r,
				    enum hook_kind k, enum container_status status,
				    struct error *err)
{
	_cleanup_free_ char *state = r->render_state_json(d, r, getpid(), status);

	return hooks_run(&d->spec.hooks[k], k, state, err);
}

/* In the container's mount namespace, before pivot_root. */
static int step_create_container_hooks(const struct ctx_decided *d, const struct ctx_record *r,
				       struct error *err)
{
	int rc = 0;

	if (d->spec.hooks[HOOK_CREATE_CONTAINER].len)
		rc = run_container_side_hooks(d, r, HOOK_CREATE_CONTAINER, STATUS_CREATING, err);
	/* The host files create judged the hooks on: not the container's. */
	hooks_unpin();
	return rc;
}

/* A session keyring of the container's own, so that keys of the caller's
 * session are not reachable from inside (unless --no-new-keyring). */
static int step_session_keyring(const struct ctx_decided *d, struct error *err)
{
	_cleanup_free_ char *name = NULL;

	if (d->opts->no_new_keyring)
		return 0;
	name = xasprintf("_ses.%s", d->id);
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, name) < 0 && errno != ENOSYS)
		return error_sys(err, "join a new session keyring");
	return 0;
}

static int step_egress_filter(const struct ctx_decided *d, struct error *err)
{
	if (!d->decision.egress_filter)
		return 0;
	return netfilter_install_egress(&d->policy, d->decision.inbound_only, d->id, err);
}

/* No network: whatever a prestart/createRuntime/createContainer hook put
 * in the namespace goes (Docker configures its bridge network that way). */
static int step_only_loopback(const struct ctx_decided *d, struct error *err)
{
	if (!d->decision.only_loopback)
		return 0;
	return netfilter_only_loopback(err);
}

static int step_egress_names(const struct ctx_decided *d, const struct ctx_handles *h,
			     struct error *err)
{
	if (!d->decision.egress_proxy)
		return 0;
	return egress_net_setup(&d->policy, d->id, h->sync_child, err);
}

static int step_hostname(const struct ctx_decided *d, struct error *err)
{
	const char *host = d->spec.hostname, *domain = d->spec.domainname;

	if (host && sethostname(host, strlen(host)) < 0)
		return error_sys(err, "set hostname %s", host);
	/* kernel.domainname in linux.sysctl wins over the field, as in runc
	 * (which writes the sysctls after the names). */
	if (str_map_get(&d->spec.linux.sysctl, "kernel.domainname"))
		domain = NULL;
	if (domain && setdomainname(domain, strlen(domain)) < 0)
		return error_sys(err, "set domainname %s", domain);
	return 0;
}

static int step_ready(struct ctx_handles *h, struct error *err)
{
	if (prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	if (sync_send(h->sync_child, SYNC_READY, NULL, err) < 0)
		return -1;
	close(h->sync_child);
	h->sync_child = -1;
	return 0;
}

/* Block until `start` writes to exec.fifo (opened O_RDWR by the parent, so
 * that neither side's open ever blocks). */
static int step_wait_start(struct ctx_handles *h, struct error *err)
{
	char b;
	ssize_t n;

	do
		n = read(h->fifo_fd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		return error_sys(err, "wait for start on exec.fifo");
	close(h->fifo_fd);
	h->fifo_fd = -1;
	return 0;
}

static int step_start_container_hooks(const struct ctx_decided *d, const struct ctx_record *r,
				      struct error *err)
{
	if (!d->spec.hooks[HOOK_START_CONTAINER].len)
		return 0;
	hooks_set_cwd(NULL); /* the bundle is not in the container's view */
	return run_container_side_hooks(d, r, HOOK_START_CONTAINER, STATUS_CREATED, err);
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
static int step_seccomp_before_creds(const struct ctx_decided *d, struct ctx_handles *h,
				     struct ctx_init *i, struct error *err)
{
	int listener = -1;

	if (i->locked_down)
		return 0;
	if (process_open_cwd(d, i, err) < 0)
		return -1;
	if (d->spec.process.no_new_privileges)
		return 0;
	if (process_prepare_fds(d, h, i, err) < 0)
		return -1;
	return process_load_seccomp(d, i, &listener, err);
}

static int step_credentials(const struct ctx_decided *d, struct ctx_init *i,
			    struct error *err)
{
	if (i->locked_down)
		return 0;
	return process_apply_credentials(d, i, err);
}

/*
 * A seccomp notify listener must reach listenerPath while the runtime is
 * still there to send it, so such a container is locked down (credentials,
 * then the filter) before READY, as runc does, and the fd goes to the
 * parent.  Without a listener, the filter waits for the last step.  (No
 * filter is loaded before this step: the spec's filter is d->seccomp.)
 */
static int step_seccomp_listener(const struct ctx_decided *d, struct ctx_handles *h,
				 struct ctx_init *i, struct error *err)
{
	int listener = -1;

	if (!d->seccomp.len || !d->seccomp.needs_listener)
		return 0;
	if (d->spec.hooks[HOOK_START_CONTAINER].len)
		return error_set(err, "linux.seccomp: a notify listener together with startContainer hooks is not supported");
	if (landlock_enter(d, h, err) < 0 || process_open_cwd(d, i, err) < 0)
		return -1;
	if (!d->spec.process.no_new_privileges &&
	    process_load_seccomp(d, i, &listener, err) < 0)
		return -1;
	if (process_apply_credentials(d, i, err) < 0)
		return -1;
	if (d->spec.process.no_new_privileges &&
	    process_load_seccomp(d, i, &listener, err) < 0)
		return -1;
	i->locked_down = true;
	if (listener < 0)
		return error_set(err, "linux.seccomp: the filter gave no notify listener");
	if (sync_send_fd(h->sync_child, SYNC_SECCOMP_FD, listener, err) < 0)
		return -1;
	close(listener);
	return sync_expect(h->sync_child, SYNC_GO, err);
}

static int step_session(const struct ctx_decided *d, struct error *err)
{
	/* Its own session, even without a terminal: no TIOCSTI into the
	 * caller's terminal (CVE-2017-5226). */
	if (!d->spec.process.terminal && !WEAK_SETSID && setsid() < 0)
		return error_sys(err, "setsid");
	return 0;
}

/* Until READY, in this order.  Each step is given the parts it reads
 * (const) and writes: d what was decided, r what the lifecycle recorded,
 * h the handles (this process's copies), i the init's own. */
static int setup_steps(const struct ctx_decided *d, const struct ctx_record *r,
		       struct ctx_handles *h, struct ctx_init *i, struct error *err)
{
	if (step_wait_go(d, h, i, err) < 0 ||
	    step_cgroup(h, err) < 0 ||
	    ns_child_join(d, h, err) < 0 ||	   /* the joined namespaces */
	    ns_child_after_go(d, h, i, err) < 0 || /* the new ones made now */
	    ns_loopback_up(d, err) < 0 ||
	    step_egress_filter(d, err) < 0 ||
	    step_session_keyring(d, err) < 0 ||
	    rootfs_prepare_mounts(d, r, h, i, err) < 0 ||
	    step_runtime_hooks(d, h, err) < 0 || /* prestart, createRuntime */
	    step_create_container_hooks(d, r, err) < 0 ||
	    step_only_loopback(d, err) < 0 || /* the network policy */
	    step_egress_names(d, h, err) < 0 ||
	    sysctl_apply(d, h, err) < 0 ||
	    process_setup_early(d, h, err) < 0 || /* the process's attributes */
	    rootfs_finalize(d, h, i, err) < 0 ||  /* masks, pivot_root */
	    step_hostname(d, err) < 0 ||
	    step_session(d, err) < 0 ||
	    terminal_setup_child(d, h, err) < 0 ||
	    process_resolve_exec(d, i, err) < 0 ||
	    process_resolve_home(d, i, err) < 0 ||
	    step_seccomp_listener(d, h, i, err) < 0 ||
	    step_ready(h, err) < 0)
		return -1;
	return 0;
}

/* After `start`, in this order, up to process_exec. */
static int start_steps(const struct ctx_decided *d, const struct ctx_record *r,
		       struct ctx_handles *h, struct ctx_init *i, struct error *err)
{
	if (step_wait_start(h, err) < 0 ||
	    step_start_container_hooks(d, r, err) < 0 ||
	    /* After the last mount and hook, before the container's code: a
	     * Landlock domain of the container's own (landlock.h).  The
	     * listener path (locked down before READY) entered it there. */
	    landlock_enter(d, h, err) < 0 ||
	    step_seccomp_before_creds(d, h, i, err) < 0 ||
	    step_credentials(d, i, err) < 0)
		return -1;
	return 0;
}

void child_main(const struct ctx_decided *d, const struct ctx_record *r,
		struct ctx_handles *h, struct ctx_init *i)
{
	struct error err;

	error_clear(&err);
	if (setup_steps(d, r, h, i, &err) < 0) {
		struct error ignored;
		if (h->sync_child >= 0)
			sync_send(h->sync_child, SYNC_ERROR, &err, &ignored);
		_exit(1);
	}
	if (start_steps(d, r, h, i, &err) < 0) {
		process_report_start_failure(h, &err);
		log_error("%s", err.msg);
		if (log_get_fd() != STDERR_FILENO)
			dprintf(STDERR_FILENO, "agentsbx: %s\n", err.msg);
		_exit(127);
	}
	process_exec(d, h, i);
}
