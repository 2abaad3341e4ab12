/* SPDX-License-Identifier: Apache-2.0 */
#include "hook_proc.h"
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fds.h"
#include "../lib/log.h"
#include "../lib/signals.h"

#define HOOK_LINE_MAX 2048	     /* longer lines are logged in pieces */
#define HOOK_READ_ROUNDS 16	     /* reads per stream per poll round */
#define HOOK_DRAIN_MAX (1024 * 1024) /* bytes read per stream after exit */
#define HOOK_WRITE_CHUNK 65536
#define HOOK_NOPIDFD_TICK_MS 10 /* waitpid(WNOHANG) period without pidfd */

struct out_stream {
	int fd;
	const char *name; /* "stdout" | "stderr" */
	bool keep_tail;
	char line[HOOK_LINE_MAX + 1];
	size_t line_len;
	char tail[HOOK_STDERR_TAIL];
	size_t tail_len;
	bool tail_cut;
};

struct hook_io {
	const struct hook_label *label;
	pid_t pid;
	int pidfd; /* -1: no pidfd support, poll waitpid(WNOHANG) */
	int exec_fd;
	int in_fd;
	const char *in_buf;
	size_t in_len, in_off;
	bool epipe;
	struct out_stream out, err;
	size_t logged;
	bool log_cut;
	bool has_deadline;
	struct timespec deadline;
	bool exited, reaped, timed_out;
	int status;
};

/* ---- the child -------------------------------------------------------- */

/* fd order handed to the child: stdin, stdout, stderr, exec report, and
 * the judged binary (-1 when the path is executed). */
enum { CHILD_IN,
       CHILD_OUT,
       CHILD_ERR,
       CHILD_EXEC,
       CHILD_BIN,
       CHILD_NFDS };
#define CHILD_PIPES CHILD_BIN /* the pipes: every slot before CHILD_BIN */
#define BIN_FD 4	      /* where the binary's fd is executed from */

static void child_close_from(int first)
{
	struct rlimit rl;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (int fd = first; fd < (int)rl.rlim_cur; fd++)
		close(fd);
}

static char hook_cwd[4096];

void hooks_set_cwd(const char *dir)
{
	snprintf(hook_cwd, sizeof(hook_cwd), "%s", dir ? dir : "");
}

/* execveat(2) through syscall(): glibc has a wrapper only since 2.34. */
static int exec_fd(int fd, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

/*
 * Between fork and execve: async-signal-safe calls only.  The fds are
 * first copied above 10 so that none of them can be clobbered by the dup2
 * onto 0..4, whatever numbers pipe2() handed out (the runtime may run with
 * 0..2 closed).  The exec report pipe stays CLOEXEC at fd 3, so the parent
 * reads EOF on success and an errno on failure.  A judged binary is
 * executed from fd 4, left open across execve: a script's interpreter
 * reads the script from /dev/fd/4.
 */
static void __attribute__((noreturn))
hook_child(const char *path, char *const argv[], char *const envp[],
	   const int fds[CHILD_NFDS], pid_t parent)
{
	int report = fds[CHILD_EXEC];
	int hi[CHILD_NFDS];
	int e;

	signals_reset_for_exec();
	/* Files a hook makes get the usual modes, not the 0666 of the
	 * container's init, which runs with umask 0 while it sets up. */
	umask(022);
	if (setpgid(0, 0) < 0)
		goto fail;
	/* A runtime killed while it waits (a shim's timeout, the OOM killer)
	 * takes its hook along: nothing else knows the hook's pid, so
	 * `delete --force` could not stop it.  The parent may already be
	 * gone by now: then go at once. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		goto fail;
	for (int i = 0; i < CHILD_NFDS; i++) {
		hi[i] = fds[i] < 0 ? -1 : fcntl(fds[i], F_DUPFD_CLOEXEC, 10);
		if (hi[i] < 0 && fds[i] >= 0)
			goto fail;
	}
	report = hi[CHILD_EXEC];
	for (int i = CHILD_IN; i <= CHILD_ERR; i++) {
		if (dup2(hi[i], i) < 0)
			goto fail;
	}
	if (dup3(hi[CHILD_EXEC], 3, O_CLOEXEC) < 0)
		goto fail;
	report = 3;
	if (hi[CHILD_BIN] >= 0 && dup2(hi[CHILD_BIN], BIN_FD) < 0)
		goto fail;
	child_close_from(hi[CHILD_BIN] >= 0 ? BIN_FD + 1 : BIN_FD);
	/* The bundle, as runc runs its hooks in; "/" when it is not set or
	 * not there (startContainer runs after pivot_root). */
	if (hook_cwd[0] == '\0' || chdir(hook_cwd) < 0) {
		if (chdir("/") < 0)
			goto fail;
	}
	if (hi[CHILD_BIN] >= 0)
		exec_fd(BIN_FD, argv, envp);
	else
		execve(path, argv, envp);
fail:
	e = errno;
	if (write(report, &e, sizeof(e)) < 0) {
		/* the parent then sees exit status 127 */
	}
	_exit(127);
}

/* ---- setup ------------------------------------------------------------ */

struct hook_pipes {
	int child[CHILD_NFDS];	/* ends the child keeps; [CHILD_BIN]: borrowed */
	int parent[CHILD_NFDS]; /* our ends, O_NONBLOCK; [CHILD_BIN] unused */
};

static void pipes_init(struct hook_pipes *hp)
{
	for (int i = 0; i < CHILD_NFDS; i++)
		hp->child[i] = hp->parent[i] = -1;
}

static void pipes_close_child(struct hook_pipes *hp)
{
	for (int i = 0; i < CHILD_PIPES; i++)
		fd_close(&hp->child[i]);
	hp->child[CHILD_BIN] = -1; /* the caller's */
}

static void pipes_close(struct hook_pipes *hp)
{
	pipes_close_child(hp);
	for (int i = 0; i < CHILD_NFDS; i++)
		fd_close(&hp->parent[i]);
}

/* The child's ends stay blocking: a hook's `cat` must not see EAGAIN. */
static int pipes_open(struct hook_pipes *hp)
{
	for (int i = 0; i < CHILD_PIPES; i++) {
		int p[2];
		bool child_reads = i == CHILD_IN;

		if (pipe2(p, O_CLOEXEC) < 0)
			return -1;
		hp->child[i] = child_reads ? p[0] : p[1];
		hp->parent[i] = child_reads ? p[1] : p[0];
		if (fcntl(hp->parent[i], F_SETFL, O_NONBLOCK) < 0)
			return -1;
	}
	return 0;
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* pidfd_open() fds are always CLOEXEC. */
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Every signal is blocked across fork() so that the child never runs one of
 * the runtime's handlers before it has reset them.
 */
static pid_t hook_spawn(char *const argv[], char *const envp[],
			const char *path, const struct hook_pipes *hp)
{
	sigset_t all, saved;
	pid_t parent = getpid(), pid;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	pid = fork();
	if (pid == 0)
		hook_child(path, argv, envp, hp->child, parent);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (pid > 0) {
		/* Also from here: a timeout may fire before the child ran. */
		setpgid(pid, pid);
	}
	return pid;
}

/* ---- SIGPIPE ---------------------------------------------------------- */

/*
 * SIGPIPE is blocked while the state is written; one we raised ourselves
 * (EPIPE seen, none pending before) is consumed before unblocking, so that
 * neither the default action nor the caller's handler ever sees it.
 */
struct sigpipe_guard {
	sigset_t old;
	bool was_pending;
};

static void sigpipe_block(struct sigpipe_guard *g)
{
	sigset_t set, pending;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
	g->was_pending = sigpending(&pending) == 0 &&
			 sigismember(&pending, SIGPIPE) == 1;
}

static void sigpipe_restore(const struct sigpipe_guard *g, bool raised)
{
	if (raised && !g->was_pending) {
		struct timespec zero = { 0, 0 };
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGPIPE);
		while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* ---- output ----------------------------------------------------------- */

/* Hostile output must not reach a terminal as escape sequences. */
static void sanitize(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			s[i] = '?';
	}
}

static void out_emit_line(struct hook_io *io, struct out_stream *s)
{
	const struct hook_label *l = io->label;
	size_t n = s->line_len;

	s->line_len = 0;
	if (n && s->line[n - 1] == '\r')
		n--;
	s->line[n] = '\0';
	sanitize(s->line, n);
	if (io->logged < HOOK_LOG_MAX) {
		io->logged += n + 1;
		log_info("hook %s[%zu] %s: %s: %s", l->kind, l->index, l->path,
			 s->name, s->line);
	} else if (!io->log_cut) {
		io->log_cut = true;
		log_info("hook %s[%zu] %s: more than %d bytes of output, the rest is not logged",
			 l->kind, l->index, l->path, HOOK_LOG_MAX);
	}
}

static void tail_append(struct out_stream *s, const char *buf, size_t n)
{
	size_t cap = sizeof(s->tail);

	if (n >= cap) {
		memcpy(s->tail, buf + n - cap, cap);
		s->tail_cut = s->tail_cut || n > cap || s->tail_len;
		s->tail_len = cap;
		return;
	}
	if (s->tail_len + n > cap) {
		size_t drop = s->tail_len + n - cap;

		memmove(s->tail, s->tail + drop, s->tail_len - drop);
		s->tail_len -= drop;
		s->tail_cut = true;
	}
	memcpy(s->tail + s->tail_len, buf, n);
	s->tail_len += n;
}

static void out_feed(struct hook_io *io, struct out_stream *s, const char *buf,
		     size_t n)
{
	if (s->keep_tail)
		tail_append(s, buf, n);
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			out_emit_line(io, s);
			continue;
		}
		if (s->line_len == HOOK_LINE_MAX)
			out_emit_line(io, s);
		s->line[s->line_len++] = buf[i];
	}
}

static void out_close(struct hook_io *io, struct out_stream *s)
{
	if (s->line_len)
		out_emit_line(io, s);
	fd_close(&s->fd);
}

/* Read up to max_bytes (rounded to the buffer size); close on EOF/error. */
static void out_read(struct hook_io *io, struct out_stream *s, size_t max_bytes)
{
	char buf[4096];
	size_t total = 0;

	while (s->fd >= 0 && total < max_bytes) {
		ssize_t n = read(s->fd, buf, sizeof(buf));

		if (n > 0) {
			out_feed(io, s, buf, (size_t)n);
			total += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return;
		} else {
			out_close(io, s);
		}
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * The stderr tail as one line: from a line boundary when it was cut, empty
 * lines dropped, the others joined by "; ".
 */
static void tail_format(const struct out_stream *s, char *out, size_t cap)
{
	const char *p = s->tail, *end = s->tail + s->tail_len;
	size_t n = 0;
	bool need_sep = false;

	out[0] = '\0';
	if (s->tail_cut) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (nl && nl + 1 < end)
			p = nl + 1;
		n = (size_t)snprintf(out, cap, "... ");
	}
	while (p < end && n + 3 < cap) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		size_t len = (size_t)(eol - p);

		while (len && is_blank(p[len - 1]))
			len--;
		if (len && need_sep)
			n += (size_t)snprintf(out + n, cap - n, "; ");
		if (len > cap - n - 1)
			len = cap - n - 1;
		memcpy(out + n, p, len);
		sanitize(out + n, len);
		n += len;
		out[n] = '\0';
		need_sep = need_sep || len;
		p = nl ? nl + 1 : end;
	}
}

/* ---- stdin ------------------------------------------------------------ */

static void in_write(struct hook_io *io)
{
	while (io->in_fd >= 0 && io->in_off < io->in_len) {
		size_t chunk = io->in_len - io->in_off;
		ssize_t n;

		if (chunk > HOOK_WRITE_CHUNK)
			chunk = HOOK_WRITE_CHUNK;
		n = write(io->in_fd, io->in_buf + io->in_off, chunk);
		if (n >= 0) {
			io->in_off += (size_t)n;
		} else if (errno == EINTR) {
			continue;
		} else if (errno == EAGAIN) {
			return;
		} else {
			/* EPIPE: the hook does not want its state; fine. */
			io->epipe = io->epipe || errno == EPIPE;
			break;
		}
	}
	fd_close(&io->in_fd); /* all written (EOF for the hook) or failed */
}

/* ---- the wait loop ---------------------------------------------------- */

static void deadline_set(struct hook_io *io, int64_t timeout)
{
	/* A century is forever; keeps tv_sec far from overflow. */
	if (timeout > 3153600000LL)
		return;
	clock_gettime(CLOCK_MONOTONIC, &io->deadline);
	io->deadline.tv_sec += (time_t)timeout;
	io->has_deadline = true;
}

/* poll() timeout in ms: -1 for none, 0 once the deadline has passed. */
static int poll_timeout_ms(const struct hook_io *io)
{
	struct timespec now;
	int64_t ns, ms;

	if (!io->has_deadline)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (int64_t)(io->deadline.tv_sec - now.tv_sec) * 1000000000LL +
	     (io->deadline.tv_nsec - now.tv_nsec);
	if (ns <= 0)
		return 0;
	ms = (ns + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void check_reaped(struct hook_io *io)
{
	pid_t r = waitpid(io->pid, &io->status, WNOHANG);

	if (r == io->pid)
		io->exited = io->reaped = true;
}

static int add_pollfd(struct pollfd *pfd, nfds_t *n, int fd, short events)
{
	if (fd < 0)
		return -1;
	pfd[*n] = (struct pollfd){ .fd = fd, .events = events };
	return (int)(*n)++;
}

static bool fired(const struct pollfd *pfd, int slot)
{
	return slot >= 0 && pfd[slot].revents;
}

/* Until the hook exits or the deadline passes, feed stdin, log output. */
static int io_loop(struct hook_io *io, struct error *err)
{
	while (!io->exited) {
		struct pollfd pfd[4];
		nfds_t n = 0;
		int ms = poll_timeout_ms(io);
		int s_pid, s_in, s_out, s_err;

		if (ms == 0) {
			io->timed_out = true;
			return 0;
		}
		if (io->pidfd < 0 &&
		    (ms < 0 || ms > HOOK_NOPIDFD_TICK_MS))
			ms = HOOK_NOPIDFD_TICK_MS;
		s_pid = add_pollfd(pfd, &n, io->pidfd, POLLIN);
		s_in = add_pollfd(pfd, &n, io->in_fd, POLLOUT);
		s_out = add_pollfd(pfd, &n, io->out.fd, POLLIN);
		s_err = add_pollfd(pfd, &n, io->err.fd, POLLIN);

		if (poll(pfd, n, ms) < 0) {
			if (errno == EINTR)
				continue;
			return error_sys(err, "%s hook %s (#%zu): poll",
					 io->label->kind, io->label->path,
					 io->label->index);
		}
		if (fired(pfd, s_in))
			in_write(io);
		if (fired(pfd, s_out))
			out_read(io, &io->out, HOOK_READ_ROUNDS * 4096);
		if (fired(pfd, s_err))
			out_read(io, &io->err, HOOK_READ_ROUNDS * 4096);
		if (fired(pfd, s_pid))
			io->exited = true;
		if (io->pidfd < 0)
			check_reaped(io);
	}
	return 0;
}

static void kill_group(const struct hook_io *io)
{
	kill(-io->pid, SIGKILL);
	kill(io->pid, SIGKILL); /* in case setpgid() never happened */
}

/* Only the hook's own pid: other children belong to the caller. */
static int reap(struct hook_io *io, struct error *err)
{
	while (!io->reaped) {
		if (waitpid(io->pid, &io->status, 0) == io->pid)
			io->reaped = true;
		else if (errno != EINTR)
			return error_sys(err, "%s hook %s (#%zu): waitpid",
					 io->label->kind, io->label->path,
					 io->label->index);
	}
	return 0;
}

/*
 * After the hook's exit, take what it left in the pipes without waiting:
 * a daemon it started may hold them open for ever.
 */
static void drain(struct hook_io *io)
{
	out_read(io, &io->out, HOOK_DRAIN_MAX);
	out_read(io, &io->err, HOOK_DRAIN_MAX);
	out_close(io, &io->out);
	out_close(io, &io->err);
}

static int exec_errno_read(struct hook_io *io)
{
	int e = 0;
	ssize_t n;

	do
		n = read(io->exec_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(e))
		return 0;
	return e ? e : EIO;
}

static void hook_io_init(struct hook_io *io, const struct hook_label *l,
			 struct hook_pipes *hp, const char *state_json)
{
	memset(io, 0, sizeof(*io));
	io->label = l;
	io->pidfd = -1;
	io->in_fd = hp->parent[CHILD_IN];
	io->out.fd = hp->parent[CHILD_OUT];
	io->err.fd = hp->parent[CHILD_ERR];
	io->exec_fd = hp->parent[CHILD_EXEC];
	for (int i = 0; i < CHILD_PIPES; i++)
		hp->parent[i] = -1; /* now owned by io */
	io->out.name = "stdout";
	io->err.name = "stderr";
	io->err.keep_tail = true;
	io->in_buf = state_json ? state_json : "";
	io->in_len = strlen(io->in_buf);
	if (!io->in_len)
		fd_close(&io->in_fd);
}

static void hook_io_close(struct hook_io *io)
{
	fd_close(&io->pidfd);
	fd_close(&io->in_fd);
	fd_close(&io->out.fd);
	fd_close(&io->err.fd);
	fd_close(&io->exec_fd);
}

static int hook_io_run(struct hook_io *io, int64_t timeout, struct error *err)
{
	int ret;

	io->pidfd = pidfd_open_compat(io->pid);
	if (timeout > 0)
		deadline_set(io, timeout);
	ret = io_loop(io, err);
	if (ret < 0 || io->timed_out)
		kill_group(io);
	if (reap(io, err) < 0)
		return -1;
	return ret;
}

int hook_proc_run(struct hook_proc *p, const struct hook_label *l,
		  int bin_fd, char *const argv[], char *const envp[], const char *state_json,
		  int64_t timeout, struct error *err)
{
	struct hook_pipes hp;
	struct hook_io io;
	struct sigpipe_guard guard;
	int ret;

	memset(p, 0, sizeof(*p));
	pipes_init(&hp);
	if (pipes_open(&hp) < 0) {
		error_sys(err, "%s hook %s (#%zu): pipe", l->kind, l->path,
			  l->index);
		pipes_close(&hp);
		return -1;
	}
	hp.child[CHILD_BIN] = bin_fd;
	hook_io_init(&io, l, &hp, state_json);

	sigpipe_block(&guard);
	io.pid = hook_spawn(argv, envp, l->path, &hp);
	pipes_close_child(&hp);
	if (io.pid < 0) {
		ret = error_sys(err, "%s hook %s (#%zu): fork", l->kind,
				l->path, l->index);
	} else {
		ret = hook_io_run(&io, timeout, err);
	}
	sigpipe_restore(&guard, io.epipe);
	if (ret == 0) {
		drain(&io);
		p->status = io.status;
		p->timed_out = io.timed_out;
		p->exec_errno = exec_errno_read(&io);
		tail_format(&io.err, p->stderr_tail, sizeof(p->stderr_tail));
	}
	hook_io_close(&io);
	return ret;
}
