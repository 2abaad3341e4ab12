// SPDX-License-Identifier: Apache-2.0
// `agentsbx mcp --listen` through the official MCP TypeScript SDK's
// Streamable HTTP client, as a remote agent uses it.  Driven by
// test_sdk_http.py:
//
//   node sdk_http.mjs main URL        (a server with --max-concurrent 20)
//   node sdk_http.mjs cancel URL      (a server with --max-concurrent 1)
//
// Each check throws on failure (exit 1, the reason on stderr); the last
// line of stdout is a JSON report of what was measured (never asserted on
// timing but where the issue says "at once").
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import assert from "node:assert/strict";

const [mode, url] = process.argv.slice(2);
const report = {};
const now = () => performance.now() / 1000;
const opts = { timeout: 120000 };

async function connect(name) {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

const call = (client, name, args, extra = {}) =>
  client.callTool({ name, arguments: args }, undefined, { ...opts, ...extra });
const run = (client, code, language = "python", extra = {}) =>
  call(client, "run_code", { code, language, ...extra.args }, extra.options);

async function main() {
  const { client, transport } = await connect("agentsbx-http-test");
  assert.equal(client.getServerVersion().name, "agentsbx");
  assert.ok(transport.sessionId, "no Mcp-Session-Id");
  report.protocol = transport.protocolVersion;

  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name),
    ["run_code", "session_create", "session_run", "session_write_file", "session_read_file",
     "session_list_files", "session_close", "session_list"]);
  assert.deepEqual(tools[0].inputSchema.properties.language.enum, ["python", "sh"]);
  assert.match(tools[0].inputSchema.properties.language.description, /python \(python3\) or sh\./);
  assert.doesNotMatch(JSON.stringify(tools), /node/);

  let r = await run(client, "print(6 * 7)");
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.stdout, "42\n");
  r = await run(client, "echo $((6 * 7)); exit 3", "sh");
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.stdout, "42\n");
  assert.equal(r.structuredContent.exit_code, 3);

  // A timeout and an exception are results, not errors.
  r = await run(client, "import time\nprint('before')\ntime.sleep(10)", "python",
                { args: { timeout_seconds: 1 } });
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.timed_out, true);
  assert.equal(r.structuredContent.stdout, "before\n");
  r = await run(client, "1/0");
  assert.equal(r.isError, false);
  assert.equal(r.structuredContent.error.name, "ZeroDivisionError");

  // progress notifications on the POST's event stream
  const progress = [];
  r = await run(client, "import time\nfor i in range(3):\n    print('step', i)\n    time.sleep(0.4)\n",
                "python", { options: { onprogress: (p) => progress.push(p) } });
  assert.equal(r.structuredContent.stdout, "step 0\nstep 1\nstep 2\n");
  report.progress = progress.map((p) => p.message);
  assert.equal(progress[0].message, "started");
  assert.match(progress[progress.length - 1].message, /^finished: exit code 0/);
  assert.ok(progress.some((p) => /step 1/.test(p.message ?? "")), JSON.stringify(progress));

  // a session: a CSV in, a PNG out, read back as image content
  let res = await call(client, "session_create", {});
  assert.equal(res.isError, false, JSON.stringify(res));
  const sid = res.structuredContent.session_id;
  res = await call(client, "session_write_file", { session_id: sid, path: "points.csv",
                                                   content: "x,y\n0,0\n1,1\n2,4\n3,9\n" });
  assert.equal(res.isError, false);
  res = await call(client, "session_run", { session_id: sid, language: "python", code: PLOT });
  assert.equal(res.isError, false, JSON.stringify(res));
  assert.deepEqual(res.structuredContent.outputs.map((o) => o.path), ["/outputs/plot.png"]);
  res = await call(client, "session_list", {});
  assert.deepEqual(res.structuredContent.sessions.map((s) => s.session_id), [sid]);
  res = await call(client, "session_read_file", { session_id: sid, path: "/outputs/plot.png" });
  const image = res.content.find((c) => c.type === "image");
  assert.ok(image, JSON.stringify(res.content));
  assert.equal(image.mimeType, "image/png");
  const png = Buffer.from(image.data, "base64");
  assert.equal(png.subarray(0, 8).toString("binary"), "\x89PNG\r\n\x1a\n");
  report.session_png_bytes = png.length;
  res = await call(client, "session_write_file", { session_id: sid, path: "blob.bin",
                                                   content: "AAEC/w==", encoding: "base64" });
  res = await call(client, "session_read_file", { session_id: sid, path: "blob.bin" });
  const blob = res.content.find((c) => c.type === "resource");
  assert.equal(blob.resource.blob, "AAEC/w==");
  assert.equal(blob.resource.uri, "file:///workspace/blob.bin");
  res = await call(client, "session_close", { session_id: sid });
  assert.equal(res.isError, false);

  // 20 concurrent 1-second runs from 4 clients
  const clients = [client];
  for (let i = 1; i < 4; i++) clients.push((await connect(`agentsbx-http-test-${i}`)).client);
  const t = now();
  const all = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    run(clients[i % 4], `import time; time.sleep(1); print(${i})`)));
  report.twenty_concurrent_s = now() - t;
  all.forEach((res, i) => assert.equal(res.structuredContent.stdout, `${i}\n`));
  for (const c of clients.slice(1)) await c.close();

  // DELETE ends the session: a request with its id is 404 from then on
  const old = transport.sessionId;
  await transport.terminateSession();
  const after = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream",
               "Mcp-Session-Id": old },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
  });
  assert.equal(after.status, 404);
  await client.close();
}

async function cancel() {
  const { client } = await connect("agentsbx-http-cancel");
  const ac = new AbortController();
  let onStart;
  const started = new Promise((resolve) => { onStart = resolve; });
  const doomed = run(client, "import time\nprint('sleeping', flush=True)\ntime.sleep(20)", "python",
                     { options: { signal: ac.signal,
                                  onprogress: (p) => p.message === "started" && onStart() } });
  doomed.catch(() => {});
  await started;
  await new Promise((r) => setTimeout(r, 300));
  const t = now();
  ac.abort("the test gives up");
  await assert.rejects(doomed);
  // --max-concurrent 1: this run needs the cancelled one's slot
  const r = await run(client, "print('next')");
  report.next_after_cancel_s = now() - t;
  assert.equal(r.structuredContent.stdout, "next\n");
  assert.ok(report.next_after_cancel_s < 10, `the slot was not freed: ${report.next_after_cancel_s} s`);
  await client.close();
}

const PLOT = `
import csv, struct, zlib
rows = [(int(r["x"]), int(r["y"])) for r in csv.DictReader(open("points.csv"))]
w, h = 4, 10
pixels = [[255] * w for _ in range(h)]
for x, y in rows:
    pixels[h - 1 - y][x] = 0
raw = b"".join(b"\\x00" + bytes(row) for row in pixels)
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open("/outputs/plot.png", "wb").write(png)
print(len(rows), "points")
`;

await (mode === "cancel" ? cancel() : main());
console.log(JSON.stringify(report));
