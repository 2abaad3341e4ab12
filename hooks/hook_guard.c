/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The policy's hooks rule carried out (spec/policy/policy_hooks.c decides).  Under
 * enforce every hook path is opened (O_PATH, symlinks and magic links such
 * as /proc/<dockerd pid>/exe followed), the kernel is asked where that file
 * really is (/proc/self/fd/N), that path is judged against hookPrefixes,
 * and the hook process executes the fd itself (execveat AT_EMPTY_PATH):
 * the path is never looked up a second time.
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
#include "../lib/weaken.h"
#include "hook_guard.h"

#define DELETED_SUFFIX " (deleted)"

static bool guard_on;
/* hooks_guard_load() only notes the file: most starts and deletes run no
 * hook at all, and need not read and parse the policy for them. */
static bool load_pending;
static const char *pending_path;
static struct policy guard; /* only source and hook_prefixes are set */

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

/* Only what the rule reads is copied: the caller's policy may go away. */
static void guard_copy(const struct policy *p)
{
	guard_clear();
	guard.mode = POLICY_ENFORCE;
	guard.source = xstrdup(p->source ? p->source : "policy");
	guard.hook_prefixes.items = xcalloc(p->hook_prefixes.len + 1, sizeof(char *));
	for (size_t i = 0; i < p->hook_prefixes.len; i++)
		guard.hook_prefixes.items[i] = xstrdup(p->hook_prefixes.items[i]);
	guard.hook_prefixes.len = p->hook_prefixes.len;
	guard_on = true;
}

void hooks_guard_set(const struct policy *p)
{
	load_pending = false;
	/* weak-hook-prefixes: hooks are not judged, they run as with the
	 * policy off (issue 12 row 14's attack then succeeds). */
	if (!p || p->mode != POLICY_ENFORCE || WEAKENED("hook-prefixes")) {
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
		p.hook_prefixes.len = 0;
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

/* Where the file behind fd really is, " (deleted)" dropped: a running
 * dockerd replaced by an upgrade still names the path it was at. */
static int fd_real_path(int fd, char *buf, size_t cap)
{
	char link[64];
	size_t sl = strlen(DELETED_SUFFIX);
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, cap - 1);
	if (n < 0)
		return -1;
	if ((size_t)n == cap - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[n] = '\0';
	if ((size_t)n > sl && !strcmp(buf + n - sl, DELETED_SUFFIX))
		buf[n - sl] = '\0';
	return 0;
}

static int judge_fd(const struct policy *p, const struct oci_hook *hook,
		    enum hook_kind kind, size_t index, int fd, struct error *err)
{
	char real[4096];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return error_sys(err, "hooks.%s[%zu]: fstat %s", hook_kind_name(kind),
				 index, hook->path);
	if (fd_real_path(fd, real, sizeof(real)) < 0)
		return error_sys(err, "hooks.%s[%zu]: where is %s (readlink /proc/self/fd/%d)",
				 hook_kind_name(kind), index, hook->path, fd);
	if (!S_ISREG(st.st_mode) || !policy_hook_allowed(p, real))
		return policy_hook_refuse(p, kind, index, hook->path, real, err);
	return 0;
}

static int open_judged_by(const struct policy *p, const struct oci_hook *hook,
			  enum hook_kind kind, size_t index, int *out,
			  struct error *err)
{
	int fd;

	*out = -1;
	if (kind == HOOK_START_CONTAINER)
		return policy_hook_refuse(p, kind, index, hook->path, NULL, err);
	if (!hook->path || hook->path[0] != '/')
		return error_set(err, "hooks.%s[%zu] %s: path is not absolute",
				 hook_kind_name(kind), index,
				 hook->path ? hook->path : "(null)");
	fd = open(hook->path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return error_sys(err, "hooks.%s[%zu]: open %s", hook_kind_name(kind),
				 index, hook->path);
	if (judge_fd(p, hook, kind, index, fd, err) < 0) {
		close(fd);
		return -1;
	}
	*out = fd;
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
