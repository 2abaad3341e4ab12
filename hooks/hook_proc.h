/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_HOOK_PROC_H
#define AGENTSBX_HOOK_PROC_H

/* Internal to hooks/: one hook process, from fork to waitpid. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"
#include "hooks.h"

/* Who is talking, for log lines and messages: "createRuntime", 0, path. */
struct hook_label {
	const char *kind;
	size_t index;
	const char *path;
};

struct hook_proc {
	int status;	/* waitpid() status */
	int exec_errno; /* != 0: execve() (or the child's setup) failed */
	bool timed_out; /* killed, with its process group, at the deadline */
	/* Last lines of stderr, control bytes replaced, lines joined by "; ". */
	char stderr_tail[2 * HOOK_STDERR_TAIL + 8];
};

/*
 * Run argv/envp as described in hooks.h and wait for it: exec_fd (an O_PATH
 * fd of the judged binary) when >= 0, else l->path.  timeout is in
 * seconds, 0 for none.  Returns 0 when the hook ran to an end of any kind
 * (the outcome is in *p), -1 with *err when it could not be run at all.
 */
int hook_proc_run(struct hook_proc *p, const struct hook_label *l,
		  int exec_fd, char *const argv[], char *const envp[], const char *state_json,
		  int64_t timeout, struct error *err);

#endif
