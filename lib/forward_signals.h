/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_FORWARD_SIGNALS_H
#define AGENTSBX_FORWARD_SIGNALS_H

/*
 * A foreground `run` or `exec` stays beside the container's process and
 * passes on the signals it receives (runc's list), so that a shim's SIGTERM
 * or a terminal's SIGHUP reaches the container.  The caller blocks them
 * (block_forwarded_signals) before the process exists; they are then read
 * from a signalfd.
 */
#include <signal.h>
#include <sys/types.h>

#include "error.h"

/* runc's forwarded signals, plus SIGCHLD. */
void forwarded_signals_mask(sigset_t *mask);
void block_forwarded_signals(sigset_t *old);
/* Wait for pid, passing on every forwardable signal; *status: waitpid's. */
int wait_forwarding_signals(pid_t pid, int *status, struct error *err);

#endif
