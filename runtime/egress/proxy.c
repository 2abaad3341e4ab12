/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The egress proxy's loop: one process per container, on the host's side
 * of the network, serving sockets made inside the container's namespace.
 *
 * A connection goes: PEEK (its first bytes, until the name it asks for is
 * known: a TLS ClientHello's SNI, or an HTTP request's Host, absolute URI
 * or CONNECT), then the name is judged against the list (refused: an HTTP
 * client gets a 403 saying which rule and which field would allow it; TLS
 * is closed), RESOLVING on a thread of its own (the host's resolver may
 * take seconds; nothing else waits), CONNECTING to the address the host
 * found, then SPLICE both ways through two bounded buffers.  Every state
 * has a deadline; connections are bounded in number; a slow or hostile
 * client holds only its own slot.  DNS queries are answered from the list
 * (dns.c).  Every connection ends in one audit line.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "egress_private.h"

#define CONNS_MAX 128	     /* per container */
#define RESOLVERS_MAX 16     /* lookups at once */
#define BUF_SIZE (32 * 1024) /* each direction */
#define PEEK_MS 30000	     /* to send the first bytes (a loaded host is slow) */
#define CONNECT_MS 15000     /* lookup and connect */
#define IDLE_MS (30 * 60000) /* a spliced connection with no byte either way */

enum conn_state { PEEK,
		  QUEUED,
		  RESOLVING,
		  CONNECTING,
		  SPLICE };

struct pipe_buf {
	size_t len, off;
	bool eof; /* the reader side saw EOF; shut the writer once drained */
	unsigned char data[BUF_SIZE];
};

struct conn {
	bool used;
	unsigned gen; /* tells a slot reused apart */
	enum conn_state state;
	int client, upstream;
	unsigned listen_port; /* 0: the HTTP proxy port */
	unsigned port;	      /* upstream */
	char name[EGRESS_NAME_MAX + 1];
	struct http_target http;
	bool is_http;
	size_t peek_len;
	struct egress_route route;
	bool resolved_ok;
	char why[640];
	uint64_t bytes_out, bytes_in;
	int64_t deadline;
	/* the big parts last: a new connection clears what is above */
	unsigned char peek[EGRESS_PEEK_MAX];
	struct pipe_buf up, down; /* client -> upstream, upstream -> client */
};

struct proxy {
	const struct egress_config *c;
	const struct egress_listeners *l;
	int ep, sigfd, resolved_fd;
	struct conn *conns; /* CONNS_MAX */
	unsigned resolving;
	pthread_mutex_t lock; /* the done queue */
	unsigned done[CONNS_MAX * 2];
	size_t n_done;
};

/* epoll data: what kind of fd, which slot */
#define TAG_LISTEN (1ull << 40)
#define TAG_CLIENT (2ull << 40)
#define TAG_UPSTREAM (3ull << 40)
#define TAG_DNS (4ull << 40)
#define TAG_SIGNAL (5ull << 40)
#define TAG_RESOLVED (6ull << 40)
#define TAG_MASK (0xffull << 40)

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ep_set(struct proxy *p, int fd, uint64_t tag, uint32_t events, bool add)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	if (epoll_ctl(p->ep, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) < 0)
		log_warn("egress: epoll_ctl on fd %d: %s", fd, strerror(errno));
}

static void ep_del(struct proxy *p, int fd)
{
	if (epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL) < 0)
		log_warn("egress: epoll_ctl del fd %d: %s", fd, strerror(errno));
}

static bool port_allowed(const struct egress_config *c, unsigned port)
{
	for (size_t i = 0; i < c->n_ports; i++)
		if (c->ports[i] == port)
			return true;
	return false;
}

/* ---- ending a connection -------------------------------------------------------- */

static void conn_close(struct proxy *p, struct conn *k, bool allowed, const char *why)
{
	struct egress_audit_line l = {
		.kind = "connection",
		.name = k->name,
		.port = k->port,
		.address = k->resolved_ok ? k->route.text : NULL,
		.allowed = allowed,
		.why = why,
		.bytes_out = k->bytes_out,
		.bytes_in = k->bytes_in,
	};

	egress_audit(p->c, &l);
	if (k->client >= 0)
		close(k->client); /* epoll forgets a closed fd */
	if (k->upstream >= 0)
		close(k->upstream);
	k->client = k->upstream = -1;
	k->used = false;
	k->gen++;
}

/* A refusal the client can read: HTTP gets a 403 naming the rule and the
 * field; TLS (and anything else) is closed. */
static void refuse(struct proxy *p, struct conn *k, const char *why)
{
	if (k->is_http) {
		char body[1024], resp[1280];
		int bn = snprintf(body, sizeof(body), "agentsbx egress: %s\n", why);
		int n = snprintf(resp, sizeof(resp),
				 "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n"
				 "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
				 bn, body);
		if (n > 0 && write(k->client, resp, (size_t)n) < 0)
			log_debug("egress: write the 403: %s", strerror(errno));
	}
	conn_close(p, k, false, why);
}

/* ---- resolving (a thread per lookup) ---------------------------------------------- */

static void connect_upstream(struct proxy *p, struct conn *k);

struct lookup {
	struct proxy *p;
	struct conn *k;
	unsigned slot, gen;
};

static void *lookup_thread(void *arg)
{
	struct lookup *lu = arg;
	struct conn *k = lu->k;
	uint64_t one = 1;

	k->resolved_ok = egress_resolve(lu->p->c, k->name, k->port, &k->route, k->why,
					sizeof(k->why)) == 0;
	pthread_mutex_lock(&lu->p->lock);
	if (lu->p->n_done < sizeof(lu->p->done) / sizeof(lu->p->done[0]))
		lu->p->done[lu->p->n_done++] = lu->slot;
	pthread_mutex_unlock(&lu->p->lock);
	if (write(lu->p->resolved_fd, &one, sizeof(one)) < 0)
		log_warn("egress: wake the loop: %s", strerror(errno));
	free(lu);
	return NULL;
}

static void start_lookup(struct proxy *p, struct conn *k)
{
	struct lookup *lu;
	pthread_attr_t attr;
	pthread_t t;
	int pin = egress_resolve_pinned(p->c, k->name, k->port, &k->route, k->why,
					sizeof(k->why));

	if (pin <= 0) {
		/* the operator's pin: nothing to wait for, no thread */
		k->resolved_ok = pin == 0;
		k->deadline = now_ms() + CONNECT_MS;
		connect_upstream(p, k);
		return;
	}
	if (p->resolving >= RESOLVERS_MAX) {
		k->state = QUEUED;
		return;
	}
	lu = xcalloc(1, sizeof(*lu));
	*lu = (struct lookup){ p, k, (unsigned)(k - p->conns), k->gen };
	k->state = RESOLVING;
	k->deadline = now_ms() + CONNECT_MS;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (pthread_create(&t, &attr, lookup_thread, lu) != 0) {
		free(lu);
		pthread_attr_destroy(&attr);
		refuse(p, k, "the proxy could not start a lookup");
		return;
	}
	pthread_attr_destroy(&attr);
	p->resolving++;
}

static void start_queued(struct proxy *p)
{
	for (size_t i = 0; i < CONNS_MAX && p->resolving < RESOLVERS_MAX; i++)
		if (p->conns[i].used && p->conns[i].state == QUEUED)
			start_lookup(p, &p->conns[i]);
}

static void connect_upstream(struct proxy *p, struct conn *k)
{
	char why[768];

	if (!k->resolved_ok) {
		snprintf(why, sizeof(why), "%s [rule egress; denyCidrs, or the host's resolver]",
			 k->why);
		refuse(p, k, why);
		return;
	}
	k->upstream = socket(k->route.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (k->upstream < 0 ||
	    (connect(k->upstream, (struct sockaddr *)&k->route.addr, k->route.len) < 0 &&
	     errno != EINPROGRESS)) {
		snprintf(why, sizeof(why), "connect to %s port %u: %s", k->route.text, k->port,
			 strerror(errno));
		refuse(p, k, why);
		return;
	}
	k->state = CONNECTING;
	ep_set(p, k->upstream, TAG_UPSTREAM | (uint64_t)(k - p->conns), EPOLLOUT, true);
}

static void take_resolved(struct proxy *p)
{
	uint64_t n;
	unsigned slots[sizeof(p->done) / sizeof(p->done[0])];
	size_t count;

	if (read(p->resolved_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn("egress: read the lookups' eventfd: %s", strerror(errno));
	pthread_mutex_lock(&p->lock);
	count = p->n_done;
	memcpy(slots, p->done, count * sizeof(slots[0]));
	p->n_done = 0;
	pthread_mutex_unlock(&p->lock);
	for (size_t i = 0; i < count; i++) {
		struct conn *k = &p->conns[slots[i]];
		p->resolving--;
		if (k->used && k->state == RESOLVING)
			connect_upstream(p, k);
	}
	start_queued(p);
}

/* ---- the first bytes: which name -------------------------------------------------- */

/* The request the upstream gets: as it came, or (an absolute-URI proxy
 * request) in origin form; nothing for CONNECT but what followed it. */
static void queue_first_bytes(struct conn *k)
{
	struct pipe_buf *b = &k->up;
	const unsigned char *src = k->peek;
	size_t n = k->peek_len;

	if (k->is_http && k->http.connect) {
		src += k->http.header_len;
		n -= k->http.header_len;
	} else if (k->is_http && k->http.absolute) {
		size_t m = k->http.uri_off;

		memcpy(b->data, k->peek, m); /* "GET " */
		b->len = m;
		src += k->http.path_off;
		n -= k->http.path_off;
		if (*src == ' ') /* "http://name HTTP/1.1": the path is "/" */
			b->data[b->len++] = '/';
	}
	memcpy(b->data + b->len, src, n);
	b->len += n;
}

/* The connection asks for k->name at k->port: judge it. */
static void judge(struct proxy *p, struct conn *k)
{
	char why[768];

	switch (policy_egress_name(&p->c->names, k->name)) {
	case EGRESS_DENIED:
		snprintf(why, sizeof(why), "%s is in egress.denyDomains [rule egress]", k->name);
		refuse(p, k, why);
		return;
	case EGRESS_NOT_LISTED:
		snprintf(why, sizeof(why),
			 "%s is not an allowed name [rule egress; the policy field egress.allowDomains (list %s) would allow it]",
			 k->name, k->name);
		refuse(p, k, why);
		return;
	case EGRESS_ALLOWED:
		break;
	}
	if (!port_allowed(p->c, k->port)) {
		snprintf(why, sizeof(why),
			 "port %u of %s is not an allowed port [rule egress; the policy field egress.ports (list %u) would allow it]",
			 k->port, k->name, k->port);
		refuse(p, k, why);
		return;
	}
	queue_first_bytes(k);
	/* not watched again until the upstream is there (it would be ready
	 * all along: a level-triggered loop would spin on it) */
	ep_del(p, k->client);
	start_lookup(p, k);
}

static void sniff(struct proxy *p, struct conn *k)
{
	enum sniff_result r;

	if (k->listen_port && k->peek_len && k->peek[0] == 22) { /* a TLS record */
		r = egress_sniff_tls(k->peek, k->peek_len, k->name, sizeof(k->name));
		k->port = k->listen_port;
		if (r == SNIFF_MORE)
			goto more;
		if (r != SNIFF_NAME) {
			snprintf(k->name, sizeof(k->name), "?");
			refuse(p, k, r == SNIFF_NO_NAME ? "a TLS connection that names no server (no SNI): an address is never allowed [rule egress]" : "not a TLS ClientHello the proxy can read [rule egress]");
			return;
		}
		judge(p, k);
		return;
	}
	k->is_http = true;
	r = egress_sniff_http(k->peek, k->peek_len, &k->http);
	if (r == SNIFF_MORE)
		goto more;
	if (r != SNIFF_NAME || (!k->listen_port && !k->http.connect && !k->http.absolute)) {
		snprintf(k->name, sizeof(k->name), "?");
		refuse(p, k, "not an HTTP/1 request naming its host [rule egress]");
		return;
	}
	snprintf(k->name, sizeof(k->name), "%s", k->http.name);
	k->port = k->http.connect ? k->http.port :
		  k->http.port	  ? k->http.port :
		  k->listen_port  ? k->listen_port :
				    80;
	judge(p, k);
	return;
more:
	if (k->peek_len == sizeof(k->peek)) {
		snprintf(k->name, sizeof(k->name), "?");
		refuse(p, k, "no name in the first 16 KiB [rule egress]");
	}
}

/* ---- splicing ------------------------------------------------------------------------ */

/* Read from `from` into b; write b to `to`.  false: the connection is over. */
static bool pump(int from, int to, struct pipe_buf *b, uint64_t *count)
{
	if (!b->eof && b->len < sizeof(b->data)) {
		ssize_t n = read(from, b->data + b->len, sizeof(b->data) - b->len);
		if (n == 0)
			b->eof = true;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			return false;
		else if (n > 0)
			b->len += (size_t)n;
	}
	while (b->off < b->len) {
		ssize_t n = write(to, b->data + b->off, b->len - b->off);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			return false;
		}
		b->off += (size_t)n;
		*count += (uint64_t)n;
	}
	if (b->off == b->len)
		b->off = b->len = 0;
	if (b->eof && b->len == 0)
		shutdown(to, SHUT_WR);
	return true;
}

static uint32_t interest(const struct pipe_buf *rd, const struct pipe_buf *wr)
{
	uint32_t ev = 0;

	if (!rd->eof && rd->len < sizeof(rd->data))
		ev |= EPOLLIN;
	if (wr->len > wr->off)
		ev |= EPOLLOUT;
	return ev | EPOLLRDHUP;
}

static void splice_step(struct proxy *p, struct conn *k)
{
	unsigned slot = (unsigned)(k - p->conns);

	if (!pump(k->client, k->upstream, &k->up, &k->bytes_out) ||
	    !pump(k->upstream, k->client, &k->down, &k->bytes_in) ||
	    (k->up.eof && k->down.eof && !k->up.len && !k->down.len)) {
		conn_close(p, k, true, NULL);
		return;
	}
	k->deadline = now_ms() + IDLE_MS;
	ep_set(p, k->client, TAG_CLIENT | slot, interest(&k->up, &k->down), false);
	ep_set(p, k->upstream, TAG_UPSTREAM | slot, interest(&k->down, &k->up), false);
}

static void connected(struct proxy *p, struct conn *k)
{
	unsigned slot = (unsigned)(k - p->conns);
	int e = 0;
	socklen_t el = sizeof(e);
	char why[768];

	if (getsockopt(k->upstream, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
		snprintf(why, sizeof(why), "connect to %s port %u: %s", k->route.text, k->port,
			 strerror(e ? e : errno));
		refuse(p, k, why);
		return;
	}
	if (k->is_http && k->http.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		if (write(k->client, ok, sizeof(ok) - 1) < 0) {
			conn_close(p, k, true, NULL);
			return;
		}
	}
	k->state = SPLICE;
	ep_set(p, k->client, TAG_CLIENT | slot, EPOLLIN | EPOLLOUT, true);
	splice_step(p, k);
}

/* ---- events ---------------------------------------------------------------------------- */

static void client_readable(struct proxy *p, struct conn *k)
{
	ssize_t n;

	if (k->state != PEEK) {
		if (k->state == SPLICE)
			splice_step(p, k);
		return;
	}
	n = read(k->client, k->peek + k->peek_len, sizeof(k->peek) - k->peek_len);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		snprintf(k->name, sizeof(k->name), "?");
		conn_close(p, k, false, "closed before naming a host");
		return;
	}
	if (n > 0) {
		k->peek_len += (size_t)n;
		sniff(p, k);
	}
}

static void accept_one(struct proxy *p, int lfd, unsigned port)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct conn *k = NULL;

	if (fd < 0)
		return;
	for (size_t i = 0; i < CONNS_MAX; i++)
		if (!p->conns[i].used) {
			k = &p->conns[i];
			break;
		}
	if (!k) {
		struct egress_audit_line l = { .kind = "connection", .name = "?", .port = port, .why = "too many connections at once (128) [rule egress]" };
		egress_audit(p->c, &l);
		close(fd);
		return;
	}
	unsigned gen = k->gen;
	memset(k, 0, offsetof(struct conn, peek));
	k->gen = gen;
	k->used = true;
	k->state = PEEK;
	k->client = fd;
	k->upstream = -1;
	k->listen_port = port;
	k->up.len = k->up.off = k->down.len = k->down.off = 0;
	k->up.eof = k->down.eof = false;
	k->deadline = now_ms() + PEEK_MS;
	ep_set(p, fd, TAG_CLIENT | (uint64_t)(k - p->conns), EPOLLIN | EPOLLRDHUP, true);
}

static void answer_dns(struct proxy *p)
{
	static const unsigned char proxy_v4[4] = { 127, 0, 0, 2 };
	unsigned char q[1500], a[1500];
	char asked[EGRESS_NAME_MAX + 1];
	struct sockaddr_storage from;

	for (int i = 0; i < 64; i++) { /* a bounded batch per wakeup */
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(p->l->dns, q, sizeof(q), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl);
		size_t an;

		if (n < 0)
			return;
		an = egress_dns_answer(q, (size_t)n, &p->c->names, proxy_v4, a, sizeof(a), asked,
				       sizeof(asked));
		if (an && sendto(p->l->dns, a, an, MSG_DONTWAIT, (struct sockaddr *)&from, fl) < 0)
			log_debug("egress: DNS answer: %s", strerror(errno));
		if (*asked && policy_egress_name(&p->c->names, asked) != EGRESS_ALLOWED) {
			struct egress_audit_line l = {
				.kind = "dns",
				.name = asked,
				.port = 53,
				.why = "not an allowed name: NXDOMAIN [rule egress; egress.allowDomains]",
			};
			egress_audit(p->c, &l);
		}
	}
}

static void expire(struct proxy *p)
{
	int64_t now = now_ms();

	for (size_t i = 0; i < CONNS_MAX; i++) {
		struct conn *k = &p->conns[i];

		if (!k->used || k->deadline > now || k->state == RESOLVING)
			continue; /* a lookup's thread owns the slot until it is done */
		if (k->state == PEEK && !*k->name)
			snprintf(k->name, sizeof(k->name), "?");
		if (k->state == SPLICE)
			conn_close(p, k, true, NULL);
		else
			refuse(p, k, k->state == PEEK ? "no name sent in time [rule egress]" : "the upstream did not answer in time");
	}
}

static void dispatch(struct proxy *p, const struct epoll_event *ev, bool *stop)
{
	uint64_t tag = ev->data.u64 & TAG_MASK, idx = ev->data.u64 & ~TAG_MASK;
	struct conn *k = idx < CONNS_MAX ? &p->conns[idx] : NULL;

	switch (tag) {
	case TAG_SIGNAL:
		*stop = true;
		break;
	case TAG_RESOLVED:
		take_resolved(p);
		break;
	case TAG_DNS:
		answer_dns(p);
		break;
	case TAG_LISTEN:
		accept_one(p, idx == EGRESS_PORTS_MAX ? p->l->proxy : p->l->port_fd[idx],
			   idx == EGRESS_PORTS_MAX ? 0 : p->l->port[idx]);
		break;
	case TAG_CLIENT:
		if (k && k->used)
			client_readable(p, k);
		break;
	case TAG_UPSTREAM:
		if (k && k->used && k->state == CONNECTING)
			connected(p, k);
		else if (k && k->used && k->state == SPLICE)
			splice_step(p, k);
		break;
	}
}

static int setup(struct proxy *p, struct error *err)
{
	sigset_t set;

	p->ep = epoll_create1(EPOLL_CLOEXEC);
	p->resolved_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (p->ep < 0 || p->resolved_fd < 0 || sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
	    (p->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		return error_sys(err, "egress proxy: set up its loop");
	signal(SIGPIPE, SIG_IGN);
	ep_set(p, p->sigfd, TAG_SIGNAL, EPOLLIN, true);
	ep_set(p, p->resolved_fd, TAG_RESOLVED, EPOLLIN, true);
	ep_set(p, p->l->dns, TAG_DNS, EPOLLIN, true);
	ep_set(p, p->l->proxy, TAG_LISTEN | EGRESS_PORTS_MAX, EPOLLIN, true);
	for (size_t i = 0; i < p->l->n; i++)
		ep_set(p, p->l->port_fd[i], TAG_LISTEN | i, EPOLLIN, true);
	return 0;
}

int egress_serve(const struct egress_config *c, const struct egress_listeners *l,
		 struct error *err)
{
	struct proxy p = { .c = c, .l = l, .ep = -1, .sigfd = -1, .resolved_fd = -1 };
	bool stop = false;

	pthread_mutex_init(&p.lock, NULL);
	p.conns = xcalloc(CONNS_MAX, sizeof(*p.conns));
	for (size_t i = 0; i < CONNS_MAX; i++)
		p.conns[i].client = p.conns[i].upstream = -1;
	if (setup(&p, err) < 0)
		return -1;
	while (!stop) {
		struct epoll_event ev[32];
		int n = epoll_wait(p.ep, ev, 32, 1000);

		if (n < 0 && errno != EINTR)
			return error_sys(err, "egress proxy: epoll_wait");
		for (int i = 0; i < n && !stop; i++)
			dispatch(&p, &ev[i], &stop);
		expire(&p);
	}
	for (size_t i = 0; i < CONNS_MAX; i++)
		if (p.conns[i].used && p.conns[i].state != RESOLVING)
			conn_close(&p, &p.conns[i], p.conns[i].state == SPLICE, "the proxy stopped");
	return 0;
}
