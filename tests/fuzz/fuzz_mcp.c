/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `agentsbx mcp`'s input (hostile: the model's client writes it): the
 * JSON-RPC reader.  Its pure steps are static in runtime/mcp.c and
 * runtime/mcp_tools.c, so this target includes both files (they are not
 * changed for it) and drives, on a byte stream as stdin would deliver it:
 *   next_line()/consume_line()  the line splitter of serve(),
 *   handle_line()               JSON load, envelope check, dispatch,
 *                               the reply (generated; stdout is not written),
 *   parse_call()                tools/call's arguments, with every language
 *                               offered.
 * No sandbox is ever made: the server that dispatches offers no language,
 * so tools/call stops at parse_language(); parse_call() is called
 * directly on a second server that offers them all but dispatches nothing.
 */
#include "../../runtime/mcp.c"
#include "../../runtime/mcp_tools.c"

#include "fuzz.h"

static const struct mcp_opts opts = {
	.timeout = 10, .max_timeout = 60, .output_limit = 1 << 20,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet_log();
	return 0;
}

/* tools/call's arguments as parse_call() reads them. */
static void fuzz_parse_call(const char *line, size_t len)
{
	struct mcp_server s = { .o = &opts, .sigfd = -1, .output_gone = true };
	yajl_val msg, params;
	struct call_args a;
	struct error e;

	for (int i = 0; i < SANDBOX_LANG_MAX; i++)
		s.image_for[i] = "/nonexistent";
	if (spec_json_load(line, len, "message", &msg, &e) < 0)
		return;
	if (YAJL_IS_OBJECT(msg) && (params = jmember(msg, "params")) &&
	    YAJL_IS_OBJECT(params) && parse_call(&s, NULL, params, &a) == 0) {
		fuzz_assert(a.in.code && a.lang < SANDBOX_LANG_MAX);
		fuzz_assert(a.in.timeout > 0 && a.in.timeout <= opts.max_timeout);
	}
	yajl_tree_free(msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* No language offered: nothing reaches get_sandbox(). */
	struct mcp_server s = { .o = &opts, .sigfd = -1, .output_gone = true };
	struct line_reader r = { 0 };
	struct line l;

	r.buf = xmalloc(size + 1);
	memcpy(r.buf, data, size);
	r.len = r.cap = size;
	r.eof = true;
	/* serve()'s loop, with all of the input already read. */
	while (!s.stop_signal) {
		if (next_line(&s, &r, &l)) {
			if (!l.skip) {
				handle_line(&s, l.text, l.len);
				fuzz_parse_call(l.text, l.len);
			}
			consume_line(&r, &l);
			continue;
		}
		if (r.len && !r.discarding && r.len <= MCP_LINE_MAX) {
			handle_line(&s, r.buf, r.len);
			fuzz_parse_call(r.buf, r.len);
		}
		break;
	}
	free(r.buf);
	return 0;
}
