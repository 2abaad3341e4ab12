/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SESSION_PRIVATE_H
#define AGENTSBX_SESSION_PRIVATE_H

/* The session room's own, shared by agent/session/'s files only: cmd/
 * includes session.h, the room's interface. */

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "../../lib/error.h"
#include "session.h"

#define SESSION_STATE_DIR ".sessions"	       /* under the state root */
#define SESSION_HEADER_MAX (128u << 20)	       /* a reply header: the streams */
#define SESSION_REQUEST_HEADER_MAX (64u << 10) /* a request header */

/* [A-Za-z0-9][A-Za-z0-9_.-]*, at most SESSION_NAME_MAX. */
int session_name_validate(const char *name, struct error *err);

/* ---- session_dir.c, for session_store.c and session_server.c ---------------- */

/* ROOT/.sessions, made if create. */
int session_dir_root(const struct global_opts *g, bool create, int *out, struct error *err);
/* Remove NAME/'s files and NAME/ itself. */
void session_dir_remove(int sessions_fd, const char *name, int dirfd);
/* "/proc/self/fd/N/sock": a socket path of any length under the root. */
void session_sock_path(int dirfd, char *buf, size_t size);

/* ---- session_wire.c ------------------------------------------------------------ */

/* One message: a line of JSON (at most hdr_max bytes), then body_len
 * bytes (the header's "body_len", at most body_max). */
int session_wire_read(int fd, size_t hdr_max, size_t body_max, yajl_val *hdr,
		      char **hdr_text, char **body, size_t *body_len, struct error *err);
int session_wire_write(int fd, const char *hdr, size_t hdr_len, const char *body,
		       size_t body_len, struct error *err);

/* ---- session_server.c ---------------------------------------------------------- */

/* In the forked child: become the server of the recorded session (dirfd
 * is NAME/, lock_fd holds its lock), report on ready_fd, serve; never
 * returns. */
__attribute__((noreturn)) void session_server_main(const struct global_opts *g,
						   const struct session_create_opts *o,
						   const char *name, int sessions_fd, int dirfd,
						   int lock_fd, int ready_fd);

#endif
