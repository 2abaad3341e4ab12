/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CLI sessions' records under the state root (see session.h):
 * ROOT/.sessions/NAME/ with lock (flock-ed by the server while it lives),
 * pid, info (image, language, idle time; JSON), sock, log.  The record is
 * made before the server; a dead server's record (its lock free) is what
 * `session close` removes, with any container the server left.  This file
 * is the client's side (create, which forks the server of session_server.c,
 * request, close, list); the directory's helpers that the server uses too
 * are in session_dir.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "session_private.h"

#define STOP_WAIT_MS 10000 /* for a server told to stop, before SIGKILL */
#define INFO_MAX 4096

int session_name_validate(const char *name, struct error *err)
{
	size_t n = strlen(name);

	if (!n || n > SESSION_NAME_MAX || name[0] == '.' || name[0] == '-' || name[0] == '_')
		goto bad;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_.-", *p)))
			goto bad;
	return 0;
bad:
	return error_set(err, "session name \"%.80s\": expected [A-Za-z0-9][A-Za-z0-9_.-]*, at most %d characters",
			 name, SESSION_NAME_MAX);
}

/* The session's directory; ENOENT said as "no session". */
static int open_session(const struct global_opts *g, const char *name, int *sfd, int *dirfd,
			struct error *err)
{
	if (session_name_validate(name, err) < 0)
		return -1;
	*sfd = -1;
	if (session_dir_root(g, false, sfd, err) < 0) {
		if (err->code == ENOENT)
			error_set(err, "no session %s (closed, expired after its idle time, or never created)",
				  name);
		return -1;
	}
	*dirfd = openat(*sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*dirfd >= 0)
		return 0;
	if (errno == ENOENT)
		error_set(err, "no session %s (closed, expired after its idle time, or never created)",
			  name);
	else
		error_sys(err, "session %s: open %s/%s/%s", name, g->root, SESSION_STATE_DIR, name);
	close(*sfd);
	*sfd = -1;
	return -1;
}

/* ---- create ------------------------------------------------------------------ */

static void made_up_name(char name[SESSION_NAME_MAX + 1])
{
	unsigned int rnd = 0;

	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd))
		rnd = (unsigned int)sandbox_now_ns() ^ (unsigned int)getpid();
	snprintf(name, SESSION_NAME_MAX + 1, "s-%08x", rnd);
}

/* The server's word: "" (it died), "ok", or why it could not start. */
static char *wait_ready(int fd)
{
	_cleanup_free_ char *msg = NULL;
	struct error e;
	size_t len;

	if (read_all_fd(fd, ERROR_MSG_MAX, &msg, &len, &e) < 0)
		return xstrdup("");
	return take_ptr(msg);
}

/* path made absolute (NULL stays NULL; the file need not exist yet). */
static int absolute(const char *path, char **out, struct error *err)
{
	char cwd[PATH_MAX];

	*out = NULL;
	if (!path || path[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return error_sys(err, "session: getcwd");
	*out = xasprintf("%s/%s", cwd, path);
	return 0;
}

int session_create(const struct global_opts *g, const struct session_create_opts *o,
		   char name[SESSION_NAME_MAX + 1], struct error *err)
{
	_cleanup_close_ int sfd = -1, dirfd = -1, lockfd = -1;
	_cleanup_free_ char *msg = NULL, *root = NULL, *policy = NULL;
	struct global_opts server_g = *g;
	int ready[2];
	pid_t pid;

	if (o->name && session_name_validate(o->name, err) < 0)
		return -1;
	/* The server lives in /, not in the caller's directory. */
	if (absolute(g->root, &root, err) < 0 || absolute(g->policy_path, &policy, err) < 0)
		return -1;
	if (root)
		server_g.root = root;
	if (policy)
		server_g.policy_path = policy;
	if (o->name)
		snprintf(name, SESSION_NAME_MAX + 1, "%s", o->name);
	else
		made_up_name(name);
	if (session_dir_root(g, true, &sfd, err) < 0)
		return -1;
	/* The record first: whatever happens next, close finds it. */
	if (mkdirat(sfd, name, 0700) < 0) {
		if (errno == EEXIST)
			return error_set(err, "session %s exists already (`agentsbx session close %s` removes it)",
					 name, name);
		return error_sys(err, "session: mkdir %s/%s/%s", g->root, SESSION_STATE_DIR, name);
	}
	dirfd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd >= 0)
		lockfd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		error_sys(err, "session %s: make its lock", name);
		goto fail;
	}
	if (pipe2(ready, O_CLOEXEC) < 0) {
		error_sys(err, "session %s: pipe", name);
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		error_sys(err, "session %s: fork its server", name);
		close(ready[0]);
		close(ready[1]);
		goto fail;
	}
	if (pid == 0) {
		close(ready[0]);
		session_server_main(&server_g, o, name, sfd, dirfd, lockfd, ready[1]);
	}
	close(ready[1]);
	msg = wait_ready(ready[0]);
	close(ready[0]);
	if (!strcmp(msg, "ok"))
		return 0; /* the lock is the server's now (the same open file) */
	/* It has removed the record, or died: then we do. */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	error_set(err, "session %s: %s", name, *msg ? msg : "its server died while starting");
fail:
	if (dirfd >= 0)
		session_dir_remove(sfd, name, dirfd);
	else
		unlinkat(sfd, name, AT_REMOVEDIR);
	return -1;
}

/* ---- requests -------------------------------------------------------------- */

static int connect_server(int dirfd, const char *name, int *out, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return error_sys(err, "session: socket");
	session_sock_path(dirfd, sa.sun_path, sizeof(sa.sun_path));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		if (e == ECONNREFUSED || e == ENOENT)
			return error_set(err, "session %s is not running (its server is gone); `agentsbx session close %s` removes what is left",
					 name, name);
		return error_setc(err, e, "session %s: connect to its server", name);
	}
	*out = fd;
	return 0;
}

/* The server's failure is {"error": {"message"}}; a run's result may have
 * an "error" too, a Python program's exception ({name, value, traceback}),
 * which is the program's, not the server's. */
static int reply_error(struct session_reply *rep, struct error *err)
{
	yajl_val e = jmember(rep->hdr, "error"), m = e ? jmember(e, "message") : NULL;

	if (!e || jmember(rep->hdr, "exit_code"))
		return 0;
	error_set(err, "%s", m && YAJL_IS_STRING(m) ? m->u.string : "the session's server failed");
	session_reply_free(rep);
	return -1;
}

int session_request(const struct global_opts *g, const char *name, const char *hdr,
		    const char *body, size_t body_len, struct session_reply *rep,
		    struct error *err)
{
	_cleanup_close_ int sfd = -1, dirfd = -1, fd = -1;

	memset(rep, 0, sizeof(*rep));
	/* A server gone mid-request is an error, not our death. */
	signal(SIGPIPE, SIG_IGN);
	if (open_session(g, name, &sfd, &dirfd, err) < 0 || connect_server(dirfd, name, &fd, err) < 0)
		return -1;
	if (session_wire_write(fd, hdr, strlen(hdr), body, body_len, err) < 0 ||
	    session_wire_read(fd, SESSION_HEADER_MAX, SESSION_FILE_MAX, &rep->hdr, &rep->hdr_text,
			      &rep->body, &rep->body_len, err) < 0)
		return error_prefix(err, "session %s", name);
	return reply_error(rep, err);
}

void session_reply_free(struct session_reply *rep)
{
	yajl_tree_free(rep->hdr);
	free(rep->hdr_text);
	free(rep->body);
	memset(rep, 0, sizeof(*rep));
}

/* ---- close ----------------------------------------------------------------- */

static pid_t read_pid(int dirfd)
{
	_cleanup_free_ char *text = NULL;
	unsigned long long v;
	struct error e;

	if (read_file_at(dirfd, "pid", 32, &text, NULL, &e) < 0)
		return 0;
	text[strcspn(text, "\n")] = '\0';
	return parse_u64(text, &v) == 0 && v > 0 && v < (1u << 22) ? (pid_t)v : 0;
}

/* A dead server's containers (its watchdog's job, if that died too);
 * only while no process has its pid, so that they cannot be another's. */
static void delete_containers_of(const struct global_opts *g, pid_t pid)
{
	_cleanup_close_ int rootfd = -1;
	struct dirent *de;
	char prefix[32];
	struct error e;
	DIR *d;

	if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
		return;
	snprintf(prefix, sizeof(prefix), "sbx-%d-", pid);
	rootfd = open(g->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = rootfd >= 0 ? fdopendir(rootfd) : NULL;
	if (!d)
		return;
	rootfd = -1;
	while ((de = readdir(d)))
		if (str_has_prefix(de->d_name, prefix) && container_delete(g, de->d_name, true, &e) < 0)
			log_warn("session: delete %s: %s", de->d_name, e.msg);
	closedir(d);
}

/* Wait for the server's end (its pidfd), SIGKILL after STOP_WAIT_MS. */
static void stop_server(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0);
	if (poll(&p, 1, STOP_WAIT_MS) > 0)
		return;
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	poll(&p, 1, STOP_WAIT_MS);
}

/* The lock of a server that has just ended: its last fd may take a
 * moment to close. */
static bool lock_within(int lockfd, int ms)
{
	for (int waited = 0; flock(lockfd, LOCK_EX | LOCK_NB) < 0; waited += 10) {
		if (errno != EWOULDBLOCK || waited >= ms)
			return false;
		usleep(10000);
	}
	return true;
}

int session_close(const struct global_opts *g, const char *name, bool *was_dead,
		  struct error *err)
{
	_cleanup_close_ int sfd = -1, dirfd = -1, lockfd = -1, pidfd = -1;
	pid_t pid;

	*was_dead = false;
	if (open_session(g, name, &sfd, &dirfd, err) < 0)
		return -1;
	pid = read_pid(dirfd);
	lockfd = openat(dirfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (lockfd >= 0 && flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
		/* Alive.  The pidfd is opened while the lock shows the server
		 * alive, so it names the server and no later process. */
		pidfd = pid > 0 ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
		if (pidfd < 0 && flock(lockfd, LOCK_EX | LOCK_NB) < 0)
			return error_sys(err, "session %s: find its server (pid %d)", name, pid);
		if (pidfd >= 0 && flock(lockfd, LOCK_EX | LOCK_NB) < 0) {
			stop_server(pidfd);
			/* It removes its record as it ends; if it could not: */
			if (!lock_within(lockfd, STOP_WAIT_MS))
				return error_set(err, "session %s: its server (pid %d) did not stop",
						 name, pid);
			if (faccessat(dirfd, "lock", F_OK, AT_SYMLINK_NOFOLLOW) < 0)
				return 0;
		}
	}
	*was_dead = true;
	delete_containers_of(g, pid);
	session_dir_remove(sfd, name, dirfd);
	return 0;
}

/* ---- list -------------------------------------------------------------------- */

static void read_info(int dirfd, struct session_info *s)
{
	_cleanup_free_ char *text = NULL;
	char ebuf[64];
	struct error e;
	yajl_val v, m;

	if (read_file_at(dirfd, "info", INFO_MAX, &text, NULL, &e) < 0)
		return;
	v = yajl_tree_parse(text, ebuf, sizeof(ebuf));
	if (!v || !YAJL_IS_OBJECT(v)) {
		yajl_tree_free(v);
		return;
	}
	if ((m = jmember(v, "image")) && YAJL_IS_STRING(m))
		s->image = xstrdup(m->u.string);
	if ((m = jmember(v, "language")) && YAJL_IS_STRING(m))
		s->language = xstrdup(m->u.string);
	if ((m = jmember(v, "idle")) && YAJL_IS_NUMBER(m))
		s->idle = YAJL_GET_DOUBLE(m);
	yajl_tree_free(v);
}

static void probe(int sfd, const char *name, struct session_info *s)
{
	_cleanup_close_ int dirfd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), lockfd = -1;
	struct stat st;
	struct timespec now;

	snprintf(s->name, sizeof(s->name), "%.64s", name);
	if (dirfd < 0)
		return;
	s->pid = read_pid(dirfd);
	lockfd = openat(dirfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	s->alive = lockfd >= 0 && flock(lockfd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	/* The server touches its lock at each request. */
	clock_gettime(CLOCK_REALTIME, &now);
	if (lockfd >= 0 && fstat(lockfd, &st) == 0)
		s->unused = (double)(now.tv_sec - st.st_mtim.tv_sec) +
			    (double)(now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
	read_info(dirfd, s);
}

int session_list(const struct global_opts *g, struct session_info **out, size_t *n,
		 struct error *err)
{
	int sfd = -1, dupfd;
	struct dirent *de;
	struct error e;
	size_t cap = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (session_dir_root(g, false, &sfd, &e) < 0)
		return e.code == ENOENT ? 0 : error_setc(err, e.code, "%s", e.msg);
	dupfd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
	d = dupfd >= 0 ? fdopendir(dupfd) : NULL;
	if (!d) {
		if (dupfd >= 0)
			close(dupfd);
		close(sfd);
		return error_sys(err, "session: read %s/%s", g->root, SESSION_STATE_DIR);
	}
	while ((de = readdir(d))) {
		if (session_name_validate(de->d_name, &e) < 0)
			continue;
		*out = xgrow(*out, &cap, *n + 1, sizeof(**out));
		memset(&(*out)[*n], 0, sizeof(**out));
		probe(sfd, de->d_name, &(*out)[(*n)++]);
	}
	closedir(d);
	close(sfd);
	return 0;
}

void session_list_free(struct session_info *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].image);
		free(list[i].language);
	}
	free(list);
}
