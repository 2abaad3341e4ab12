/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `agentsbx mcp --listen ADDR`: MCP over Streamable HTTP, served by
 * libmicrohttpd (Debian's libmicrohttpd12, HTTP/1.1, TLS through GnuTLS),
 * which is loaded with dlopen by this transport only (lib/dynlib.h): no
 * other command of agentsbx loads it.
 *
 * One daemon per listener, each with one event-driven thread (epoll): no
 * thread per connection, so idle or byte-a-second clients cost a socket
 * and a few KiB each, bounded by --max-connections (and --max-per-ip),
 * dropped after --idle-timeout seconds without a byte, and after
 * --request-timeout seconds without a whole request head (a slowloris that
 * sends a byte now and then is not idle: the tick closes its socket;
 * libmicrohttpd's own timeout only counts silence) or body; headers are
 * bounded by the connection's memory (HEADER_MEMORY: more is refused by
 * libmicrohttpd), bodies by --max-body.  The request itself is judged in
 * mcp_http_request.c; a tools/call's event stream suspends its connection
 * while the run has nothing to say (mcp_http_stream.c).
 *
 * The main thread waits for signals: SIGHUP reloads the token file (a
 * refused file keeps the tenants as they were, and says why), any other
 * termination signal stops: new requests get 503, the runs are killed,
 * their streams end, the daemons stop, a unix socket is removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "../../lib/cleanup.h"
#include "../../lib/dynlib.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "mcp_http_private.h"

#define HEADER_MEMORY (64 * 1024) /* a connection's buffer: headers beyond it are refused */
#define TICK_MS 1000		  /* idle sessions are looked for this often */
#define SSE_BLOCK (16 * 1024)
#define TLS_FILE_MAX (1u << 20)

/* ---- libmicrohttpd, loaded when --listen is given ---------------------------- */

static void *mhd_handle;
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *from_buffer;
	__typeof__(MHD_create_response_from_callback) *from_callback;
	__typeof__(MHD_add_response_header) *add_header;
	__typeof__(MHD_queue_response) *queue;
	__typeof__(MHD_destroy_response) *destroy;
	__typeof__(MHD_lookup_connection_value) *lookup;
	__typeof__(MHD_suspend_connection) *suspend;
	__typeof__(MHD_resume_connection) *resume;
	__typeof__(MHD_is_feature_supported) *feature;
	__typeof__(MHD_get_connection_info) *conn_info;
} mhd;

static int mhd_load(struct error *err)
{
	const struct dynlib_sym syms[] = {
		{ "MHD_start_daemon", (void **)&mhd.start_daemon },
		{ "MHD_stop_daemon", (void **)&mhd.stop_daemon },
		{ "MHD_create_response_from_buffer", (void **)&mhd.from_buffer },
		{ "MHD_create_response_from_callback", (void **)&mhd.from_callback },
		{ "MHD_add_response_header", (void **)&mhd.add_header },
		{ "MHD_queue_response", (void **)&mhd.queue },
		{ "MHD_destroy_response", (void **)&mhd.destroy },
		{ "MHD_lookup_connection_value", (void **)&mhd.lookup },
		{ "MHD_suspend_connection", (void **)&mhd.suspend },
		{ "MHD_resume_connection", (void **)&mhd.resume },
		{ "MHD_is_feature_supported", (void **)&mhd.feature },
		{ "MHD_get_connection_info", (void **)&mhd.conn_info },
	};

	return dynlib_load(&mhd_handle, "libmicrohttpd.so.12", "agentsbx mcp --listen",
			   "Debian: apt-get install libmicrohttpd12", syms,
			   sizeof(syms) / sizeof(syms[0]), err);
}

static void resume_conn(void *c)
{
	mhd.resume(c);
}

static void suspend_conn(void *c)
{
	mhd.suspend(c);
}

/* ---- one request -------------------------------------------------------------- */

struct listener {
	struct mcp_server *s;
	struct http_listen l;
	int fd;
	struct MHD_Daemon *d;
};

struct exchange {
	struct http_req r;
	bool head_done;
	bool answered;
	long long start_ns;
};

/* A connection, for --request-timeout: since when it has been waiting for
 * a request's head (0: in a request).  libmicrohttpd tells its start and
 * its end (before it closes the socket), so fd is its while listed. */
struct conn_track {
	struct conn_track *next;
	int fd;
	long long waiting_since_ns;
};

static pthread_mutex_t tracks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn_track *tracks;

static unsigned request_timeout(const struct mcp_server *s)
{
	return s->o->http.request_timeout ? s->o->http.request_timeout : MCP_HTTP_REQUEST_DEFAULT;
}

static void track_set(struct MHD_Connection *conn, long long since)
{
	const union MHD_ConnectionInfo *i = mhd.conn_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn_track *t = i ? i->socket_context : NULL;

	if (!t)
		return;
	pthread_mutex_lock(&tracks_lock);
	t->waiting_since_ns = since;
	pthread_mutex_unlock(&tracks_lock);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	const union MHD_ConnectionInfo *i;
	struct conn_track *t;

	(void)cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		i = mhd.conn_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		t = xcalloc(1, sizeof(*t));
		t->fd = i ? i->connect_fd : -1;
		t->waiting_since_ns = sandbox_now_ns();
		pthread_mutex_lock(&tracks_lock);
		t->next = tracks;
		tracks = t;
		pthread_mutex_unlock(&tracks_lock);
		*socket_context = t;
		return;
	}
	t = *socket_context;
	pthread_mutex_lock(&tracks_lock);
	for (struct conn_track **p = &tracks; t && *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	pthread_mutex_unlock(&tracks_lock);
	free(t);
	*socket_context = NULL;
}

/* The tick: a connection that has not sent a whole request head within
 * --request-timeout is shut down (libmicrohttpd then closes it). */
static void cut_slow_heads(struct mcp_server *s)
{
	long long due = sandbox_now_ns() - (long long)request_timeout(s) * 1000000000LL;

	pthread_mutex_lock(&tracks_lock);
	for (struct conn_track *t = tracks; t; t = t->next)
		if (t->waiting_since_ns && t->waiting_since_ns < due && t->fd >= 0) {
			shutdown(t->fd, SHUT_RDWR);
			t->waiting_since_ns = 0;
			log_info("mcp http: a connection sent no whole request in %u s "
				 "(--request-timeout): closed",
				 request_timeout(s));
		}
	pthread_mutex_unlock(&tracks_lock);
}

static const char *get_header(void *conn, const char *name)
{
	return mhd.lookup(conn, MHD_HEADER_KIND, name);
}

static void log_request(const struct exchange *x, int status)
{
	log_info("mcp http: %s %s %d tenant=%s %.1f ms", x->r.in.method, x->r.in.path, status,
		 x->r.tenant[0] ? x->r.tenant : "-", (sandbox_now_ns() - x->start_ns) / 1e6);
}

static enum MHD_Result send_out(struct MHD_Connection *conn, struct exchange *x,
				struct http_out *out)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	if (out->stream)
		resp = mhd.from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK, http_stream_read, out->stream,
					 http_stream_reader_done);
	else if (out->body)
		resp = mhd.from_buffer(out->len, out->body, MHD_RESPMEM_MUST_FREE);
	else
		resp = mhd.from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (resp && !out->stream)
		out->body = NULL; /* the response's now (freed with it) */
	if (!resp) {
		if (out->stream)
			http_stream_reader_done(out->stream);
		http_out_free(out);
		return MHD_NO;
	}
	if (out->content_type)
		mhd.add_header(resp, "Content-Type", out->content_type);
	if (out->stream)
		mhd.add_header(resp, "Cache-Control", "no-cache");
	if (out->session_id[0])
		mhd.add_header(resp, "Mcp-Session-Id", out->session_id);
	if (out->www_authenticate)
		mhd.add_header(resp, "WWW-Authenticate", out->www_authenticate);
	if (out->allow)
		mhd.add_header(resp, "Allow", out->allow);
	if (out->retry_after)
		mhd.add_header(resp, "Retry-After", "1");
	r = mhd.queue(conn, (unsigned)out->status, resp);
	mhd.destroy(resp);
	log_request(x, out->status);
	x->answered = true;
	http_out_free(out);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct listener *lis = cls;
	struct mcp_server *s = lis->s;
	struct exchange *x = *con_cls;
	struct http_out out;

	(void)version;
	if (!x) {
		x = xcalloc(1, sizeof(*x));
		x->start_ns = sandbox_now_ns();
		x->r.in = (struct http_in){ .method = method, .path = url, .header = get_header, .arg = conn, .listen = &lis->l };
		*con_cls = x;
		track_set(conn, 0);
		if (http_request_head(s, &x->r, &out))
			return send_out(conn, x, &out); /* the body is not read */
		return MHD_YES;
	}
	if (x->answered)
		return MHD_YES;
	if (*upload_size) {
		bool ok = http_request_data(s, &x->r, upload_data, *upload_size);
		*upload_size = 0;
		/* Over --max-body, or a body that trickles past --request-timeout:
		 * the connection is closed. */
		if (sandbox_now_ns() - x->start_ns > (long long)request_timeout(s) * 1000000000LL)
			ok = false;
		return ok ? MHD_YES : MHD_NO;
	}
	http_request_body(s, &x->r, conn, &out);
	return send_out(conn, x, &out);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct listener *lis = cls;
	struct exchange *x = *con_cls;

	(void)why;
	track_set(conn, sandbox_now_ns()); /* waiting for the next request */
	if (!x)
		return;
	http_request_free(lis->s, &x->r);
	free(x);
	*con_cls = NULL;
}

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = 0;
	log_debug("mcp http: libmicrohttpd: %s", msg);
}

/* ---- listeners ------------------------------------------------------------------ */

struct tls_files {
	char *cert, *key;
};

static int start_daemon(struct mcp_server *s, struct listener *lis, const struct tls_files *tls,
			struct error *err)
{
	const struct mcp_http_opts *o = &s->o->http;
	unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem opts[16];
	int n = 0;

#define OPT(o, v, p) opts[n++] = (struct MHD_OptionItem){ (o), (intptr_t)(v), (p) }
	OPT(MHD_OPTION_LISTEN_SOCKET, lis->fd, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT,
	    o->max_connections ? o->max_connections : MCP_HTTP_CONNECTIONS_DEFAULT, NULL);
	if (o->max_per_ip)
		OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_per_ip, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, o->idle_timeout ? o->idle_timeout : MCP_HTTP_IDLE_DEFAULT,
	    NULL);
	OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, HEADER_MEMORY, NULL);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, lis);
	OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, lis);
	OPT(MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL);
	if (tls->cert) {
		flags |= MHD_USE_TLS;
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, tls->key);
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, tls->cert);
	}
	if (lis->l.family == AF_INET6)
		flags |= MHD_USE_IPv6;
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	lis->d = mhd.start_daemon(flags, 0, NULL, NULL, on_request, lis, MHD_OPTION_ARRAY, opts,
				  MHD_OPTION_END);
	if (!lis->d)
		return error_set(err, "mcp: --listen %s: libmicrohttpd would not start (%s)",
				 lis->l.spec, tls->cert ? "is the key the certificate's?" : "see --debug");
	return 0;
}

/* Plain HTTP only on loopback (or a unix socket), unless told; tenants
 * (--tokens) on anything else. */
static int check_exposure(const struct mcp_http_opts *o, const struct http_listen *l,
			  struct error *err)
{
	if (l->loopback)
		return 0;
	if (!o->tls_cert && !o->insecure_listen)
		return error_set(err,
				 "mcp: --listen %s: not a loopback address, and plain HTTP would carry "
				 "the tokens and the code in clear: give --tls-cert and --tls-key "
				 "(or --insecure-listen, for a network you trust)",
				 l->spec);
	if (!o->tokens_file)
		return error_set(err,
				 "mcp: --listen %s: not a loopback address: anyone who reaches it "
				 "could run code; give --tokens FILE",
				 l->spec);
	return 0;
}

static int read_tls(const struct mcp_http_opts *o, struct tls_files *tls, struct error *err)
{
	size_t len;

	if (!o->tls_cert && !o->tls_key)
		return 0;
	if (!o->tls_cert || !o->tls_key)
		return error_set(err, "mcp: --tls-cert and --tls-key go together");
	if (!mhd.feature(MHD_FEATURE_TLS))
		return error_set(err, "mcp: this libmicrohttpd was built without TLS");
	if (read_file_at(AT_FDCWD, o->tls_cert, TLS_FILE_MAX, &tls->cert, &len, err) < 0)
		return error_prefix(err, "mcp: --tls-cert");
	if (read_file_at(AT_FDCWD, o->tls_key, TLS_FILE_MAX, &tls->key, &len, err) < 0)
		return error_prefix(err, "mcp: --tls-key");
	return 0;
}

static int open_listeners(struct mcp_server *s, struct listener *ls, const struct tls_files *tls,
			  struct error *err)
{
	const struct mcp_http_opts *o = &s->o->http;

	for (size_t i = 0; i < o->n_listen; i++) {
		char url[160];

		ls[i].s = s;
		ls[i].fd = -1;
		if (http_listen_parse(o->listen[i], &ls[i].l, err) < 0 ||
		    check_exposure(o, &ls[i].l, err) < 0)
			return -1;
		ls[i].l.tls = tls->cert != NULL;
		if ((ls[i].fd = http_listen_open(&ls[i].l, err)) < 0 ||
		    start_daemon(s, &ls[i], tls, err) < 0)
			return -1;
		http_listen_url(&ls[i].l, url, sizeof(url));
		/* On stderr whatever the log says: a port of 0 is told here. */
		fprintf(stderr, "agentsbx mcp: listening on %s\n", url);
		log_info("mcp: listening on %s", url);
	}
	return 0;
}

static void close_listeners(struct listener *ls, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ls[i].d)
			mhd.stop_daemon(ls[i].d);
		if (ls[i].fd >= 0)
			close(ls[i].fd);
		if (ls[i].fd >= 0 && ls[i].l.family == AF_UNIX)
			unlink(((struct sockaddr_un *)&ls[i].l.addr)->sun_path);
	}
}

/* ---- signals and the loop ------------------------------------------------------------ */

static void reload_tokens(struct mcp_server *s)
{
	struct mcp_tenants *t = NULL;
	struct error err;

	if (!s->o->http.tokens_file) {
		log_info("mcp: SIGHUP: no --tokens to reload");
		return;
	}
	if (mcp_tenants_load(s->g, s->o->http.tokens_file, &t, &err) < 0) {
		log_error("%s; the tenants stay as they were", err.msg);
		return;
	}
	log_info("mcp: %s reloaded: %zu tenants", s->o->http.tokens_file, mcp_tenants_count(t));
	mcp_tenants_swap(s, t);
}

/* 1: stop; 0: go on. */
static int take_signal(struct mcp_server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload_tokens(s);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		s->stop_signal = (int)si.ssi_signo;
		pthread_mutex_unlock(&s->lock);
		return 1;
	}
	return 0;
}

static int serve_loop(struct mcp_server *s, struct error *err)
{
	for (;;) {
		struct pollfd p = { .fd = s->sigfd, .events = POLLIN };
		int n = poll(&p, 1, TICK_MS);

		if (n < 0 && errno != EINTR)
			return error_sys(err, "mcp: poll");
		if (n > 0 && take_signal(s))
			return 0;
		mcp_sessions_expire(s, false);
		http_peers_expire(s, false);
		http_streams_keepalive(s);
		cut_slow_heads(s);
	}
}

int mcp_http_serve(struct mcp_server *s, struct error *err)
{
	struct mcp_http h = { .resume = resume_conn, .suspend = suspend_conn };
	struct listener ls[MCP_LISTEN_MAX] = { 0 };
	struct tls_files tls = { 0 };
	int r;

	pthread_mutex_init(&h.lock, NULL);
	s->http = &h;
	r = mhd_load(err);
	if (r == 0)
		r = read_tls(&s->o->http, &tls, err);
	if (r == 0)
		r = open_listeners(s, ls, &tls, err);
	if (r == 0)
		r = serve_loop(s, err);
	/* The end: no new request, the runs killed, their streams ended. */
	pthread_mutex_lock(&h.lock);
	h.stopping = true;
	pthread_mutex_unlock(&h.lock);
	mcp_calls_kill_all(s);
	mcp_calls_wait_all(s);
	http_peers_expire(s, true);
	close_listeners(ls, s->o->http.n_listen);
	if (tls.key)
		explicit_bzero(tls.key, strlen(tls.key));
	free(tls.key);
	free(tls.cert);
	s->http = NULL;
	pthread_mutex_destroy(&h.lock);
	return r;
}
