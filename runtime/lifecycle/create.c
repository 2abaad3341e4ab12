/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `create`, the parent's side: load and check the spec, prepare everything
 * that can be computed before clone() (mount plan, capability sets,
 * compiled seccomp), clone the container init, write its id maps, put it in
 * its cgroup, run the runtime-namespace hooks, and wait until it reports
 * ready.  Any failure kills the init and removes the cgroup and the state
 * directory: nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../hooks/hooks.h"
#include "../../lib/cleanup.h"
#include "../../lib/fds.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "../judge/judge.h"
#include "../policy/audit_log.h"
#include "../init/landlock.h"
#include "../init/terminal.h"
#include "../init/trampoline.h"

/* The state file, as d, h and r say now. */
static int write_ctx_state(const struct ctx_decided *d, const struct ctx_handles *h,
			   const struct ctx_record *r, enum container_status status,
			   struct error *err)
{
	/* This process's, read once (the state is written up to four
	 * times); a forked front door creates under its own pid. */
	static pid_t creator_pid;
	static unsigned long long creator_start_time;
	struct container_state st;

	ctx_state(d, r, status, &st);
	/* Until "created", a killed create is told by this process gone. */
	st.creator_pid = getpid();
	if (creator_pid != st.creator_pid) {
		creator_pid = st.creator_pid;
		creator_start_time = proc_start_time(creator_pid);
	}
	st.creator_start_time = creator_start_time;
	return state_write(h->state_dir_fd, &st, err);
}

/* ---- before clone ----------------------------------------------------------- */

static int load_spec(struct ctx_decided *d, struct error *err)
{
	_cleanup_close_ int bfd = -1;
	char real[PATH_MAX];

	if (!realpath(d->opts->bundle ? d->opts->bundle : ".", real))
		return error_sys(err, "bundle %s", d->opts->bundle ? d->opts->bundle : ".");
	d->bundle = xstrdup(real);
	bfd = open(d->bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return error_sys(err, "open bundle %s", d->bundle);
	if (read_file_at(bfd, "config.json", SPEC_MAX_FILE_SIZE, &d->config_json,
			 &d->config_len, err) < 0)
		return error_prefix(err, "bundle %s", d->bundle);
	if (spec_parse(d->config_json, d->config_len, &d->spec, err) < 0 ||
	    spec_validate(&d->spec, err) < 0)
		return -1;
	if (!d->spec.has_process)
		return error_set(err, "config.json: process: required to create a container");
	if (!d->spec.root.path)
		return error_set(err, "config.json: root.path: required");
	return 0;
}

/* root.path opened once (symlinks followed, magic links not) and located
 * by the judge: d->rootfs is where the directory really is, and
 * policy_judge_objects() decides on it. */
static int open_rootfs(struct ctx_decided *d, struct ctx_handles *h, struct error *err)
{
	_cleanup_free_ char *joined = NULL;
	const char *p = d->spec.root.path;
	struct judged o;

	if (p[0] != '/')
		p = joined = xasprintf("%s/%s", d->bundle, p);
	if (judge_open("root.path", p, JUDGE_SYMLINKS, &o, err) < 0)
		return -1;
	if (!S_ISDIR(o.st.st_mode)) {
		judged_close(&o);
		return error_setc(err, ENOTDIR, "rootfs %s", p);
	}
	d->rootfs = xstrdup(o.where);
	h->rootfs_fd = o.fd;
	return 0;
}

static int open_host_proc(struct ctx_handles *h, struct error *err)
{
	h->host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (h->host_proc_fd < 0)
		return error_sys(err, "open /proc");
	return proc_check_fd(h->host_proc_fd, "/proc", err);
}

/* systemd socket activation: fds meant for us go on to the container. */
static void prepare_listen_fds(struct ctx_decided *d)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	long long p, n;

	if (!pid || !fds || parse_i64(pid, &p) < 0 || parse_i64(fds, &n) < 0)
		return;
	if (p == getpid() && n > 0 && n < 1000)
		d->listen_fds = (int)n;
}

/* Everything that can be decided and opened before the state directory:
 * the last writes to d but identity_take's. */
static int prepare(struct ctx_decided *d, struct ctx_handles *h, struct ctx_record *r,
		   struct error *err)
{
	const struct mount_policy mp = {
		.source = d->policy.source,
		.bind_prefixes = &d->policy.bind_prefixes,
		.refuse_writable_dir_binds = d->decision.refuse_writable_dir_binds,
		.special_files = &d->policy.bind_special_files,
		.volume_dirs = &d->policy.bind_volume_dirs,
	};

	r->cgroup_manager = d->g->systemd_cgroup ? CGROUP_MANAGER_SYSTEMD : CGROUP_MANAGER_FS;
	/* The kernel objects first (the rootfs, the joined namespaces), each
	 * opened once and judged, then every check of the spec: the child
	 * creates nothing on the rootfs unless all of this passed. */
	if (open_rootfs(d, h, err) < 0 || open_host_proc(h, err) < 0 ||
	    ns_open_joined(d, h, err) < 0 || policy_judge_objects(d, h, err) < 0 ||
	    ns_prepare(d, err) < 0 || sysctl_check_host_namespaces(d, err) < 0 ||
	    devices_check_paths(&d->spec, err) < 0 ||
	    mounts_prepare(&d->spec, d->bundle, d->decision.check_bind_sources ? &mp : NULL,
			   &d->mounts, &h->mount_trees, err) < 0 ||
	    caps_prepare(&d->spec.process.capabilities, d->spec.process.has_capabilities,
			 &d->caps, err) < 0 ||
	    ctx_prepare_seccomp(d, err) < 0 ||
	    cgroup_resolve_path(d->spec.linux.cgroups_path, d->id, r->cgroup_manager,
				&r->cgroup_path, err) < 0 ||
	    policy_judge_cgroup(d, r, err) < 0 ||
	    ctx_prepare_terminal(d, h, err) < 0 ||
	    trampoline_memfd(&h->trampoline_fd, err) < 0 ||
	    landlock_prepare(d, h, err) < 0)
		return -1;
	prepare_listen_fds(d);
	r->created = rfc3339_now();
	return 0;
}

/* What the state directory holds before the clone: the spec, the fifos,
 * and the "creating" state naming this process and the cgroup to come. */
static int fill_state_dir(const struct ctx_decided *d, struct ctx_handles *h,
			  const struct ctx_record *r, struct error *err)
{
	_cleanup_close_ int cfg = -1;

	/* The spec as it is now: delete runs the poststop hooks from it even
	 * if the bundle has changed or gone. */
	cfg = openat(h->state_dir_fd, STATE_CONFIG_FILE,
		     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (cfg < 0 || write_all(cfg, d->config_json, d->config_len) < 0)
		return error_sys(err, "save config.json for %s", d->id);
	if (d->policy_loaded && audit_log_note(h->state_dir_fd, &d->policy, d->id, err) < 0)
		return -1;
	if (mkfifoat(h->state_dir_fd, STATE_FIFO, 0600) < 0)
		return error_sys(err, "create exec fifo for %s", d->id);
	h->fifo_fd = openat(h->state_dir_fd, STATE_FIFO, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (h->fifo_fd < 0)
		return error_sys(err, "open exec fifo for %s", d->id);
	if (mkfifoat(h->state_dir_fd, STATE_DONE_FIFO, 0600) < 0)
		return error_sys(err, "create exec.done fifo for %s", d->id);
	h->done_fd = openat(h->state_dir_fd, STATE_DONE_FIFO, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (h->done_fd < 0)
		return error_sys(err, "open exec.done fifo for %s", d->id);
	return write_ctx_state(d, h, r, STATUS_CREATING, err);
}

/* The state directory appears under the id whole, already locked and
 * holding the "creating" state: never empty or half-made. */
static int make_state_dir(const struct ctx_decided *d, struct ctx_handles *h,
			  struct ctx_record *r, struct error *err)
{
	_cleanup_free_ char *staged = NULL;

	state_dir_sweep_staged(h->root_fd);
	if (state_dir_stage(h->root_fd, &staged, &h->state_dir_fd, err) < 0)
		return -1;
	if (fill_state_dir(d, h, r, err) < 0) {
		state_dir_discard_staged(h->root_fd, staged, h->state_dir_fd);
		return -1;
	}
	if (state_dir_publish(h->root_fd, staged, d->id, h->state_dir_fd, err) < 0)
		return -1;
	r->state_dir_made = true;
	return 0;
}

/* ---- clone and handshake ------------------------------------------------------- */

static int run_runtime_hooks(const struct ctx_decided *d, const struct ctx_handles *h,
			     struct ctx_record *r, struct error *err)
{
	if (write_ctx_state(d, h, r, STATUS_CREATING, err) < 0)
		return -1;
	ctx_update_state_json(d, r, STATUS_CREATING);
	if (hooks_run(&d->spec.hooks[HOOK_PRESTART], HOOK_PRESTART, r->state_json, err) < 0 ||
	    hooks_run(&d->spec.hooks[HOOK_CREATE_RUNTIME], HOOK_CREATE_RUNTIME,
		      r->state_json, err) < 0)
		return -1;
	return sync_send(h->sync_parent, SYNC_HOOKS_DONE, NULL, err);
}

/* The seccomp notify listener goes to linux.seccomp.listenerPath with the
 * container process state, as config-linux.md says. */
static int forward_listener(const struct ctx_decided *d, const struct ctx_handles *h,
			    struct ctx_record *r, int fd, struct error *err)
{
	const struct oci_seccomp *sc = &d->spec.linux.seccomp;
	int rc;

	if (fd < 0)
		return error_set(err, "seccomp listener message without an fd");
	ctx_update_state_json(d, r, STATUS_CREATING);
	rc = seccomp_send_listener(sc->listener_path, h->listener_fd, sc->listener_metadata, fd,
				   r->state_json, err);
	close(fd);
	if (rc == 0)
		return sync_send(h->sync_parent, SYNC_GO, NULL, err);
	return -1;
}

/* The child forked the init into a new pid namespace (ns_fork_init) and
 * exits: the init is the one the state names from now on. */
static int take_forked_init(const struct ctx_decided *d, const struct ctx_handles *h,
			    struct ctx_record *r, pid_t init, struct error *err)
{
	pid_t first = r->pid;

	while (waitpid(first, NULL, 0) < 0 && errno == EINTR)
		;
	r->pid = init;
	r->start_time = proc_start_time(init);
	return write_ctx_state(d, h, r, STATUS_CREATING, err);
}

/* One of the proxy's sockets; with the last, the proxy is started. */
static int take_egress_fd(const struct ctx_decided *d, struct ctx_handles *h, int fd,
			  long long port, struct error *err)
{
	struct egress_spawn s = {
		.id = d->id,
		.policy = &d->policy,
		.decision = &d->decision,
		.uid = d->decision.identity ? d->spec.process.user.uid : 65534,
		.state_dir_fd = h->state_dir_fd,
	};
	bool complete = false;

	if (!d->decision.egress_proxy) {
		if (fd >= 0)
			close(fd);
		return error_set(err, "egress: a socket from an init that has no egress proxy");
	}
	if (egress_fds_take(&h->egress, &d->policy, fd, port, &complete, err) < 0)
		return -1;
	return complete ? egress_proxy_spawn(&s, &h->egress, err) : 0;
}

/* Wait for READY, serving the child's requests on the way. */
static int wait_child_ready(const struct ctx_decided *d, struct ctx_handles *h,
			    struct ctx_record *r, struct error *err)
{
	struct sync_msg msg;
	int fd;

	for (;;) {
		if (sync_recv(h->sync_parent, &msg, &fd, err) < 0)
			return -1;
		switch (msg.type) {
		case SYNC_READY:
			return 0;
		case SYNC_RUN_HOOKS:
			if (run_runtime_hooks(d, h, r, err) < 0)
				return -1;
			continue;
		case SYNC_SECCOMP_FD:
			if (forward_listener(d, h, r, fd, err) < 0)
				return -1;
			continue;
		case SYNC_INIT_PID:
			if (take_forked_init(d, h, r, (pid_t)msg.value, err) < 0)
				return -1;
			continue;
		case SYNC_EGRESS_FD:
			if (take_egress_fd(d, h, fd, msg.value, err) < 0)
				return -1;
			continue;
		default:
			if (fd >= 0)
				close(fd);
			return error_set(err, "unexpected message %d from container init",
					 msg.type);
		}
	}
}

/* As runc: an unprivileged caller whose cgroups are not delegated to it
 * gets no cgroup, and says so (never a silent claim of limits). */
static int rootless_without_cgroup(const struct ctx_decided *d, struct ctx_record *r,
				   struct error *err)
{
	log_warn("rootless: no cgroup for %s (%s): the container runs without cgroup limits (memory, pids, cpu, devices); delegate a cgroup v2 subtree to uid %u to have them",
		 d->id, err->msg, (unsigned)geteuid());
	free(r->cgroup_path);
	r->cgroup_path = NULL;
	return 0;
}

/* The container's cgroup: the spec's limits, plus allow rules for its
 * linux.devices.  pid 0: before the clone, with h->cg_birth for the init
 * to enter it (cgroup.h); a pid: made with the process in it (systemd). */
static int make_cgroup(const struct ctx_decided *d, struct ctx_handles *h,
		       struct ctx_record *r, pid_t pid, struct error *err)
{
	struct oci_resources res;
	int rc;

	if (!r->cgroup_path)
		return 0; /* rootless, none to be had */
	cgroup_resources_for_spec(&d->spec, &res);
	if (pid == 0)
		rc = cgroup_create_for_clone(r->cgroup_path, r->cgroup_manager, &res,
					     &h->cg_birth, err);
	else
		rc = cgroup_create(r->cgroup_path, r->cgroup_manager, &res, pid, err);
	free(res.devices);
	if (rc == 0 && (pid != 0 || !h->cg_birth.after_clone))
		r->cgroup_created = true;
	if (rc < 0 && rootless_caller() &&
	    (err->code == EACCES || err->code == EPERM || err->code == EROFS))
		return rootless_without_cgroup(d, r, err);
	return rc;
}

/* The parent's side of the init's way into its cgroup, after the clone. */
static int place_init(const struct ctx_decided *d, struct ctx_handles *h,
		      struct ctx_record *r, pid_t pid, bool born_in, struct error *err)
{
	bool after_clone = h->cg_birth.after_clone;

	if (!r->cgroup_path)
		return 0;
	if (cgroup_after_clone(&h->cg_birth, pid, born_in, err) < 0)
		return -1;
	return after_clone ? make_cgroup(d, h, r, pid, err) : 0;
}

/* The clone, and the parent's side of the handshake up to READY. */
static int spawn_init(struct container_ctx *c, struct error *err)
{
	const struct ctx_decided *d = &c->decided;
	struct ctx_handles *h = &c->handles;
	struct ctx_record *r = &c->record;
	bool born_in = false;
	int pair[2];
	pid_t pid;

	if (sync_pair(pair, err) < 0)
		return -1;
	h->sync_parent = pair[0];
	h->sync_child = pair[1];
	if (make_cgroup(d, h, r, 0, err) < 0 || ns_join_before_clone(d, h, err) < 0)
		return -1;
	if (ns_clone_into(d->clone_flags, cgroup_birth_clone_fd(&h->cg_birth), &pid, &born_in,
			  err) < 0)
		return -1;
	if (pid == 0)
		child_main(d, r, h, &c->init);
	ns_restore_after_clone(h);
	r->pid = pid;
	/* Recorded before the init may act (it waits for SYNC_GO, and dies
	 * with us until READY): delete finds it by pid and start time. */
	r->start_time = proc_start_time(pid);
	if (write_ctx_state(d, h, r, STATUS_CREATING, err) < 0)
		return -1;
	mounts_close_trees(&h->mount_trees); /* the child has its copies */
	fd_close(&h->sync_child);
	fd_close(&h->console_sock);
	if (ns_write_id_maps(d, h, r, err) < 0 || place_init(d, h, r, pid, born_in, err) < 0)
		return -1;
	if (sync_send(h->sync_parent, SYNC_GO, NULL, err) < 0)
		return -1;
	if (wait_child_ready(d, h, r, err) < 0)
		return -1;
	fd_close(&h->fifo_fd);
	fd_close(&h->done_fd);
	return 0;
}

/* Undo a failed create: nothing may be left behind. */
static void create_abort(const struct ctx_decided *d, const struct ctx_handles *h,
			 struct ctx_record *r)
{
	struct error e;

	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
			;
		/* runtime.md: a failed create goes on to delete, which runs
		 * the poststop hooks. */
		if (d->spec.hooks[HOOK_POSTSTOP].len) {
			ctx_update_state_json(d, r, STATUS_STOPPED);
			hooks_run_warn(&d->spec.hooks[HOOK_POSTSTOP], HOOK_POSTSTOP,
				       r->state_json);
		}
	}
	if (r->cgroup_created &&
	    cgroup_destroy(r->cgroup_path, r->cgroup_manager, true, &e) < 0)
		log_warn("cleanup after failed create: %s", e.msg);
	if (!r->state_dir_made)
		return;
	policy_release_container(h->state_dir_fd, d->id, "cleanup after failed create");
	if (state_dir_remove(h->root_fd, d->id, h->state_dir_fd, &e) < 0)
		log_warn("cleanup after failed create: %s", e.msg);
}

/* Load, enforce and prepare (d is decided here and not written after
 * identity_take), then the state directory and the clone. */
int create_container(struct container_ctx *c, struct error *err)
{
	struct ctx_decided *d = &c->decided;
	struct ctx_handles *h = &c->handles;
	struct ctx_record *r = &c->record;

	if (container_id_validate(d->id, err) < 0 || load_spec(d, err) < 0 ||
	    ctx_open_root(d, h, err) < 0 || policy_enforce(d, h, err) < 0)
		return -1;
	if (prepare(d, h, r, err) < 0) {
		/* The kernel objects' and bind sources' refusals (judged on
		 * their fds here), into the audit log as policy_enforce's are. */
		if (d->policy.mode == POLICY_ENFORCE && strstr(err->msg, "policy: "))
			policy_audit_refusal(d, err);
		return -1;
	}
	hooks_set_cwd(d->bundle);
	if (make_state_dir(d, h, r, err) < 0 || identity_take(d, h, err) < 0 ||
	    netfilter_note_joined_netns(d, h, err) < 0 ||
	    spawn_init(c, err) < 0 || netfilter_check_joined_netns(h, r, err) < 0 ||
	    write_ctx_state(d, h, r, STATUS_CREATED, err) < 0 ||
	    (d->opts->pid_file && write_pid_file(d->opts->pid_file, r->pid, err) < 0)) {
		create_abort(d, h, r);
		return -1;
	}
	return 0;
}

int container_create_detailed(const struct global_opts *g,
			      const struct create_opts *o,
			      struct created_container *out, struct error *err)
{
	struct container_ctx c;
	int r;

	if (out)
		memset(out, 0, sizeof(*out));
	container_ctx_init(&c, g, o);
	r = create_container(&c, err);
	if (r == 0 && out) {
		out->pid = c.record.pid;
		out->uid = c.decided.spec.process.user.uid;
		out->gid = c.decided.spec.process.user.gid;
		container_known_from_ctx(&c.decided, &c.handles, &c.record, &out->known);
	}
	/* As `run` starts: the state and the spec are create's, in memory. */
	if (r == 0 && o->start)
		r = container_start_ctx(&c.decided, &c.handles, &c.record, err);
	container_ctx_release(&c);
	return r;
}

void created_container_free(struct created_container *c)
{
	free(c->known.cgroup_path);
	c->known.cgroup_path = NULL;
}

int container_create(const struct global_opts *g, const struct create_opts *o,
		     struct error *err)
{
	return container_create_detailed(g, o, NULL, err);
}
