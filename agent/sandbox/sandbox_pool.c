/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A pool of warm sandboxes for a long-lived caller (the MCP server's
 * --warm): up to `want` containers of one configuration, each created and
 * started with its interpreter waiting for its program (sandbox_config.warm:
 * Python has imported its site), kept ready by a thread of the pool's own,
 * which makes a new one as soon as one is taken.  A taken sandbox is the
 * caller's: it runs one program and is destroyed (sandbox_run,
 * sandbox_destroy); nothing of one run can be seen by the next, which is
 * another container.
 *
 * The refill is background work that must not slow the runs it is for: it
 * waits while a taken sandbox is still in use (until sandbox_pool_done),
 * unless the pool is empty (then the callers make their own, slower ones:
 * the sooner the better), and its containers are created at a lower CPU
 * priority (SANDBOX_BACKGROUND_NICE, the thread's and the create helper's,
 * which the container inherits), given the normal one back before a
 * program is handed over (sandbox_run).  Idle, the pool's thread sleeps on
 * a condition: no polling.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../../lib/log.h"
#include "../../lib/util.h"
#include "sandbox_private.h"

struct sandbox_pool {
	const struct global_opts *g;
	struct sandbox_config cfg;
	int want;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sandbox *ready; /* the oldest first */
	int n;
	int in_use; /* taken, not yet done */
	bool stopping;
	bool failed; /* a create failed: no more warming (the callers make their own) */
	pthread_t thread;
};

/* One more, made outside the lock; false if it could not be. */
static bool refill_one(struct sandbox_pool *p)
{
	struct sandbox sb;
	struct error err;
	int r;

	pthread_mutex_unlock(&p->lock);
	r = sandbox_prepare_background(p->g, &p->cfg, &sb, &err);
	pthread_mutex_lock(&p->lock);
	if (r < 0) {
		log_warn("sandbox pool: a warm %s sandbox: %s (no more are made)",
			 sandbox_lang_name(p->cfg.lang), err.msg);
		p->failed = true;
		return false;
	}
	if (p->stopping || p->n >= p->want) {
		pthread_mutex_unlock(&p->lock);
		sandbox_destroy(p->g, &sb);
		pthread_mutex_lock(&p->lock);
		return true;
	}
	p->ready[p->n++] = sb;
	pthread_cond_broadcast(&p->cond);
	return true;
}

static void *pool_thread(void *arg)
{
	struct sandbox_pool *p = arg;

	/* This thread's own work (the workspace, the overlay) yields too. */
	if (geteuid() == 0 && setpriority(PRIO_PROCESS, (id_t)gettid(), SANDBOX_BACKGROUND_NICE) < 0)
		log_debug("sandbox pool: nice its thread: %s", strerror(errno));
	pthread_mutex_lock(&p->lock);
	while (!p->stopping) {
		if (p->failed || p->n >= p->want || (p->n > 0 && p->in_use > 0)) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		refill_one(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int sandbox_pool_start(const struct global_opts *g, const struct sandbox_config *cfg, int want,
		       struct sandbox_pool **out, struct error *err)
{
	struct sandbox_pool *p;
	int r;

	*out = NULL;
	if (want <= 0)
		return 0;
	if (cfg->lang == SANDBOX_LANG_NONE || cfg->stdin_fd >= 0)
		return error_set(err, "sandbox pool: only a language with a stdin pipe can be warm");
	if (!sandbox_creator_running())
		return error_set(err, "sandbox pool: start the creator first (sandbox_creator_start)");
	p = xcalloc(1, sizeof(*p));
	p->g = g;
	p->cfg = *cfg;
	p->cfg.warm = true;
	p->want = want;
	p->ready = xcalloc((size_t)want, sizeof(*p->ready));
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	r = pthread_create(&p->thread, NULL, pool_thread, p);
	if (r) {
		free(p->ready);
		free(p);
		return error_set(err, "sandbox pool: start its thread: %s", strerror(r));
	}
	*out = p;
	return 0;
}

bool sandbox_pool_take(struct sandbox_pool *p, struct sandbox *out)
{
	bool found = false;

	if (!p)
		return false;
	pthread_mutex_lock(&p->lock);
	while (p->n > 0 && !found) {
		struct sandbox sb = p->ready[0];

		memmove(&p->ready[0], &p->ready[1], (size_t)(p->n - 1) * sizeof(p->ready[0]));
		p->n--;
		p->in_use++;
		pthread_mutex_unlock(&p->lock);
		found = sandbox_is_alive(&sb);
		if (found)
			*out = sb;
		else
			sandbox_destroy(p->g, &sb); /* its init died: not one to hand out */
		pthread_mutex_lock(&p->lock);
		if (!found)
			p->in_use--;
	}
	pthread_cond_broadcast(&p->cond); /* the thread refills (now, or when done) */
	pthread_mutex_unlock(&p->lock);
	return found;
}

void sandbox_pool_done(struct sandbox_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->in_use > 0)
		p->in_use--;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void sandbox_pool_stop(struct sandbox_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	for (int i = 0; i < p->n; i++)
		sandbox_destroy(p->g, &p->ready[i]);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p->ready);
	free(p);
}
