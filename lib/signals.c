/* SPDX-License-Identifier: Apache-2.0 */
#include "signals.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sigaction for rt_sigaction(2). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

void signals_reset_for_exec(void)
{
	struct kernel_sigaction dfl = { .handler = SIG_DFL };
	sigset_t none;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}
