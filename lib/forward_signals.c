/* SPDX-License-Identifier: Apache-2.0 */
#include "forward_signals.h"

#include <errno.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"

/* Signals a foreground run passes on to the container, as runc does. */
static const int forwarded[] = {
	SIGHUP,
	SIGINT,
	SIGQUIT,
	SIGTERM,
	SIGUSR1,
	SIGUSR2,
	SIGWINCH,
	SIGCONT,
	SIGTSTP,
	SIGTTIN,
	SIGTTOU,
	SIGALRM,
	SIGPIPE,
};

void forwarded_signals_mask(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(mask, forwarded[i]);
}

void block_forwarded_signals(sigset_t *old)
{
	sigset_t mask;

	forwarded_signals_mask(&mask);
	sigprocmask(SIG_BLOCK, &mask, old);
}

/* Wait for pid, passing on every forwardable signal we receive. */
static int wait_forwarding(pid_t pid, int sfd, int *status, struct error *err)
{
	for (;;) {
		struct signalfd_siginfo si;
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return error_sys(err, "wait for container init");
		if (read(sfd, &si, sizeof(si)) != sizeof(si)) {
			if (errno != EINTR && errno != EAGAIN)
				return error_sys(err, "read signalfd");
			continue;
		}
		if (si.ssi_signo != SIGCHLD)
			kill(pid, (int)si.ssi_signo);
	}
}

int wait_forwarding_signals(pid_t pid, int *status, struct error *err)
{
	_cleanup_close_ int sfd = -1;
	sigset_t mask;

	forwarded_signals_mask(&mask);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		return error_sys(err, "signalfd");
	return wait_forwarding(pid, sfd, status, err);
}
