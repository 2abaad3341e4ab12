/* SPDX-License-Identifier: Apache-2.0 */
#include "sync.h"

#include "../../lib/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int sync_pair(int fds[2], struct error *err)
{
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
		return error_sys(err, "create sync socketpair");
	return 0;
}

static int send_msg(int fd, int type, long long value,
		    const struct error *payload, struct error *err)
{
	struct sync_msg msg;
	ssize_t n;

	memset(&msg, 0, sizeof(msg));
	msg.type = type;
	msg.value = value;
	if (payload)
		msg.err = *payload;
	do
		n = send(fd, &msg, sizeof(msg), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(msg))
		return error_sys(err, "send sync message %d", type);
	return 0;
}

int sync_send(int fd, int type, const struct error *payload, struct error *err)
{
	return send_msg(fd, type, 0, payload, err);
}

int sync_send_value(int fd, int type, long long value, struct error *err)
{
	return send_msg(fd, type, value, NULL, err);
}

int sync_expect(int fd, int want, struct error *err)
{
	return sync_expect_value(fd, want, NULL, err);
}

int sync_expect_value(int fd, int want, long long *value, struct error *err)
{
	struct sync_msg msg;
	ssize_t n;

	/* MSG_TRUNC: the packet's real length, so that an oversized one is
	 * refused rather than read as its first sizeof(msg) bytes. */
	do
		n = recv(fd, &msg, sizeof(msg), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return error_sys(err, "receive sync message");
	if (n == 0)
		return error_set(err, "container init exited during setup");
	if (n != (ssize_t)sizeof(msg))
		return error_set(err, "bad sync message: %zd bytes, expected %zu",
				 n, sizeof(msg));
	if (msg.type == SYNC_ERROR) {
		msg.err.msg[sizeof(msg.err.msg) - 1] = '\0';
		*err = msg.err;
		return -1;
	}
	if (msg.type != want)
		return error_set(err, "unexpected sync message %d (wanted %d)",
				 msg.type, want);
	if (value)
		*value = msg.value;
	return 0;
}

int sync_send_fd(int fd, int type, int payload_fd, struct error *err)
{
	return sync_send_fd_value(fd, type, payload_fd, 0, err);
}

int sync_send_fd_value(int fd, int type, int payload_fd, long long value, struct error *err)
{
	struct sync_msg msg;

	memset(&msg, 0, sizeof(msg));
	msg.type = type;
	msg.value = value;
	if (fd_send(fd, &msg, sizeof(msg), payload_fd) != (ssize_t)sizeof(msg))
		return error_sys(err, "send sync message %d with an fd", type);
	return 0;
}

/* The length of the next packet (blocks until there is one); 0 at EOF. */
static ssize_t next_packet_size(int fd)
{
	ssize_t n;

	do
		n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	return n;
}

int sync_recv(int fd, struct sync_msg *msg, int *passed, struct error *err)
{
	ssize_t size, n;

	*passed = -1;
	size = next_packet_size(fd);
	if (size < 0)
		return error_sys(err, "receive from container init");
	n = fd_recv(fd, msg, sizeof(*msg), passed);
	if (n < 0)
		return error_sys(err, "receive from container init");
	if (n != (ssize_t)sizeof(*msg) || size != n) {
		if (*passed >= 0)
			close(*passed);
		*passed = -1;
		if (n == 0)
			return error_set(err, "container init exited during setup");
		return error_set(err, "bad sync message: %zd bytes, expected %zu",
				 size > n ? size : n, sizeof(*msg));
	}
	if (msg->type == SYNC_ERROR) {
		msg->err.msg[sizeof(msg->err.msg) - 1] = '\0';
		*err = msg->err;
		if (*passed >= 0)
			close(*passed);
		*passed = -1;
		return -1;
	}
	return 0;
}
