/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_TERMINAL_H
#define AGENTSBX_TERMINAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "../../lib/error.h"

struct ctx_decided;
struct ctx_handles;
struct oci_console_size;

/* Child: with process.terminal, open a pty in the container's devpts, make
 * its peer the controlling terminal and stdio, and send the master over
 * the console socket (SCM_RIGHTS), which it closes. */
int terminal_setup_child(const struct ctx_decided *d, struct ctx_handles *h,
			 struct error *err);

/* Same, for a process that only joins the container (exec): the pty comes
 * from the container's /dev/ptmx, which must already be the cwd's root. */
int terminal_setup(int console_sock, const struct oci_console_size *size,
		   bool is_init, struct error *err);

/* Parent: connect to --console-socket. */
int terminal_connect_socket(const char *path, int *out, struct error *err);

/* Receive the master fd sent by terminal_setup_child. */
int terminal_recv_master(int sock, int *master, struct error *err);

/* Foreground run/exec without a console socket: copy our stdin/stdout to
 * and from the pty master until pid exits (raw mode on a tty stdin, restored
 * on every way out; window size kept in sync on SIGWINCH; every other
 * forwarded signal passed on to pid).  The caller keeps the forwarded
 * signals blocked (block_forwarded_signals).  *status gets waitpid's. */
int terminal_proxy(int master, pid_t pid, int *status, struct error *err);

#endif
