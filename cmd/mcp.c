/* SPDX-License-Identifier: Apache-2.0 */
/* agentsbx mcp: the run_code and session tools over MCP: stdio, or Streamable HTTP. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../agent/mcp/mcp.h"
#include "../agent/sandbox/sandbox.h"
#include "cmd.h"

enum { OPT_IMAGE = 256,
       OPT_ROOTFS,
       OPT_IMAGE_ROOT,
       OPT_TIMEOUT,
       OPT_MAX_TIMEOUT,
       OPT_MEMORY,
       OPT_CPUS,
       OPT_PIDS,
       OPT_OUTPUT_LIMIT,
       OPT_DISK,
       OPT_WARM,
       OPT_MAX_CONCURRENT,
       OPT_MAX_SESSIONS,
       OPT_SESSION_IDLE,
       OPT_FILE_LIMIT,
       OPT_NETWORK,
       OPT_LISTEN,
       OPT_TLS_CERT,
       OPT_TLS_KEY,
       OPT_INSECURE_LISTEN,
       OPT_TOKENS,
       OPT_ALLOW_HOST,
       OPT_ALLOW_ORIGIN,
       OPT_MAX_BODY,
       OPT_MAX_CONNECTIONS,
       OPT_MAX_PER_IP,
       OPT_IDLE_TIMEOUT,
       OPT_MAX_QUEUED,
       OPT_MAX_HTTP_SESSIONS,
       OPT_SSE_KEEPALIVE,
       OPT_REQUEST_TIMEOUT,
       OPT_CONFORMANCE_FIXTURES };

#define IMAGES_MAX 16

struct mcp_flags {
	const char *image_root;
	const char *names[IMAGES_MAX]; /* --image NAME or, for --rootfs, a path */
	bool is_path[IMAGES_MAX];
	size_t n;
	struct mcp_opts o;
};

static const char help_text[] =
	"A Model Context Protocol server on stdin/stdout (JSON-RPC 2.0, one message a\n"
	"line, protocol " MCP_PROTOCOL_VERSION ") with the tool run_code {code, language,\n"
	"timeout_seconds?, stdin?}, which runs the code as `agentsbx sandbox` does and\n"
	"returns {stdout, stderr, exit_code, timed_out, seconds, truncated, oom_killed},\n"
	"and the session tools (session_create, session_run, session_write_file,\n"
	"session_read_file, session_list_files, session_close): files under /workspace\n"
	"persist between a session's runs.\n\n"
	"  --image NAME        an image under the image root (repeatable: each language\n"
	"                      is served by the first image that has its interpreter;\n"
	"                      default: python)\n"
	"  --rootfs DIR        an image directory by path (repeatable)\n"
	"  --image-root DIR    default $" SANDBOX_IMAGE_ROOT_ENV " or " SANDBOX_IMAGE_ROOT "\n"
	"                      (not root: $XDG_DATA_HOME/agentsbx/images)\n"
	"  --timeout S         per call unless asked (default 30); --max-timeout S (300)\n"
	"  --memory M, --cpus N, --pids N, --disk N, --output-limit N  as for sandbox\n"
	"  --warm N            keep N sandboxes per language ready with their interpreter\n"
	"                      started (Python with its site imported), each for one\n"
	"                      call, refilled in the background (0 to %d; default 0)\n"
	"  --max-concurrent N  calls running at once (default %d); the rest queue.\n"
	"                      ping, tools/list and cancellation never wait for them\n"
	"  --max-sessions N    sessions open at once (default 16; 0: no session tools)\n"
	"  --session-idle S    an unused session is closed after S seconds (600)\n"
	"  --file-limit N      bytes of a file written into or read from a session (10m)\n"
	"  --network PATH      the network namespace a session joins when session_create\n"
	"                      asks for network (and the policy allows it); default none.\n"
	"                      session_create's memory_mb, cpus, pids above the policy's\n"
	"                      limits are refused, naming the policy field\n\n"
	"Streamable HTTP (MCP " MCP_PROTOCOL_VERSION ", and the 2025-03-26 and 2025-06-18\n"
	"clients) instead of stdio, for remote agents (docs/agents.md, \"MCP over HTTP\"):\n"
	"  --listen ADDR       127.0.0.1:PORT, [::1]:PORT, PORT, or unix:/PATH (repeatable,\n"
	"                      up to 8); the endpoint is /mcp, GET /health for balancers\n"
	"  --tls-cert F --tls-key F   PEM files: HTTPS on every listener\n"
	"  --insecure-listen   plain HTTP on a non-loopback address (refused without it)\n"
	"  --tokens FILE       tenants: {\"tenants\": [{\"name\", \"token\", \"sessions\",\n"
	"                      \"concurrent_runs\", \"queued_runs\", \"memory\", \"cpus\"}]},\n"
	"                      owned by this user, mode 0600; SIGHUP reloads it. Needed\n"
	"                      on a non-loopback address\n"
	"  --allow-host NAME   a Host name clients use besides the listen address\n"
	"  --allow-origin O    a browser Origin allowed (scheme://host[:port])\n"
	"  --max-body N (16m), --max-connections N (1024 per listener), --max-per-ip N\n"
	"  (none), --idle-timeout S (30: silence), --request-timeout S (30: a request's\n"
	"  head, and its body, sent in time: a slowloris is cut), --max-queued N (64\n"
	"  runs waiting; over: 429),\n"
	"  --max-http-sessions N (1024), --sse-keepalive S (15: an event stream silent\n"
	"  that long says \": keepalive\", for balancers' idle timeouts)\n"
	"  --conformance-fixtures  also the MCP conformance suite's test tools, resources\n"
	"                      and prompts (for tests/mcp_http; not for production)\n\n"
	"An image that is missing or has no interpreter does not stop the server: its\n"
	"languages are not offered, and with none at all each call is a tool error\n"
	"(isError) that says why.\n\n"
	"Client configuration (Claude Desktop, and most MCP clients):\n"
	"  {\"mcpServers\": {\"sandbox\": {\"command\": \"agentsbx\",\n"
	"                              \"args\": [\"mcp\", \"--image\", \"python\"]}}}\n";

static int bad_flag(const char *flag, const char *value, const char *want)
{
	fprintf(stderr, "agentsbx: mcp: %s %s: %s\n", flag, value, want);
	return -1;
}

static int add_image(struct mcp_flags *f, const char *name, bool is_path)
{
	if (f->n >= IMAGES_MAX)
		return bad_flag(is_path ? "--rootfs" : "--image", name, "too many images");
	f->names[f->n] = name;
	f->is_path[f->n++] = is_path;
	return 0;
}

/* The HTTP edge's bounds: whole numbers from 1 to 100000. */
static int take_count(struct mcp_flags *f, int c, const char *arg)
{
	unsigned *u = NULL;
	int *i = NULL;
	const char *flag;
	unsigned long long n;

	switch (c) {
	case OPT_MAX_CONNECTIONS: u = &f->o.http.max_connections, flag = "--max-connections"; break;
	case OPT_MAX_PER_IP: u = &f->o.http.max_per_ip, flag = "--max-per-ip"; break;
	case OPT_IDLE_TIMEOUT: u = &f->o.http.idle_timeout, flag = "--idle-timeout"; break;
	case OPT_MAX_QUEUED: i = &f->o.http.max_queued, flag = "--max-queued"; break;
	case OPT_SSE_KEEPALIVE: u = &f->o.http.sse_keepalive, flag = "--sse-keepalive"; break;
	case OPT_REQUEST_TIMEOUT: u = &f->o.http.request_timeout, flag = "--request-timeout"; break;
	default: i = &f->o.http.max_http_sessions, flag = "--max-http-sessions"; break;
	}
	if (parse_u64(arg, &n) < 0 || n < 1 || n > 100000)
		return bad_flag(flag, arg, "expected a number from 1 to 100000");
	if (u)
		*u = (unsigned)n;
	else
		*i = (int)n;
	return 0;
}

static int take_flag(struct mcp_flags *f, int c, char *arg)
{
	unsigned long long n;
	uint64_t size;

	switch (c) {
	case OPT_IMAGE: return add_image(f, arg, false);
	case OPT_ROOTFS: return add_image(f, arg, true);
	case OPT_IMAGE_ROOT: f->image_root = arg; return 0;
	case OPT_TIMEOUT:
		return sandbox_parse_seconds(arg, &f->o.timeout) < 0 ?
			       bad_flag("--timeout", arg, "expected seconds") :
			       0;
	case OPT_MAX_TIMEOUT:
		return sandbox_parse_seconds(arg, &f->o.max_timeout) < 0 ?
			       bad_flag("--max-timeout", arg, "expected seconds") :
			       0;
	case OPT_MEMORY:
		return sandbox_parse_size(arg, &f->o.memory) < 0 || f->o.memory < (4u << 20) ?
			       bad_flag("--memory", arg, "expected a size of at least 4m") :
			       0;
	case OPT_CPUS:
		return sandbox_parse_cpus(arg, &f->o.cpu_quota) < 0 ?
			       bad_flag("--cpus", arg, "expected a number of CPUs") :
			       0;
	case OPT_PIDS:
		if (parse_u64(arg, &n) < 0 || n < 1 || n > (1u << 22))
			return bad_flag("--pids", arg, "expected a number of processes");
		f->o.pids = (int64_t)n;
		return 0;
	case OPT_DISK:
		return sandbox_parse_size(arg, &f->o.disk) < 0 || f->o.disk < (1u << 20) ?
			       bad_flag("--disk", arg, "expected a size of at least 1m") :
			       0;
	case OPT_OUTPUT_LIMIT:
		if (sandbox_parse_size(arg, &size) < 0 || !size || size > (64u << 20))
			return bad_flag("--output-limit", arg, "expected a size from 1 to 64m");
		f->o.output_limit = (size_t)size;
		return 0;
	case OPT_WARM:
		if (parse_u64(arg, &n) < 0 || n > MCP_WARM_MAX)
			return bad_flag("--warm", arg, "expected a number from 0 to 16");
		f->o.warm = (int)n;
		return 0;
	case OPT_MAX_SESSIONS:
		if (parse_u64(arg, &n) < 0 || n > MCP_SESSIONS_MAX)
			return bad_flag("--max-sessions", arg, "expected a number from 0 to 256");
		f->o.max_sessions = (int)n;
		return 0;
	case OPT_SESSION_IDLE:
		return sandbox_parse_seconds(arg, &f->o.session_idle) < 0 ?
			       bad_flag("--session-idle", arg, "expected seconds") :
			       0;
	case OPT_FILE_LIMIT:
		return sandbox_parse_size(arg, &f->o.file_limit) < 0 || !f->o.file_limit ||
				       f->o.file_limit > (64u << 20) ?
			       bad_flag("--file-limit", arg, "expected a size from 1 to 64m") :
			       0;
	case OPT_NETWORK:
		if (arg[0] != '/')
			return bad_flag("--network", arg, "expected the path of a network namespace (/var/run/netns/NAME)");
		f->o.network = arg;
		return 0;
	case OPT_LISTEN:
		if (f->o.http.n_listen >= MCP_LISTEN_MAX)
			return bad_flag("--listen", arg, "at most 8 listeners");
		f->o.http.listen[f->o.http.n_listen++] = arg;
		return 0;
	case OPT_TLS_CERT: f->o.http.tls_cert = arg; return 0;
	case OPT_TLS_KEY: f->o.http.tls_key = arg; return 0;
	case OPT_INSECURE_LISTEN: f->o.http.insecure_listen = true; return 0;
	case OPT_TOKENS: f->o.http.tokens_file = arg; return 0;
	case OPT_CONFORMANCE_FIXTURES: f->o.conformance_fixtures = true; return 0;
	case OPT_ALLOW_HOST:
		if (f->o.http.n_allow_hosts >= MCP_LISTEN_MAX)
			return bad_flag("--allow-host", arg, "at most 8");
		f->o.http.allow_hosts[f->o.http.n_allow_hosts++] = arg;
		return 0;
	case OPT_ALLOW_ORIGIN:
		if (f->o.http.n_allow_origins >= MCP_LISTEN_MAX)
			return bad_flag("--allow-origin", arg, "at most 8");
		f->o.http.allow_origins[f->o.http.n_allow_origins++] = arg;
		return 0;
	case OPT_MAX_BODY:
		if (sandbox_parse_size(arg, &size) < 0 || size < 1024 || size > (256u << 20))
			return bad_flag("--max-body", arg, "expected a size from 1k to 256m");
		f->o.http.max_body = (size_t)size;
		return 0;
	case OPT_MAX_CONNECTIONS:
	case OPT_MAX_PER_IP:
	case OPT_IDLE_TIMEOUT:
	case OPT_MAX_QUEUED:
	case OPT_MAX_HTTP_SESSIONS:
	case OPT_SSE_KEEPALIVE:
	case OPT_REQUEST_TIMEOUT: return take_count(f, c, arg);
	case OPT_MAX_CONCURRENT:
		if (parse_u64(arg, &n) < 0 || n < 1 || n > MCP_CONCURRENT_MAX)
			return bad_flag("--max-concurrent", arg, "expected a number from 1 to 256");
		f->o.max_concurrent = (int)n;
		return 0;
	}
	return -1;
}

static int parse_flags(int argc, char **argv, struct mcp_flags *f)
{
	static const struct option opts[] = {
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "rootfs", required_argument, NULL, OPT_ROOTFS },
		{ "image-root", required_argument, NULL, OPT_IMAGE_ROOT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-timeout", required_argument, NULL, OPT_MAX_TIMEOUT },
		{ "memory", required_argument, NULL, OPT_MEMORY },
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "pids", required_argument, NULL, OPT_PIDS },
		{ "disk", required_argument, NULL, OPT_DISK },
		{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
		{ "warm", required_argument, NULL, OPT_WARM },
		{ "max-concurrent", required_argument, NULL, OPT_MAX_CONCURRENT },
		{ "max-sessions", required_argument, NULL, OPT_MAX_SESSIONS },
		{ "session-idle", required_argument, NULL, OPT_SESSION_IDLE },
		{ "file-limit", required_argument, NULL, OPT_FILE_LIMIT },
		{ "network", required_argument, NULL, OPT_NETWORK },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
		{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
		{ "insecure-listen", no_argument, NULL, OPT_INSECURE_LISTEN },
		{ "tokens", required_argument, NULL, OPT_TOKENS },
		{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
		{ "allow-origin", required_argument, NULL, OPT_ALLOW_ORIGIN },
		{ "max-body", required_argument, NULL, OPT_MAX_BODY },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
		{ "max-per-ip", required_argument, NULL, OPT_MAX_PER_IP },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		{ "max-queued", required_argument, NULL, OPT_MAX_QUEUED },
		{ "max-http-sessions", required_argument, NULL, OPT_MAX_HTTP_SESSIONS },
		{ "sse-keepalive", required_argument, NULL, OPT_SSE_KEEPALIVE },
		{ "request-timeout", required_argument, NULL, OPT_REQUEST_TIMEOUT },
		{ "conformance-fixtures", no_argument, NULL, OPT_CONFORMANCE_FIXTURES },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	f->o.timeout = SANDBOX_TIMEOUT_DEFAULT;
	f->o.max_timeout = 300;
	f->o.max_sessions = MCP_SESSIONS_DEFAULT;
	f->o.session_idle = MCP_SESSION_IDLE_DEFAULT;
	f->o.file_limit = MCP_FILE_LIMIT_DEFAULT;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h') {
			cmd_usage(&cmd_mcp, true);
			printf("\n");
			printf(help_text, MCP_WARM_MAX, MCP_CONCURRENT_DEFAULT);
			return 1;
		}
		if (c == '?' || take_flag(f, c, optarg) < 0)
			return -1;
	}
	if (optind != argc)
		return bad_flag("", argv[optind], "unexpected argument");
	if (!f->n)
		add_image(f, "python", false);
	if (f->o.timeout > f->o.max_timeout)
		f->o.timeout = f->o.max_timeout;
	if (!f->o.http.n_listen && (f->o.http.tokens_file || f->o.http.tls_cert))
		return bad_flag("--tokens/--tls-cert", "", "only with --listen");
	return 0;
}

/* An image that cannot be resolved is left out (NULL) and its reason
 * kept: the server serves what it has, and calls say what is missing. */
static void resolve_images(struct mcp_flags *f)
{
	f->o.images = xcalloc(f->n + 1, sizeof(char *));
	f->o.n_images = f->n;
	for (size_t i = 0; i < f->n; i++) {
		struct error err;
		char *old = f->o.setup_errors;
		int r = f->is_path[i] ? sandbox_rootfs_path(f->names[i], &f->o.images[i], &err) : sandbox_image_path(f->image_root, f->names[i], &f->o.images[i], &err);
		if (r == 0)
			continue;
		log_warn("mcp: %s", err.msg);
		f->o.setup_errors = xasprintf("%s%s%s", old ? old : "", old ? "; " : "", err.msg);
		free(old);
	}
}

static void free_images(struct mcp_flags *f)
{
	for (size_t i = 0; i < f->o.n_images; i++)
		free(f->o.images[i]);
	free(f->o.images);
	free(f->o.setup_errors);
}

static int run_mcp(const struct global_opts *g, int argc, char **argv)
{
	struct mcp_flags f = { 0 };
	struct error err;
	int r = parse_flags(argc, argv, &f);

	if (r)
		return r > 0 ? 0 : cmd_usage(&cmd_mcp, false);
	resolve_images(&f);
	r = mcp_serve(g, &f.o, &err);
	free_images(&f);
	return r < 0 ? cmd_fail(&err) : 0;
}

const struct command cmd_mcp = {
	.name = "mcp",
	.summary = "serve the run_code tool over the Model Context Protocol (stdio or HTTP)",
	.usage = "[--image NAME | --rootfs DIR]... [--image-root DIR] [--timeout S] "
		 "[--max-timeout S] [--memory M] [--cpus N] [--pids N] [--warm N] [--max-concurrent N] "
		 "[--listen ADDR [--tls-cert F --tls-key F] [--tokens FILE]]",
	.run = run_mcp,
};
