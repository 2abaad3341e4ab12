/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The proxy's lines in the policy's audit log, in the shape of every other
 * line (agentsbx policy log reads them alike): op "egress", rule "egress",
 * action "allowed" or "refused", and the name, address, port and bytes.
 * A container can make connections and lookups as fast as it likes, so the
 * lines are rate-bounded (a burst, then a few a second); what was left out
 * is counted in the next line written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "egress_private.h"

#define AUDIT_BURST 200
#define AUDIT_PER_SECOND 20

static double tokens = AUDIT_BURST;
static struct timespec last;
static unsigned long long suppressed;

static bool take_token(void)
{
	struct timespec now;
	double dt;

	clock_gettime(CLOCK_MONOTONIC, &now);
	dt = last.tv_sec ? (double)(now.tv_sec - last.tv_sec) + (now.tv_nsec - last.tv_nsec) / 1e9 : 0;
	last = now;
	tokens += dt * AUDIT_PER_SECOND;
	if (tokens > AUDIT_BURST)
		tokens = AUDIT_BURST;
	if (tokens < 1) {
		suppressed++;
		return false;
	}
	tokens -= 1;
	return true;
}

static void now_rfc3339(char *out, size_t n)
{
	struct timespec ts;
	struct tm tm;
	size_t len;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	len = strftime(out, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + len, n - len, ".%06dZ", (int)(ts.tv_nsec / 1000));
}

void egress_audit(const struct egress_config *c, const struct egress_audit_line *l)
{
	yajl_gen g;
	char when[48], from[EGRESS_NAME_MAX + 16];
	char *line;
	size_t len;

	if (c->audit_fd < 0 || !take_token())
		return;
	now_rfc3339(when, sizeof(when));
	snprintf(from, sizeof(from), "%s:%u", l->name && *l->name ? l->name : "?", l->port);
	g = jgen_new(false);
	yajl_gen_map_open(g);
	jgen_key_str(g, "time", when);
	jgen_key_str(g, "container", c->id);
	jgen_key_str(g, "op", "egress");
	jgen_key_str(g, "policy", c->policy_source);
	jgen_key_str(g, "mode", "enforce");
	jgen_key_bool(g, "applied", true);
	jgen_key_str(g, "action", l->allowed ? "allowed" : "refused");
	jgen_key_str(g, "rule", "egress");
	jgen_key_str(g, "field", l->kind);
	jgen_key_str(g, "from", from);
	jgen_key_str(g, "to", l->allowed ? (l->address ? l->address : "") : l->why);
	jgen_key_str(g, "name", l->name ? l->name : "");
	jgen_key_str(g, "address", l->address);
	jgen_key_int(g, "port", l->port);
	jgen_key_int(g, "bytesOut", (long long)l->bytes_out);
	jgen_key_int(g, "bytesIn", (long long)l->bytes_in);
	if (suppressed) {
		jgen_key_int(g, "suppressedBefore", (long long)suppressed);
		suppressed = 0;
	}
	yajl_gen_map_close(g);
	line = jgen_finish(g, &len);
	line = xrealloc(line, len + 2);
	line[len] = '\n';
	/* the log is the operator's: a full disk must not stop the proxy */
	(void)write_all(c->audit_fd, line, len + 1);
	free(line);
}
