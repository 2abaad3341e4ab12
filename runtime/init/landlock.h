/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_LANDLOCK_H
#define AGENTSBX_LANDLOCK_H

/*
 * Landlock used for one thing only: its ptrace rule, as a wall between
 * process trees.  A process in a Landlock domain may ptrace, or open
 * /proc/PID/{mem,fd/N,exe,environ,maps,cwd,root,ns/X} of (every
 * ptrace_may_access check), only a process whose domain is its own or
 * nested in it.  Under the enforce policy:
 *   - the container init enters a domain of its own before the container's
 *     code runs: every process of the container's own tree is in it;
 *   - every `exec`'d process enters a fresh domain, made by the runtime's
 *     clone (which has none): a sibling of the init's, not a child.
 * So the container's code can neither ptrace nor read or write the memory,
 * fds (the caller's stdio) or environment of an exec'd process -- nor of
 * another exec'd process, nor of a sibling container's (a pod sharing a
 * pid namespace) -- from its clone() to its exit.  Signals and abstract
 * unix sockets are not scoped: `kill` and clients of a server in the other
 * tree keep working.
 *
 * Within one tree, processes of one uid stay open to each other, as
 * everywhere on Unix (a shell and the program it started).
 */

#include <stdbool.h>

#include "../../lib/error.h"

struct ctx_decided;
struct ctx_handles;

/* In the parent, before clone(): h->landlock_fd gets a ruleset when the
 * process should have a domain (enforce, no CAP_SYS_ADMIN asked for), or
 * stays -1 (with a warning naming the lost protection when the kernel has
 * no Landlock). */
int landlock_prepare(const struct ctx_decided *d, struct ctx_handles *h, struct error *err);

/* In the child: enter a new domain from h->landlock_fd (no-op if -1), and
 * close the ruleset. */
int landlock_enter(const struct ctx_decided *d, struct ctx_handles *h, struct error *err);

#endif
