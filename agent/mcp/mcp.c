/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `agentsbx mcp`: the server's set-up (the images' languages, the
 * sandbox environment, the creator process, the warm pools, the tenants),
 * its transport -- stdio (mcp_stdio.c) or, with --listen, Streamable HTTP
 * (mcp_http.c) -- and its end: the calls in flight finish (or are killed
 * on a signal), every session and sandbox is deleted.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../lib/log.h"
#include "mcp_private.h"

static int server_init(struct mcp_server *s, struct error *err)
{
	pthread_mutex_init(&s->out_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	pthread_rwlock_init(&s->tenants_lock, NULL);
	s->stdio = (struct mcp_conn){ .s = s, .ops = &mcp_stdio_ops, .peer = &s->stdio_peer };
	if (s->o->http.tokens_file &&
	    mcp_tenants_load(s->g, s->o->http.tokens_file, &s->tenants, err) < 0)
		return -1;
	if (mcp_tools_init(s, err) < 0 || sandbox_env_init(s->g, &s->sigfd, err) < 0)
		return -1;
	/* Before the first thread: see sandbox_creator.c. */
	if (sandbox_creator_start(s->g, err) < 0)
		return -1;
	return mcp_pool_start(s, err);
}

int mcp_serve(const struct global_opts *g, const struct mcp_opts *o, struct error *err)
{
	struct mcp_server s = { .g = g, .o = o, .sigfd = -1 };
	int r;

	r = server_init(&s, err);
	if (r == 0) {
		r = o->http.n_listen ? mcp_http_serve(&s, err) : mcp_stdio_serve(&s, err);
		/* At EOF the calls in flight finish and reply; on a signal, or
		 * with stdout gone, they are killed. */
		if (mcp_stopping(&s))
			mcp_calls_kill_all(&s);
		mcp_calls_wait_all(&s);
	}
	mcp_sessions_expire(&s, true);
	mcp_pools_stop(&s);
	sandbox_creator_stop();
	sandbox_env_fini();
	if (s.sigfd >= 0)
		close(s.sigfd);
	free(s.setup_error);
	mcp_tenants_free(s.tenants);
	mcp_tenant_uses_free(&s);
	if (r == 0 && s.stop_signal)
		log_info("mcp: stopped by signal %d", s.stop_signal);
	return r;
}
