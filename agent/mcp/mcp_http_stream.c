/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The response of one POST, as the dispatcher's connection: every message
 * about the request (progress notifications, the reply) is handed here.
 * When the dispatch is over and nothing holds the stream any more (ping,
 * tools/list, an error), the first message is the answer, as
 * application/json.  When a call's thread still holds it (tools/call), the
 * answer is an event stream: each message one `event: message` as it
 * comes, and the stream ends when the last holder lets go (the reply is
 * out, or the call was cancelled and there is none).  libmicrohttpd reads
 * it from its own thread; with nothing to read the connection is suspended
 * and the next message, or the end, resumes it.  Notifications that pile
 * up for a reader that does not read are dropped past
 * HTTP_STREAM_BUFFERED_MAX, replies never.  A stream that has said nothing
 * for --sse-keepalive seconds (15; a long run without progress) says
 * ": keepalive",
 * an SSE comment clients skip: a balancer's idle timeout does not cut it.
 *
 * And the HTTP sessions (Mcp-Session-Id), each one of the dispatcher's
 * peers: a tenant's own, found by id only with the same tenant's token.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/log.h"
#include "../../lib/util.h"
#include "mcp_http_private.h"

struct http_stream {
	struct mcp_conn conn; /* first */
	struct mcp_server *s;
	struct http_peer *peer;
	pthread_mutex_t lock;
	int refs;    /* the request's, and each call's */
	bool reader; /* libmicrohttpd reads it (an event stream) */
	char *buf;   /* events not yet read: buf[off, len) */
	size_t off, len, cap;
	size_t n_sent;	  /* messages sent; the first is at buf + EVENT_HEAD_LEN */
	size_t first_len; /* its length, for a JSON answer */
	void *mhd;	  /* the connection, while it is read */
	bool suspended;
	bool keepalive;		  /* a comment is due */
	long long last_write_ns;  /* the last bytes handed to the reader */
	struct http_stream *next; /* in mcp_http.streams while read */
};

static void stream_free(struct http_stream *st)
{
	http_peer_put(st->s, st->peer);
	pthread_mutex_destroy(&st->lock);
	free(st->buf);
	free(st);
}

#define EVENT_HEAD "event: message\ndata: "
#define EVENT_HEAD_LEN (sizeof(EVENT_HEAD) - 1)

static void append(struct http_stream *st, const char *p, size_t n)
{
	st->buf = xgrow(st->buf, &st->cap, st->len + n, 1);
	memcpy(st->buf + st->len, p, n);
	st->len += n;
}

/* Under the lock: a suspended reader has something to do. */
static void wake(struct http_stream *st)
{
	if (st->suspended) {
		st->suspended = false;
		st->s->http->resume(st->mhd);
	}
}

static bool is_notification(const char *msg, size_t len)
{
	static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\"";

	return len >= sizeof(head) - 1 && !memcmp(msg, head, sizeof(head) - 1);
}

static void stream_send(struct mcp_conn *c, const char *msg, size_t len)
{
	struct http_stream *st = (struct http_stream *)c;

	pthread_mutex_lock(&st->lock);
	if (st->n_sent && is_notification(msg, len) && st->len - st->off > HTTP_STREAM_BUFFERED_MAX) {
		pthread_mutex_unlock(&st->lock);
		return;
	}
	/* Compact what was read before growing. */
	if (st->off && st->off == st->len)
		st->off = st->len = 0;
	if (!st->n_sent++)
		st->first_len = len;
	append(st, EVENT_HEAD, EVENT_HEAD_LEN);
	append(st, msg, len);
	append(st, "\n\n", 2);
	wake(st);
	pthread_mutex_unlock(&st->lock);
}

static void stream_hold(struct mcp_conn *c)
{
	struct http_stream *st = (struct http_stream *)c;

	pthread_mutex_lock(&st->lock);
	st->refs++;
	pthread_mutex_unlock(&st->lock);
}

static void stream_release(struct mcp_conn *c)
{
	struct http_stream *st = (struct http_stream *)c;
	bool gone;

	pthread_mutex_lock(&st->lock);
	st->refs--;
	if (!st->refs)
		wake(st); /* the end of the stream */
	gone = !st->refs && !st->reader;
	pthread_mutex_unlock(&st->lock);
	if (gone)
		stream_free(st);
}

static const struct mcp_conn_ops stream_ops = {
	.send = stream_send,
	.hold = stream_hold,
	.release = stream_release,
};

struct http_stream *http_stream_new(struct mcp_server *s, struct http_peer *peer)
{
	struct http_stream *st = xcalloc(1, sizeof(*st));

	st->conn = (struct mcp_conn){ .s = s, .ops = &stream_ops, .peer = &peer->p };
	st->s = s;
	st->peer = peer;
	pthread_mutex_lock(&s->http->lock);
	peer->refs++;
	pthread_mutex_unlock(&s->http->lock);
	pthread_mutex_init(&st->lock, NULL);
	st->refs = 1;
	return st;
}

struct mcp_conn *http_stream_conn(struct http_stream *st)
{
	return &st->conn;
}

int http_stream_settle(struct http_stream *st, void *mhd_connection, char **msg, size_t *len,
		       bool *busy)
{
	pthread_mutex_lock(&st->lock);
	*busy = st->conn.busy;
	/* One message and nothing more to come (or the server too busy to
	 * take the call): a JSON answer, the first message taken out of the
	 * event buffer in place.  More than one (progress before a result
	 * that came quickly): the event stream, so that none is lost. */
	if (*busy || (st->refs == 1 && st->n_sent <= 1)) {
		*msg = NULL;
		*len = 0;
		if (st->n_sent) {
			memmove(st->buf, st->buf + EVENT_HEAD_LEN, st->first_len);
			st->buf[st->first_len] = 0;
			*msg = st->buf;
			*len = st->first_len;
			st->buf = NULL;
			st->len = st->cap = 0;
		}
		pthread_mutex_unlock(&st->lock);
		stream_release(&st->conn);
		return 0;
	}
	st->reader = true;
	st->mhd = mhd_connection;
	st->last_write_ns = sandbox_now_ns();
	pthread_mutex_unlock(&st->lock);
	if (mhd_connection) {
		pthread_mutex_lock(&st->s->http->lock);
		st->next = st->s->http->streams;
		st->s->http->streams = st;
		pthread_mutex_unlock(&st->s->http->lock);
	}
	stream_release(&st->conn);
	return 1;
}

ssize_t http_stream_read(void *arg, uint64_t pos, char *buf, size_t max)
{
	struct http_stream *st = arg;
	ssize_t n = 0;

	(void)pos;
	pthread_mutex_lock(&st->lock);
	if (st->off < st->len) {
		n = (ssize_t)(st->len - st->off < max ? st->len - st->off : max);
		memcpy(buf, st->buf + st->off, (size_t)n);
		st->off += (size_t)n;
		st->last_write_ns = sandbox_now_ns();
	} else if (st->keepalive && st->refs && max >= 14) {
		memcpy(buf, ": keepalive\n\n", 14);
		n = 14;
		st->keepalive = false;
		st->last_write_ns = sandbox_now_ns();
	} else if (!st->refs || st->s->http->stopping) {
		n = -1; /* MHD_CONTENT_READER_END_OF_STREAM */
	} else {
		st->suspended = true;
		st->s->http->suspend(st->mhd);
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

void http_stream_reader_done(void *arg)
{
	struct http_stream *st = arg;
	struct mcp_http *h = st->s->http;
	bool gone;

	/* Out of the list first (its lock before a stream's, as the tick). */
	pthread_mutex_lock(&h->lock);
	for (struct http_stream **p = &h->streams; *p; p = &(*p)->next)
		if (*p == st) {
			*p = st->next;
			break;
		}
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_lock(&st->lock);
	st->reader = false;
	st->suspended = false;
	gone = !st->refs;
	pthread_mutex_unlock(&st->lock);
	if (gone)
		stream_free(st);
}

void http_streams_keepalive(struct mcp_server *s)
{
	unsigned every = s->o->http.sse_keepalive ? s->o->http.sse_keepalive : MCP_HTTP_KEEPALIVE_DEFAULT;
	long long due = sandbox_now_ns() - every * 1000000000LL;

	pthread_mutex_lock(&s->http->lock);
	for (struct http_stream *st = s->http->streams; st; st = st->next) {
		pthread_mutex_lock(&st->lock);
		if (st->suspended && st->refs && st->last_write_ns < due) {
			st->keepalive = true;
			wake(st);
		}
		pthread_mutex_unlock(&st->lock);
	}
	pthread_mutex_unlock(&s->http->lock);
}

/* ---- sessions --------------------------------------------------------------- */

struct http_peer *http_peer_new(struct mcp_server *s, const char *tenant)
{
	struct http_peer *hp = xcalloc(1, sizeof(*hp));

	snprintf(hp->p.tenant, sizeof(hp->p.tenant), "%s", tenant);
	http_new_session_id(hp->id);
	hp->refs = 1;
	hp->last_used_ns = sandbox_now_ns();
	(void)s;
	return hp;
}

struct http_peer *http_peer_get(struct mcp_server *s, const char *id, const char *tenant)
{
	struct http_peer *hp;

	pthread_mutex_lock(&s->http->lock);
	for (hp = s->http->peers; hp; hp = hp->next)
		if (!hp->closed && !strcmp(hp->id, id) && !strcmp(hp->p.tenant, tenant))
			break;
	if (hp) {
		hp->refs++;
		hp->last_used_ns = sandbox_now_ns();
	}
	pthread_mutex_unlock(&s->http->lock);
	return hp;
}

void http_peer_put(struct mcp_server *s, struct http_peer *hp)
{
	bool gone;

	if (!hp)
		return;
	pthread_mutex_lock(&s->http->lock);
	hp->last_used_ns = sandbox_now_ns();
	gone = --hp->refs == 0 && (hp->closed || !hp->listed);
	pthread_mutex_unlock(&s->http->lock);
	if (gone)
		free(hp);
}

/* Under the lock: out of the registry; freed by the last put. */
static void unlist_locked(struct mcp_server *s, struct http_peer *hp)
{
	for (struct http_peer **p = &s->http->peers; *p; p = &(*p)->next)
		if (*p == hp) {
			*p = hp->next;
			s->http->n_peers--;
			break;
		}
	hp->closed = true;
}

static struct http_peer *longest_idle_locked(struct mcp_server *s)
{
	struct http_peer *best = NULL;

	for (struct http_peer *hp = s->http->peers; hp; hp = hp->next)
		if (hp->refs == 0 && (!best || hp->last_used_ns < best->last_used_ns))
			best = hp;
	return best;
}

bool http_peer_register(struct mcp_server *s, struct http_peer *hp)
{
	int max = s->o->http.max_http_sessions > 0 ? s->o->http.max_http_sessions :
						     MCP_HTTP_SESSIONS_DEFAULT;
	struct http_peer *victim = NULL;
	bool ok = true;

	pthread_mutex_lock(&s->http->lock);
	if (s->http->n_peers >= max) {
		victim = longest_idle_locked(s);
		if (victim) {
			unlist_locked(s, victim);
			victim->refs++; /* freed below, outside the lock */
		}
		ok = victim != NULL;
	}
	if (ok) {
		hp->next = s->http->peers;
		s->http->peers = hp;
		hp->listed = true;
		s->http->n_peers++;
	}
	pthread_mutex_unlock(&s->http->lock);
	if (victim) {
		log_info("mcp: http session %.8s... of tenant \"%s\" closed: %d sessions are open "
			 "(--max-http-sessions), it was the longest unused",
			 victim->id, victim->p.tenant, max);
		http_peer_put(s, victim);
	}
	return ok;
}

void http_peer_close(struct mcp_server *s, struct http_peer *hp)
{
	pthread_mutex_lock(&s->http->lock);
	if (!hp->closed)
		unlist_locked(s, hp);
	pthread_mutex_unlock(&s->http->lock);
	mcp_calls_cancel_peer(s, &hp->p);
}

void http_peers_expire(struct mcp_server *s, bool all)
{
	long long idle_ns = (long long)(s->o->session_idle * 1e9), now = sandbox_now_ns();

	for (;;) {
		struct http_peer *victim = NULL;

		pthread_mutex_lock(&s->http->lock);
		for (struct http_peer *hp = s->http->peers; hp && !victim; hp = hp->next)
			if (all || (hp->refs == 0 && now - hp->last_used_ns > idle_ns))
				victim = hp;
		if (victim) {
			unlist_locked(s, victim);
			victim->refs++;
		}
		pthread_mutex_unlock(&s->http->lock);
		if (!victim)
			return;
		http_peer_put(s, victim);
	}
}
