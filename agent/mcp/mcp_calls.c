/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tools/call requests in flight.  Each has a thread: it waits for one
 * of --max-concurrent slots (so at most that many sandboxes exist for
 * calls at once; the rest queue first in, first out: in the order the
 * requests were read, not the order their threads wake up), runs the
 * tool and replies.  notifications/cancelled marks the call cancelled and
 * writes its eventfd, which the sandbox's wait loop polls: the init of
 * the container's pid namespace is SIGKILLed, so every process of the
 * container dies at once, and no reply is sent for that request.  A queued
 * call that is cancelled just leaves the queue.
 *
 * Tenants (mcp_tenants.c): a run holds a slot only while its tenant has
 * fewer than its concurrent_runs running, so the first call in line whose
 * tenant has room goes next (one tenant's backlog never blocks another's);
 * a run over its tenant's concurrent_runs + queued_runs is refused at once
 * with a JSON-RPC error naming the quota, and one over the server's
 * --max-queued with RPC_SERVER_BUSY (HTTP 429): the queue never grows
 * without a bound.
 *
 * Progress (when the request's _meta has a progressToken): "started", the
 * output as it comes (at most one notification per stream every
 * PROGRESS_MIN_MS, each at most PROGRESS_CHUNK bytes, what did not fit is
 * counted), "finished".  The progress value counts the notifications.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/utf8.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "mcp_private.h"

#define WAIT_TICK_MS 100

static void kick(struct mcp_call *c)
{
	uint64_t one = 1;

	if (write(c->cancel_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("mcp: write an eventfd: %s", strerror(errno));
}

/* ---- slots -------------------------------------------------------------------- */

static bool takes_slot(const struct mcp_call *c)
{
	return c->a.tool == TOOL_RUN_CODE || c->a.tool == TOOL_SESSION_RUN;
}

/* Under the server's lock, as the request is read: its place in line. */
static void enqueue_locked(struct mcp_server *s, struct mcp_call *c)
{
	struct mcp_call **p = &s->queue;

	while (*p)
		p = &(*p)->qnext;
	*p = c;
	c->qnext = NULL;
	c->queued = true;
	s->queued++;
	c->use->queued++;
}

static void dequeue_locked(struct mcp_server *s, struct mcp_call *c)
{
	for (struct mcp_call **p = &s->queue; c->queued && *p; p = &(*p)->qnext)
		if (*p == c) {
			*p = c->qnext;
			c->queued = false;
			s->queued--;
			c->use->queued--;
			break;
		}
}

static bool tenant_has_room(const struct mcp_call *c)
{
	return !c->quota.concurrent_runs || c->use->running < c->quota.concurrent_runs;
}

/* The call that takes the next free slot: the first in line whose tenant
 * has room. */
static struct mcp_call *next_in_line(struct mcp_server *s)
{
	for (struct mcp_call *q = s->queue; q; q = q->qnext)
		if (tenant_has_room(q))
			return q;
	return NULL;
}

/* true: a slot is ours.  false: cancelled (say nothing) or the server is
 * stopping (*stopping: say so).  First come, first served, among the
 * calls whose tenant may run one more. */
static bool take_slot(struct mcp_call *c, bool *stopping)
{
	struct mcp_server *s = c->s;
	int max = s->o->max_concurrent > 0 ? s->o->max_concurrent : MCP_CONCURRENT_DEFAULT;
	bool ok;

	pthread_mutex_lock(&s->lock);
	while (!c->cancelled && !s->stop_signal && (s->running >= max || next_in_line(s) != c))
		pthread_cond_wait(&s->cond, &s->lock);
	*stopping = !c->cancelled && s->stop_signal;
	ok = !c->cancelled && !s->stop_signal;
	dequeue_locked(s, c);
	if (ok) {
		s->running++;
		c->use->running++;
	}
	/* The next in line may take the next free slot. */
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void give_slot(struct mcp_call *c)
{
	struct mcp_server *s = c->s;

	pthread_mutex_lock(&s->lock);
	s->running--;
	c->use->running--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* ---- the thread ------------------------------------------------------------------ */

static void call_free(struct mcp_call *c)
{
	mcp_id_free(&c->id);
	mcp_id_free(&c->progress_token);
	mcp_call_args_free(&c->a);
	for (int i = 0; i < 3; i++)
		free(c->pending[i]);
	free(c->answer);
	if (c->cancel_fd >= 0)
		close(c->cancel_fd);
	if (c->conn)
		c->conn->ops->release(c->conn);
	free(c);
}

static void call_unlink(struct mcp_call *c)
{
	struct mcp_server *s = c->s;

	pthread_mutex_lock(&s->lock);
	for (struct mcp_call **p = &s->calls; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	dequeue_locked(s, c);
	s->threads--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void reply_stopping(struct mcp_call *c)
{
	mcp_reply_tool_error(c, "the server is stopping; the program did not run");
}

static void *call_thread(void *arg)
{
	struct mcp_call *c = arg;
	bool stopping;

	/* Only a run takes a sandbox slot; file and session calls do not. */
	if (!takes_slot(c)) {
		mcp_tools_run(c);
	} else if (take_slot(c, &stopping)) {
		mcp_tools_run(c);
		give_slot(c);
	} else if (stopping) {
		reply_stopping(c);
	}
	call_unlink(c);
	call_free(c);
	return NULL;
}

/* Whether one more run may wait for a slot (under the server's lock):
 * 0, or the error to answer with. */
static int admit_run_locked(struct mcp_call *c, const char **what, char *why, size_t n)
{
	struct mcp_server *s = c->s;
	const struct mcp_quota *q = &c->quota;
	int max_queued = s->o->http.max_queued > 0 ? s->o->http.max_queued : MCP_HTTP_QUEUED_DEFAULT;

	if (q->concurrent_runs &&
	    c->use->running + c->use->queued >= q->concurrent_runs + q->queued_runs) {
		*what = "Quota exceeded";
		snprintf(why, n,
			 "concurrent_runs: tenant %s may run %d at once and queue %d more "
			 "(%d running, %d queued)",
			 c->use->tenant, q->concurrent_runs, q->queued_runs, c->use->running,
			 c->use->queued);
		return RPC_QUOTA_EXCEEDED;
	}
	if (s->o->http.n_listen && s->queued >= max_queued) {
		*what = "Server busy";
		snprintf(why, n, "%d runs are waiting for a sandbox already (--max-queued); try again",
			 s->queued);
		return RPC_SERVER_BUSY;
	}
	return 0;
}

/* Into the server's lists; a run is refused here over a bound (-1, the
 * error is out). */
static int call_register(struct mcp_call *c)
{
	struct mcp_server *s = c->s;
	const char *what = NULL;
	char why[200];
	int code = 0;

	pthread_mutex_lock(&s->lock);
	c->use = mcp_tenant_use_locked(s, c->conn->peer->tenant);
	if (takes_slot(c))
		code = admit_run_locked(c, &what, why, sizeof(why));
	if (!code) {
		c->next = s->calls;
		s->calls = c;
		if (takes_slot(c))
			enqueue_locked(s, c);
		s->threads++;
	}
	pthread_mutex_unlock(&s->lock);
	if (!code)
		return 0;
	if (code == RPC_SERVER_BUSY)
		c->conn->busy = true;
	mcp_reply_error(c->conn, &c->id, code, what, why);
	return -1;
}

void mcp_calls_start(struct mcp_conn *conn, const struct mcp_id *id, struct call_args *a,
		     struct mcp_id *token)
{
	struct mcp_server *s = conn->s;
	struct mcp_call *c = xcalloc(1, sizeof(*c));
	pthread_attr_t attr;
	pthread_t t;
	int r;

	c->s = s;
	c->id.text = xstrdup(id->text);
	c->id.is_string = id->is_string;
	c->progress_token = *token;
	c->a = *a;
	token->text = NULL;
	memset(a, 0, sizeof(*a));
	mcp_tenants_quota(s, conn->peer->tenant, &c->quota);
	c->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->cancel_fd < 0) {
		mcp_reply_error(conn, id, RPC_INTERNAL_ERROR, "Internal error", strerror(errno));
		call_free(c);
		return;
	}
	c->conn = conn;
	conn->ops->hold(conn);
	if (call_register(c) < 0) {
		call_free(c);
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, call_thread, c);
	pthread_attr_destroy(&attr);
	if (r) {
		call_unlink(c);
		mcp_reply_error(conn, id, RPC_INTERNAL_ERROR, "Internal error",
				"cannot start a thread for the call");
		call_free(c);
	}
}

void mcp_calls_cancel(struct mcp_conn *conn, const struct mcp_id *request_id)
{
	struct mcp_server *s = conn->s;

	pthread_mutex_lock(&s->lock);
	for (struct mcp_call *c = s->calls; c; c = c->next)
		if (!c->replied && !c->cancelled && c->conn->peer == conn->peer &&
		    mcp_id_equal(&c->id, request_id)) {
			c->cancelled = true;
			kick(c);
			log_debug("mcp: request %s cancelled", c->id.text);
		}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void mcp_calls_cancel_peer(struct mcp_server *s, const struct mcp_peer *peer)
{
	pthread_mutex_lock(&s->lock);
	for (struct mcp_call *c = s->calls; c; c = c->next)
		if (!c->replied && !c->cancelled && c->conn->peer == peer) {
			c->cancelled = true;
			kick(c);
		}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void deadline_in(struct timespec *ts, long long ns)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ns += ts->tv_nsec;
	ts->tv_sec += ns / 1000000000L;
	ts->tv_nsec = ns % 1000000000L;
}

char *mcp_calls_ask(struct mcp_call *c, const char *method, void (*gen)(yajl_gen g, void *arg),
		    void *arg, double seconds)
{
	struct mcp_server *s = c->s;
	static unsigned long seq;
	struct timespec until;
	yajl_gen g = mcp_notification_begin(method);
	char *answer;

	pthread_mutex_lock(&s->lock);
	snprintf(c->ask_id, sizeof(c->ask_id), "agentsbx-%lu", ++seq);
	c->answered = false;
	pthread_mutex_unlock(&s->lock);
	jgen_key_str(g, "id", c->ask_id);
	jgen_str(g, "params");
	gen(g, arg);
	mcp_reply_send(c->conn, g);
	deadline_in(&until, (long long)(seconds * 1e9));
	pthread_mutex_lock(&s->lock);
	while (!c->answered && !c->cancelled && !s->stop_signal)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &until) == ETIMEDOUT)
			break;
	answer = c->answer;
	c->answer = NULL;
	c->ask_id[0] = 0;
	pthread_mutex_unlock(&s->lock);
	return answer;
}

void mcp_calls_answer(struct mcp_conn *conn, yajl_val msg)
{
	struct mcp_server *s = conn->s;
	yajl_val id = jmember(msg, "id");

	if (!id || !YAJL_IS_STRING(id))
		return;
	pthread_mutex_lock(&s->lock);
	for (struct mcp_call *c = s->calls; c; c = c->next)
		if (c->ask_id[0] && !c->answered && c->conn->peer == conn->peer &&
		    !strcmp(c->ask_id, id->u.string)) {
			yajl_gen g = jgen_new(false);

			jgen_tree(g, msg, 64);
			c->answer = jgen_finish(g, NULL);
			c->answered = true;
		}
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void mcp_calls_kill_all(struct mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	if (!s->stop_signal)
		s->stop_signal = -1; /* stdout gone: the same, without a signal */
	for (struct mcp_call *c = s->calls; c; c = c->next)
		kick(c);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* A termination signal while waiting for the calls to end: 0 if none. */
static int signal_arrived(struct mcp_server *s)
{
	struct signalfd_siginfo si;

	return read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si) ? (int)si.ssi_signo : 0;
}

void mcp_calls_wait_all(struct mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->threads > 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WAIT_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
		if (!s->stop_signal) {
			int sig;

			pthread_mutex_unlock(&s->lock);
			sig = signal_arrived(s);
			pthread_mutex_lock(&s->lock);
			if (sig) {
				s->stop_signal = sig;
				pthread_mutex_unlock(&s->lock);
				mcp_calls_kill_all(s);
				pthread_mutex_lock(&s->lock);
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
}

/* ---- progress --------------------------------------------------------------------- */
