/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SESSION_H
#define AGENTSBX_SESSION_H

/*
 * The session room (agent/session/): sessions from the command line
 * (`agentsbx session ...`), for agents that drive a shell: a sandbox's
 * kept workspace (sandbox_session_* of agent/sandbox/, the one the MCP
 * server's session tools use too) kept between command invocations by a
 * small server process of its own, which `session run`, `write`, `read`
 * and `ls` talk to through a socket.  cmd/session.c is its only user.
 * This header is the room's whole interface; session_private.h is the
 * room's own.
 */

/*
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

#define SESSION_NAME_MAX 64
#define SESSION_IDLE_DEFAULT 600.0   /* seconds */
#define SESSION_FILE_MAX (64u << 20) /* bytes of a file in or out */

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

#endif
