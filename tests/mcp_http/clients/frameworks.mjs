// SPDX-License-Identifier: Apache-2.0
// The frameworks agents are built with, on `agentsbx mcp --listen`, as a
// new user would wire them (test_frameworks.py):
//
//   node frameworks.mjs URL
//
// In each of LangChain's MCP adapters (@langchain/mcp-adapters), Vercel's
// AI SDK (ai + @ai-sdk/mcp) and the official SDK: a program that times out
// is a result, not an exception (LangChain's adapter throws on isError: an
// agent loop would die of it), and a PNG read back from a session reaches
// what the framework hands the model (LangChain: the ToolMessage's content
// blocks; the AI SDK: the tool's toModelOutput; the SDK: the content).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createMCPClient } from "@ai-sdk/mcp";
import assert from "node:assert/strict";

const url = process.argv[2];
const report = {};
const TIMEOUT = { code: "import time\nprint('before')\ntime.sleep(30)", language: "python",
                  timeout_seconds: 1 };
const PNG_CODE = `
import struct, zlib
raw = b"\\x00\\xff\\x00\\x00"
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open("/workspace/red.png", "wb").write(png)
`;
const isPng = (b64) => Buffer.from(b64, "base64").subarray(0, 8).toString("binary") ===
  "\x89PNG\r\n\x1a\n";

// The session's PNG, made with the official SDK (the same for all three).
async function makeSession() {
  const client = new Client({ name: "frameworks-setup", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const c = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
  const sid = (await c("session_create", {})).structuredContent.session_id;
  const r = await c("session_run", { session_id: sid, code: PNG_CODE, language: "python" });
  assert.equal(r.structuredContent.exit_code, 0, JSON.stringify(r));
  return { client, c, sid };
}

async function officialSdk(c, sid) {
  const r = await c("run_code", TIMEOUT);
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.timed_out, true);
  const f = await c("session_read_file", { session_id: sid, path: "red.png" });
  const image = f.content.find((x) => x.type === "image");
  assert.ok(image && isPng(image.data) && image.mimeType === "image/png", JSON.stringify(f.content));
  report.sdk = { timeout_text: r.content[0].text.split("\n")[0], image: image.mimeType };
}

async function langchain(sid) {
  const mcp = new MultiServerMCPClient({ mcpServers: { sandbox: { transport: "http", url } } });
  const tools = await mcp.getTools();
  const tool = (name) => tools.find((t) => t.name === name);
  // as an agent loop calls a tool: a ToolCall in, a ToolMessage out
  const out = await tool("run_code").invoke({ type: "tool_call", id: "call-1", name: "run_code",
                                              args: TIMEOUT });
  const text = typeof out.content === "string" ? out.content : JSON.stringify(out.content);
  assert.match(text, /timed out after/);
  const img = await tool("session_read_file").invoke({
    type: "tool_call", id: "call-2", name: "session_read_file",
    args: { session_id: sid, path: "red.png" } });
  const blocks = Array.isArray(img.content) ? img.content : [];
  const block = blocks.find((b) => b.type === "image_url" || b.type === "image");
  assert.ok(block, "no image block in the ToolMessage: " + JSON.stringify(img.content).slice(0, 500));
  const data = block.type === "image_url" ? block.image_url.url.split(",")[1] : block.data;
  assert.ok(isPng(data));
  report.langchain = { timeout_text: text.slice(0, 80), image_block: block.type,
                       message: img.constructor.name };
  await mcp.close();
}

async function vercel(sid) {
  const client = await createMCPClient({ transport: { type: "http", url } });
  const tools = await client.tools();
  const opts = (id) => ({ toolCallId: id, messages: [] });
  const r = await tools.run_code.execute(TIMEOUT, opts("v1"));
  // with an outputSchema the SDK hands back structuredContent; without, the result
  const sc = r.structuredContent ?? r;
  assert.equal(r.isError ?? false, false);
  assert.equal(sc.timed_out, true, JSON.stringify(r).slice(0, 500));
  const f = await tools.session_read_file.execute({ session_id: sid, path: "red.png" }, opts("v2"));
  const model = await tools.session_read_file.toModelOutput({ toolCallId: "v2", input: {}, output: f });
  assert.equal(model.type, "content", JSON.stringify(model).slice(0, 300));
  const file = model.value.find((p) => p.type === "file" || p.type === "media" || p.type === "image-data");
  assert.ok(file, "no image in the model output: " + JSON.stringify(model).slice(0, 500));
  const data = file.data?.data ?? file.data;
  assert.ok(isPng(data));
  report.vercel = { timed_out: sc.timed_out, model_part: file.type,
                    media_type: file.mediaType ?? file.mimeType };
  await client.close();
}

const { client, c, sid } = await makeSession();
await officialSdk(c, sid);
await langchain(sid);
await vercel(sid);
await c("session_close", { session_id: sid });
await client.close();
console.log(JSON.stringify(report));
