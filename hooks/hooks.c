/* SPDX-License-Identifier: Apache-2.0 */
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/cleanup.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "hook_guard.h"
#include "hook_proc.h"

static const char *hooks_kind_str(enum hook_kind kind)
{
	const char *name = hook_kind_name(kind);

	return name ? name : "unknown";
}

/* argv/envp point into the hook; only the arrays are allocated. */
static char **build_argv(const struct oci_hook *hook)
{
	size_t n = hook->args.len;
	char **argv = xcalloc(n ? n + 1 : 2, sizeof(*argv));

	if (!n) {
		argv[0] = hook->path;
		return argv;
	}
	for (size_t i = 0; i < n; i++)
		argv[i] = hook->args.items[i];
	return argv;
}

/* A hook without "env" gets the environment the runtime was called with,
 * as runc and crun give it (Go's exec.Cmd with a nil Env); "env": [] is an
 * empty one. */
static char **build_envp(const struct oci_hook *hook)
{
	char *const *from = hook->has_env ? hook->env.items : environ;
	size_t n = 0;
	char **envp;

	if (hook->has_env)
		n = hook->env.len;
	else
		while (from && from[n])
			n++;
	envp = xcalloc(n + 1, sizeof(*envp));
	for (size_t i = 0; i < n; i++)
		envp[i] = from[i];
	return envp;
}

/* Without a timeout, or with a nonsensical one, the hook may run forever. */
static int64_t hook_timeout(const struct oci_hook *hook)
{
	if (!hook->timeout.set || hook->timeout.v <= 0)
		return 0;
	return hook->timeout.v;
}

static bool sigchld_ignored(void)
{
	struct sigaction sa;

	if (sigaction(SIGCHLD, NULL, &sa) < 0)
		return false;
	return sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_NOCLDWAIT);
}

/* "killed by signal 9" and friends, plus the quoted stderr tail. */
static int hook_result(const struct hook_proc *p, const struct hook_label *l,
		       int64_t timeout, struct error *err)
{
	const char *tail = p->stderr_tail;
	const char *sep = *tail ? ": " : "";
	int st = p->status;

	if (p->exec_errno)
		return error_setc(err, p->exec_errno,
				  "%s hook %s (#%zu) could not be executed",
				  l->kind, l->path, l->index);
	if (p->timed_out)
		return error_set(err,
				 "%s hook %s (#%zu) timed out after %lld s and was killed%s%s",
				 l->kind, l->path, l->index, (long long)timeout,
				 sep, tail);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFEXITED(st))
		return error_set(err, "%s hook %s (#%zu) exited with status %d%s%s",
				 l->kind, l->path, l->index, WEXITSTATUS(st),
				 sep, tail);
	if (WIFSIGNALED(st))
		return error_set(err, "%s hook %s (#%zu) killed by signal %d%s%s",
				 l->kind, l->path, l->index, WTERMSIG(st), sep,
				 tail);
	return error_set(err, "%s hook %s (#%zu) ended with wait status 0x%x",
			 l->kind, l->path, l->index, (unsigned)st);
}

int hooks_run_one(const struct oci_hook *hook, enum hook_kind kind,
		  size_t index, const char *state_json, struct error *err)
{
	struct hook_label l = {
		.kind = hooks_kind_str(kind),
		.index = index,
		.path = hook->path ? hook->path : "(null)",
	};
	_cleanup_free_ char **argv = NULL;
	_cleanup_free_ char **envp = NULL;
	struct hook_proc p;
	int64_t timeout = hook_timeout(hook);
	int exec_fd = -1, own_fd = -1;
	int r;

	if (!hook->path || hook->path[0] != '/')
		return error_set(err, "%s hook %s (#%zu): path is not absolute",
				 l.kind, l.path, index);
	if (sigchld_ignored())
		return error_set(err,
				 "%s hook %s (#%zu): SIGCHLD is ignored, the hook's exit status would be lost",
				 l.kind, l.path, index);

	if (hooks_guarded()) {
		exec_fd = hooks_pinned_fd(hook, kind, index);
		if (exec_fd < 0 &&
		    hooks_open_judged(hook, kind, index, &own_fd, err) < 0)
			return -1;
		if (exec_fd < 0)
			exec_fd = own_fd;
	}
	argv = build_argv(hook);
	envp = build_envp(hook);
	log_debug("running %s hook %s (#%zu)", l.kind, l.path, index);

	r = hook_proc_run(&p, &l, exec_fd, argv, envp, state_json, timeout, err);
	if (own_fd >= 0)
		close(own_fd);
	if (r < 0)
		return -1;
	return hook_result(&p, &l, timeout, err);
}

int hooks_run(const struct oci_hook_list *list, enum hook_kind kind,
	      const char *state_json, struct error *err)
{
	if (!list)
		return 0;
	for (size_t i = 0; i < list->len; i++) {
		if (hooks_run_one(&list->items[i], kind, i, state_json, err) < 0)
			return -1;
	}
	return 0;
}

void hooks_run_warn(const struct oci_hook_list *list, enum hook_kind kind,
		    const char *state_json)
{
	struct error err;

	if (!list)
		return;
	for (size_t i = 0; i < list->len; i++) {
		error_clear(&err);
		if (hooks_run_one(&list->items[i], kind, i, state_json, &err) < 0)
			log_warn("%s", err.msg);
	}
}
