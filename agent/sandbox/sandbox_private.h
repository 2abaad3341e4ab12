/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SANDBOX_PRIVATE_H
#define AGENTSBX_SANDBOX_PRIVATE_H

/* The sandbox room's own, shared by agent/sandbox/'s files only: the other
 * rooms and cmd/ include sandbox.h, the room's interface. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include "sandbox.h"

#define SANDBOX_WORK_DIR "/run/agentsbx-sandbox" /* rootless: $XDG_RUNTIME_DIR/agentsbx-sandbox */
#define SANDBOX_CODE_DIR ".agentsbx"		 /* in the container's root */
#define SANDBOX_INIT_FILE "init"		 /* our PID 1 (init/init.c) in it */
#define SANDBOX_FILES_DIR "files"		 /* a session's, in the workspace */
#define SANDBOX_OUTPUTS_NAME "outputs"		 /* ... in the workspace (a session's files/) */
#define SANDBOX_META_DIR "meta"			 /* the workspace's, on /.agentsbx/meta */
#define SANDBOX_DRAIN_MS 2000			 /* reading output after the init is gone */
#define SANDBOX_BACKGROUND_NICE 10		 /* a pool's refill (sandbox_pool.c) */

/* ---- sandbox_fs.c: the workspace ------------------------------------------ */

/* SANDBOX_WORK_DIR, or the rootless caller's under $XDG_RUNTIME_DIR. */
const char *sandbox_work_dir(void);

/* SANDBOX_WORK_DIR/ID on a tmpfs of its own, capped at disk bytes, with
 * upper/, upper/.agentsbx, work/ and rootfs/. */
/* The workspace holds the identity its containers share (policy field
 * identities: sb->uid, the process's host uid; 0: root stays root), and
 * the overlay's root (the upper dir) is that uid's, as an image's root is
 * its root user's. */
int sandbox_workspace_make(const struct global_opts *g, struct sandbox *sb, uint64_t disk,
			   struct error *err);
/* The overlay of image on rootfs/, and sb->code_dirfd on its /.agentsbx. */
int sandbox_overlay_mount(struct sandbox *sb, const char *image, struct error *err);
int sandbox_write_bundle_config(struct sandbox *sb, const char *json,
				struct error *err);
/* /.agentsbx/main.EXT for sb->lang (nothing for a command line). */
int sandbox_write_code(struct sandbox *sb, const char *code, size_t len,
		       struct error *err);
/* Unmount and remove what sandbox_workspace_make and the overlay made. */
void sandbox_workspace_remove(struct sandbox *sb);

/* ---- sandbox_io.c: the running container ------------------------------------ */

struct sandbox_wait {
	pid_t pid;
	int pidfd;
	int out_fd, err_fd; /* closed (set to -1) as they reach EOF */
	int in_fd;	    /* our end of the stdin pipe, or -1 */
	const char *in_data;
	size_t in_len;
	int sigfd;
	int cancel_fd; /* -1: none */
	double timeout;
	size_t output_limit;
	long long start_ns; /* when start was asked for: the clock's zero */
	long long exit_ns;  /* out: when the init's exit was seen (0: never) */
	void (*on_output)(void *arg, int stream, const char *buf, size_t n);
	void (*on_tick)(void *arg);
	void *cb_arg;
};

/*
 * From start to the end: write stdin, read stdout and stderr (each kept up
 * to output_limit, head and tail, with a marker between), kill the init
 * (and so its whole pid namespace) at the deadline or on a termination
 * signal, reap it.  Fills everything in res but oom_killed.
 */
int sandbox_wait(struct sandbox_wait *w, struct sandbox_result *res,
		 struct error *err);

/* ---- sandbox.c, sandbox_creator.c, sandbox_watchdog.c ---------------------- */

/* sandbox.c's steps, for sandbox_session.c. */
void sandbox_init_struct(struct sandbox *sb, enum sandbox_lang lang);
void sandbox_new_id(struct sandbox *sb);
int sandbox_install_init(struct sandbox *sb, struct error *err);
/* A cold call's program in place before the create, which then starts it
 * (in NULL or a warm cfg: nothing). */
int sandbox_code_before_create(const struct sandbox_config *cfg, struct sandbox *sb,
			       const struct sandbox_input *in, struct error *err);
int sandbox_create_with_pipes(const struct global_opts *g, const struct sandbox_config *cfg,
			      struct sandbox *sb, struct error *err);
/* Kill, reap and delete the container, close its fds; the workspace
 * stays. */
void sandbox_release_container(const struct global_opts *g, struct sandbox *sb);

/* The signal mask the process had before sandbox_env_init blocked the
 * termination signals: what every container gets. */
const sigset_t *sandbox_container_sigmask(void);
/* Create the container of sb's bundle with stdio[0..2] as its stdin,
 * stdout and stderr, and start it when sb->start_on_create; sets pid,
 * pidfd, known, created (also when only the start failed: destroy
 * deletes it), run_started_ns. */
int sandbox_create_container(const struct global_opts *g, struct sandbox *sb,
			     const int stdio[3], struct error *err);
bool sandbox_creator_running(void);
/* sandbox_prepare at SANDBOX_BACKGROUND_NICE (root only: a plain user could
 * not give the normal priority back). */
int sandbox_prepare_background(const struct global_opts *g, const struct sandbox_config *cfg,
			       struct sandbox *sb, struct error *err);

/* sandbox_outputs.c: after a run, the Python value and the files in
 * /outputs into res (a session's: those not as the snapshot taken before
 * the run saw them; forget frees it). */
void sandbox_collect_outputs(struct sandbox *sb, struct sandbox_result *res);
void sandbox_outputs_snapshot(struct sandbox *sb);
void sandbox_outputs_forget(struct sandbox *sb);

int sandbox_watchdog_start(const struct global_opts *g, struct error *err);
/* Before the first container: the watchdog said it is armed (at once
 * after that). */
int sandbox_watchdog_armed(struct error *err);

/* ---- sandbox_pyerror.c, sandbox_outputs.c, sandbox_spec.c ------------------ */

/* A Python program's uncaught exception, parsed from its stderr
 * (sandbox_pyerror.c). */
struct sandbox_pyerror {
	char *name;	 /* "ZeroDivisionError" */
	char *value;	 /* "division by zero" */
	char *traceback; /* from "Traceback (most recent call last):" */
};

bool sandbox_python_error(const struct sandbox_result *res, struct sandbox_pyerror *out);
void sandbox_pyerror_free(struct sandbox_pyerror *e);

/* The Python wrapper that finds the last expression's value (its source,
 * for python3 -c; sandbox_outputs.c). */
extern const char sandbox_python_wrapper[];
/* The same waiting first for the go byte on stdin (sandbox_config.warm). */
extern const char sandbox_python_warm_wrapper[];
/* What a warm interpreter reads before it runs the program. */
#define SANDBOX_GO_BYTE '\n'
void sandbox_outputs_free(struct sandbox_result *res);

/* config.json for a sandbox: spec_default_json() with the process, root,
 * hostname, resources and network replaced.  Heap string. */
char *sandbox_spec_json(const struct sandbox_config *cfg, const char *interpreter,
			struct error *err);
/* The code file's name in SANDBOX_CODE_DIR: "main.py", ... */
const char *sandbox_code_file(enum sandbox_lang lang);

#endif
