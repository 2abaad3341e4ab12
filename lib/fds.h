/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_FDS_H
#define AGENTSBX_FDS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * --preserve-fds and LISTEN_FDS pass the caller's fds 3..N on.  The
 * runtime's own fds may take free numbers in that range, so the fds open
 * when the process started are recorded first thing in main(), and only
 * those are passed.
 */
#define FDS_SNAPSHOT_MAX 256

void fds_snapshot(void);
bool fds_was_open(int fd);

/* close(*fd) if it is open, then *fd = -1: safe to call twice. */
void fd_close(int *fd);

/* Close every fd from 3 up but keep_a and keep_b (close_range). */
void fds_close_all_but(int keep_a, int keep_b);
/* The same for the n fds of keep (any order; negative ones ignored). */
void fds_close_all_but_list(const int *keep, size_t n);

#endif
