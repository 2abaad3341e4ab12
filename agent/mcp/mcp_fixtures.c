/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `agentsbx mcp --conformance-fixtures`: the official MCP conformance
 * suite (@modelcontextprotocol/conformance) scores a server partly on
 * tools, resources and prompts of its own (test_simple_text,
 * test://static-text, test_simple_prompt, ...).  They are served here, next
 * to the real tools, only with this flag (tests/mcp_http runs the suite
 * with it; a production server never has it): what the suite checks about
 * them -- content types, logging and progress notifications during a call,
 * requests from the server to the client (sampling, elicitation) on the
 * call's event stream -- runs through the same dispatcher, calls and
 * transport as run_code.  Each fixture says exactly what the suite's
 * scenario text asks for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/cleanup.h"
#include "../../lib/jsongen.h"
#include "../../lib/util.h"
#include "../../spec/json.h"
#include "mcp_private.h"

/* A 1x1 red PNG, and a WAV of one silent sample. */
#define RED_PIXEL_PNG \
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
#define SILENT_WAV "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA=="

enum fixture {
	FX_NONE,
	FX_SIMPLE_TEXT,
	FX_IMAGE,
	FX_AUDIO,
	FX_EMBEDDED,
	FX_MIXED,
	FX_LOGGING,
	FX_ERROR,
	FX_PROGRESS,
	FX_SAMPLING,
	FX_ELICITATION,
	FX_ELICIT_DEFAULTS,
	FX_ELICIT_ENUMS,
	FX_SCHEMA_2020,
	FX_MAX,
};

static const struct {
	const char *name, *desc, *arg; /* arg: the one required string argument */
} fixtures[FX_MAX] = {
	[FX_SIMPLE_TEXT] = { "test_simple_text", "Returns simple text", NULL },
	[FX_IMAGE] = { "test_image_content", "Returns an image", NULL },
	[FX_AUDIO] = { "test_audio_content", "Returns audio", NULL },
	[FX_EMBEDDED] = { "test_embedded_resource", "Returns an embedded resource", NULL },
	[FX_MIXED] = { "test_multiple_content_types", "Returns text, an image and a resource",
		       NULL },
	[FX_LOGGING] = { "test_tool_with_logging", "Sends three log messages", NULL },
	[FX_ERROR] = { "test_error_handling", "Always fails", NULL },
	[FX_PROGRESS] = { "test_tool_with_progress", "Reports progress 0, 50, 100", NULL },
	[FX_SAMPLING] = { "test_sampling", "Asks the client's LLM", "prompt" },
	[FX_ELICITATION] = { "test_elicitation", "Asks the user", "message" },
	[FX_ELICIT_DEFAULTS] = { "test_elicitation_sep1034_defaults",
				 "Asks the user with defaults (SEP-1034)", NULL },
	[FX_ELICIT_ENUMS] = { "test_elicitation_sep1330_enums",
			      "Asks the user with enums (SEP-1330)", NULL },
	[FX_SCHEMA_2020] = { "json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
			     NULL },
};

static const char *const log_levels[] = { "debug", "info", "notice", "warning",
					  "error", "critical", "alert", "emergency", NULL };

/* ---- tools/list -------------------------------------------------------------- */

static void gen_schema_2020(yajl_gen g)
{
	jgen_key_str(g, "$schema", "https://json-schema.org/draft/2020-12/schema");
	jgen_key_str(g, "type", "object");
	jgen_str(g, "$defs");
	yajl_gen_map_open(g);
	jgen_str(g, "address");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	mcp_gen_prop(g, "street", "string", NULL);
	mcp_gen_prop(g, "city", "string", NULL);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	mcp_gen_prop(g, "name", "string", NULL);
	jgen_str(g, "address");
	yajl_gen_map_open(g);
	jgen_key_str(g, "$ref", "#/$defs/address");
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	jgen_key_bool(g, "additionalProperties", false);
}

void mcp_fixtures_list_tools(struct mcp_server *s, yajl_gen g)
{
	(void)s;
	for (int i = FX_SIMPLE_TEXT; i < FX_MAX; i++) {
		yajl_gen_map_open(g);
		jgen_key_str(g, "name", fixtures[i].name);
		jgen_key_str(g, "description", fixtures[i].desc);
		jgen_str(g, "inputSchema");
		yajl_gen_map_open(g);
		if (i == FX_SCHEMA_2020) {
			gen_schema_2020(g);
		} else {
			jgen_key_str(g, "type", "object");
			jgen_str(g, "properties");
			yajl_gen_map_open(g);
			if (fixtures[i].arg)
				mcp_gen_prop(g, fixtures[i].arg, "string", NULL);
			yajl_gen_map_close(g);
			if (fixtures[i].arg) {
				const char *req[] = { fixtures[i].arg, NULL };
				jgen_key_list(g, "required", req);
			}
		}
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
	}
}

void mcp_fixtures_capabilities(struct mcp_server *s, yajl_gen g)
{
	(void)s;
	jgen_str(g, "logging");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	jgen_str(g, "completions");
	yajl_gen_map_open(g);
	yajl_gen_map_close(g);
	jgen_str(g, "resources");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "subscribe", true);
	jgen_key_bool(g, "listChanged", false);
	yajl_gen_map_close(g);
	jgen_str(g, "prompts");
	yajl_gen_map_open(g);
	jgen_key_bool(g, "listChanged", false);
	yajl_gen_map_close(g);
}

/* ---- the calls ----------------------------------------------------------------- */

static void content_text(yajl_gen g, const char *text)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "text");
	jgen_key_str(g, "text", text);
	yajl_gen_map_close(g);
}

static void content_media(yajl_gen g, const char *type, const char *data, const char *mime)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", type);
	jgen_key_str(g, "data", data);
	jgen_key_str(g, "mimeType", mime);
	yajl_gen_map_close(g);
}

static void content_resource(yajl_gen g, const char *uri, const char *mime, const char *text)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "resource");
	jgen_str(g, "resource");
	yajl_gen_map_open(g);
	jgen_key_str(g, "uri", uri);
	jgen_key_str(g, "mimeType", mime);
	jgen_key_str(g, "text", text);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

/* The reply of a fixture call: {content: [... as fixture says], isError}. */
static void reply(struct mcp_call *c, enum fixture fx, const char *text, bool is_error)
{
	yajl_gen g;

	if (!mcp_call_may_reply(c))
		return;
	g = mcp_reply_begin(&c->id);
	jgen_str(g, "result");
	yajl_gen_map_open(g);
	jgen_str(g, "content");
	yajl_gen_array_open(g);
	if (fx == FX_IMAGE || fx == FX_AUDIO) {
		content_media(g, fx == FX_IMAGE ? "image" : "audio",
			      fx == FX_IMAGE ? RED_PIXEL_PNG : SILENT_WAV,
			      fx == FX_IMAGE ? "image/png" : "audio/wav");
	} else if (fx == FX_EMBEDDED) {
		content_resource(g, "test://embedded-resource", "text/plain",
				 "This is an embedded resource content.");
	} else if (fx == FX_MIXED) {
		content_text(g, "Multiple content types test:");
		content_media(g, "image", RED_PIXEL_PNG, "image/png");
		content_resource(g, "test://mixed-content-resource", "application/json",
				 "{\"test\":\"data\",\"value\":123}");
	} else {
		content_text(g, text);
	}
	yajl_gen_array_close(g);
	jgen_key_bool(g, "isError", is_error);
	yajl_gen_map_close(g);
	mcp_reply_send(c->conn, g);
}

static void log_message(struct mcp_call *c, const char *text)
{
	yajl_gen g;

	if (c->conn->peer->log_level > 1) /* info is 1 */
		return;
	g = mcp_notification_begin("notifications/message");
	jgen_str(g, "params");
	yajl_gen_map_open(g);
	jgen_key_str(g, "level", "info");
	jgen_key_str(g, "logger", "agentsbx-fixtures");
	jgen_key_str(g, "data", text);
	yajl_gen_map_close(g);
	mcp_reply_send(c->conn, g);
}

static void gen_sampling(yajl_gen g, void *arg)
{
	yajl_gen_map_open(g);
	jgen_str(g, "messages");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	jgen_key_str(g, "role", "user");
	jgen_str(g, "content");
	content_text(g, arg);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	jgen_key_int(g, "maxTokens", 100);
	yajl_gen_map_close(g);
}

static void gen_string_prop(yajl_gen g, const char *name, const char *desc, const char *dflt)
{
	jgen_str(g, name);
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	if (desc)
		jgen_key_str(g, "description", desc);
	if (dflt)
		jgen_key_str(g, "default", dflt);
	yajl_gen_map_close(g);
}

static void gen_enum(yajl_gen g, const char *key, const char *const *items)
{
	jgen_key_list(g, key, items);
}

static void gen_const_list(yajl_gen g, const char *key, const char *const *pairs)
{
	jgen_str(g, key);
	yajl_gen_array_open(g);
	for (; *pairs; pairs += 2) {
		yajl_gen_map_open(g);
		jgen_key_str(g, "const", pairs[0]);
		jgen_key_str(g, "title", pairs[1]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

static void gen_defaults_schema(yajl_gen g)
{
	static const char *const states[] = { "active", "inactive", "pending", NULL };

	gen_string_prop(g, "name", "User name", "John Doe");
	jgen_str(g, "age");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "integer");
	jgen_key_int(g, "default", 30);
	yajl_gen_map_close(g);
	jgen_str(g, "score");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "number");
	jgen_str(g, "default");
	yajl_gen_double(g, 95.5);
	yajl_gen_map_close(g);
	jgen_str(g, "status");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	gen_enum(g, "enum", states);
	jgen_key_str(g, "default", "active");
	yajl_gen_map_close(g);
	jgen_str(g, "verified");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "boolean");
	jgen_key_bool(g, "default", true);
	yajl_gen_map_close(g);
}

static void gen_enums_schema(yajl_gen g)
{
	static const char *const opts[] = { "option1", "option2", "option3", NULL },
				 *const legacy[] = { "opt1", "opt2", "opt3", NULL },
				 *const legacy_names[] = { "Option One", "Option Two",
							   "Option Three", NULL },
				 *const titled[] = { "value1", "First Option", "value2",
						     "Second Option", "value3", "Third Option",
						     NULL },
				 *const choices[] = { "value1", "First Choice", "value2",
						      "Second Choice", "value3", "Third Choice",
						      NULL };

	jgen_str(g, "untitledSingle");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	gen_enum(g, "enum", opts);
	yajl_gen_map_close(g);
	jgen_str(g, "titledSingle");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	gen_const_list(g, "oneOf", titled);
	yajl_gen_map_close(g);
	jgen_str(g, "legacyEnum");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	gen_enum(g, "enum", legacy);
	gen_enum(g, "enumNames", legacy_names);
	yajl_gen_map_close(g);
	jgen_str(g, "untitledMulti");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "array");
	jgen_str(g, "items");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "string");
	gen_enum(g, "enum", opts);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	jgen_str(g, "titledMulti");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "array");
	jgen_str(g, "items");
	yajl_gen_map_open(g);
	gen_const_list(g, "anyOf", choices);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

struct elicit {
	enum fixture fx;
	const char *message;
};

static void gen_elicitation(yajl_gen g, void *arg)
{
	const struct elicit *e = arg;
	static const char *const both[] = { "username", "email", NULL };

	yajl_gen_map_open(g);
	jgen_key_str(g, "message", e->message);
	jgen_str(g, "requestedSchema");
	yajl_gen_map_open(g);
	jgen_key_str(g, "type", "object");
	jgen_str(g, "properties");
	yajl_gen_map_open(g);
	if (e->fx == FX_ELICITATION) {
		gen_string_prop(g, "username", "User's response", NULL);
		gen_string_prop(g, "email", "User's email address", NULL);
	} else if (e->fx == FX_ELICIT_DEFAULTS) {
		gen_defaults_schema(g);
	} else {
		gen_enums_schema(g);
	}
	yajl_gen_map_close(g);
	if (e->fx == FX_ELICITATION)
		jgen_key_list(g, "required", both);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

/* The client's answer to a request of ours, as the fixture's text. */
static void ask_and_reply(struct mcp_call *c, enum fixture fx)
{
	struct elicit e = { .fx = fx, .message = c->a.fixture_arg };
	_cleanup_free_ char *answer = NULL, *text = NULL;

	if (fx == FX_SAMPLING)
		answer = mcp_calls_ask(c, "sampling/createMessage", gen_sampling, c->a.fixture_arg,
				       30);
	else {
		if (!e.message)
			e.message = "Please review and update the form fields with defaults";
		answer = mcp_calls_ask(c, "elicitation/create", gen_elicitation, &e, 30);
	}
	if (!answer) {
		reply(c, fx, "the client did not answer", true);
		return;
	}
	text = xasprintf("%s: %s",
			 fx == FX_SAMPLING    ? "LLM response" :
			 fx == FX_ELICITATION ? "User response" :
						"Elicitation completed",
			 answer);
	reply(c, fx, text, false);
}

static void fixture_run(struct mcp_call *c)
{
	enum fixture fx = (enum fixture)c->a.fixture;

	switch (fx) {
	case FX_LOGGING:
		log_message(c, "Tool execution started");
		usleep(50000);
		log_message(c, "Tool processing data");
		usleep(50000);
		log_message(c, "Tool execution completed");
		reply(c, fx, "Tool with logging executed successfully", false);
		return;
	case FX_PROGRESS:
		mcp_progress_value(c, 0, 100);
		usleep(50000);
		mcp_progress_value(c, 50, 100);
		usleep(50000);
		mcp_progress_value(c, 100, 100);
		mcp_progress_settle(c);
		reply(c, fx, "Tool with progress executed successfully", false);
		return;
	case FX_ERROR:
		reply(c, fx, "This tool intentionally returns an error for testing", true);
		return;
	case FX_SAMPLING:
	case FX_ELICITATION:
	case FX_ELICIT_DEFAULTS:
	case FX_ELICIT_ENUMS:
		ask_and_reply(c, fx);
		return;
	default:
		reply(c, fx, fx == FX_SIMPLE_TEXT ? "This is a simple text response for testing." : "ok",
		      false);
	}
}

int mcp_fixtures_call(struct mcp_conn *conn, const struct mcp_id *id, yajl_val params)
{
	yajl_val name = params ? jmember(params, "name") : NULL, args, v, meta;
	struct call_args a = { .tool = TOOL_SESSION_LIST };
	struct mcp_id token;
	int fx = FX_SIMPLE_TEXT;
	_cleanup_free_ char *msg = NULL;

	if (!name || !YAJL_IS_STRING(name))
		return 0;
	while (fx < FX_MAX && strcmp(name->u.string, fixtures[fx].name))
		fx++;
	if (fx == FX_MAX)
		return 0;
	args = jmember(params, "arguments");
	v = fixtures[fx].arg && args && YAJL_IS_OBJECT(args) ? jmember(args, fixtures[fx].arg) :
							       NULL;
	if (fixtures[fx].arg && (!v || !YAJL_IS_STRING(v))) {
		msg = xasprintf("arguments.%s: required, a string", fixtures[fx].arg);
		mcp_bad_args(conn, id, msg);
		return 1;
	}
	a.fixture = fx;
	a.fixture_run = fixture_run;
	a.fixture_arg = v ? xstrdup(v->u.string) : NULL;
	meta = jmember(params, "_meta");
	mcp_id_from(&token, meta && YAJL_IS_OBJECT(meta) ? jmember(meta, "progressToken") : NULL);
	mcp_calls_start(conn, id, &a, &token);
	mcp_call_args_free(&a);
	mcp_id_free(&token);
	return 1;
}

/* ---- resources, prompts, completion, logging ------------------------------------- */

static void begin_result(yajl_gen g)
{
	jgen_str(g, "result");
	yajl_gen_map_open(g);
}

static void resource_entry(yajl_gen g, const char *uri, const char *name, const char *mime)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "uri", uri);
	jgen_key_str(g, "name", name);
	jgen_key_str(g, "description", name);
	jgen_key_str(g, "mimeType", mime);
	yajl_gen_map_close(g);
}

static void resources_list(yajl_gen g)
{
	jgen_str(g, "resources");
	yajl_gen_array_open(g);
	resource_entry(g, "test://static-text", "Static text resource", "text/plain");
	resource_entry(g, "test://static-binary", "Static binary resource", "image/png");
	resource_entry(g, "test://watched-resource", "Watched resource", "text/plain");
	yajl_gen_array_close(g);
}

static void templates_list(yajl_gen g)
{
	jgen_str(g, "resourceTemplates");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	jgen_key_str(g, "uriTemplate", "test://template/{id}/data");
	jgen_key_str(g, "name", "Template resource");
	jgen_key_str(g, "description", "Data for an id");
	jgen_key_str(g, "mimeType", "application/json");
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
}

/* 0, or -1 if there is no such resource. */
static int resource_read(yajl_gen g, const char *uri)
{
	_cleanup_free_ char *text = NULL;
	const char *mime = "text/plain", *body = NULL, *blob = NULL;
	char rid[64];

	if (!strcmp(uri, "test://static-text"))
		body = "This is the content of the static text resource.";
	else if (!strcmp(uri, "test://watched-resource"))
		body = "Watched resource content.";
	else if (!strcmp(uri, "test://static-binary"))
		blob = RED_PIXEL_PNG, mime = "image/png";
	else if (sscanf(uri, "test://template/%63[^/]/data", rid) == 1 &&
		 strlen(uri) == strlen("test://template//data") + strlen(rid) &&
		 strspn(rid, "0123456789abcdefghijklmnopqrstuvwxyz-_") == strlen(rid)) {
		text = xasprintf("{\"id\":\"%s\",\"templateTest\":true,\"data\":\"Data for ID: %s\"}",
				 rid, rid);
		body = text;
		mime = "application/json";
	} else {
		return -1;
	}
	jgen_str(g, "contents");
	yajl_gen_array_open(g);
	yajl_gen_map_open(g);
	jgen_key_str(g, "uri", uri);
	jgen_key_str(g, "mimeType", mime);
	jgen_key_str(g, body ? "text" : "blob", body ? body : blob);
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	return 0;
}

static void prompt_entry(yajl_gen g, const char *name, const char *desc, const char *const *args)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "name", name);
	jgen_key_str(g, "description", desc);
	jgen_str(g, "arguments");
	yajl_gen_array_open(g);
	for (; args && *args; args++) {
		yajl_gen_map_open(g);
		jgen_key_str(g, "name", *args);
		jgen_key_str(g, "description", *args);
		jgen_key_bool(g, "required", true);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
}

static void prompts_list(yajl_gen g)
{
	static const char *const two[] = { "arg1", "arg2", NULL }, *const uri[] = { "resourceUri", NULL };

	jgen_str(g, "prompts");
	yajl_gen_array_open(g);
	prompt_entry(g, "test_simple_prompt", "A simple prompt", NULL);
	prompt_entry(g, "test_prompt_with_arguments", "A prompt with arguments", two);
	prompt_entry(g, "test_prompt_with_embedded_resource", "A prompt with a resource", uri);
	prompt_entry(g, "test_prompt_with_image", "A prompt with an image", NULL);
	yajl_gen_array_close(g);
}

static void message_open(yajl_gen g)
{
	yajl_gen_map_open(g);
	jgen_key_str(g, "role", "user");
	jgen_str(g, "content");
}

static const char *arg_of(yajl_val params, const char *key)
{
	yajl_val args = params ? jmember(params, "arguments") : NULL, v;

	v = args && YAJL_IS_OBJECT(args) ? jmember(args, key) : NULL;
	return v && YAJL_IS_STRING(v) ? v->u.string : NULL;
}

/* 0, or -1 if there is no such prompt. */
static int prompt_get(yajl_gen g, const char *name, yajl_val params)
{
	_cleanup_free_ char *text = NULL;
	const char *uri = arg_of(params, "resourceUri");

	jgen_str(g, "messages");
	yajl_gen_array_open(g);
	message_open(g);
	if (!strcmp(name, "test_simple_prompt")) {
		content_text(g, "This is a simple prompt for testing.");
	} else if (!strcmp(name, "test_prompt_with_arguments")) {
		text = xasprintf("Prompt with arguments: arg1='%s', arg2='%s'",
				 arg_of(params, "arg1") ?: "", arg_of(params, "arg2") ?: "");
		content_text(g, text);
	} else if (!strcmp(name, "test_prompt_with_embedded_resource")) {
		content_resource(g, uri ? uri : "test://example-resource", "text/plain",
				 "Embedded resource content for testing.");
		yajl_gen_map_close(g);
		message_open(g);
		content_text(g, "Please process the embedded resource above.");
	} else if (!strcmp(name, "test_prompt_with_image")) {
		content_media(g, "image", RED_PIXEL_PNG, "image/png");
		yajl_gen_map_close(g);
		message_open(g);
		content_text(g, "Please analyze the image above.");
	} else {
		return -1;
	}
	yajl_gen_map_close(g);
	yajl_gen_array_close(g);
	return 0;
}

static void completion(yajl_gen g, yajl_val params)
{
	static const char *const words[] = { "paris", "park", "party", NULL };
	yajl_val arg = params ? jmember(params, "argument") : NULL, v;
	const char *prefix = "";

	v = arg && YAJL_IS_OBJECT(arg) ? jmember(arg, "value") : NULL;
	if (v && YAJL_IS_STRING(v))
		prefix = v->u.string;
	jgen_str(g, "completion");
	yajl_gen_map_open(g);
	jgen_str(g, "values");
	yajl_gen_array_open(g);
	for (const char *const *w = words; *w; w++)
		if (str_has_prefix(*w, prefix))
			jgen_str(g, *w);
	yajl_gen_array_close(g);
	jgen_key_bool(g, "hasMore", false);
	yajl_gen_map_close(g);
}

static int set_level(struct mcp_conn *conn, yajl_val params)
{
	yajl_val v = params ? jmember(params, "level") : NULL;

	for (int i = 0; v && YAJL_IS_STRING(v) && log_levels[i]; i++)
		if (!strcmp(log_levels[i], v->u.string)) {
			conn->peer->log_level = i;
			return 0;
		}
	return -1;
}

int mcp_fixtures_method(struct mcp_conn *conn, const struct mcp_id *id, const char *method,
			yajl_val params)
{
	yajl_val uri = params ? jmember(params, "uri") : NULL, name = params ? jmember(params, "name") : NULL;
	yajl_gen g = mcp_reply_begin(id);
	int r = 0;

	begin_result(g);
	if (!strcmp(method, "resources/list"))
		resources_list(g);
	else if (!strcmp(method, "resources/templates/list"))
		templates_list(g);
	else if (!strcmp(method, "resources/read"))
		r = uri && YAJL_IS_STRING(uri) ? resource_read(g, uri->u.string) : -1;
	else if (!strcmp(method, "prompts/list"))
		prompts_list(g);
	else if (!strcmp(method, "prompts/get"))
		r = name && YAJL_IS_STRING(name) ? prompt_get(g, name->u.string, params) : -1;
	else if (!strcmp(method, "completion/complete"))
		completion(g, params);
	else if (!strcmp(method, "logging/setLevel"))
		r = set_level(conn, params);
	else if (strcmp(method, "resources/subscribe") && strcmp(method, "resources/unsubscribe"))
		r = 1;
	if (r) {
		yajl_gen_free(g);
		if (r < 0)
			mcp_reply_error(conn, id, RPC_INVALID_PARAMS, "Invalid params",
					"no such resource, prompt or level");
		return r < 0;
	}
	yajl_gen_map_close(g);
	mcp_reply_send(conn, g);
	return 1;
}
