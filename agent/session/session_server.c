/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The server of one CLI session (see session.h): forked by `session
 * create`, it leaves the caller's process group and terminal, logs into
 * its record's log file, sets up as every sandbox process does (private
 * mount namespace, subreaper, watchdog: sandbox_env_init), opens the
 * session and answers requests on its socket, one at a time: run, write,
 * read, ls.  It ends on SIGTERM (`session close`) or after the idle time,
 * closing the session and removing its record; a run in progress is killed
 * first.  A run is also killed when its client goes away (Ctrl-C).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/log.h"
#include "../../lib/utf8.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "session_private.h"

#define REQUEST_READ_S 30 /* to send a whole request */
#define LIST_MAX 10000	  /* entries of one ls */
#define ARGS_MAX 4096

struct server {
	const struct global_opts *g;
	const struct session_create_opts *o;
	const char *name;
	int sfd, dirfd, lock_fd, listen_fd, sigfd;
	struct sandbox_session ss;
	bool open;
};

/* ---- replies ------------------------------------------------------------------ */

/* A string the program or the caller made: valid UTF-8 in the JSON. */
static void gtext(yajl_gen g, const char *s)
{
	size_t len;
	_cleanup_free_ char *clean = utf8_clean(s, strlen(s), &len);

	yajl_gen_string(g, (const unsigned char *)clean, len);
}

/* A reply's header, opened, that starts with the path it is about. */
static yajl_gen reply_about(const char *path)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_str(g, "path");
	gtext(g, path);
	return g;
}

static void send_gen(int conn, yajl_gen g, const char *body, size_t body_len)
{
	size_t len;
	_cleanup_free_ char *hdr = jgen_finish(g, &len);
	struct error e;

	if (session_wire_write(conn, hdr, len, body, body_len, &e) < 0)
		log_warn("%s", e.msg);
}

static void send_error(int conn, const char *msg)
{
	yajl_gen g = jgen_new(false);

	yajl_gen_map_open(g);
	jgen_str(g, "error");
	yajl_gen_map_open(g);
	jgen_str(g, "message");
	gtext(g, msg);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	send_gen(conn, g, NULL, 0);
}

/* ---- the requests ----------------------------------------------------------- */

static const char *hdr_string(yajl_val hdr, const char *key, const char *def)
{
	yajl_val v = jmember(hdr, key);

	return v && YAJL_IS_STRING(v) ? v->u.string : def;
}

static long long hdr_int(yajl_val hdr, const char *key)
{
	yajl_val v = jmember(hdr, key);

	return v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : 0;
}

/* The command of a run ("args": strings), NULL-terminated in *out (NULL
 * if there is none); -1 if it is not a list of strings. */
static int hdr_args(yajl_val hdr, char ***out)
{
	yajl_val v = jmember(hdr, "args");
	size_t n;

	*out = NULL;
	if (!v)
		return 0;
	if (!YAJL_IS_ARRAY(v) || !v->u.array.len || v->u.array.len > ARGS_MAX)
		return -1;
	n = v->u.array.len;
	*out = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		yajl_val a = v->u.array.values[i];
		if (!YAJL_IS_STRING(a))
			return -1;
		(*out)[i] = xstrdup(a->u.string);
	}
	return 0;
}

/* Readable once a stop signal is pending or the client has gone. */
static int cancel_fd_for(struct server *s, int conn)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -1;
	ev.data.fd = s->sigfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, s->sigfd, &ev);
	ev.data.fd = conn;
	epoll_ctl(ep, EPOLL_CTL_ADD, conn, &ev);
	return ep;
}

static void op_run(struct server *s, int conn, yajl_val hdr, const char *body, size_t len)
{
	_cleanup_strv_ char **args = NULL;
	_cleanup_close_ int cancel = cancel_fd_for(s, conn);
	const char *lang_name = hdr_string(hdr, "language", NULL);
	long long code_len = hdr_int(hdr, "code_len");
	yajl_val t = jmember(hdr, "timeout");
	struct sandbox_result res;
	struct sandbox_input in = {
		.code = body,
		.timeout = t && YAJL_IS_NUMBER(t) ? YAJL_GET_DOUBLE(t) : SANDBOX_TIMEOUT_DEFAULT,
		.output_limit = (size_t)hdr_int(hdr, "output_limit"),
		.cancel_fd = cancel,
	};
	enum sandbox_lang lang = s->o->cfg.lang;
	struct error err;
	yajl_gen g;
	int r;

	if (hdr_args(hdr, &args) < 0)
		return send_error(conn, "session: args: expected a list of strings");
	if (code_len < 0 || (size_t)code_len > len)
		return send_error(conn, "session: code_len: more than the body");
	in.code_len = (size_t)code_len;
	in.stdin_data = body + code_len;
	in.stdin_len = len - (size_t)code_len;
	if (lang_name && sandbox_lang_from_name(lang_name) < 0)
		return send_error(conn, "session: language: expected python, sh or node");
	if (lang_name)
		lang = (enum sandbox_lang)sandbox_lang_from_name(lang_name);
	if (args)
		lang = SANDBOX_LANG_NONE;
	if (!(in.timeout > 0 && in.timeout <= 86400))
		in.timeout = SANDBOX_TIMEOUT_DEFAULT;
	s->ss.cfg.args = args;
	r = sandbox_session_run(s->g, &s->ss, lang, &in, &res, &err);
	s->ss.cfg.args = NULL;
	if (r < 0 && !sandbox_command_not_found(&err, &res))
		return send_error(conn, err.msg);
	if (res.cancelled) {
		sandbox_result_free(&res);
		return send_error(conn, "the session was closed during the run; the program was killed");
	}
	g = jgen_new(false);
	sandbox_result_gen(g, &res);
	sandbox_result_free(&res);
	send_gen(conn, g, NULL, 0);
}

static void op_write(struct server *s, int conn, yajl_val hdr, const char *body, size_t len)
{
	const char *path = hdr_string(hdr, "path", NULL);
	struct error err;
	yajl_gen g;

	if (!path)
		return send_error(conn, "session: write: no path");
	if (sandbox_session_write_file(&s->ss, path, body, len, &err) < 0)
		return send_error(conn, err.msg);
	g = reply_about(path);
	jgen_key_int(g, "size", (long long)len);
	yajl_gen_map_close(g);
	send_gen(conn, g, NULL, 0);
}

static void op_read(struct server *s, int conn, yajl_val hdr)
{
	const char *path = hdr_string(hdr, "path", NULL);
	_cleanup_free_ char *data = NULL;
	struct error err;
	size_t len = 0;
	yajl_gen g;

	if (!path)
		return send_error(conn, "session: read: no path");
	if (sandbox_session_read_file(&s->ss, path, SESSION_FILE_MAX, &data, &len, &err) < 0)
		return send_error(conn, err.msg);
	g = reply_about(path);
	jgen_key_int(g, "size", (long long)len);
	jgen_key_int(g, "body_len", (long long)len);
	yajl_gen_map_close(g);
	send_gen(conn, g, data, len);
}

static void op_ls(struct server *s, int conn, yajl_val hdr)
{
	const char *path = hdr_string(hdr, "path", SANDBOX_SESSION_DIR);
	struct sandbox_dirent *e = NULL;
	struct error err;
	size_t n = 0;
	yajl_gen g;

	if (sandbox_session_list(&s->ss, path, &e, &n, LIST_MAX, &err) < 0)
		return send_error(conn, err.msg);
	g = reply_about(path);
	jgen_str(g, "entries");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		jgen_str(g, "name");
		gtext(g, e[i].name);
		jgen_str(g, "type");
		gtext(g, e[i].type);
		jgen_str(g, "size");
		yajl_gen_integer(g, (long long)e[i].size);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	free(e);
	send_gen(conn, g, NULL, 0);
}

/* Only our own user talks to us (the directory is 0700 too). */
static bool peer_is_us(int conn)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       cred.uid == geteuid();
}

static void handle(struct server *s, int conn)
{
	struct timeval tv = { .tv_sec = REQUEST_READ_S };
	_cleanup_free_ char *body = NULL;
	yajl_val hdr = NULL;
	const char *op;
	struct error err;
	size_t len = 0;

	if (!peer_is_us(conn))
		return;
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (session_wire_read(conn, SESSION_REQUEST_HEADER_MAX, SESSION_FILE_MAX, &hdr, NULL, &body,
			      &len, &err) < 0)
		return send_error(conn, err.msg);
	op = hdr_string(hdr, "op", "");
	if (!strcmp(op, "run"))
		op_run(s, conn, hdr, body, len);
	else if (!strcmp(op, "write"))
		op_write(s, conn, hdr, body, len);
	else if (!strcmp(op, "read"))
		op_read(s, conn, hdr);
	else if (!strcmp(op, "ls"))
		op_ls(s, conn, hdr);
	else
		send_error(conn, "session: unknown request (run, write, read, ls)");
	yajl_tree_free(hdr);
}

/* ---- the life ------------------------------------------------------------------ */

static void serve(struct server *s)
{
	long long idle_ns = (long long)(s->o->idle * 1e9), last = sandbox_now_ns();

	for (;;) {
		long long left = idle_ns - (sandbox_now_ns() - last);
		struct pollfd p[2] = { { .fd = s->listen_fd, .events = POLLIN },
				       { .fd = s->sigfd, .events = POLLIN } };
		int conn;

		if (left <= 0) {
			log_info("session %s: closed after %g s unused", s->name, s->o->idle);
			return;
		}
		if (poll(p, 2, left / 1000000 > 60000 ? 60000 : (int)(left / 1000000) + 1) < 0 &&
		    errno != EINTR)
			return;
		if (p[1].revents)
			return; /* SIGTERM...: session close */
		if (!p[0].revents)
			continue;
		conn = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		handle(s, conn);
		close(conn);
		last = sandbox_now_ns();
		futimens(s->lock_fd, NULL); /* for `session list` */
	}
}

static int write_file(int dirfd, const char *name, const char *data, struct error *err)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || write_all(fd, data, strlen(data)) < 0)
		return error_sys(err, "session: write %s", name);
	return 0;
}

static int write_info(struct server *s, struct error *err)
{
	yajl_gen g = jgen_new(false);
	_cleanup_free_ char *text = NULL;

	yajl_gen_map_open(g);
	jgen_str(g, "image");
	gtext(g, s->o->image ? s->o->image : s->o->cfg.rootfs);
	jgen_str(g, "language");
	gtext(g, sandbox_lang_name(s->o->cfg.lang));
	jgen_str(g, "idle");
	yajl_gen_double(g, s->o->idle);
	yajl_gen_map_close(g);
	text = jgen_finish(g, NULL);
	return write_file(s->dirfd, "info", text, err);
}

static int listen_on(struct server *s, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0)
		return error_sys(err, "session: socket");
	session_sock_path(s->dirfd, sa.sun_path, sizeof(sa.sun_path));
	if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(s->listen_fd, 16) < 0)
		return error_sys(err, "session: listen on %s/%s/%s/sock", s->g->root,
				 SESSION_STATE_DIR, s->name);
	return 0;
}

/* Out of the caller's group and terminal, stdio on /dev/null and the log. */
static int detach(struct server *s, struct error *err)
{
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC), log = -1;
	_cleanup_free_ char *pid = xasprintf("%d\n", getpid());

	if (setsid() < 0 || chdir("/") < 0)
		return error_sys(err, "session: setsid");
	log = openat(s->dirfd, "log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (null < 0 || log < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(log, 2) < 0)
		return error_sys(err, "session: stdio");
	return write_file(s->dirfd, "pid", pid, err);
}

static int start(struct server *s, struct error *err)
{
	if (detach(s, err) < 0 || sandbox_env_init(s->g, &s->sigfd, err) < 0 ||
	    sandbox_session_open(s->g, &s->o->cfg, &s->ss, err) < 0)
		return -1;
	s->open = true;
	return listen_on(s, err) < 0 || write_info(s, err) < 0 ? -1 : 0;
}

static void finish(struct server *s)
{
	if (s->open)
		sandbox_session_close(s->g, &s->ss);
	s->open = false;
	sandbox_env_fini();
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	/* The record goes while the lock is still held. */
	session_dir_remove(s->sfd, s->name, s->dirfd);
}

void session_server_main(const struct global_opts *g, const struct session_create_opts *o,
			 const char *name, int sessions_fd, int dirfd, int lock_fd, int ready_fd)
{
	struct server s = {
		.g = g,
		.o = o,
		.name = name,
		.sfd = sessions_fd,
		.dirfd = dirfd,
		.lock_fd = lock_fd,
		.listen_fd = -1,
		.sigfd = -1,
	};
	struct error err;

	if (start(&s, &err) < 0) {
		if (write_all(ready_fd, err.msg, strlen(err.msg)) < 0)
			log_error("session %s: %s", name, err.msg);
		finish(&s);
		_exit(1);
	}
	if (write_all(ready_fd, "ok", 2) < 0)
		log_warn("session %s: report ready: %s", name, strerror(errno));
	close(ready_fd);
	log_info("session %s: serving (pid %d)", name, getpid());
	serve(&s);
	finish(&s);
	_exit(0);
}
