/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A call's progress (notifications/progress with the caller's token: the
 * run started, its output as it comes, at most one notification per stream
 * every PROGRESS_MIN_MS, finished) and the one reply it may still send
 * (none once it is cancelled).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/utf8.h"
#include "../../lib/util.h"
#include "mcp_private.h"

#define PROGRESS_MIN_MS 250
/* A pause between the last notification and the response: the TypeScript
 * SDK handles a notification in a microtask but a response at once, so a
 * notification read in the same chunk as its response finds its handler
 * gone ("progress notification for an unknown token"). */
#define PROGRESS_SETTLE_US 10000
#define PROGRESS_CHUNK 4096

bool mcp_call_may_reply(struct mcp_call *c)
{
	bool ok;

	pthread_mutex_lock(&c->s->lock);
	ok = !c->cancelled;
	c->replied = ok;
	pthread_mutex_unlock(&c->s->lock);
	return ok;
}

static void send_progress(struct mcp_call *c, const char *message, size_t len)
{
	yajl_gen g = jgen_new(false);
	size_t clean_len;
	_cleanup_free_ char *clean = utf8_clean(message, len, &clean_len);

	yajl_gen_map_open(g);
	jgen_key_str(g, "jsonrpc", "2.0");
	jgen_key_str(g, "method", "notifications/progress");
	jgen_str(g, "params");
	yajl_gen_map_open(g);
	jgen_str(g, "progressToken");
	mcp_id_gen(g, &c->progress_token);
	jgen_str(g, "progress");
	yajl_gen_integer(g, ++c->progress);
	jgen_str(g, "message");
	yajl_gen_string(g, (const unsigned char *)clean, clean_len);
	yajl_gen_map_close(g);
	c->last_progress_ns = sandbox_now_ns();
	mcp_reply_send(c->conn, g); /* closes the outer object */
}

void mcp_progress_note(struct mcp_call *c, const char *message)
{
	if (c->progress_token.text)
		send_progress(c, message, strlen(message));
}

static void flush_stream(struct mcp_call *c, int stream)
{
	_cleanup_free_ char *msg = NULL;
	size_t n;

	if (!c->pending_len[stream])
		return;
	if (c->pending_dropped[stream])
		msg = xasprintf("%s: %.*s\n[%llu more bytes not shown here]",
				stream == 1 ? "stdout" : "stderr", (int)c->pending_len[stream],
				c->pending[stream], c->pending_dropped[stream]);
	else
		msg = xasprintf("%s: %.*s", stream == 1 ? "stdout" : "stderr",
				(int)c->pending_len[stream], c->pending[stream]);
	n = strlen(msg);
	c->pending_len[stream] = 0;
	c->pending_dropped[stream] = 0;
	send_progress(c, msg, n);
}

static void flush_if_due(struct mcp_call *c)
{
	if (sandbox_now_ns() - c->last_progress_ns < PROGRESS_MIN_MS * 1000000ll)
		return;
	flush_stream(c, 1);
	flush_stream(c, 2);
}

void mcp_progress_output(void *call, int stream, const char *buf, size_t n)
{
	struct mcp_call *c = call;
	size_t room, take;

	if (!c->progress_token.text || stream < 1 || stream > 2)
		return;
	if (!c->pending[stream])
		c->pending[stream] = xmalloc(PROGRESS_CHUNK);
	room = PROGRESS_CHUNK - c->pending_len[stream];
	take = n < room ? n : room;
	memcpy(c->pending[stream] + c->pending_len[stream], buf, take);
	c->pending_len[stream] += take;
	c->pending_dropped[stream] += n - take;
	flush_if_due(c);
}

void mcp_progress_tick(void *call)
{
	struct mcp_call *c = call;

	if (c->progress_token.text)
		flush_if_due(c);
}

/* What is still pending, before "finished". */
void mcp_progress_flush(struct mcp_call *c)
{
	if (!c->progress_token.text)
		return;
	flush_stream(c, 1);
	flush_stream(c, 2);
}

void mcp_progress_settle(struct mcp_call *c)
{
	if (c->progress_token.text && c->progress)
		usleep(PROGRESS_SETTLE_US);
}

void mcp_progress_value(struct mcp_call *c, double progress, double total)
{
	yajl_gen g;

	if (!c->progress_token.text)
		return;
	g = mcp_notification_begin("notifications/progress");
	jgen_str(g, "params");
	yajl_gen_map_open(g);
	jgen_str(g, "progressToken");
	mcp_id_gen(g, &c->progress_token);
	jgen_str(g, "progress");
	yajl_gen_double(g, progress);
	jgen_str(g, "total");
	yajl_gen_double(g, total);
	yajl_gen_map_close(g);
	mcp_reply_send(c->conn, g);
}
