/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SESSION_CLI_H
#define AGENTSBX_SESSION_CLI_H

/*
 * Sessions from the command line (`agentsbx session ...`), for agents that
 * drive a shell: the sandbox session the MCP server uses (sandbox_session.c)
 * kept between command invocations by a small server process of its own.
 *
 * `session create` records the session under the state root, in
 * ROOT/.sessions/NAME/ (a name a container id cannot have, so `list` and
 * `delete` never see it), then forks the server: it leaves the caller's
 * process group, holds an exclusive flock on NAME/lock for its whole life
 * (so "is it alive" is a question to the kernel, never a pid that may have
 * been reused), opens the session (the workspace lives in its private mount
 * namespace and goes with it), and answers requests on NAME/sock, one at a
 * time.  It closes the session and removes NAME/ when `session close` sends
 * it SIGTERM, or when it has been unused for the idle time.  If it is
 * killed, its watchdog deletes the run's container, the workspace goes with
 * its mount namespace, and NAME/ (lock free) is a dead session: `session
 * list` shows it, `session close NAME` removes it.
 *
 * The wire (session_wire.c): a request is one line of JSON (the header)
 * and then the bytes of its body (code, stdin, a file), whose lengths the
 * header gives; a reply is the same.  A client that goes away during a run
 * kills the run.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "../../lib/error.h"
#include "../sandbox/sandbox.h"

#define SESSION_STATE_DIR ".sessions" /* under the state root */
#define SESSION_NAME_MAX 64
#define SESSION_IDLE_DEFAULT 600.0	       /* seconds */
#define SESSION_FILE_MAX (64u << 20)	       /* bytes of a file in or out */
#define SESSION_HEADER_MAX (128u << 20)	       /* a reply header: the streams */
#define SESSION_REQUEST_HEADER_MAX (64u << 10) /* a request header */

struct session_create_opts {
	const char *name;	   /* NULL: one is made up */
	struct sandbox_config cfg; /* the image, limits, network of every run */
	const char *image;	   /* for `session list` */
	double idle;		   /* seconds unused before it closes itself */
};

/* Record, fork the server, wait until it serves (or says why it cannot).
 * name gets the session's name. */
int session_create(const struct global_opts *g, const struct session_create_opts *o,
		   char name[SESSION_NAME_MAX + 1], struct error *err);

/* [A-Za-z0-9][A-Za-z0-9_.-]*, at most SESSION_NAME_MAX. */
int session_name_validate(const char *name, struct error *err);

/* A reply: its header (parsed), the text of the header, and its body. */
struct session_reply {
	yajl_val hdr;
	char *hdr_text;
	char *body;
	size_t body_len;
};

/* Send a request (a JSON object's text, without newline, and a body) to
 * the server of session name, wait for its reply.  A reply
 * {"error":{"message"}} is returned as -1 with that message. */
int session_request(const struct global_opts *g, const char *name, const char *hdr,
		    const char *body, size_t body_len, struct session_reply *rep,
		    struct error *err);
void session_reply_free(struct session_reply *rep);

/* A live session: its server is stopped (its run killed, its files
 * deleted).  A dead one: what is left is removed.  *was_dead says which. */
int session_close(const struct global_opts *g, const char *name, bool *was_dead,
		  struct error *err);

struct session_info {
	char name[SESSION_NAME_MAX + 1];
	bool alive;
	pid_t pid;		/* 0: unknown */
	char *image, *language; /* may be NULL */
	double idle;		/* the server's idle limit */
	double unused;		/* seconds since its last request */
};

int session_list(const struct global_opts *g, struct session_info **out, size_t *n,
		 struct error *err);
void session_list_free(struct session_info *list, size_t n);

/* ---- session_store.c, for session_server.c ---------------------------------- */

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
