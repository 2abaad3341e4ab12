/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy's hooks rule carried out (spec/policy/policy_hooks.c decides).  Under
 * enforce every hook path is opened by the judge (runtime/judge/: symlinks
 * and magic links such as /proc/<dockerd pid>/exe followed, then located
 * in this mount namespace: a file of another container's root is refused
 * there), the whole command (that file, argv, env) is judged against the
 * rules, and the hook process executes the fd itself (execveat
 * AT_EMPTY_PATH): the path is never looked up a second time.
 *
 * create opens and judges the hooks of all six kinds before anything is
 * made, and keeps ("pins") the fds: prestart and createRuntime then run
 * from them in the runtime, createContainer in the container's init, which
 * inherited them over clone and closes them once those hooks have run.
 * start and delete (poststart, poststop) are other processes: they load the
 * policy again and judge each hook where it is run, the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "weak.h"
#include "../runtime/judge/judge.h"
#include "hook_guard.h"

static bool guard_on;
/* hooks_guard_load() only notes the file: most starts and deletes run no
 * hook at all, and need not read and parse the policy for them. */
static bool load_pending;
static const char *pending_path;
static struct policy guard; /* only source and the hook rules are set */
/* The container the hooks are for: its id and its bundle, located. */
static char *guard_id;
static char guard_bundle[PATH_MAX];

struct pin {
	enum hook_kind kind;
	size_t index;
	char *path;
	int fd;
};

static struct pin *pins;
static size_t n_pins;

static void guard_clear(void)
{
	policy_free(&guard);
	guard_on = false;
}

static void strv_copy(struct str_array *to, const struct str_array *from)
{
	to->items = xcalloc(from->len + 1, sizeof(char *));
	for (size_t i = 0; i < from->len; i++)
		to->items[i] = xstrdup(from->items[i]);
	to->len = from->len;
}

/* Only what the rule reads is copied: the caller's policy may go away. */
static void guard_copy(const struct policy *p)
{
	guard_clear();
	guard.mode = POLICY_ENFORCE;
	guard.source = xstrdup(p->source ? p->source : "policy");
	strv_copy(&guard.docker_hook, &p->docker_hook);
	guard.hook_rules = xcalloc(p->n_hook_rules + 1, sizeof(*guard.hook_rules));
	for (size_t i = 0; i < p->n_hook_rules; i++) {
		guard.hook_rules[i].path = xstrdup(p->hook_rules[i].path);
		guard.hook_rules[i].kinds = p->hook_rules[i].kinds;
		strv_copy(&guard.hook_rules[i].args, &p->hook_rules[i].args);
		strv_copy(&guard.hook_rules[i].env, &p->hook_rules[i].env);
	}
	guard.n_hook_rules = p->n_hook_rules;
	guard_on = true;
}

void hooks_guard_container(const char *id, const char *bundle)
{
	struct judged o;
	struct error ignored;

	free(guard_id);
	guard_id = id ? xstrdup(id) : NULL;
	guard_bundle[0] = '\0';
	/* Unknown or not where it says: no rule that needs it matches. */
	if (bundle && bundle[0] == '/' &&
	    judge_open("the bundle", bundle, JUDGE_SYMLINKS, &o, &ignored) == 0) {
		snprintf(guard_bundle, sizeof(guard_bundle), "%s", o.where);
		judged_close(&o);
	}
}

void hooks_guard_set(const struct policy *p)
{
	load_pending = false;
	/* weak-hook-prefixes: hooks are not judged, they run as with the
	 * policy off. */
	if (!p || p->mode != POLICY_ENFORCE || WEAK_HOOK_PREFIXES) {
		guard_clear();
		return;
	}
	guard_copy(p);
}

void hooks_guard_load(const char *policy_path)
{
	guard_clear();
	load_pending = true;
	pending_path = policy_path;
}

static void guard_load_now(void)
{
	struct policy p;
	struct error err;

	load_pending = false;
	if (policy_load(pending_path, &p, &err) < 0) {
		/* The floor holds: no policy, no hook is allowed. */
		log_warn("hooks: %s: every hook is refused", err.msg);
		policy_default(&p);
		p.docker_hook.len = 0;
	}
	hooks_guard_set(&p);
	policy_free(&p);
}

bool hooks_guarded(void)
{
	if (load_pending)
		guard_load_now();
	return guard_on;
}

/* Docker's "-exec-root=" directory, located; "" when it is not there. */
static void locate_exec_root(const struct oci_hook *hook, char *out, size_t cap)
{
	const char *e = policy_docker_hook_exec_root(hook);
	struct judged o;
	struct error ignored;

	out[0] = '\0';
	if (e && judge_open("-exec-root", e, JUDGE_SYMLINKS, &o, &ignored) == 0) {
		snprintf(out, cap, "%s", o.where);
		judged_close(&o);
	}
}

static int open_judged_by(const struct policy *p, const struct oci_hook *hook,
			  enum hook_kind kind, size_t index, int *out,
			  struct error *err)
{
	struct hook_subject h = { .kind = kind, .index = index, .hook = hook, .id = guard_id };
	char what[64], exec_root[PATH_MAX];
	struct judged o;

	*out = -1;
	snprintf(what, sizeof(what), "hooks.%s[%zu]", hook_kind_name(kind), index);
	if (kind == HOOK_START_CONTAINER)
		return policy_hook_judge(p, &h, err);
	if (judge_open(what, hook->path, JUDGE_FOLLOW_ALL, &o, err) < 0)
		return -1;
	h.real_path = o.where;
	h.bundle = guard_bundle[0] ? guard_bundle : NULL;
	locate_exec_root(hook, exec_root, sizeof(exec_root));
	h.exec_root = exec_root[0] ? exec_root : NULL;
	if (judge_require_type(what, &o, JUDGE_TYPE_REG, NULL, err) < 0 ||
	    policy_hook_judge(p, &h, err) < 0) {
		judged_close(&o);
		return -1;
	}
	*out = o.fd;
	return 0;
}

int hooks_open_judged(const struct oci_hook *hook, enum hook_kind kind,
		      size_t index, int *fd, struct error *err)
{
	return open_judged_by(&guard, hook, kind, index, fd, err);
}

static void pin_add(const struct oci_hook *hook, enum hook_kind kind,
		    size_t index, int fd)
{
	pins = xrealloc(pins, (n_pins + 1) * sizeof(*pins));
	pins[n_pins++] = (struct pin){ .kind = kind, .index = index, .path = xstrdup(hook->path), .fd = fd };
}

int hooks_judge_all(const struct policy *p, const struct oci_spec *spec,
		    bool pin, struct error *err)
{
	for (int k = 0; k < HOOK_KIND_MAX; k++) {
		const struct oci_hook_list *l = &spec->hooks[k];

		for (size_t i = 0; i < l->len; i++) {
			int fd;

			if (open_judged_by(p, &l->items[i], (enum hook_kind)k, i,
					   &fd, err) < 0)
				return -1;
			if (pin)
				pin_add(&l->items[i], (enum hook_kind)k, i, fd);
			else
				close(fd);
		}
	}
	return 0;
}

int hooks_pin(const struct oci_spec *spec, struct error *err)
{
	if (!guard_on)
		return 0;
	if (hooks_judge_all(&guard, spec, true, err) < 0) {
		hooks_unpin();
		return -1;
	}
	return 0;
}

int hooks_pinned_fd(const struct oci_hook *hook, enum hook_kind kind,
		    size_t index)
{
	for (size_t i = 0; i < n_pins; i++)
		if (pins[i].kind == kind && pins[i].index == index &&
		    hook->path && !strcmp(pins[i].path, hook->path))
			return pins[i].fd;
	return -1;
}

void hooks_unpin(void)
{
	for (size_t i = 0; i < n_pins; i++) {
		close(pins[i].fd);
		free(pins[i].path);
	}
	free(pins);
	pins = NULL;
	n_pins = 0;
}
