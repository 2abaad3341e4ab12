/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A sandbox call, in process: the workspace and its overlay, config.json,
 * the pipes, the container created (by a short-lived helper: see
 * create_helper(); a cold call's code is in place first and the helper
 * starts it too, a warm one waits for the go), waited for under its
 * deadline, its memory cgroup's OOM counter read, then deleted with
 * everything it had, from what its create knew.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/fds.h"
#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../runtime/container.h"
#include "sandbox_private.h"

#define PIPE_SIZE (1024 * 1024)

static unsigned long call_counter; /* atomic: calls run in threads */

/* ---- creating ------------------------------------------------------------------- */

void sandbox_new_id(struct sandbox *sb)
{
	unsigned int rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (unsigned int)sandbox_now_ns();
	snprintf(sb->id, sizeof(sb->id), "sbx-%d-%lu-%08x", getpid(),
		 __atomic_add_fetch(&call_counter, 1, __ATOMIC_RELAXED), rnd);
}

void sandbox_init_struct(struct sandbox *sb, enum sandbox_lang lang)
{
	memset(sb, 0, sizeof(*sb));
	sb->code_dirfd = sb->out_fd = sb->err_fd = sb->in_fd = sb->pidfd = -1;
	sb->lang = lang;
	sandbox_new_id(sb);
}

/* A pipe whose read end (ours when out) is non-blocking. */
static int make_pipe(int fds[2], bool ours_is_read, struct error *err)
{
	if (pipe2(fds, O_CLOEXEC) < 0)
		return error_sys(err, "sandbox: pipe");
	fcntl(fds[ours_is_read ? 0 : 1], F_SETFL, O_NONBLOCK);
	/* Fewer wake-ups for big outputs; the default size also works. */
	fcntl(fds[0], F_SETPIPE_SZ, PIPE_SIZE);
	return 0;
}

int sandbox_create_with_pipes(const struct global_opts *g, const struct sandbox_config *cfg,
			      struct sandbox *sb, struct error *err)
{
	int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, in[2] = { -1, -1 };
	int stdio[3], r = -1;

	if (make_pipe(out, true, err) < 0 || make_pipe(errp, true, err) < 0)
		goto out;
	if (cfg->stdin_fd < 0 && make_pipe(in, false, err) < 0)
		goto out;
	stdio[0] = cfg->stdin_fd >= 0 ? cfg->stdin_fd : in[0];
	stdio[1] = out[1];
	stdio[2] = errp[1];
	sb->out_fd = take_fd(out[0]);
	sb->err_fd = take_fd(errp[0]);
	sb->in_fd = take_fd(in[1]);
	r = sandbox_create_container(g, sb, stdio, err);
out:
	/* The container's ends: only the container may hold them now. */
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (errp[i] >= 0)
			close(errp[i]);
		if (in[i] >= 0)
			close(in[i]);
	}
	return r;
}

/* The create helper's log goes to the container's stderr, so the runtime
 * must have nothing to warn about: the seccomp cache it keeps under the
 * state root needs the root to exist before the first create. */
int sandbox_make_state_root(const struct global_opts *g, struct error *err)
{
	static bool made;

	if (made)
		return 0;
	if (runtime_prepare_root(g, err) < 0)
		return -1;
	made = true;
	return 0;
}

extern const unsigned char agentsbx_sandbox_init[];
extern const size_t agentsbx_sandbox_init_len;

/* /.agentsbx/init: the container's PID 1 (init/init.c). */
int sandbox_install_init(struct sandbox *sb, struct error *err)
{
	_cleanup_close_ int fd = openat(sb->code_dirfd, SANDBOX_INIT_FILE,
					O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0555);

	if (fd < 0 || write_all(fd, agentsbx_sandbox_init, agentsbx_sandbox_init_len) < 0)
		return error_sys(err, "sandbox: write /%s/%s", SANDBOX_CODE_DIR, SANDBOX_INIT_FILE);
	return 0;
}

/* A warm sandbox's interpreter starts now; it waits on its stdin for the
 * go (sandbox_run), so nothing of the program's runs before. */
static int start_warm(const struct global_opts *g, const struct sandbox_config *cfg,
		      struct sandbox *sb, struct error *err)
{
	if (!cfg->warm || cfg->lang == SANDBOX_LANG_NONE)
		return 0;
	if (sb->in_fd < 0)
		return error_set(err, "sandbox: a warm sandbox needs its stdin pipe");
	if (container_start(g, sb->id, err) < 0)
		return -1;
	sb->started = true;
	return 0;
}

/* The code is in place: a warm interpreter may go, a cold container
 * starts.  From here the clock runs (*start_ns). */
static int go(const struct global_opts *g, struct sandbox *sb, long long *start_ns,
	      struct error *err)
{
	char b = SANDBOX_GO_BYTE;

	/* Made in the background: the normal priority back, for the init and
	 * the interpreter (its process group since the init's setsid), before
	 * anything of the program's runs. */
	if (sb->background && setpriority(PRIO_PGRP, (id_t)sb->pid, 0) < 0)
		log_debug("sandbox %s: renice: %s", sb->id, strerror(errno));
	if (sb->run_started_ns) {
		*start_ns = sb->run_started_ns;
		return 0;
	}
	*start_ns = sandbox_now_ns();
	if (!sb->started)
		return container_start(g, sb->id, err);
	/* One byte into an empty pipe: never short, never EAGAIN. */
	if (write(sb->in_fd, &b, 1) != 1)
		return error_sys(err, "sandbox %s: hand the program to the warm interpreter",
				 sb->id);
	return 0;
}

static int write_input_code(struct sandbox *sb, const struct sandbox_input *in,
			    struct error *err)
{
	return sandbox_write_code(sb, in->code ? in->code : "", in->code ? in->code_len : 0, err);
}

int sandbox_code_before_create(const struct sandbox_config *cfg, struct sandbox *sb,
			       const struct sandbox_input *in, struct error *err)
{
	if (!in || cfg->warm)
		return 0;
	sb->start_on_create = true;
	if (sb->lang == SANDBOX_LANG_NONE)
		return 0;
	return write_input_code(sb, in, err);
}

/* start_with: a cold call's input (sandbox_prepare_started), or NULL. */
static int prepare(const struct global_opts *g, const struct sandbox_config *cfg,
		   struct sandbox *sb, bool background, const struct sandbox_input *start_with,
		   struct error *err)
{
	_cleanup_free_ char *interpreter = NULL, *json = NULL;

	sandbox_init_struct(sb, cfg->lang);
	sb->background = background && geteuid() == 0;
	if (sandbox_make_state_root(g, err) < 0)
		return -1;
	if (cfg->lang != SANDBOX_LANG_NONE &&
	    sandbox_find_interpreter(cfg->rootfs, cfg->lang, &interpreter, err) < 0)
		return -1;
	if (cfg->lang == SANDBOX_LANG_NONE && (!cfg->args || !cfg->args[0]))
		return error_set(err, "sandbox: no command to run");
	json = sandbox_spec_json(cfg, interpreter, err);
	if (!json || sandbox_workspace_make(g, sb, cfg->disk, err) < 0 ||
	    sandbox_overlay_mount(sb, cfg->rootfs, err) < 0 || sandbox_install_init(sb, err) < 0 ||
	    sandbox_write_bundle_config(sb, json, err) < 0 ||
	    sandbox_code_before_create(cfg, sb, start_with, err) < 0 ||
	    sandbox_create_with_pipes(g, cfg, sb, err) < 0 || start_warm(g, cfg, sb, err) < 0) {
		sandbox_destroy(g, sb);
		return -1;
	}
	return 0;
}

int sandbox_prepare(const struct global_opts *g, const struct sandbox_config *cfg,
		    struct sandbox *sb, struct error *err)
{
	return prepare(g, cfg, sb, false, NULL, err);
}

int sandbox_prepare_started(const struct global_opts *g, const struct sandbox_config *cfg,
			    const struct sandbox_input *in, struct sandbox *sb, struct error *err)
{
	return prepare(g, cfg, sb, false, in, err);
}

int sandbox_prepare_background(const struct global_opts *g, const struct sandbox_config *cfg,
			       struct sandbox *sb, struct error *err)
{
	return prepare(g, cfg, sb, true, NULL, err);
}

/* ---- running ------------------------------------------------------------------------ */

int sandbox_run(const struct global_opts *g, struct sandbox *sb,
		const struct sandbox_input *in, int sigfd,
		struct sandbox_result *res, struct error *err)
{
	struct sandbox_wait w = {
		.pid = sb->pid,
		.pidfd = sb->pidfd,
		.out_fd = sb->out_fd,
		.err_fd = sb->err_fd,
		.in_fd = sb->in_fd,
		.in_data = in->stdin_data,
		.in_len = in->stdin_data ? in->stdin_len : 0,
		.sigfd = sigfd,
		.cancel_fd = in->cancel_fd,
		.on_output = in->on_output,
		.on_tick = in->on_tick,
		.cb_arg = in->cb_arg,
		.timeout = in->timeout > 0 ? in->timeout : SANDBOX_TIMEOUT_DEFAULT,
		.output_limit = in->output_limit,
	};
	long long t0 = sandbox_now_ns(), t1;
	int r;

	memset(res, 0, sizeof(*res));
	if (!sb->created)
		return error_set(err, "sandbox: not created");
	if (sb->lang != SANDBOX_LANG_NONE && !sb->run_started_ns && write_input_code(sb, in, err) < 0)
		return -1;
	if (go(g, sb, &w.start_ns, err) < 0)
		return -1;
	/* The loop closes the fds as the streams end; they are its now. */
	sb->out_fd = sb->err_fd = sb->in_fd = -1;
	r = sandbox_wait(&w, res, err);
	if (w.out_fd >= 0)
		close(w.out_fd);
	if (w.err_fd >= 0)
		close(w.err_fd);
	if (w.in_fd >= 0)
		close(w.in_fd);
	if (r < 0)
		return -1;
	sb->reaped = true;
	t1 = sandbox_now_ns();
	res->oom_killed = container_cgroup_oom_killed(sb->known.cgroup_path);
	res->python = sb->lang == SANDBOX_LANG_PYTHON;
	sandbox_collect_outputs(sb, res);
	log_debug("sandbox %s: %s: code in %.2f ms, to the exit %.2f ms, streams %.2f ms, "
		  "collected %.2f ms",
		  sb->id, sb->started ? "warm" : sb->run_started_ns ? "cold, started by its create" :
								      "cold",
		  w.start_ns > t0 ? (double)(w.start_ns - t0) / 1e6 : 0.0,
		  w.exit_ns ? (double)(w.exit_ns - w.start_ns) / 1e6 : -1.0,
		  w.exit_ns ? (double)(t1 - w.exit_ns) / 1e6 : -1.0,
		  (double)(sandbox_now_ns() - t1) / 1e6);
	return 0;
}

bool sandbox_is_alive(const struct sandbox *sb)
{
	struct pollfd p = { .fd = sb->pidfd, .events = POLLIN };

	return sb->created && !sb->reaped && sb->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

/* ---- ending ---------------------------------------------------------------------- */

/* true: the init is reaped (now or before). */
static bool kill_and_reap(struct sandbox *sb)
{
	pid_t r;

	if (sb->reaped)
		return true;
	if (sb->pid <= 0)
		return false;
	/* Our child and not reaped yet: the pid cannot name another. */
	kill(sb->pid, SIGKILL);
	while ((r = waitpid(sb->pid, NULL, 0)) < 0 && errno == EINTR)
		;
	sb->reaped = true;
	return r == sb->pid;
}

void sandbox_release_container(const struct global_opts *g, struct sandbox *sb)
{
	struct error e;

	if (sb->created) {
		/* Reaped: deleted from what its create knew (as `run` does);
		 * never adopted (not our child): the full delete, which finds
		 * and kills it. */
		bool reaped = kill_and_reap(sb);
		/* Gone already (an operator's delete --force): nothing to say. */
		if ((reaped ? container_delete_reaped(g, sb->id, &sb->known, &e) : container_delete(g, sb->id, true, &e)) < 0 &&
		    !strstr(e.msg, "does not exist"))
			log_warn("sandbox %s: delete: %s", sb->id, e.msg);
		sb->created = false;
	}
	free(sb->known.cgroup_path);
	sb->known = (struct container_known){ 0 };
	fd_close(&sb->out_fd);
	fd_close(&sb->err_fd);
	fd_close(&sb->in_fd);
	fd_close(&sb->pidfd);
	sb->pid = 0;
	sb->reaped = false;
	sb->started = sb->start_on_create = false;
	sb->run_started_ns = 0;
}

void sandbox_destroy(const struct global_opts *g, struct sandbox *sb)
{
	sandbox_release_container(g, sb);
	sandbox_workspace_remove(sb);
}

bool sandbox_command_not_found(const struct error *err, struct sandbox_result *res)
{
	if (!str_has_prefix(err->msg, "exec: \""))
		return false;
	memset(res, 0, sizeof(*res));
	res->err = xasprintf("agentsbx: %s\n", err->msg);
	res->err_len = strlen(res->err);
	res->out = xstrdup("");
	res->exit_code = 127;
	return true;
}

int sandbox_call(const struct global_opts *g, const struct sandbox_config *cfg,
		 const struct sandbox_input *in, int sigfd,
		 struct sandbox_result *res, struct error *err)
{
	long long t0 = sandbox_now_ns(), t1, t2;
	struct sandbox sb;
	int r;

	if (sandbox_prepare_started(g, cfg, in, &sb, err) < 0)
		return sandbox_command_not_found(err, res) ? 0 : -1;
	t1 = sandbox_now_ns();
	r = sandbox_run(g, &sb, in, sigfd, res, err);
	t2 = sandbox_now_ns();
	sandbox_destroy(g, &sb);
	log_debug("sandbox %s: prepare %.1f ms, run %.1f ms, destroy %.1f ms", sb.id,
		  (double)(t1 - t0) / 1e6, (double)(t2 - t1) / 1e6,
		  (double)(sandbox_now_ns() - t2) / 1e6);
	return r;
}
