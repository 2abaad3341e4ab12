/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MCP stdio transport: newline-delimited messages on stdin (each at
 * most MCP_LINE_MAX bytes; a longer one is dropped with a parse error),
 * handed to the dispatcher (mcp_dispatch.c) on the one connection of this
 * transport, whose replies are written to stdout one whole line each under
 * the output lock.  Ends at EOF, on a termination signal, or when stdout
 * is gone.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "mcp_private.h"

#define READ_CHUNK (256 * 1024)
#define SESSION_CHECK_MS 1000 /* idle sessions are looked for while idle */

/* ---- the connection: stdout ------------------------------------------------- */

static void stdio_send(struct mcp_conn *c, const char *msg, size_t len)
{
	struct mcp_server *s = c->s;

	/* One writer at a time: the client reads whole lines. */
	pthread_mutex_lock(&s->out_lock);
	if (!s->output_gone &&
	    (write_all(STDOUT_FILENO, msg, len) < 0 || write_all(STDOUT_FILENO, "\n", 1) < 0)) {
		log_error("mcp: write to stdout: %s", strerror(errno));
		s->output_gone = true;
	}
	pthread_mutex_unlock(&s->out_lock);
}

/* stdout lives as long as the server. */
static void stdio_hold(struct mcp_conn *c)
{
	(void)c;
}

const struct mcp_conn_ops mcp_stdio_ops = {
	.send = stdio_send,
	.hold = stdio_hold,
	.release = stdio_hold,
};

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

static void handle_line(struct mcp_conn *conn, const char *line, size_t len)
{
	if (!blank(line, len))
		mcp_dispatch_text(conn, line, len);
}

/* ---- the input ---------------------------------------------------------------- */

/* The unread input is buf[start, len): lines are taken by moving start,
 * and what is left moves to the front once per read, never once per line
 * (a client's megabyte of blank lines costs a megabyte of work). */
struct line_reader {
	char *buf;
	size_t start, len, cap;
	size_t scanned;	 /* no newline in buf[start, scanned) */
	bool discarding; /* in an over-long line: drop up to its newline */
	bool eof;
};

struct line {
	const char *text;
	size_t len;  /* without the newline */
	size_t used; /* bytes it takes in the buffer, newline included */
	bool skip;   /* the end of an over-long line: not a message */
};

static void reply_too_long(struct mcp_server *s)
{
	mcp_reply_error(&s->stdio, NULL, RPC_PARSE_ERROR, "Parse error", "message longer than 16 MiB");
}

/* 1: the next complete line is in *l; 0: more input is needed.  An
 * over-long line is answered with one parse error and dropped. */
static int next_line(struct mcp_server *s, struct line_reader *r, struct line *l)
{
	size_t from = r->scanned > r->start ? r->scanned : r->start;
	char *nl = from < r->len ? memchr(r->buf + from, '\n', r->len - from) : NULL;

	if (!nl) {
		r->scanned = r->len;
		if (r->len - r->start > MCP_LINE_MAX) {
			if (!r->discarding)
				reply_too_long(s);
			r->discarding = true;
			r->start = r->len = r->scanned = 0;
		}
		return 0;
	}
	l->text = r->buf + r->start;
	l->len = (size_t)(nl - l->text);
	l->used = l->len + 1;
	l->skip = r->discarding || l->len > MCP_LINE_MAX;
	if (l->skip && !r->discarding)
		reply_too_long(s);
	r->discarding = false;
	return 1;
}

static void consume_line(struct line_reader *r, const struct line *l)
{
	r->start += l->used;
	r->scanned = r->start;
	if (r->start == r->len)
		r->start = r->len = r->scanned = 0;
}

static int read_more(struct line_reader *r, struct error *err)
{
	ssize_t n;

	if (r->start) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->scanned -= r->start;
		r->start = 0;
	}
	if (r->cap - r->len < READ_CHUNK) /* doubled: a long line is linear too */
		r->buf = xgrow(r->buf, &r->cap, r->len + READ_CHUNK, 1);
	n = read(STDIN_FILENO, r->buf + r->len, r->cap - r->len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n < 0)
		return error_sys(err, "mcp: read stdin");
	if (n == 0)
		r->eof = true;
	r->len += (size_t)n;
	return 0;
}

/* ---- the loop ------------------------------------------------------------------- */

static void take_signals(struct mcp_server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		pthread_mutex_lock(&s->lock);
		s->stop_signal = (int)si.ssi_signo;
		pthread_mutex_unlock(&s->lock);
	}
}

bool mcp_stopping(struct mcp_server *s)
{
	bool stop;

	pthread_mutex_lock(&s->lock);
	stop = s->stop_signal != 0;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->out_lock);
	stop = stop || s->output_gone;
	pthread_mutex_unlock(&s->out_lock);
	return stop;
}

/* Wait for input or a signal. */
static int wait_input(struct mcp_server *s, struct line_reader *r, struct error *err)
{
	struct pollfd p[2] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = s->sigfd, .events = POLLIN },
	};

	int n = poll(p, 2, SESSION_CHECK_MS);

	if (n == 0)
		mcp_sessions_expire(s, false);
	if (n <= 0)
		return n < 0 && errno != EINTR ? error_sys(err, "mcp: poll") : 0;
	if (p[1].revents)
		take_signals(s);
	if (p[0].revents && !mcp_stopping(s))
		return read_more(r, err);
	return 0;
}

static int serve(struct mcp_server *s, struct error *err)
{
	struct line_reader r = { 0 };
	int ret = 0;

	while (!mcp_stopping(s)) {
		struct line l;

		if (next_line(s, &r, &l)) {
			if (!l.skip)
				handle_line(&s->stdio, l.text, l.len);
			consume_line(&r, &l);
			continue;
		}
		if (r.eof) {
			/* A last message without its newline. */
			if (r.len > r.start && !r.discarding && r.len - r.start <= MCP_LINE_MAX)
				handle_line(&s->stdio, r.buf + r.start, r.len - r.start);
			break;
		}
		if ((ret = wait_input(s, &r, err)) < 0)
			break;
	}
	free(r.buf);
	return ret;
}

int mcp_stdio_serve(struct mcp_server *s, struct error *err)
{
	log_debug("mcp: serving on stdin/stdout");
	return serve(s, err);
}
