/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SYNC_H
#define AGENTSBX_SYNC_H

/*
 * Parent <-> container-init handshake over a SOCK_SEQPACKET socketpair.
 * Messages are fixed-size so the child never allocates to send one, and
 * an error raised in the child crosses to the parent intact.
 */

#include "../../lib/error.h"

enum sync_msg_type {
	SYNC_GO = 1,	 /* parent -> child: maps written, cgroup joined */
	SYNC_RUN_HOOKS,	 /* child -> parent: rootfs ready, run prestart/createRuntime */
	SYNC_HOOKS_DONE, /* parent -> child */
	SYNC_READY,	 /* child -> parent: set up, about to wait for start */
	SYNC_ERROR,	 /* either way: err holds why */
	SYNC_SECCOMP_FD, /* child -> parent: the notify listener, SCM_RIGHTS */
	SYNC_INIT_PID,	 /* child -> parent: the init it forked (value: host pid) */
	SYNC_EGRESS_FD,	 /* child -> parent: one of the egress proxy's sockets, made in
			  * the container's network namespace (value: its port) */
};

struct sync_msg {
	int type;
	long long value; /* SYNC_INIT_PID: a pid; SYNC_EGRESS_FD: a port */
	struct error err;
};

/* Create the pair (both ends O_CLOEXEC). */
int sync_pair(int fds[2], struct error *err);
int sync_send(int fd, int type, const struct error *payload, struct error *err);
int sync_send_value(int fd, int type, long long value, struct error *err);
/* Receive one message; want is the expected type.  A SYNC_ERROR message is
 * copied into *err and -1 returned; EOF is "container init exited". */
int sync_expect(int fd, int want, struct error *err);
int sync_expect_value(int fd, int want, long long *value, struct error *err);
/* A message carrying one fd (SCM_RIGHTS), and a value. */
int sync_send_fd(int fd, int type, int payload_fd, struct error *err);
int sync_send_fd_value(int fd, int type, int payload_fd, long long value, struct error *err);
/* Receive any message; *passed gets an fd that came with it, or -1. */
int sync_recv(int fd, struct sync_msg *msg, int *passed, struct error *err);

#endif
