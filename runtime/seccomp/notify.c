/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Handing the SCMP_ACT_NOTIFY listener to the seccomp agent at
 * linux.seccomp.listenerPath, with the "Container Process State" of
 * config-linux.md as the payload and the fd in SCM_RIGHTS.
 */
#define SECCOMP_NO_COMPAT_NAMES /* we include libseccomp's <seccomp.h> */
#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../../lib/cleanup.h"
#include "../../lib/fdpass.h"
#include "../../lib/jsongen.h"
#include "../../lib/util.h"

/* A stuck agent fails `create` after this long instead of hanging it. */
#define LISTENER_TIMEOUT_SEC 10
#define STATE_MAX_DEPTH 64

/* ---- JSON ---------------------------------------------------------------- */

int seccomp_state_json(const struct seccomp_state_info *st, char **out,
		       struct error *err)
{
	yajl_gen g;

	if (!st->id || !st->bundle)
		return error_set(err, "seccomp: state needs id and bundle");
	g = jgen_new(false);
	yajl_gen_map_open(g);
	jgen_key_str(g, "ociVersion", st->oci_version ? st->oci_version : OCI_VERSION_MAX);
	jgen_key_str(g, "id", st->id);
	jgen_key_str(g, "status", st->status ? st->status : "creating");
	jgen_str(g, "pid");
	yajl_gen_integer(g, st->pid);
	jgen_key_str(g, "bundle", st->bundle);
	if (st->annotations && st->annotations->len) {
		jgen_str(g, "annotations");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < st->annotations->len; i++)
			jgen_key_str(g, st->annotations->keys[i],
				     st->annotations->values[i]);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	*out = jgen_finish(g, NULL);
	return 0;
}

static int parse_state(const char *state_json, yajl_val *tree,
		       long long *pid, struct error *err)
{
	const char *pid_path[] = { "pid", NULL };
	char ebuf[256];
	yajl_val v;

	*tree = yajl_tree_parse(state_json, ebuf, sizeof(ebuf));
	if (!*tree)
		return error_set(err, "seccomp: state JSON: %s", ebuf);
	if (!YAJL_IS_OBJECT(*tree))
		return error_set(err, "seccomp: state JSON is not an object");
	v = yajl_tree_get(*tree, pid_path, yajl_t_number);
	if (!v || !YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) <= 0)
		return error_set(err, "seccomp: state JSON has no valid pid");
	*pid = YAJL_GET_INTEGER(v);
	return 0;
}

int seccomp_process_state_json(const char *state_json, const char *metadata,
			       char **out, struct error *err)
{
	yajl_val state = NULL;
	long long pid;
	yajl_gen g = NULL;
	int rc = -1;

	if (parse_state(state_json, &state, &pid, err) < 0)
		goto out;
	g = jgen_new(false);
	yajl_gen_map_open(g);
	jgen_key_str(g, "ociVersion", OCI_VERSION_MAX);
	jgen_str(g, "fds");
	yajl_gen_array_open(g);
	jgen_str(g, "seccompFd"); /* index 0 of SCM_RIGHTS */
	yajl_gen_array_close(g);
	jgen_str(g, "pid");
	yajl_gen_integer(g, pid);
	if (metadata)
		jgen_key_str(g, "metadata", metadata);
	jgen_str(g, "state");
	if (jgen_tree(g, state, STATE_MAX_DEPTH) < 0) {
		error_set(err, "seccomp: state JSON nested too deeply");
		goto out;
	}
	yajl_gen_map_close(g);
	*out = jgen_finish(g, NULL);
	g = NULL;
	rc = 0;
out:
	if (g)
		yajl_gen_free(g);
	yajl_tree_free(state);
	return rc;
}

/* ---- the socket ---------------------------------------------------------- */

/*
 * sun_path holds 107 bytes; a longer listenerPath is reached through its
 * directory: /proc/self/fd/N/<name>.  *dirfd keeps that directory open
 * until connect() is done.
 */
static int fill_addr(const char *path, struct sockaddr_un *sa, int *dirfd,
		     struct error *err)
{
	const char *slash, *name;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) < sizeof(sa->sun_path)) {
		strcpy(sa->sun_path, path);
		return 0;
	}
	slash = strrchr(path, '/');
	name = slash ? slash + 1 : path;
	if (slash) {
		_cleanup_free_ char *dir = xstrndup(path, (size_t)(slash - path));
		*dirfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		*dirfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (*dirfd < 0)
		return error_sys(err, "seccomp: open directory of %s", path);
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path),
			     "/proc/self/fd/%d/%s", *dirfd, name) >=
	    sizeof(sa->sun_path))
		return error_set(err, "seccomp: listener socket name too long: "
				      "%s",
				 path);
	return 0;
}

static int connect_listener(const char *path, int judged, struct error *err)
{
	struct timeval tv = { .tv_sec = LISTENER_TIMEOUT_SEC };
	_cleanup_close_ int dirfd = -1;
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;

	if (judged >= 0) {
		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", judged);
	} else if (fill_addr(path, &sa, &dirfd, err) < 0) {
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_sys(err, "seccomp: socket");
	/* On AF_UNIX the send timeout also bounds connect() to a full
	 * backlog. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return error_sys(err, "seccomp: set send timeout");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return error_sys(err, "seccomp: connect to %s", path);
	return take_fd(fd);
}

/* First sendmsg() carries the fd; the rest of a long payload follows. */
static int send_with_fd(int sock, const char *buf, size_t len, int fd,
			struct error *err)
{
	ssize_t n = fd_send(sock, buf, len, fd);

	if (n < 0)
		return error_sys(err, "seccomp: send the listener fd");
	while ((size_t)n < len) {
		ssize_t m = send(sock, buf + n, len - (size_t)n, MSG_NOSIGNAL);
		if (m < 0 && errno == EINTR)
			continue;
		if (m < 0)
			return error_sys(err, "seccomp: send the process state");
		n += m;
	}
	return 0;
}

int seccomp_send_listener(const char *listener_path, int judged, const char *metadata,
			  int listener_fd, const char *state_json,
			  struct error *err)
{
	_cleanup_free_ char *payload = NULL;
	_cleanup_close_ int sock = -1;

	if (!listener_path || !*listener_path)
		return error_set(err, "seccomp: no listenerPath");
	if (listener_fd < 0)
		return error_set(err, "seccomp: no listener fd");
	if (seccomp_process_state_json(state_json, metadata, &payload, err) < 0)
		return -1;
	sock = connect_listener(listener_path, judged, err);
	if (sock < 0)
		return -1;
	if (send_with_fd(sock, payload, strlen(payload), listener_fd, err) < 0)
		return error_prefix(err, "listenerPath %s", listener_path);
	return 0; /* the spec: one state per connection, then close */
}
