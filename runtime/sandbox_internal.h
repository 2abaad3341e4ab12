/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SANDBOX_INTERNAL_H
#define AGENTSBX_SANDBOX_INTERNAL_H

/* Shared by sandbox.c, sandbox_fs.c and sandbox_io.c only. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox.h"

/* ---- sandbox_fs.c: the workspace ------------------------------------------ */

/* SANDBOX_WORK_DIR/ID on a tmpfs of its own, capped at disk bytes, with
 * upper/, upper/.agentsbx, work/ and rootfs/. */
/* uid: the process's user once the policy is applied; the overlay's root
 * (the upper dir) is its own, as an image's root is its root user's. */
int sandbox_workspace_make(struct sandbox *sb, uint64_t disk, uid_t uid,
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
	double timeout;
	size_t output_limit;
	long long start_ns; /* when start was asked for: the clock's zero */
};

/*
 * From start to the end: write stdin, read stdout and stderr (each kept up
 * to output_limit, head and tail, with a marker between), kill the init
 * (and so its whole pid namespace) at the deadline or on a termination
 * signal, reap it.  Fills everything in res but oom_killed.
 */
int sandbox_wait(struct sandbox_wait *w, struct sandbox_result *res,
		 struct error *err);

long long sandbox_now_ns(void);

/* ---- sandbox.c, sandbox_watchdog.c ------------------------------------------ */

/* Close every fd from 3 up but keep_a and keep_b. */
void sandbox_close_fds_but(int keep_a, int keep_b);
int sandbox_watchdog_start(const struct global_opts *g, struct error *err);

#endif
