/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container context (internal.h): made and released here, and the
 * preparations create and exec share (--root, the compiled seccomp filter,
 * the terminal, the pid file, the state JSON for hooks).  Both the parent
 * (create.c, exec.c) and the container init (init/child.c) use it, so it
 * is neither's: create.c calls the init, never the other way round.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/fds.h"
#include "../../lib/util.h"
#include "../internal.h"
#include "../init/terminal.h"

void ctx_init(struct container_ctx *c, const struct global_opts *g,
	      const struct create_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
	c->opts = o;
	c->id = o->id;
	c->render_state_json = ctx_update_state_json;
	c->rootfs_fd = c->host_proc_fd = c->state_dir_fd = c->fifo_fd = c->listener_fd = -1;
	c->root_fd = -1;
	c->done_fd = -1;
	c->sync_parent = c->sync_child = c->console_sock = -1;
	c->console_peer = -1;
	c->trampoline_fd = -1;
	cgroup_birth_init(&c->cg_birth);
	egress_fds_init(&c->egress);
	c->landlock_fd = -1;
	c->own_pidns_fd = c->own_timens_fd = -1;
	c->own_bind_prefix = o->own_bind_prefix;
	if (o->init_sigmask) {
		c->saved_sigmask = *o->init_sigmask;
		c->restore_sigmask = true;
	}
	for (int t = 0; t < NS_TYPE_MAX; t++)
		c->ns_fd[t] = -1;
}

void ctx_release(struct container_ctx *c)
{
	fd_close(&c->rootfs_fd);
	fd_close(&c->host_proc_fd);
	fd_close(&c->listener_fd);
	fd_close(&c->state_dir_fd);
	fd_close(&c->root_fd);
	fd_close(&c->fifo_fd);
	fd_close(&c->done_fd);
	fd_close(&c->sync_parent);
	fd_close(&c->sync_child);
	fd_close(&c->console_sock);
	fd_close(&c->console_peer);
	fd_close(&c->trampoline_fd);
	cgroup_birth_close(&c->cg_birth);
	fd_close(&c->landlock_fd);
	fd_close(&c->own_pidns_fd);
	fd_close(&c->own_timens_fd);
	ns_close_joined(c);
	mounts_free(&c->mounts);
	seccomp_prog_free(&c->seccomp);
	for (unsigned i = 0; i < POLICY_AGENT_FILTERS; i++)
		seccomp_prog_free(&c->agent_seccomp[i]);
	if (c->policy_loaded)
		policy_free(&c->policy);
	policy_decision_free(&c->decision);
	egress_fds_close(&c->egress);
	if (c->spec) {
		spec_free(c->spec);
		free(c->spec);
	}
	free(c->bundle);
	free(c->rootfs);
	free(c->exec_path);
	free(c->home);
	free(c->cgroup_path);
	free(c->created);
	free(c->state_json);
	free(c->config_json);
	free(c->seccomp_cache);
	memset(c, 0, sizeof(*c));
}

/* The state as it is now, borrowing the context's strings. */
void ctx_state(const struct container_ctx *c, enum container_status status,
	       struct container_state *st)
{
	memset(st, 0, sizeof(*st));
	st->id = (char *)c->id;
	st->pid = c->pid;
	st->start_time = c->start_time;
	st->bundle = c->bundle;
	st->rootfs = c->rootfs;
	st->created = c->created;
	st->owner = "root";
	st->annotations = c->spec->annotations;
	st->cgroup_path = c->cgroup_path;
	st->cgroup_manager = c->cgroup_manager;
	st->status = status;
}

void ctx_update_state_json(struct container_ctx *c, enum container_status status)
{
	struct container_state st;

	ctx_state(c, status, &st);
	free(c->state_json);
	c->state_json = state_to_json(&st, false);
}

int ctx_open_root(struct container_ctx *c, struct error *err)
{
	if (c->root_fd >= 0)
		return 0;
	if (state_root_open(c->g->root, true, &c->root_fd, err) < 0)
		return -1;
	c->seccomp_cache = xasprintf("%s/.seccomp-cache", c->g->root);
	return 0;
}

int ctx_prepare_seccomp(struct container_ctx *c, struct error *err)
{
	if (!c->spec->linux.seccomp.present)
		return 0;
	if (seccomp_prepare(&c->spec->linux.seccomp, c->seccomp_cache, &c->seccomp, err) < 0)
		return error_prefix(err, "linux.seccomp");
	c->has_seccomp = c->seccomp.len > 0;
	return 0;
}

int ctx_prepare_terminal(struct container_ctx *c, struct error *err)
{
	int pair[2];

	if (!c->spec->process.terminal)
		return 0;
	if (c->opts->console_socket)
		return terminal_connect_socket(c->opts->console_socket,
					       &c->console_sock, err);
	if (c->opts->detach || !c->foreground)
		return error_set(err, "cannot allocate a terminal for a detached container without --console-socket");
	/* Foreground run: we are our own console socket. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
		return error_sys(err, "create console socketpair");
	c->console_sock = pair[0];
	c->console_peer = pair[1];
	return 0;
}

int write_pid_file(const char *path, pid_t pid, struct error *err)
{
	_cleanup_free_ char *tmp = xasprintf("%s.agentsbx-tmp", path);
	_cleanup_close_ int fd = -1;
	char buf[32];

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return error_sys(err, "create pid file %s", tmp);
	snprintf(buf, sizeof(buf), "%d", pid);
	if (write_all(fd, buf, strlen(buf)) < 0) {
		error_sys(err, "write pid file %s", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return error_setc(err, e, "rename pid file to %s", path);
	}
	return 0;
}
