/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_FDPASS_H
#define AGENTSBX_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/*
 * One message with one fd over a unix socket (SCM_RIGHTS): the sync
 * socket, the console socket, the seccomp listener.  Both retry EINTR and
 * never raise SIGPIPE.
 */

/* Send len bytes of data (at least 1) with fd.  Returns the bytes sent
 * (a stream socket may take fewer) or -1 with errno. */
ssize_t fd_send(int sock, const void *data, size_t len, int fd);

/* Receive up to len bytes; *fd gets a passed fd (O_CLOEXEC) or -1.
 * Returns the bytes received, 0 at EOF, -1 with errno. */
ssize_t fd_recv(int sock, void *data, size_t len, int *fd);

#endif
