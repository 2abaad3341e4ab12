/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_SIGNALS_H
#define AGENTSBX_SIGNALS_H

/*
 * Before an execve of someone else's program (the container's process, a
 * hook): every signal back to its default disposition and nothing blocked.
 * Ignored dispositions and the blocked mask survive execve, so whoever
 * started the engine (nohup ignores SIGHUP, a sanitizer runtime ignores
 * glibc's two private signals) must not decide for the program.  Uses
 * rt_sigaction(2) directly: glibc's sigaction() refuses signals 32 and 33.
 */
void signals_reset_for_exec(void);

#endif
