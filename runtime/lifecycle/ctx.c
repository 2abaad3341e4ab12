/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The container context (context.h): made and released here, and the
 * preparations create and exec share (--root, the compiled seccomp filter,
 * the terminal, the pid file, the state JSON for hooks).  Both the parent
 * (create.c, exec.c) and the container init (init/child.c) use it, each
 * given the parts it reads and writes: create.c calls the init, never the
 * other way round (the init renders its hooks' state through
 * ctx_record.render_state_json, set here).
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

/* The state JSON the init's hooks get (ctx_record.render_state_json). */
static char *render_state_json(const struct ctx_decided *d, const struct ctx_record *r,
			       pid_t pid, enum container_status status)
{
	struct container_state st;

	ctx_state(d, r, status, &st);
	st.pid = pid;
	return state_to_json(&st, false);
}

void container_ctx_init(struct container_ctx *c, const struct global_opts *g,
			const struct create_opts *o)
{
	struct ctx_decided *d = &c->decided;
	struct ctx_handles *h = &c->handles;

	memset(c, 0, sizeof(*c));
	d->g = g;
	d->opts = o;
	d->id = o->id;
	d->own_bind_prefix = o->own_bind_prefix;
	if (o->init_sigmask) {
		d->saved_sigmask = *o->init_sigmask;
		d->restore_sigmask = true;
	}
	c->record.render_state_json = render_state_json;
	h->rootfs_fd = h->host_proc_fd = h->state_dir_fd = h->fifo_fd = h->listener_fd = -1;
	h->root_fd = -1;
	h->done_fd = -1;
	h->sync_parent = h->sync_child = h->console_sock = -1;
	h->console_peer = -1;
	h->trampoline_fd = -1;
	cgroup_birth_init(&h->cg_birth);
	egress_fds_init(&h->egress);
	h->landlock_fd = -1;
	h->own_pidns_fd = h->own_timens_fd = -1;
	for (int t = 0; t < NS_TYPE_MAX; t++)
		h->ns_fd[t] = -1;
}

void container_ctx_release(struct container_ctx *c)
{
	struct ctx_decided *d = &c->decided;
	struct ctx_handles *h = &c->handles;

	fd_close(&h->rootfs_fd);
	fd_close(&h->host_proc_fd);
	fd_close(&h->listener_fd);
	fd_close(&h->state_dir_fd);
	fd_close(&h->root_fd);
	fd_close(&h->fifo_fd);
	fd_close(&h->done_fd);
	fd_close(&h->sync_parent);
	fd_close(&h->sync_child);
	fd_close(&h->console_sock);
	fd_close(&h->console_peer);
	fd_close(&h->trampoline_fd);
	cgroup_birth_close(&h->cg_birth);
	fd_close(&h->landlock_fd);
	fd_close(&h->own_pidns_fd);
	fd_close(&h->own_timens_fd);
	ns_close_joined(h);
	mounts_free(&d->mounts, &h->mount_trees);
	seccomp_prog_free(&d->seccomp);
	for (unsigned i = 0; i < POLICY_AGENT_FILTERS; i++)
		seccomp_prog_free(&d->agent_seccomp[i]);
	if (d->policy_loaded)
		policy_free(&d->policy);
	policy_decision_free(&d->decision);
	egress_fds_close(&h->egress);
	spec_free(&d->spec);
	free(d->bundle);
	free(d->rootfs);
	free(c->init.exec_path);
	free(c->init.home);
	free(c->record.cgroup_path);
	free(c->record.created);
	free(c->record.state_json);
	free(d->config_json);
	free(d->seccomp_cache);
	memset(c, 0, sizeof(*c));
}

/* The state as it is now, borrowing the context's strings. */
void ctx_state(const struct ctx_decided *d, const struct ctx_record *r,
	       enum container_status status, struct container_state *st)
{
	memset(st, 0, sizeof(*st));
	st->id = (char *)d->id;
	st->pid = r->pid;
	st->start_time = r->start_time;
	st->bundle = d->bundle;
	st->rootfs = d->rootfs;
	st->created = r->created;
	st->owner = "root";
	st->annotations = d->spec.annotations;
	st->cgroup_path = r->cgroup_path;
	st->cgroup_manager = r->cgroup_manager;
	st->status = status;
}

void ctx_update_state_json(const struct ctx_decided *d, struct ctx_record *r,
			   enum container_status status)
{
	free(r->state_json);
	r->state_json = render_state_json(d, r, r->pid, status);
}

int ctx_open_root(struct ctx_decided *d, struct ctx_handles *h, struct error *err)
{
	if (h->root_fd >= 0)
		return 0;
	if (state_root_open(d->g->root, true, &h->root_fd, err) < 0)
		return -1;
	d->seccomp_cache = xasprintf("%s/.seccomp-cache", d->g->root);
	return 0;
}

int ctx_prepare_seccomp(struct ctx_decided *d, struct error *err)
{
	if (!d->spec.linux.seccomp.present)
		return 0;
	if (seccomp_prepare(&d->spec.linux.seccomp, d->seccomp_cache, &d->seccomp, err) < 0)
		return error_prefix(err, "linux.seccomp");
	return 0;
}

int ctx_prepare_terminal(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err)
{
	int pair[2];

	if (!d->spec.process.terminal)
		return 0;
	if (d->opts->console_socket)
		return terminal_connect_socket(d->opts->console_socket, &h->console_sock, err);
	if (d->opts->detach || !d->foreground)
		return error_set(err, "cannot allocate a terminal for a detached container without --console-socket");
	/* Foreground run: we are our own console socket. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0)
		return error_sys(err, "create console socketpair");
	h->console_sock = pair[0];
	h->console_peer = pair[1];
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
