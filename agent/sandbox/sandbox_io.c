/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A started sandbox until its end: stdin written, stdout and stderr read
 * through non-blocking pipes and kept up to a cap (the head and the tail,
 * a marker between: agents want the end of a traceback), the wall-clock
 * deadline enforced by killing the init of the container's pid namespace,
 * which takes every process of the container with it.  Past the cap the
 * pipes keep being drained and the bytes dropped, so the code never blocks
 * on a full pipe.  Then the result as JSON.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/fds.h"
#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/utf8.h"
#include "../../lib/util.h"
#include "sandbox_private.h"

#define READ_CHUNK (64 * 1024)
#define READS_PER_WAKEUP 16		 /* then let the other stream have a turn */
#define KILL_WAIT_NS (10ll * 1000000000) /* SIGKILL to reaped */
#define NS_PER_MS 1000000ll

long long sandbox_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* ---- one captured stream ------------------------------------------------ */

struct capture {
	int *fd;
	int stream; /* 1 or 2, for on_output */
	struct sandbox_wait *w;
	char *head; /* the first head_cap bytes */
	size_t head_len, head_cap, head_room;
	char *tail; /* a ring of the last tail_cap bytes after the head */
	size_t tail_pos, tail_len, tail_cap;
	unsigned long long total;
};

static void capture_init(struct capture *c, struct sandbox_wait *w, int stream, int *fd,
			 size_t limit)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->w = w;
	c->stream = stream;
	c->tail_cap = limit / 2;
	c->head_cap = limit - c->tail_cap;
}

static void capture_free(struct capture *c)
{
	free(c->head);
	free(c->tail);
}

static void ring_add(struct capture *c, const char *buf, size_t n)
{
	size_t first;

	if (!c->tail_cap)
		return;
	if (!c->tail)
		c->tail = xmalloc(c->tail_cap);
	if (n >= c->tail_cap) {
		memcpy(c->tail, buf + n - c->tail_cap, c->tail_cap);
		c->tail_pos = 0;
		c->tail_len = c->tail_cap;
		return;
	}
	first = c->tail_cap - c->tail_pos < n ? c->tail_cap - c->tail_pos : n;
	memcpy(c->tail + c->tail_pos, buf, first);
	memcpy(c->tail, buf + first, n - first);
	c->tail_pos = (c->tail_pos + n) % c->tail_cap;
	c->tail_len = c->tail_len + n > c->tail_cap ? c->tail_cap : c->tail_len + n;
}

static void capture_add(struct capture *c, const char *buf, size_t n)
{
	size_t room = c->head_cap - c->head_len, h = n < room ? n : room;

	c->total += n;
	if (h) {
		/* doubled, not grown by each read: a program that writes a byte
		 * at a time must not make this quadratic */
		c->head = xgrow(c->head, &c->head_room, c->head_len + h, 1);
		memcpy(c->head + c->head_len, buf, h);
		c->head_len += h;
	}
	if (n > h)
		ring_add(c, buf + h, n - h);
}

/* Head, marker (if anything was dropped), tail: one heap buffer. */
static char *capture_take(struct capture *c, size_t *len, bool *truncated)
{
	unsigned long long dropped = c->total - c->head_len - c->tail_len;
	char marker[96] = "";
	size_t mlen = 0, n = 0, older;
	char *out;

	if (dropped)
		mlen = (size_t)snprintf(marker, sizeof(marker),
					"\n[agentsbx: %llu bytes trimmed: output over the limit]\n",
					dropped);
	out = xmalloc(c->head_len + mlen + c->tail_len + 1);
	if (c->head_len)
		memcpy(out, c->head, c->head_len);
	n = c->head_len;
	memcpy(out + n, marker, mlen);
	n += mlen;
	/* The ring's oldest byte is at tail_pos once it has wrapped. */
	older = c->tail_len == c->tail_cap ? c->tail_cap - c->tail_pos : 0;
	if (c->tail_len) {
		memcpy(out + n, c->tail + (older ? c->tail_pos : 0), older ? older : c->tail_len);
		n += older ? older : c->tail_len;
		if (older) {
			memcpy(out + n, c->tail, c->tail_pos);
			n += c->tail_pos;
		}
	}
	out[n] = '\0';
	*len = n;
	*truncated = *truncated || dropped;
	return out;
}

/* Read what is there; EOF closes the stream. */
static void capture_read(struct capture *c)
{
	char buf[READ_CHUNK];

	for (int i = 0; i < READS_PER_WAKEUP && *c->fd >= 0; i++) {
		ssize_t n = read(*c->fd, buf, sizeof(buf));

		if (n > 0) {
			capture_add(c, buf, (size_t)n);
			if (c->w->on_output)
				c->w->on_output(c->w->cb_arg, c->stream, buf, (size_t)n);
			continue;
		}
		if (n < 0 && (errno == EINTR))
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		fd_close(c->fd); /* EOF, or an error: nothing more will come */
	}
}

/* ---- the loop -------------------------------------------------------------- */

struct loop {
	struct sandbox_wait *w;
	struct capture out, err;
	size_t in_off;
	long long start, deadline, exit_at, kill_by;
	bool exited, killed, timed_out, cancelled;
	int status, signal;
	long long next_tick;
};

static void feed_stdin(struct loop *l)
{
	struct sandbox_wait *w = l->w;

	while (w->in_fd >= 0 && l->in_off < w->in_len) {
		ssize_t n = write(w->in_fd, w->in_data + l->in_off, w->in_len - l->in_off);
		if (n > 0) {
			l->in_off += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return;
		} else {
			break; /* EPIPE: the code does not read its stdin */
		}
	}
	fd_close(&w->in_fd);
}

static void kill_init(struct loop *l)
{
	if (l->killed || l->exited)
		return;
	/* The init of the pid namespace: the kernel kills every process in
	 * it.  A pidfd of our own unreaped child cannot name another. */
	syscall(SYS_pidfd_send_signal, l->w->pidfd, SIGKILL, NULL, 0);
	l->killed = true;
	l->kill_by = sandbox_now_ns() + KILL_WAIT_NS;
}

static void check_exit(struct loop *l)
{
	pid_t r = waitpid(l->w->pid, &l->status, WNOHANG);

	if (r == l->w->pid || (r < 0 && errno == ECHILD)) {
		l->exited = true;
		l->exit_at = sandbox_now_ns();
	}
}

static void take_signal(struct loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->w->sigfd, &si, sizeof(si)) == sizeof(si)) {
		l->signal = (int)si.ssi_signo;
		kill_init(l);
	}
}

static void take_cancel(struct loop *l)
{
	l->cancelled = true;
	kill_init(l);
}

/* Milliseconds poll may sleep: until the deadline, the kill's limit, or
 * the end of the drain after the exit. */
static int poll_timeout(const struct loop *l, long long now)
{
	long long until = l->exited ? l->exit_at + SANDBOX_DRAIN_MS * NS_PER_MS : l->killed ? l->kill_by :
											      l->deadline;
	long long ms;

	if (l->w->on_tick && !l->exited && l->next_tick < until)
		until = l->next_tick;
	ms = (until - now + NS_PER_MS - 1) / NS_PER_MS;

	return ms < 0 ? 0 : ms > 60000 ? 60000 :
					 (int)ms;
}

/* 1: finished, 0: go on, -1: the container would not die. */
static int loop_done(struct loop *l, long long now, struct error *err)
{
	struct sandbox_wait *w = l->w;

	/* A program that has ended but whose end the loop has not seen yet
	 * (the caller was slow to wait) did not time out. */
	if (!l->exited && !l->killed && now >= l->deadline)
		check_exit(l);
	if (!l->exited && !l->killed && now >= l->deadline) {
		l->timed_out = true;
		kill_init(l);
	}
	if (l->killed && !l->exited && now >= l->kill_by)
		return error_set(err, "sandbox: the container did not exit after SIGKILL");
	if (!l->exited)
		return 0;
	return (w->out_fd < 0 && w->err_fd < 0) ||
	       now >= l->exit_at + SANDBOX_DRAIN_MS * NS_PER_MS;
}

static void tick(struct loop *l)
{
	long long now = sandbox_now_ns();

	if (!l->w->on_tick || l->exited || now < l->next_tick)
		return;
	l->next_tick = now + SANDBOX_TICK_MS * NS_PER_MS;
	l->w->on_tick(l->w->cb_arg);
}

static int loop_once(struct loop *l, struct error *err)
{
	struct sandbox_wait *w = l->w;
	struct pollfd p[6];
	int n = 0, iout = -1, ierr = -1, iin = -1, ipid = -1, isig = -1, icancel = -1;
	int r;

	if (w->out_fd >= 0)
		p[iout = n++] = (struct pollfd){ .fd = w->out_fd, .events = POLLIN };
	if (w->err_fd >= 0)
		p[ierr = n++] = (struct pollfd){ .fd = w->err_fd, .events = POLLIN };
	if (w->in_fd >= 0)
		p[iin = n++] = (struct pollfd){ .fd = w->in_fd, .events = POLLOUT };
	if (!l->exited)
		p[ipid = n++] = (struct pollfd){ .fd = w->pidfd, .events = POLLIN };
	if (w->sigfd >= 0)
		p[isig = n++] = (struct pollfd){ .fd = w->sigfd, .events = POLLIN };
	if (w->cancel_fd >= 0 && !l->cancelled)
		p[icancel = n++] = (struct pollfd){ .fd = w->cancel_fd, .events = POLLIN };
	r = poll(p, (nfds_t)n, poll_timeout(l, sandbox_now_ns()));
	if (r < 0 && errno != EINTR)
		return error_sys(err, "sandbox: poll");
	tick(l);
	if (r <= 0)
		return 0;
	if (iout >= 0 && p[iout].revents)
		capture_read(&l->out);
	if (ierr >= 0 && p[ierr].revents)
		capture_read(&l->err);
	if (iin >= 0 && p[iin].revents)
		feed_stdin(l);
	if (ipid >= 0 && p[ipid].revents)
		check_exit(l);
	if (isig >= 0 && p[isig].revents)
		take_signal(l);
	if (icancel >= 0 && p[icancel].revents)
		take_cancel(l);
	return 0;
}

static void loop_result(struct loop *l, struct sandbox_result *res)
{
	long long end = l->exited ? l->exit_at : sandbox_now_ns();

	res->out = capture_take(&l->out, &res->out_len, &res->truncated);
	res->err = capture_take(&l->err, &res->err_len, &res->truncated);
	res->exit_code = l->exited ? exit_code_of(l->status) : 128 + SIGKILL;
	res->timed_out = l->timed_out;
	res->signal = l->signal;
	res->cancelled = l->cancelled;
	res->seconds = (double)(end - l->start) / 1e9;
	l->w->exit_ns = l->exited ? l->exit_at : 0;
}

int sandbox_wait(struct sandbox_wait *w, struct sandbox_result *res,
		 struct error *err)
{
	struct loop l = { .w = w };
	size_t limit = w->output_limit ? w->output_limit : SANDBOX_OUTPUT_LIMIT;
	int r = 0;

	capture_init(&l.out, w, 1, &w->out_fd, limit);
	capture_init(&l.err, w, 2, &w->err_fd, limit);
	l.start = w->start_ns ? w->start_ns : sandbox_now_ns();
	l.next_tick = l.start + SANDBOX_TICK_MS * NS_PER_MS;
	l.deadline = l.start + (long long)(w->timeout * 1e9);
	if (w->in_fd >= 0 && !w->in_len)
		fd_close(&w->in_fd);
	else
		feed_stdin(&l);
	for (;;) {
		int done = loop_done(&l, sandbox_now_ns(), err);
		if (done)
			r = done < 0 ? -1 : 0;
		else
			r = loop_once(&l, err);
		if (done || r < 0)
			break;
	}
	if (r == 0)
		loop_result(&l, res);
	capture_free(&l.out);
	capture_free(&l.err);
	return r;
}

/* ---- the result ----------------------------------------------------------------- */

static void gen_text(yajl_gen g, const char *key, const char *s, size_t n)
{
	size_t len;
	_cleanup_free_ char *clean = utf8_clean(s ? s : "", s ? n : 0, &len);

	jgen_str(g, key);
	yajl_gen_string(g, (const unsigned char *)clean, len);
}

static void gen_bool(yajl_gen g, const char *key, bool v)
{
	jgen_str(g, key);
	yajl_gen_bool(g, v);
}

static void gen_outputs(yajl_gen g, const struct sandbox_result *res)
{
	jgen_str(g, "outputs");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < res->n_outputs; i++) {
		const struct sandbox_output *o = &res->outputs[i];

		yajl_gen_map_open(g);
		gen_text(g, "path", o->path, strlen(o->path));
		jgen_key_int(g, "size", (long long)o->size);
		if (o->content_base64)
			jgen_key_str(g, "content_base64", o->content_base64);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	if (res->outputs_truncated)
		gen_bool(g, "outputs_truncated", true);
}

void sandbox_result_gen(yajl_gen g, const struct sandbox_result *res)
{
	char secs[32];

	snprintf(secs, sizeof(secs), "%.3f", res->seconds);
	yajl_gen_map_open(g);
	gen_text(g, "stdout", res->out, res->out_len);
	gen_text(g, "stderr", res->err, res->err_len);
	jgen_str(g, "exit_code");
	yajl_gen_integer(g, res->exit_code);
	gen_bool(g, "timed_out", res->timed_out);
	jgen_str(g, "seconds");
	yajl_gen_number(g, secs, strlen(secs));
	gen_bool(g, "truncated", res->truncated);
	gen_bool(g, "oom_killed", res->oom_killed);
	if (res->python) {
		struct sandbox_pyerror e;

		if (sandbox_python_error(res, &e)) {
			jgen_str(g, "error");
			yajl_gen_map_open(g);
			gen_text(g, "name", e.name, strlen(e.name));
			gen_text(g, "value", e.value, strlen(e.value));
			gen_text(g, "traceback", e.traceback, strlen(e.traceback));
			yajl_gen_map_close(g);
			sandbox_pyerror_free(&e);
		}
	}
	if (res->value)
		gen_text(g, "value", res->value, res->value_len);
	gen_outputs(g, res);
	yajl_gen_map_close(g);
}

char *sandbox_result_json(const struct sandbox_result *res)
{
	yajl_gen g = jgen_new(false);

	sandbox_result_gen(g, res);
	return jgen_finish(g, NULL);
}

void sandbox_result_free(struct sandbox_result *res)
{
	sandbox_outputs_free(res);
	free(res->out);
	free(res->err);
	memset(res, 0, sizeof(*res));
}
