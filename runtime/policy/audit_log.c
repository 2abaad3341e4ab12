/* SPDX-License-Identifier: Apache-2.0 */
/* The policy's audit log: one JSON line per decision (audit_log.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "audit_log.h"

static bool explicit_path(const struct policy *p)
{
	const char *env = getenv(AUDIT_LOG_ENV);

	return (env && env[0] == '/') || p->audit_log;
}

const char *audit_log_path(const struct policy *p)
{
	static char user_path[4096];
	const char *env = getenv(AUDIT_LOG_ENV), *state, *home;
	int n = -1;

	if (env && env[0] == '/')
		return env;
	if (p->audit_log)
		return p->audit_log[0] ? p->audit_log : NULL;
	if (p->audit_log_caller)
		return p->audit_log_caller[0] ? p->audit_log_caller : NULL;
	if (geteuid() == 0)
		return POLICY_AUDIT_LOG_DEFAULT;
	/* A plain user cannot write /var/log: their own state directory. */
	state = getenv("XDG_STATE_HOME");
	home = getenv("HOME");
	if (state && state[0] == '/')
		n = snprintf(user_path, sizeof(user_path), "%s/agentsbx/policy.log", state);
	else if (home && home[0] == '/')
		n = snprintf(user_path, sizeof(user_path), "%s/.local/state/agentsbx/policy.log",
			     strcmp(home, "/") ? home : "");
	return n > 0 && (size_t)n < sizeof(user_path) ? user_path : NULL;
}

/* The annotations that name the container to a person: the pod's and
 * container's names and namespaces (CRI), the engine (podman). */
static bool naming_annotation(const char *key)
{
	size_t n = strlen(key);

	return !strcmp(key, "io.container.manager") ||
	       (n > 5 && (!strcmp(key + n - 5, ".name") || !strcmp(key + n - 5, "-name") ||
			  !strcmp(key + n - 5, "/name") || !strcmp(key + n - 5, ".Name"))) ||
	       (n > 10 && !strcmp(key + n - 10, ".namespace")) ||
	       (n > 10 && !strcmp(key + n - 10, "-namespace"));
}

static void gen_subject(yajl_gen g, const struct policy *p, const struct audit_subject *s,
			bool applied)
{
	static const char *const modes[] = { "enforce", "audit", "off" };
	char when[64];
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%06ldZ", ts.tv_nsec / 1000);
	jgen_key_str(g, "time", when);
	jgen_key_str(g, "container", s->id);
	jgen_key_str(g, "op", s->op);
	if (s->spec) {
		jgen_key_str(g, "engine", policy_engine_name(policy_engine_of(s->spec, s->id)));
		if (s->spec->hostname)
			jgen_key_str(g, "hostname", s->spec->hostname);
		jgen_str(g, "annotations");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < s->spec->annotations.len; i++)
			if (naming_annotation(s->spec->annotations.keys[i]))
				jgen_key_str(g, s->spec->annotations.keys[i], s->spec->annotations.values[i]);
		yajl_gen_map_close(g);
	}
	jgen_key_str(g, "policy", p->source);
	jgen_key_str(g, "mode", modes[p->mode]);
	jgen_str(g, "applied");
	yajl_gen_bool(g, applied);
}

/* One line, one write(): O_APPEND makes it land whole after whatever is
 * there, whoever else is appending. */
static void write_line(int fd, const char *path, yajl_gen g, bool *warned)
{
	size_t len;
	_cleanup_free_ char *line = jgen_finish(g, &len);
	ssize_t n;

	line[len] = '\n'; /* over the NUL: written with its length */
	n = write(fd, line, len + 1);
	if (n != (ssize_t)(len + 1) && !*warned) {
		*warned = true;
		if (n < 0)
			log_warn("policy audit log %s: write: %s (the decision stands; only its record is missing)",
				 path, strerror(errno));
		else
			log_warn("policy audit log %s: short write (%zd of %zu bytes)", path, n, len + 1);
	}
}

/* The directories of path, made when missing (0750: the log is root's
 * or the user's own). */
static void make_dirs(const char *path)
{
	_cleanup_free_ char *dir = xstrdup(path);

	for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(dir, 0750) < 0 && errno != EEXIST)
			return;
		*s = '/';
	}
}

/* Opened anew for every batch (a rotated log is followed at once); made
 * with its directories when missing.  -1: logged (a warning when the log
 * was named by the policy or the environment; at info for the default, so
 * that a plain user's runs without a writable state directory stay quiet). */
static int open_log(const struct policy *p, const char *path)
{
	static const int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	int fd = open(path, flags, 0640);

	if (fd < 0 && errno == ENOENT) {
		make_dirs(path);
		fd = open(path, flags, 0640);
	}
	if (fd < 0)
		log_msg(explicit_path(p) ? LOG_LVL_WARN : LOG_LVL_INFO,
			"policy audit log %s: open: %s (the decisions are in this log only)", path,
			strerror(errno));
	return fd;
}

int audit_log_open(const struct policy *p)
{
	const char *path = audit_log_path(p);

	return path ? open_log(p, path) : -1;
}

static yajl_gen line_start(const struct policy *p, const struct audit_subject *s, bool applied)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	gen_subject(g, p, s, applied);
	return g;
}

void audit_log_changes(const struct policy *p, const struct audit_subject *s,
		       const struct policy_changes *ch, const char *action, bool applied)
{
	const char *path = audit_log_path(p);
	bool warned = false;
	int fd;

	if (!path || !ch->len || (fd = open_log(p, path)) < 0)
		return;
	for (size_t i = 0; i < ch->len; i++) {
		yajl_gen g = line_start(p, s, applied);
		jgen_key_str(g, "action", action);
		jgen_key_str(g, "rule", ch->items[i].rule);
		jgen_key_str(g, "field", ch->items[i].field);
		jgen_key_str(g, "from", ch->items[i].from);
		jgen_key_str(g, "to", ch->items[i].to);
		yajl_gen_map_close(g);
		write_line(fd, path, g, &warned); /* frees g */
	}
	close(fd);
}

void audit_log_requests(const struct policy *p, const struct audit_subject *s,
			const struct policy_requests *r, const char *action, bool applied)
{
	const char *path = audit_log_path(p);
	bool warned = false;
	int fd;

	if (!path || !r->len || (fd = open_log(p, path)) < 0)
		return;
	for (size_t i = 0; i < r->len; i++) {
		yajl_gen g = line_start(p, s, applied);
		jgen_key_str(g, "action", action);
		jgen_key_str(g, "rule", r->items[i].rule);
		jgen_key_str(g, "from", r->items[i].what);
		jgen_key_str(g, "to", !strcmp(action, "refused") ? "(refused: nothing created)" : "(the floor)");
		jgen_key_str(g, "allowedBy", r->items[i].allow ? r->items[i].allow : "(no policy field)");
		yajl_gen_map_close(g);
		write_line(fd, path, g, &warned); /* frees g */
	}
	close(fd);
}
