/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `agentsbx mcp`'s input (hostile: the model's client writes it): the
 * JSON-RPC reader.  The line splitter is static in agent/mcp/mcp_stdio.c,
 * so this target includes that file (unchanged) and drives, on a byte
 * stream as stdin would deliver it:
 *   next_line()/consume_line()  the line splitter of serve(),
 *   handle_line()               JSON load, envelope check, dispatch
 *                               (mcp_dispatch.c), the reply (generated;
 *                               stdout is not written),
 *   mcp_tools_parse_call()      tools/call's arguments (mcp_tools.c, linked
 *                               from the library), every language offered
 *                               and the session tools on.
 * What a valid tools/call would start is intercepted at link time
 * (-Wl,--wrap=mcp_calls_start,--wrap=mcp_calls_cancel, set in the
 * Makefile): the wrappers check what the parser produced and free it, so
 * no thread and no sandbox is ever made.
 */
#include "../../agent/mcp/mcp_stdio.c"

#include "fuzz.h"

static const struct mcp_opts opts = {
	.timeout = 10, .max_timeout = 60, .output_limit = 1 << 20,
	.max_sessions = 4, .file_limit = 1 << 20,
};

void __wrap_mcp_calls_start(struct mcp_conn *conn, const struct mcp_id *id,
			    struct call_args *a, struct mcp_id *token);
void __wrap_mcp_calls_cancel(struct mcp_conn *conn, const struct mcp_id *request_id);

/* A call the parser accepted: what it promised holds. */
void __wrap_mcp_calls_start(struct mcp_conn *conn, const struct mcp_id *id,
			    struct call_args *a, struct mcp_id *token)
{
	struct mcp_server *s = conn->s;

	fuzz_assert(id && id->text);
	fuzz_assert(a->tool < TOOL_MAX);
	if (a->tool == TOOL_RUN_CODE || a->tool == TOOL_SESSION_RUN) {
		fuzz_assert(a->code && a->lang < SANDBOX_LANG_MAX);
		fuzz_assert(a->timeout > 0 && a->timeout <= s->o->max_timeout);
	}
	if (a->tool != TOOL_RUN_CODE && a->tool != TOOL_SESSION_CREATE)
		fuzz_assert(a->session_id != NULL);
	mcp_call_args_free(a);
	mcp_id_free(token);
}

void __wrap_mcp_calls_cancel(struct mcp_conn *conn, const struct mcp_id *request_id)
{
	(void)conn;
	fuzz_assert(request_id && request_id->text);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_server s = { .o = &opts, .sigfd = -1, .output_gone = true };
	struct line_reader r = { 0 };
	struct line l;

	pthread_mutex_init(&s.out_lock, NULL);
	pthread_mutex_init(&s.lock, NULL);
	s.stdio = (struct mcp_conn){ .s = &s, .ops = &mcp_stdio_ops, .peer = &s.stdio_peer };
	for (int i = 0; i < SANDBOX_LANG_MAX; i++)
		s.image_for[i] = "/nonexistent";
	r.buf = xmalloc(size + 1);
	memcpy(r.buf, data, size);
	r.len = r.cap = size;
	r.eof = true;
	/* serve()'s loop, with all of the input already read. */
	while (!s.stop_signal) {
		if (next_line(&s, &r, &l)) {
			if (!l.skip)
				handle_line(&s.stdio, l.text, l.len);
			consume_line(&r, &l);
			continue;
		}
		if (r.len > r.start && !r.discarding && r.len - r.start <= MCP_LINE_MAX)
			handle_line(&s.stdio, r.buf + r.start, r.len - r.start);
		break;
	}
	free(r.buf);
	pthread_mutex_destroy(&s.out_lock);
	pthread_mutex_destroy(&s.lock);
	return 0;
}
