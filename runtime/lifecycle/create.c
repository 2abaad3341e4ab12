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

int container_id_validate(const char *id, struct error *err)
{
	size_t len = strlen(id);

	if (!len)
		return error_set(err, "container id cannot be empty");
	if (len > CONTAINER_ID_MAX)
		return error_set(err, "invalid container id: longer than %d bytes",
				 CONTAINER_ID_MAX);
	for (size_t i = 0; i < len; i++) {
		char ch = id[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');
		if (alnum || (i > 0 && ch && strchr("_.+-", ch)))
			continue;
		return error_set(err, "invalid container id \"%s\": only [A-Za-z0-9][A-Za-z0-9_.+-]* is allowed",
				 id);
	}
	if (strstr(id, ".."))
		return error_set(err, "invalid container id \"%s\": \"..\" is not allowed", id);
	return 0;
}

static int write_ctx_state(struct container_ctx *c, enum container_status status,
			   struct error *err)
{
	/* This process's, read once (the state is written up to four
	 * times); a forked front door creates under its own pid. */
	static pid_t creator_pid;
	static unsigned long long creator_start_time;
	struct container_state st;

	ctx_state(c, status, &st);
	/* Until "created", a killed create is told by this process gone. */
	st.creator_pid = getpid();
	if (creator_pid != st.creator_pid) {
		creator_pid = st.creator_pid;
		creator_start_time = proc_start_time(creator_pid);
	}
	st.creator_start_time = creator_start_time;
	return state_write(c->state_dir_fd, &st, err);
}

/* ---- before clone ----------------------------------------------------------- */

static int load_spec(struct container_ctx *c, struct error *err)
{
	_cleanup_close_ int bfd = -1;
	char real[PATH_MAX];

	if (!realpath(c->opts->bundle ? c->opts->bundle : ".", real))
		return error_sys(err, "bundle %s", c->opts->bundle ? c->opts->bundle : ".");
	c->bundle = xstrdup(real);
	bfd = open(c->bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return error_sys(err, "open bundle %s", c->bundle);
	if (read_file_at(bfd, "config.json", SPEC_MAX_FILE_SIZE, &c->config_json,
			 &c->config_len, err) < 0)
		return error_prefix(err, "bundle %s", c->bundle);
	c->spec = xcalloc(1, sizeof(*c->spec));
	if (spec_parse(c->config_json, c->config_len, c->spec, err) < 0 ||
	    spec_validate(c->spec, err) < 0)
		return -1;
	if (!c->spec->has_process)
		return error_set(err, "config.json: process: required to create a container");
	if (!c->spec->root.path)
		return error_set(err, "config.json: root.path: required");
	return 0;
}

/* root.path opened once (symlinks followed, magic links not) and located
 * by the judge: c->rootfs is where the directory really is, and
 * policy_judge_objects() decides on it. */
static int open_rootfs(struct container_ctx *c, struct error *err)
{
	_cleanup_free_ char *joined = NULL;
	const char *p = c->spec->root.path;
	struct judged o;

	if (p[0] != '/')
		p = joined = xasprintf("%s/%s", c->bundle, p);
	if (judge_open("root.path", p, JUDGE_SYMLINKS, &o, err) < 0)
		return -1;
	if (!S_ISDIR(o.st.st_mode)) {
		judged_close(&o);
		return error_setc(err, ENOTDIR, "rootfs %s", p);
	}
	c->rootfs = xstrdup(o.where);
	c->rootfs_fd = o.fd;
	return 0;
}

static int open_host_proc(struct container_ctx *c, struct error *err)
{
	c->host_proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->host_proc_fd < 0)
		return error_sys(err, "open /proc");
	return proc_check_fd(c->host_proc_fd, "/proc", err);
}

/* systemd socket activation: fds meant for us go on to the container. */
static void prepare_listen_fds(struct container_ctx *c)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	long long p, n;

	if (!pid || !fds || parse_i64(pid, &p) < 0 || parse_i64(fds, &n) < 0)
		return;
	if (p == getpid() && n > 0 && n < 1000)
		c->listen_fds = (int)n;
}

static int prepare(struct container_ctx *c, struct error *err)
{
	const struct mount_policy mp = {
		.source = c->policy.source,
		.bind_prefixes = &c->policy.bind_prefixes,
		.refuse_writable_dir_binds = c->decision.refuse_writable_dir_binds,
		.special_files = &c->policy.bind_special_files,
		.volume_dirs = &c->policy.bind_volume_dirs,
	};

	c->cgroup_manager = c->g->systemd_cgroup ? CGROUP_MANAGER_SYSTEMD : CGROUP_MANAGER_FS;
	/* The kernel objects first (the rootfs, the joined namespaces), each
	 * opened once and judged, then every check of the spec: the child
	 * creates nothing on the rootfs unless all of this passed. */
	if (open_rootfs(c, err) < 0 || open_host_proc(c, err) < 0 ||
	    ns_open_joined(c, err) < 0 || policy_judge_objects(c, err) < 0 ||
	    ns_prepare(c, err) < 0 || sysctl_check_host_namespaces(c, err) < 0 ||
	    devices_check_paths(c->spec, err) < 0 ||
	    mounts_prepare(c->spec, c->bundle,
			   c->decision.check_bind_sources ? &mp : NULL, &c->mounts, err) < 0 ||
	    caps_prepare(&c->spec->process.capabilities,
			 c->spec->process.has_capabilities, &c->caps, err) < 0 ||
	    ctx_prepare_seccomp(c, err) < 0 ||
	    cgroup_resolve_path(c->spec->linux.cgroups_path, c->id,
				c->cgroup_manager, &c->cgroup_path, err) < 0 ||
	    policy_judge_cgroup(c, err) < 0 ||
	    ctx_prepare_terminal(c, err) < 0 ||
	    trampoline_memfd(&c->trampoline_fd, err) < 0 ||
	    landlock_prepare(c, err) < 0)
		return -1;
	prepare_listen_fds(c);
	c->created = rfc3339_now();
	return 0;
}

/* What the state directory holds before the clone: the spec, the fifos,
 * and the "creating" state naming this process and the cgroup to come. */
static int fill_state_dir(struct container_ctx *c, struct error *err)
{
	_cleanup_close_ int cfg = -1;

	/* The spec as it is now: delete runs the poststop hooks from it even
	 * if the bundle has changed or gone. */
	cfg = openat(c->state_dir_fd, STATE_CONFIG_FILE,
		     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (cfg < 0 || write_all(cfg, c->config_json, c->config_len) < 0)
		return error_sys(err, "save config.json for %s", c->id);
	if (c->policy_loaded && audit_log_note(c->state_dir_fd, &c->policy, c->id, err) < 0)
		return -1;
	if (mkfifoat(c->state_dir_fd, STATE_FIFO, 0600) < 0)
		return error_sys(err, "create exec fifo for %s", c->id);
	c->fifo_fd = openat(c->state_dir_fd, STATE_FIFO, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (c->fifo_fd < 0)
		return error_sys(err, "open exec fifo for %s", c->id);
	if (mkfifoat(c->state_dir_fd, STATE_DONE_FIFO, 0600) < 0)
		return error_sys(err, "create exec.done fifo for %s", c->id);
	c->done_fd = openat(c->state_dir_fd, STATE_DONE_FIFO, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (c->done_fd < 0)
		return error_sys(err, "open exec.done fifo for %s", c->id);
	return write_ctx_state(c, STATUS_CREATING, err);
}

/* The state directory appears under the id whole, already locked and
 * holding the "creating" state: never empty or half-made. */
static int make_state_dir(struct container_ctx *c, struct error *err)
{
	_cleanup_free_ char *staged = NULL;

	state_dir_sweep_staged(c->root_fd);
	if (state_dir_stage(c->root_fd, &staged, &c->state_dir_fd, err) < 0)
		return -1;
	if (fill_state_dir(c, err) < 0) {
		state_dir_discard_staged(c->root_fd, staged, c->state_dir_fd);
		return -1;
	}
	if (state_dir_publish(c->root_fd, staged, c->id, c->state_dir_fd, err) < 0)
		return -1;
	c->state_dir_made = true;
	return 0;
}

/* ---- clone and handshake ------------------------------------------------------- */

static int run_runtime_hooks(struct container_ctx *c, struct error *err)
{
	if (write_ctx_state(c, STATUS_CREATING, err) < 0)
		return -1;
	ctx_update_state_json(c, STATUS_CREATING);
	if (hooks_run(&c->spec->hooks[HOOK_PRESTART], HOOK_PRESTART, c->state_json, err) < 0 ||
	    hooks_run(&c->spec->hooks[HOOK_CREATE_RUNTIME], HOOK_CREATE_RUNTIME,
		      c->state_json, err) < 0)
		return -1;
	return sync_send(c->sync_parent, SYNC_HOOKS_DONE, NULL, err);
}

/* The seccomp notify listener goes to linux.seccomp.listenerPath with the
 * container process state, as config-linux.md says. */
static int forward_listener(struct container_ctx *c, int fd, struct error *err)
{
	const struct oci_seccomp *sc = &c->spec->linux.seccomp;
	int r;

	if (fd < 0)
		return error_set(err, "seccomp listener message without an fd");
	ctx_update_state_json(c, STATUS_CREATING);
	r = seccomp_send_listener(sc->listener_path, c->listener_fd, sc->listener_metadata, fd,
				  c->state_json, err);
	close(fd);
	if (r == 0)
		return sync_send(c->sync_parent, SYNC_GO, NULL, err);
	return -1;
}

/* Wait for READY, serving the child's requests on the way. */
/* The child forked the init into a new pid namespace (ns_fork_init) and
 * exits: the init is the one the state names from now on. */
static int take_forked_init(struct container_ctx *c, pid_t init, struct error *err)
{
	pid_t first = c->pid;

	while (waitpid(first, NULL, 0) < 0 && errno == EINTR)
		;
	c->pid = init;
	c->start_time = proc_start_time(init);
	return write_ctx_state(c, STATUS_CREATING, err);
}

/* One of the proxy's sockets; with the last, the proxy is started. */
static int take_egress_fd(struct container_ctx *c, int fd, long long port, struct error *err)
{
	struct egress_spawn s = {
		.id = c->id,
		.policy = &c->policy,
		.decision = &c->decision,
		.uid = c->decision.identity ? c->spec->process.user.uid : 65534,
		.state_dir_fd = c->state_dir_fd,
	};
	bool complete = false;

	if (!c->decision.egress_proxy) {
		if (fd >= 0)
			close(fd);
		return error_set(err, "egress: a socket from an init that has no egress proxy");
	}
	if (egress_fds_take(&c->egress, &c->policy, fd, port, &complete, err) < 0)
		return -1;
	return complete ? egress_proxy_spawn(&s, &c->egress, err) : 0;
}

static int wait_child_ready(struct container_ctx *c, struct error *err)
{
	struct sync_msg msg;
	int fd;

	for (;;) {
		if (sync_recv(c->sync_parent, &msg, &fd, err) < 0)
			return -1;
		switch (msg.type) {
		case SYNC_READY:
			return 0;
		case SYNC_RUN_HOOKS:
			if (run_runtime_hooks(c, err) < 0)
				return -1;
			continue;
		case SYNC_SECCOMP_FD:
			if (forward_listener(c, fd, err) < 0)
				return -1;
			continue;
		case SYNC_INIT_PID:
			if (take_forked_init(c, (pid_t)msg.value, err) < 0)
				return -1;
			continue;
		case SYNC_EGRESS_FD:
			if (take_egress_fd(c, fd, msg.value, err) < 0)
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
static int rootless_without_cgroup(struct container_ctx *c, struct error *err)
{
	log_warn("rootless: no cgroup for %s (%s): the container runs without cgroup limits (memory, pids, cpu, devices); delegate a cgroup v2 subtree to uid %u to have them",
		 c->id, err->msg, (unsigned)geteuid());
	free(c->cgroup_path);
	c->cgroup_path = NULL;
	return 0;
}

/* The container's cgroup: the spec's limits, plus allow rules for its
 * linux.devices.  pid 0: before the clone, with c->cg_birth for the init
 * to enter it (cgroup.h); a pid: made with the process in it (systemd). */
static int make_cgroup(struct container_ctx *c, pid_t pid, struct error *err)
{
	struct oci_resources res;
	int r;

	if (!c->cgroup_path)
		return 0; /* rootless, none to be had */
	cgroup_resources_for_spec(c->spec, &res);
	if (pid == 0)
		r = cgroup_create_for_clone(c->cgroup_path, c->cgroup_manager,
					    &res, &c->cg_birth, err);
	else
		r = cgroup_create(c->cgroup_path, c->cgroup_manager, &res, pid, err);
	free(res.devices);
	if (r == 0 && (pid != 0 || !c->cg_birth.after_clone))
		c->cgroup_created = true;
	if (r < 0 && rootless_caller() &&
	    (err->code == EACCES || err->code == EPERM || err->code == EROFS))
		return rootless_without_cgroup(c, err);
	return r;
}

/* The parent's side of the init's way into its cgroup, after the clone. */
static int place_init(struct container_ctx *c, pid_t pid, bool born_in,
		      struct error *err)
{
	bool after_clone = c->cg_birth.after_clone;

	if (!c->cgroup_path)
		return 0;
	if (cgroup_after_clone(&c->cg_birth, pid, born_in, err) < 0)
		return -1;
	return after_clone ? make_cgroup(c, pid, err) : 0;
}

static int spawn_init(struct container_ctx *c, struct error *err)
{
	bool born_in = false;
	int pair[2];
	pid_t pid;

	if (sync_pair(pair, err) < 0)
		return -1;
	c->sync_parent = pair[0];
	c->sync_child = pair[1];
	if (make_cgroup(c, 0, err) < 0 || ns_join_before_clone(c, err) < 0)
		return -1;
	if (ns_clone_into(c->clone_flags, cgroup_birth_clone_fd(&c->cg_birth), &pid, &born_in, err) < 0)
		return -1;
	if (pid == 0)
		child_main(c);
	ns_restore_after_clone(c);
	c->pid = pid;
	/* Recorded before the init may act (it waits for SYNC_GO, and dies
	 * with us until READY): delete finds it by pid and start time. */
	c->start_time = proc_start_time(pid);
	if (write_ctx_state(c, STATUS_CREATING, err) < 0)
		return -1;
	mounts_close_trees(&c->mounts); /* the child has its copies */
	fd_close(&c->sync_child);
	fd_close(&c->console_sock);
	if (ns_write_id_maps(c, err) < 0 || place_init(c, pid, born_in, err) < 0)
		return -1;
	if (sync_send_value(c->sync_parent, SYNC_GO, pid, err) < 0)
		return -1;
	if (wait_child_ready(c, err) < 0)
		return -1;
	fd_close(&c->fifo_fd);
	fd_close(&c->done_fd);
	return 0;
}

/* Undo a failed create: nothing may be left behind. */
static void create_abort(struct container_ctx *c)
{
	struct error e;

	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
		/* runtime.md: a failed create goes on to delete, which runs
		 * the poststop hooks. */
		if (c->spec->hooks[HOOK_POSTSTOP].len) {
			ctx_update_state_json(c, STATUS_STOPPED);
			hooks_run_warn(&c->spec->hooks[HOOK_POSTSTOP], HOOK_POSTSTOP,
				       c->state_json);
		}
	}
	if (c->cgroup_created &&
	    cgroup_destroy(c->cgroup_path, c->cgroup_manager, true, &e) < 0)
		log_warn("cleanup after failed create: %s", e.msg);
	if (c->state_dir_made) {
		egress_proxy_stop(c->state_dir_fd, c->id);
		identity_release(c->state_dir_fd, c->id);
	}
	if (c->state_dir_made && netfilter_remove_egress(c->state_dir_fd, c->id, &e) < 0)
		log_warn("cleanup after failed create: %s", e.msg);
	if (c->state_dir_made && state_dir_remove(c->root_fd, c->id, c->state_dir_fd, &e) < 0)
		log_warn("cleanup after failed create: %s", e.msg);
}

int create_container(struct container_ctx *c, struct error *err)
{
	if (container_id_validate(c->id, err) < 0 || load_spec(c, err) < 0 ||
	    ctx_open_root(c, err) < 0 || policy_enforce(c, err) < 0)
		return -1;
	if (prepare(c, err) < 0) {
		/* The kernel objects' and bind sources' refusals (judged on
		 * their fds here), into the audit log as policy_enforce's are. */
		if (c->policy.mode == POLICY_ENFORCE && strstr(err->msg, "policy: "))
			policy_audit_refusal(c, err);
		return -1;
	}
	hooks_set_cwd(c->bundle);
	if (make_state_dir(c, err) < 0 || identity_take(c, err) < 0 ||
	    netfilter_note_joined_netns(c, err) < 0 ||
	    spawn_init(c, err) < 0 || netfilter_check_joined_netns(c, err) < 0 ||
	    write_ctx_state(c, STATUS_CREATED, err) < 0 ||
	    (c->opts->pid_file && write_pid_file(c->opts->pid_file, c->pid, err) < 0)) {
		create_abort(c);
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

	ctx_init(&c, g, o);
	r = create_container(&c, err);
	if (r == 0 && out) {
		out->pid = c.pid;
		out->uid = c.spec->process.user.uid;
		out->gid = c.spec->process.user.gid;
		out->cgroup_path = xstrdup(c.cgroup_path ? c.cgroup_path : "");
	}
	ctx_release(&c);
	return r;
}

int container_create(const struct global_opts *g, const struct create_opts *o,
		     struct error *err)
{
	return container_create_detailed(g, o, NULL, err);
}
