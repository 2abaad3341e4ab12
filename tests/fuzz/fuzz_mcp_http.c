/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `agentsbx mcp --listen`'s requests (hostile: anyone who reaches the
 * port writes them): the HTTP request path of agent/mcp/mcp_http_request.c,
 * without libmicrohttpd or a socket.  The input is one request as bytes,
 * "METHOD PATH HTTP/1.1\r\n", headers, a blank line, the body; this target
 * splits it (its own splitter: libmicrohttpd's parser is not ours to
 * fuzz) and drives what the daemon's callback would:
 *   http_request_head()   path, Host and Origin (DNS rebinding), the
 *                         bearer token against two tenants, Content-Length,
 *                         Content-Type, Accept, MCP-Protocol-Version, the
 *                         Mcp-Session-Id (one known session, for tenant a);
 *   http_request_data()   the body in pieces, against --max-body;
 *   http_request_body()   JSON load, the dispatch (mcp_dispatch.c: every
 *                         method, the tool arguments' parsers), the stream
 *                         settled into a JSON answer, a new session
 *                         registered on initialize.
 * As in fuzz_mcp.c, a tools/call the parsers accept is stopped at
 * mcp_calls_start (-Wl,--wrap, set in the Makefile): no thread, no sandbox.
 */
#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../agent/mcp/mcp_http_private.h"
#include "../../lib/util.h"
#include "fuzz.h"

#define KNOWN_SESSION "0123456789abcdef0123456789abcdef"
#define HEADERS_MAX 32

static struct mcp_opts opts = {
	.timeout = 10, .max_timeout = 60, .output_limit = 1 << 20,
	.max_sessions = 4, .file_limit = 1 << 20, .session_idle = 600,
	.conformance_fixtures = true,
	.http = { .n_listen = 1, .max_body = 64 * 1024, .max_http_sessions = 8 },
};
static struct global_opts gopts;
static struct mcp_server srv = { .o = &opts, .g = &gopts, .sigfd = -1 };
static struct mcp_http http;
static struct http_listen listen_lo;

void __wrap_mcp_calls_start(struct mcp_conn *conn, const struct mcp_id *id,
			    struct call_args *a, struct mcp_id *token);
void __wrap_mcp_calls_cancel(struct mcp_conn *conn, const struct mcp_id *request_id);

void __wrap_mcp_calls_start(struct mcp_conn *conn, const struct mcp_id *id,
			    struct call_args *a, struct mcp_id *token)
{
	fuzz_assert(conn && conn->peer && id && id->text);
	fuzz_assert(a->tool < TOOL_MAX);
	mcp_call_args_free(a);
	mcp_id_free(token);
}

void __wrap_mcp_calls_cancel(struct mcp_conn *conn, const struct mcp_id *request_id)
{
	fuzz_assert(conn && request_id && request_id->text);
}

struct parsed {
	char *names[HEADERS_MAX], *values[HEADERS_MAX];
	int n;
};

static const char *lookup(void *arg, const char *name)
{
	struct parsed *p = arg;

	for (int i = 0; i < p->n; i++)
		if (!strcasecmp(p->names[i], name))
			return p->values[i];
	return NULL;
}

/* A tokens file of two tenants, loaded as the server would. */
static void load_tenants(void)
{
	char path[256];
	const char *dir = getenv("FUZZ_TMPDIR") ? getenv("FUZZ_TMPDIR") : "/tmp";
	static const char tokens[] =
		"{\"tenants\":[{\"name\":\"a\",\"token\":\"aaaaaaaaaaaaaaaaaaaa\",\"sessions\":2},"
		"{\"name\":\"b\",\"token\":\"bbbbbbbbbbbbbbbbbbbb\",\"concurrent_runs\":1}]}";
	struct error err;
	int fd;

	snprintf(path, sizeof(path), "%s/fuzz-tokens-%d.json", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fuzz_assert(fd >= 0 && write_all(fd, tokens, sizeof(tokens) - 1) == 0);
	close(fd);
	fuzz_assert(mcp_tenants_load(&gopts, path, &srv.tenants, &err) == 0);
	unlink(path);
}

/* The session the inputs name (a DELETE in an input closes it: made again). */
static void ensure_known(void)
{
	struct http_peer *known = http_peer_get(&srv, KNOWN_SESSION, "a");

	if (!known) {
		known = http_peer_new(&srv, "a");
		memcpy(known->id, KNOWN_SESSION, sizeof(known->id));
		snprintf(known->p.version, sizeof(known->p.version), "2025-11-25");
		fuzz_assert(http_peer_register(&srv, known));
	}
	http_peer_put(&srv, known);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct error err;

	fuzz_quiet_log();
	pthread_mutex_init(&srv.out_lock, NULL);
	pthread_mutex_init(&srv.lock, NULL);
	pthread_cond_init(&srv.cond, NULL);
	pthread_rwlock_init(&srv.tenants_lock, NULL);
	pthread_mutex_init(&http.lock, NULL);
	srv.http = &http;
	for (int i = 0; i < SANDBOX_LANG_MAX; i++)
		srv.image_for[i] = "/nonexistent";
	fuzz_assert(http_listen_parse("127.0.0.1:8080", &listen_lo, &err) == 0);
	load_tenants();
	ensure_known();
	return 0;
}

/* "NAME: value" lines up to the blank one; the rest is the body. */
static size_t split(char *buf, size_t size, char **method, char **path, struct parsed *p)
{
	char *end = buf + size, *line = buf, *nl;
	int i = 0;

	*method = *path = NULL;
	while (line < end && (nl = memchr(line, '\n', (size_t)(end - line)))) {
		*nl = 0;
		if (nl > line && nl[-1] == '\r')
			nl[-1] = 0;
		if (i++ == 0) {
			*method = line;
			*path = strchr(line, ' ');
			if (*path) {
				*(*path)++ = 0;
				(*path)[strcspn(*path, " ")] = 0;
			}
		} else if (!*line) {
			return (size_t)(nl + 1 - buf);
		} else if (p->n < HEADERS_MAX && strchr(line, ':')) {
			char *colon = strchr(line, ':');
			*colon = 0;
			p->names[p->n] = line;
			p->values[p->n++] = colon + 1 + strspn(colon + 1, " ");
		}
		line = nl + 1;
	}
	return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = xmalloc(size + 1), *method, *path;
	struct parsed p = { .n = 0 };
	struct http_req r = { 0 };
	struct http_out out;
	size_t body;

	memcpy(buf, data, size);
	buf[size] = 0;
	body = split(buf, size, &method, &path, &p);
	if (method && path) {
		r.in = (struct http_in){ .method = method, .path = path, .header = lookup,
					 .arg = &p, .listen = &listen_lo };
		if (http_request_head(&srv, &r, &out)) {
			fuzz_assert(out.status >= 200 && out.status < 600);
		} else {
			/* The body in two pieces, as a socket may deliver it. */
			size_t half = (size - body) / 2;
			if (http_request_data(&srv, &r, buf + body, half))
				http_request_data(&srv, &r, buf + body + half, size - body - half);
			http_request_body(&srv, &r, NULL, &out);
			fuzz_assert(!out.stream); /* no call holds a stream here */
			fuzz_assert(out.status >= 200 && out.status < 600);
		}
		http_out_free(&out);
		http_request_free(&srv, &r);
	}
	/* Sessions made by this input go; the known one stays. */
	pthread_mutex_lock(&http.lock);
	for (struct http_peer *hp = http.peers; hp; hp = hp->next)
		if (strcmp(hp->id, KNOWN_SESSION))
			hp->last_used_ns = 0;
	pthread_mutex_unlock(&http.lock);
	http_peers_expire(&srv, false);
	ensure_known();
	free(buf);
	return 0;
}
