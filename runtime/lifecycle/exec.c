/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `exec`: a new process in a running container.  It joins every namespace
 * of the container's init (through a pidfd, all at once), its cgroup, and
 * gets the container's seccomp filter and the process's own capabilities,
 * user, rlimits and cwd.  No re-exec of the runtime: the process is a clone
 * of this one, made non-dumpable before it enters the container so that
 * nothing inside can open /proc/<pid>/exe of the runtime (CVE-2019-5736).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/forward_signals.h"
#include "../../lib/fds.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "weak.h"
#include "../internal.h"
#include "../init/landlock.h"
#include "lifecycle.h"
#include "../init/terminal.h"
#include "../init/trampoline.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	const char *name;
	int flag;
} ns_files[] = {
	{ "user", CLONE_NEWUSER },
	{ "mnt", CLONE_NEWNS },
	{ "net", CLONE_NEWNET },
	{ "ipc", CLONE_NEWIPC },
	{ "uts", CLONE_NEWUTS },
	{ "cgroup", CLONE_NEWCGROUP },
	{ "time", CLONE_NEWTIME },
};

/* The namespaces (other than pid) in which the init differs from us. */
static int init_namespaces(pid_t pid, int *flags, struct error *err)
{
	*flags = 0;
	for (size_t i = 0; i < sizeof(ns_files) / sizeof(ns_files[0]); i++) {
		char theirs[64], ours[64];
		struct stat a, b;

		snprintf(theirs, sizeof(theirs), "/proc/%d/ns/%s", pid, ns_files[i].name);
		snprintf(ours, sizeof(ours), "/proc/self/ns/%s", ns_files[i].name);
		if (stat(theirs, &a) < 0) {
			if (errno == ENOENT && ns_files[i].flag == CLONE_NEWTIME)
				continue;
			return error_sys(err, "stat %s", theirs);
		}
		if (stat(ours, &b) < 0)
			return error_sys(err, "stat %s", ours);
		if (a.st_ino != b.st_ino || a.st_dev != b.st_dev)
			*flags |= ns_files[i].flag;
	}
	return 0;
}

/* ---- the process to run ---------------------------------------------------- */

static int parse_user(const char *s, struct oci_user *u, struct error *err)
{
	unsigned long long uid, gid;
	_cleanup_free_ char *copy = xstrdup(s);
	char *colon = strchr(copy, ':');

	if (colon)
		*colon++ = '\0';
	if (parse_u64(copy, &uid) < 0 || uid > UINT32_MAX ||
	    (colon && (parse_u64(colon, &gid) < 0 || gid > UINT32_MAX)))
		return error_set(err, "--user: expected UID[:GID], got \"%s\"", s);
	u->uid = (uint32_t)uid;
	if (colon)
		u->gid = (uint32_t)gid;
	return 0;
}

static int parse_gids(const char *s, struct oci_user *u, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(s);
	char *save = NULL;

	free(u->additional_gids);
	u->additional_gids = NULL;
	u->n_additional_gids = 0;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned long long g;
		if (parse_u64(t, &g) < 0 || g > UINT32_MAX)
			return error_set(err, "--additional-gids: bad group \"%s\"", t);
		u->additional_gids = xrealloc(u->additional_gids,
					      (u->n_additional_gids + 1) * sizeof(uint32_t));
		u->additional_gids[u->n_additional_gids++] = (uint32_t)g;
	}
	return 0;
}

static void strv_append(struct str_array *a, const char *s)
{
	a->items = xrealloc(a->items, (a->len + 1) * sizeof(char *));
	a->items[a->len++] = xstrdup(s);
}

/* Replace or add NAME=VALUE in env. */
static void env_set(struct str_array *env, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (size_t i = 0; i < env->len; i++)
		if (!strncmp(env->items[i], kv, n) && env->items[i][n] == '=') {
			free(env->items[i]);
			env->items[i] = xstrdup(kv);
			return;
		}
	strv_append(env, kv);
}

/* The container's process, overridden by the command-line flags. */
static int process_from_flags(const struct exec_opts *o, struct oci_process *p,
			      struct error *err)
{
	for (size_t i = 0; i < p->args.len; i++)
		free(p->args.items[i]);
	free(p->args.items);
	memset(&p->args, 0, sizeof(p->args));
	for (char **a = o->args; a && *a; a++)
		strv_append(&p->args, *a);
	if (!p->args.len)
		return error_set(err, "exec: no command given");
	for (char **e = o->env; e && *e; e++)
		env_set(&p->env, *e);
	if (o->cwd) {
		free(p->cwd);
		p->cwd = xstrdup(o->cwd);
	}
	if (o->user && parse_user(o->user, &p->user, err) < 0)
		return -1;
	if (o->additional_gids && parse_gids(o->additional_gids, &p->user, err) < 0)
		return -1;
	for (char **cap = o->caps; cap && *cap; cap++) {
		strv_append(&p->capabilities.bounding, *cap);
		strv_append(&p->capabilities.effective, *cap);
		strv_append(&p->capabilities.permitted, *cap);
		p->has_capabilities = true;
	}
	if (o->no_new_privs)
		p->no_new_privileges = true;
	p->terminal = o->tty;
	return 0;
}

static int load_exec_process(const struct exec_opts *o, struct oci_spec *spec,
			     struct error *err)
{
	_cleanup_free_ char *buf = NULL;
	struct oci_process p;
	size_t len;

	if (!o->process_file)
		return process_from_flags(o, &spec->process, err);
	if (read_file_at(AT_FDCWD, o->process_file, SPEC_MAX_FILE_SIZE, &buf, &len, err) < 0)
		return error_prefix(err, "--process");
	if (spec_parse_process(buf, len, &p, err) < 0 || spec_validate_process(&p, err) < 0)
		return error_prefix(err, "--process %s", o->process_file);
	if (!p.has_capabilities) {
		/* runc: a process without capabilities gets the container's. */
		p.capabilities = spec->process.capabilities;
		p.has_capabilities = spec->process.has_capabilities;
		memset(&spec->process.capabilities, 0, sizeof(spec->process.capabilities));
	}
	process_free(&spec->process);
	spec->process = p;
	spec->has_process = true;
	/* Flags still apply on top of the file, as in runc. */
	if (o->tty)
		spec->process.terminal = true;
	if (o->cwd) {
		free(spec->process.cwd);
		spec->process.cwd = xstrdup(o->cwd);
	}
	for (char **e = o->env; e && *e; e++)
		env_set(&spec->process.env, *e);
	return 0;
}

/* ---- the child ------------------------------------------------------------- */

/* The exec'd process's clone: the context (its parts handed out in
 * exec_child_setup) and the container it joins. */
struct exec_child {
	struct container_ctx *c;
	struct container_handle *ct;
	int pidfd;	  /* the init's */
	int ns_flags;	  /* namespaces to join */
	int own_pidns;	  /* ours, to return to after the clone */
	bool fork_inside; /* the child joins the pid namespace and forks */
};

/* What the clone holds of the host and does not need inside: --root, the
 * container's state directory, our pid namespace, the parent's ends of the
 * sync and console pairs.  All close-on-exec, but closed before the setns,
 * so that until the execve only the caller's fds, the trampoline, the sync
 * socket and the console socket are there to reach.  (The cwd-in-root weak
 * build keeps them: its CVE-2024-21626 test needs a host directory fd.) */
static void drop_host_fds(struct exec_child *x, struct ctx_handles *h)
{
	fd_close(&h->sync_parent);
	fd_close(&h->console_peer); /* our end of the pty pair */
	if (WEAK_CWD_IN_ROOT)
		return;
	fd_close(&x->ct->rootfd);
	fd_close(&x->ct->dirfd);
	fd_close(&h->root_fd);
	fd_close(&x->own_pidns);
}

/* The parent's side: the process the child forked is the exec'd one. */
static int take_forked_process(const struct ctx_handles *h, pid_t *pid, struct error *err)
{
	long long inner;
	int r = sync_expect_value(h->sync_parent, SYNC_INIT_PID, &inner, err);

	while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -1;
	*pid = (pid_t)inner;
	return 0;
}

static int exec_child_setup(struct exec_child *x, const struct ctx_decided *d,
			    struct ctx_handles *h, struct ctx_init *i, struct error *err)
{
	drop_host_fds(x, h);
	/* Into the container's cgroup first (cgroup.h), before the fork of
	 * fork_inside: what it forks stays where it was forked. */
	if (cgroup_place_self(&h->cg_birth, err) < 0)
		return -1;
	if (d->restore_sigmask)
		sigprocmask(SIG_SETMASK, &d->saved_sigmask, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	if (x->ns_flags && setns(x->pidfd, x->ns_flags | (x->fork_inside ? CLONE_NEWPID : 0)) < 0)
		return error_sys(err, "join the namespaces of container %s", d->id);
	close(x->pidfd);
	/* Rootless: the runtime could not join the pid namespace (no
	 * capability over the user namespace that owns it); this child, in
	 * that user namespace now, joined it for children and forks. */
	if (x->fork_inside && ns_fork_into_pid_namespace(h->sync_child, err) < 0)
		return -1;
	/* Inside, and still the runtime's image: non-dumpable since before the
	 * clone, and now in a Landlock domain of its own, which its execve
	 * keeps (landlock.h).  The container's processes, all in the init's
	 * domain, could not reach it between the setns and here either: a
	 * landlocked process cannot ptrace one without a domain. */
	if (landlock_enter(d, h, err) < 0)
		return -1;
	if (sync_expect(h->sync_child, SYNC_GO, err) < 0)
		return -1;
	/* In the container's cgroup by now: execCPUAffinity.final. */
	if (process_cpu_affinity(d->spec.process.exec_cpu_affinity.final, "final", err) < 0 ||
	    rootfs_enter_init_root(x->ct->st.pid, x->ns_flags & CLONE_NEWNS, err) < 0)
		return -1;
	if (chdir("/") < 0)
		return error_sys(err, "chdir to the container's /");
	if (process_set_rlimits(&d->spec.process, err) < 0 ||
	    mempolicy_apply(&d->spec, err) < 0 || process_setup_exec(d, err) < 0 ||
	    terminal_setup_child(d, h, err) < 0 || process_resolve_exec(d, i, err) < 0 ||
	    process_resolve_home(d, i, err) < 0)
		return -1;
	if (!d->spec.process.terminal && setsid() < 0)
		return error_sys(err, "setsid");
	/* Before a filter written for runc (no openat2, no close_range):
	 * the cwd resolved and the fds closed.  After it: what child.c's
	 * step_seccomp_before_creds lists, plus prctl(PR_SET_PDEATHSIG),
	 * sendto and close of the sync socket. */
	if (process_open_cwd(d, i, err) < 0)
		return -1;
	if (!d->spec.process.no_new_privileges &&
	    (process_prepare_fds(d, h, i, err) < 0 || process_load_seccomp(d, i, NULL, err) < 0))
		return -1;
	if (process_apply_credentials(d, i, err) < 0)
		return -1;
	if (prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_PDEATHSIG)");
	return sync_send(h->sync_child, SYNC_READY, NULL, err);
}

/* As the init (child_main), the clone writes its own part and its copies
 * of the handles, never what was decided. */
__attribute__((noreturn)) static void exec_child_main(struct exec_child *x)
{
	const struct ctx_decided *d = &x->c->decided;
	struct ctx_handles *h = &x->c->handles;
	struct ctx_init *i = &x->c->init;
	struct error err, ignored;

	error_clear(&err);
	if (exec_child_setup(x, d, h, i, &err) < 0) {
		sync_send(h->sync_child, SYNC_ERROR, &err, &ignored);
		_exit(1);
	}
	close(h->sync_child);
	h->sync_child = -1;
	process_exec(d, h, i);
}

/* ---- the parent ------------------------------------------------------------- */

static int prepare_exec(struct ctx_decided *d, struct ctx_handles *h,
			const struct container_handle *ct, const struct exec_opts *o,
			struct error *err)
{
	if (state_load_spec(ct->dirfd, &d->spec, err) < 0)
		return error_prefix(err, "load the container's config.json");
	if (load_exec_process(o, &d->spec, err) < 0)
		return -1;
	/* The policy in force applies to every process, exec'd ones too;
	 * relative bind sources are judged as at create, from its bundle. */
	if (ct->st.bundle)
		policy_resolve_bind_sources(&d->spec, ct->st.bundle);
	d->exec_bundle = ct->st.bundle;
	if (ctx_open_root(d, h, err) < 0 || policy_enforce(d, h, err) < 0 ||
	    identity_apply_exec(d, ct->dirfd, err) < 0)
		return -1;
	if (caps_prepare(&d->spec.process.capabilities, d->spec.process.has_capabilities,
			 &d->caps, err) < 0 ||
	    trampoline_memfd(&h->trampoline_fd, err) < 0 ||
	    landlock_prepare(d, h, err) < 0 ||
	    ctx_prepare_seccomp(d, err) < 0 || ctx_prepare_terminal(d, h, err) < 0)
		return -1;
	return 0;
}

static int spawn_exec(struct container_ctx *c, struct container_handle *ct,
		      pid_t *out, struct error *err)
{
	const struct ctx_decided *d = &c->decided;
	struct ctx_handles *h = &c->handles;
	struct exec_child x = { .c = c, .ct = ct, .pidfd = -1, .own_pidns = -1 };
	_cleanup_close_ int pidns = -1;
	bool born_in = false;
	int pair[2];
	pid_t pid;

	if (init_namespaces(ct->st.pid, &x.ns_flags, err) < 0)
		return -1;
	x.pidfd = (int)syscall(SYS_pidfd_open, ct->st.pid, 0);
	if (x.pidfd < 0 || !proc_is_same(ct->st.pid, ct->st.start_time))
		return error_set(err, "container not running");
	/* The pid namespace applies to children: join it here, so that the
	 * one clone below lands in it (and go back to ours after); rootless,
	 * the child does (fork_into_pid_namespace). */
	x.fork_inside = rootless_caller() && (x.ns_flags & CLONE_NEWUSER);
	pidns = open("/proc/self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
	if (pidns < 0)
		return error_sys(err, "open /proc/self/ns/pid_for_children");
	if (!x.fork_inside && setns(x.pidfd, CLONE_NEWPID) < 0 && errno != EINVAL)
		return error_sys(err, "join the pid namespace of container %s", d->id);
	if (sync_pair(pair, err) < 0)
		return -1;
	h->sync_parent = pair[0];
	h->sync_child = pair[1];
	/* Nothing inside may open our /proc/<pid>/exe (CVE-2019-5736). */
	if (!WEAK_DUMPABLE && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return error_sys(err, "prctl(PR_SET_DUMPABLE)");
	/* execCPUAffinity.initial: ours, and the clone's until its cgroup. */
	if (process_cpu_affinity(d->spec.process.exec_cpu_affinity.initial, "initial", err) < 0)
		return -1;
	if (ct->st.cgroup_path &&
	    cgroup_open_birth(ct->st.cgroup_path, ct->st.cgroup_manager, &h->cg_birth, err) < 0)
		return -1;
	if (ns_clone_into(0, cgroup_birth_clone_fd(&h->cg_birth), &pid, &born_in, err) < 0)
		return -1;
	if (pid == 0) {
		x.own_pidns = pidns;
		exec_child_main(&x);
	}
	/* The flag and the pid namespace were for the child; this process
	 * forks nothing into the container after it (a sanitizer's exit-time
	 * tracer would otherwise start there, unable to see us, and spin). */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (setns(pidns, CLONE_NEWPID) < 0)
		log_warn("return to the runtime's pid namespace: %s", strerror(errno));
	close(x.pidfd);
	close(h->sync_child);
	h->sync_child = -1;
	if (h->console_sock >= 0) {
		close(h->console_sock);
		h->console_sock = -1;
	}
	if (x.fork_inside && take_forked_process(h, &pid, err) < 0)
		return -1;
	*out = pid;
	if (ct->st.cgroup_path &&
	    cgroup_after_clone(&h->cg_birth, pid, born_in, err) < 0)
		goto fail;
	if (sync_send(h->sync_parent, SYNC_GO, NULL, err) < 0 ||
	    sync_expect(h->sync_parent, SYNC_READY, err) < 0)
		goto fail;
	return 0;
fail:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static int wait_exec(const struct ctx_handles *h, pid_t pid, int *exit_status,
		     struct error *err)
{
	int status = 0;

	if (h->console_peer >= 0) {
		_cleanup_close_ int master = -1;
		if (terminal_recv_master(h->console_peer, &master, err) < 0)
			return -1;
		if (terminal_proxy(master, pid, &status, err) < 0)
			return -1;
	} else if (wait_forwarding_signals(pid, &status, err) < 0) {
		return -1;
	}
	*exit_status = exit_code_of(status);
	return 0;
}

int container_exec(const struct global_opts *g, const struct exec_opts *o,
		   int *exit_status, struct error *err)
{
	struct container_handle ct;
	struct container_ctx c;
	struct create_opts copts = { .id = o->id, .preserve_fds = o->preserve_fds, .detach = o->detach, .console_socket = o->console_socket };
	pid_t pid = -1;
	int r = -1;

	*exit_status = 0;
	if (handle_open(g, o->id, false, &ct, err) < 0)
		return -1;
	container_ctx_init(&c, g, &copts);
	c.decided.is_exec = true;
	c.decided.foreground = !o->detach;
	block_forwarded_signals(&c.decided.saved_sigmask);
	c.decided.restore_sigmask = true;
	if (ct.st.status != STATUS_RUNNING) {
		error_set(err, "cannot exec in a container that is %s", status_name(ct.st.status));
		goto out;
	}
	if (prepare_exec(&c.decided, &c.handles, &ct, o, err) < 0 ||
	    spawn_exec(&c, &ct, &pid, err) < 0)
		goto out;
	/* The lock is not held while the process runs. */
	handle_close(&ct);
	if (o->pid_file && write_pid_file(o->pid_file, pid, err) < 0)
		goto out;
	r = o->detach ? 0 : wait_exec(&c.handles, pid, exit_status, err);
out:
	handle_close(&ct);
	sigprocmask(SIG_SETMASK, &c.decided.saved_sigmask, NULL);
	container_ctx_release(&c);
	return r;
}
