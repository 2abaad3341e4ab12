/* SPDX-License-Identifier: Apache-2.0 */
/*
 * benchdrv: drives an OCI runtime the way a container shim does, for the
 * benchmarks (bench/suite.sh runs it under hyperfine).  Static, so that the
 * same binary runs on the host and in the cgroup v2 guest.
 *
 *   benchdrv cycle ID BUNDLE PIDDIR [TIMEFILE] -- RUNTIME [GLOBAL-OPTS...]
 *       create -b BUNDLE --pid-file PIDDIR/ID.pid ID, start ID, wait for the
 *       init (re-parented to us: we are a child subreaper, as
 *       containerd-shim and conmon are), delete ID.  With TIMEFILE, create
 *       runs under `/usr/bin/time -f %M -a -o TIMEFILE` (peak RSS, KiB).
 *   benchdrv seq N ID BUNDLE -- RUNTIME [GLOBAL-OPTS...]
 *       N times `run -b BUNDLE ID-<i>`, one after another; stops at the
 *       first failure and exits with its status.
 *   benchdrv par N ID BUNDLE FAILLOG -- RUNTIME [GLOBAL-OPTS...]
 *       N `run -b BUNDLE ID-<i>` started at once; waits for all of them and
 *       appends "<failures> <N>" to FAILLOG (their stderr goes to
 *       FAILLOG.stderr).  Exits 0 even when some failed: the count is the
 *       figure.
 *   benchdrv nop
 *       exits at once: what starting a static binary costs.
 *
 * With BENCHDRV_LOG set, our stderr and the runtimes' are appended to that
 * file (hyperfine discards them).
 *
 * Every container id gets "-<our pid>" appended, so that ids never repeat
 * across hyperfine's iterations.  Everything re-parented to us is reaped
 * before we exit: nothing is left behind as a zombie.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARGS 64

static char **rt_argv; /* RUNTIME [GLOBAL-OPTS...] */
static int rt_argc;

static void die(const char *msg)
{
	fprintf(stderr, "benchdrv: %s: %s\n", msg, strerror(errno));
	exit(125);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: benchdrv cycle ID BUNDLE PIDDIR [TIMEFILE] -- RUNTIME [OPTS...]\n"
		"       benchdrv seq N ID BUNDLE -- RUNTIME [OPTS...]\n"
		"       benchdrv par N ID BUNDLE FAILLOG -- RUNTIME [OPTS...]\n");
	exit(2);
}

static int exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

/* fork + exec [prefix...] RUNTIME OPTS... args...; returns the pid. */
static pid_t spawn(char *const *prefix, char *const *args, int errfd)
{
	char *argv[MAX_ARGS];
	int n = 0;
	pid_t pid;

	for (; prefix && *prefix && n < MAX_ARGS - 1; prefix++)
		argv[n++] = *prefix;
	for (int i = 0; i < rt_argc && n < MAX_ARGS - 1; i++)
		argv[n++] = rt_argv[i];
	for (; *args && n < MAX_ARGS - 1; args++)
		argv[n++] = *args;
	argv[n] = NULL;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		if (errfd >= 0)
			dup2(errfd, 2);
		execv(argv[0], argv);
		fprintf(stderr, "benchdrv: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Children reaped while we waited for another one: their statuses. */
static struct {
	pid_t pid;
	int st;
} reaped[256];
static int n_reaped;

/* Wait for pid, reaping whatever else is re-parented to us meanwhile (the
 * init may exit, and be reaped here, before `start` itself returns). */
static int wait_for(pid_t pid)
{
	int st;
	pid_t p;

	for (int i = 0; i < n_reaped; i++)
		if (reaped[i].pid == pid) {
			st = reaped[i].st;
			reaped[i] = reaped[--n_reaped];
			return exit_code(st);
		}
	for (;;) {
		p = waitpid(-1, &st, 0);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				return 255; /* not ours: someone else reaped it */
			die("waitpid");
		}
		if (p == pid)
			return exit_code(st);
		if (n_reaped < (int)(sizeof(reaped) / sizeof(reaped[0]))) {
			reaped[n_reaped].pid = p;
			reaped[n_reaped++].st = st;
		}
	}
}

static int run_wait(char *const *prefix, char *const *args)
{
	return wait_for(spawn(prefix, args, -1));
}

static void reap_all(void)
{
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

static int cycle(char *id, char *bundle, const char *piddir, char *timefile)
{
	char pidfile[4096], buf[32];
	char *time_prefix[] = { "/usr/bin/time", "-f", "%M", "-a", "-o", timefile, NULL };
	ssize_t n;
	pid_t init;
	int fd, rc;

	snprintf(pidfile, sizeof(pidfile), "%s/%s.pid", piddir, id);
	{
		char *args[] = { "create", "-b", bundle, "--pid-file", pidfile, id, NULL };
		rc = run_wait(timefile ? time_prefix : NULL, args);
		if (rc != 0) {
			fprintf(stderr, "benchdrv: create %s: status %d\n", id, rc);
			return rc;
		}
	}
	fd = open(pidfile, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(pidfile);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	unlink(pidfile);
	if (n <= 0)
		die("read pid file");
	buf[n] = 0;
	init = (pid_t)atoi(buf);
	{
		char *args[] = { "start", id, NULL };
		rc = run_wait(NULL, args);
		if (rc != 0) {
			fprintf(stderr, "benchdrv: start %s: status %d\n", id, rc);
			kill(init, SIGKILL);
		}
	}
	/* The init is ours since create exited (we are the subreaper). */
	int st = wait_for(init);
	{
		char *args[] = { "delete", id, NULL };
		int drc = run_wait(NULL, args);
		if (drc != 0) {
			fprintf(stderr, "benchdrv: delete %s: status %d\n", id, drc);
			if (rc == 0)
				rc = drc;
		}
	}
	if (rc == 0 && st != 0) {
		fprintf(stderr, "benchdrv: container %s exited with %d\n", id, st);
		rc = st;
	}
	return rc;
}

static int seq(int n, const char *id, char *bundle)
{
	char cid[256];

	for (int i = 0; i < n; i++) {
		snprintf(cid, sizeof(cid), "%s-%d", id, i);
		char *args[] = { "run", "-b", bundle, cid, NULL };
		int rc = run_wait(NULL, args);
		if (rc != 0) {
			fprintf(stderr, "benchdrv: run %s: status %d\n", cid, rc);
			return rc;
		}
	}
	return 0;
}

static int par(int n, const char *id, char *bundle, const char *faillog)
{
	char cid[256], errpath[4096];
	pid_t *pids = calloc((size_t)n, sizeof(pid_t));
	int failures = 0, errfd, st, left = n;
	FILE *f;

	if (!pids)
		die("calloc");
	snprintf(errpath, sizeof(errpath), "%s.stderr", faillog);
	errfd = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (errfd < 0)
		die(errpath);
	for (int i = 0; i < n; i++) {
		snprintf(cid, sizeof(cid), "%s-%d", id, i);
		char *args[] = { "run", "-b", bundle, cid, NULL };
		pids[i] = spawn(NULL, args, errfd);
	}
	while (left > 0) {
		pid_t p = waitpid(-1, &st, 0);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				break;
			die("waitpid");
		}
		for (int i = 0; i < n; i++)
			if (pids[i] == p) {
				if (exit_code(st) != 0)
					failures++;
				left--;
				break;
			}
	}
	failures += left; /* lost children count as failures */
	close(errfd);
	f = fopen(faillog, "a");
	if (!f)
		die(faillog);
	fprintf(f, "%d %d\n", failures, n);
	fclose(f);
	free(pids);
	return 0;
}

int main(int argc, char **argv)
{
	int sep = -1, rc;
	char id[200];

	if (argc == 2 && strcmp(argv[1], "nop") == 0)
		return 0; /* a static binary's start and exit, for profile.sh */
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	if (argc < 3 || sep < 0 || sep + 1 >= argc)
		usage();
	rt_argv = argv + sep + 1;
	rt_argc = argc - sep - 1;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		die("prctl(PR_SET_CHILD_SUBREAPER)");
	/* hyperfine throws stderr away: keep ours and the runtimes' */
	const char *logpath = getenv("BENCHDRV_LOG");
	if (logpath && *logpath) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
	}

	const char *mode = argv[1];
	int nargs = sep - 2;
	if (strcmp(mode, "cycle") == 0 && (nargs == 3 || nargs == 4)) {
		snprintf(id, sizeof(id), "%s-%d", argv[2], (int)getpid());
		rc = cycle(id, argv[3], argv[4], nargs == 4 ? argv[5] : NULL);
	} else if (strcmp(mode, "seq") == 0 && nargs == 3) {
		snprintf(id, sizeof(id), "%s-%d", argv[3], (int)getpid());
		rc = seq(atoi(argv[2]), id, argv[4]);
	} else if (strcmp(mode, "par") == 0 && nargs == 4) {
		snprintf(id, sizeof(id), "%s-%d", argv[3], (int)getpid());
		rc = par(atoi(argv[2]), id, argv[4], argv[5]);
	} else {
		usage();
	}
	reap_all();
	return rc;
}
