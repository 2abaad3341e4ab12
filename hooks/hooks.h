/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_HOOKS_H
#define AGENTSBX_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "../lib/error.h"
#include "../spec/spec.h"

/*
 * OCI lifecycle hooks (config.md "POSIX-platform Hooks").
 *
 * Each hook is execve()d directly (never through a shell) with argv =
 * hook.args ({path} when empty) and envp = hook.env exactly (empty when
 * absent), in a new process group, with the state JSON on its stdin.  Its
 * stdout and stderr lines go to the runtime's log at info level; the tail of
 * stderr is also put into the error message.  On timeout the whole process
 * group is SIGKILLed.
 *
 * Usable both from the runtime process and from the container's init
 * (createContainer, startContainer): no global state but the log, no SIGCHLD
 * handler needed, and only the hook's own pid is ever waited for.  SIGPIPE
 * raised by writing the state to a hook that does not read it is swallowed.
 * The caller must not have SIGCHLD set to SIG_IGN (the exit status would be
 * lost); this is checked.
 */

/* Longest stderr tail quoted in an error message. */
#define HOOK_STDERR_TAIL 2048
/* Output bytes logged per hook; the rest is read and dropped. */
#define HOOK_LOG_MAX (1024 * 1024)

/*
 * Run every hook of list in order, stopping at the first failure.
 * state_json may be NULL (the hook then reads an empty stdin).
 * Errors name the hook:
 *   "createRuntime hook /usr/bin/foo (#0) exited with status 3: <stderr>"
 *   "... killed by signal 9", "... timed out after 2 s and was killed",
 *   "... could not be executed: No such file or directory".
 * Returns 0 or -1 with *err filled.  An empty or NULL list succeeds.
 */
int hooks_run(const struct oci_hook_list *list, enum hook_kind kind,
	      const char *state_json, struct error *err);

/*
 * Run every hook of list, logging each failure as a warning and going on
 * (poststart, poststop: "log a warning ... continue as if the hook had
 * succeeded").
 */
void hooks_run_warn(const struct oci_hook_list *list, enum hook_kind kind,
		    const char *state_json);

/* Run one hook; index is its position in its list (for messages only). */
int hooks_run_one(const struct oci_hook *hook, enum hook_kind kind,
		  size_t index, const char *state_json, struct error *err);

/*
 * The policy's hooks rule (spec/policy/policy_hooks.c, hooks/hook_guard.c).  With
 * the rule in force, every hook's path is opened and located, the whole
 * command (that file, argv, env) judged against the policy's hook rules,
 * and that fd executed; without
 * it (policy off or audit) the path is execve()d as runc does.  Every hook
 * runs with umask 022 either way.
 */
struct policy;
/* From now on in this process: p in enforce mode judges, else none. */
void hooks_guard_set(const struct policy *p);
/* start, delete: the policy file (NULL: the default) that judges the hooks
 * this process runs; read when the first hook is about to run. */
void hooks_guard_load(const char *policy_path);
/* The container the hooks judged from now on are for (its id and bundle:
 * Docker's hook must name this container and the Docker of this bundle). */
void hooks_guard_container(const char *id, const char *bundle);
/* Open and judge every hook of spec under p (all six kinds); with pin,
 * keep the fds for hooks_run() here and in children forked after. */
int hooks_judge_all(const struct policy *p, const struct oci_spec *spec,
		    bool pin, struct error *err);
/* create: hooks_judge_all() under the rule set by hooks_guard_set(), pinned. */
int hooks_pin(const struct oci_spec *spec, struct error *err);
/* Close the pinned fds (the container's init, once its hooks have run). */
void hooks_unpin(void);

/* The working directory hooks run in (the bundle); NULL: "/". */
void hooks_set_cwd(const char *dir);

#endif
