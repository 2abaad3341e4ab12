// SPDX-License-Identifier: Apache-2.0
// A client of `agentsbx mcp` written with the official MCP TypeScript SDK,
// as an agent framework would use it.  Driven by test_mcp_sdk.py:
//
//   AGENTSBX=... STATE_ROOT=... IMAGE_ROOT=... node client.mjs
//
// Each check throws on failure (exit 1, the reason on stderr); the last
// line of stdout is a JSON report of what was measured.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import assert from "node:assert/strict";
import fs from "node:fs";

const env = process.env;
const report = {};
const now = () => performance.now() / 1000;

function sandboxProcesses(serverPid) {
  // Processes in a cgroup of this server's sandboxes (ids sbx-PID-...).
  const mark = `/sbx-${serverPid}-`;
  const found = [];
  for (const pid of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").includes(mark)) found.push(pid);
    } catch {}
  }
  return found;
}

function stateEntries() {
  try {
    return fs.readdirSync(env.STATE_ROOT).filter((n) => n.startsWith("sbx-"));
  } catch {
    return [];
  }
}

async function waitUntil(cond, seconds) {
  const end = now() + seconds;
  while (now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

const run = (client, code, extra = {}, options = {}) =>
  client.callTool({ name: "run_code", arguments: { code, language: "python", ...extra } },
                  undefined, { timeout: 60000, ...options });

const transport = new StdioClientTransport({
  command: env.AGENTSBX,
  args: ["--root", env.STATE_ROOT, "mcp", "--image-root", env.IMAGE_ROOT, "--image", "python",
         "--image", "busybox", "--max-sessions", "24"],
  stderr: "inherit",
  // The SDK passes only a few variables by default: the test's audit log
  // must reach the server (never the default /var/log/agentsbx).
  env: { PATH: env.PATH, HOME: env.HOME || "/", AGENTSBX_POLICY_LOG: env.AGENTSBX_POLICY_LOG },
});
const client = new Client({ name: "agentsbx-sdk-test", version: "1.0.0" });

// initialize
await client.connect(transport);
const server = client.getServerVersion();
assert.equal(server.name, "agentsbx");
assert.ok(client.getServerCapabilities().tools);
const serverPid = transport.pid;

// tools/list, validated against what the tool promises
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name),
                 ["run_code", "session_create", "session_run", "session_write_file",
                  "session_read_file", "session_list_files", "session_close", "session_list"]);
for (const tool of tools) assert.equal(tool.inputSchema.additionalProperties, false);
const schema = tools[0].inputSchema;
assert.equal(schema.type, "object");
assert.deepEqual([...schema.required].sort(), ["code", "language"]);
assert.equal(schema.additionalProperties, false);
assert.deepEqual(schema.properties.language.enum, ["python", "sh"]);
assert.equal(schema.properties.timeout_seconds.maximum, 300);
assert.ok(tools[0].outputSchema);

// a first call (cold) and a second (warm caches): print(1)
let t = now();
let r = await run(client, "print(1)");
report.print1_first_ms = (now() - t) * 1000;
assert.equal(r.isError, false);
assert.equal(r.structuredContent.stdout, "1\n");
assert.match(r.content[0].text, /exit code 0/);
const warm = [];
for (let i = 0; i < 5; i++) {
  t = now();
  r = await run(client, "print(1)");
  warm.push((now() - t) * 1000);
}
warm.sort((a, b) => a - b);
report.print1_median_ms = warm[2];

// a non-zero exit is not a tool error; the exit code is in the result
r = await run(client, "import sys; print('bye'); sys.exit(3)");
assert.equal(r.isError, false);
assert.equal(r.structuredContent.exit_code, 3);
// an uncaught exception comes back structured (and passes the output schema)
r = await run(client, "{}['missing']");
assert.equal(r.isError, false);
assert.equal(r.structuredContent.error.name, "KeyError");
assert.equal(r.structuredContent.error.value, "'missing'");
assert.match(r.structuredContent.error.traceback, /^Traceback \(most recent call last\):/);

// 5 concurrent 1-second runs
t = now();
const five = await Promise.all(
  [0, 1, 2, 3, 4].map((i) => run(client, `import time; time.sleep(1); print(${i})`)));
report.five_concurrent_s = now() - t;
five.forEach((res, i) => assert.equal(res.structuredContent.stdout, `${i}\n`));
assert.ok(report.five_concurrent_s < 2, `5 concurrent 1 s runs took ${report.five_concurrent_s} s`);

// ping is answered while runs are going on
const busy = [0, 1, 2].map(() => run(client, "import time; time.sleep(1.5)"));
await new Promise((r) => setTimeout(r, 300));
t = now();
await client.ping();
report.ping_during_runs_ms = (now() - t) * 1000;
assert.ok(report.ping_during_runs_ms < 200, `ping took ${report.ping_during_runs_ms} ms`);
await Promise.all(busy);

// cancel a 20-second run: dead within 1 s, no late response, next call not delayed
const ac = new AbortController();
let lateError = null;
client.onerror = (e) => { lateError = e; };
const doomed = run(client, "import time\nprint('sleeping', flush=True)\ntime.sleep(20)", {},
                   { signal: ac.signal });
assert.ok(await waitUntil(() => sandboxProcesses(serverPid).length > 0, 10), "the run never started");
await new Promise((r) => setTimeout(r, 300));
t = now();
ac.abort("the test gives up");
await assert.rejects(doomed);
const dead = await waitUntil(() => sandboxProcesses(serverPid).length === 0, 1.0);
report.cancel_dead_s = now() - t;
assert.ok(dead, `the cancelled run still has processes: ${sandboxProcesses(serverPid)}`);
t = now();
r = await run(client, "print('next')");
report.after_cancel_ms = (now() - t) * 1000;
assert.equal(r.structuredContent.stdout, "next\n");
assert.ok(report.after_cancel_ms < 1000, `the call after a cancel took ${report.after_cancel_ms} ms`);
assert.ok(await waitUntil(() => stateEntries().length === 0, 2), "containers left after the cancel");

// progress notifications: started, the output, finished
const progress = [];
r = await run(client,
  "import time\nfor i in range(3):\n    print('step', i)\n    time.sleep(0.4)\n", {},
  { onprogress: (p) => progress.push(p) });
assert.equal(r.structuredContent.stdout, "step 0\nstep 1\nstep 2\n");
report.progress = progress.map((p) => p.message);
assert.ok(progress.length >= 3, JSON.stringify(progress));
assert.equal(progress[0].message, "started");
assert.match(progress[progress.length - 1].message, /^finished: exit code 0/);
assert.ok(progress.some((p) => /step 1/.test(p.message ?? "")), JSON.stringify(progress));
for (let i = 1; i < progress.length; i++) assert.ok(progress[i].progress > progress[i - 1].progress);

// an invalid call: the SDK's error message says what was wrong
await assert.rejects(
  client.callTool({ name: "run_code", arguments: { code: "print(1)" } }),
  (e) => /arguments\.language: required/.test(e.message) && /-32602/.test(e.message));
await assert.rejects(
  client.callTool({ name: "run_code", arguments: { code: "1", language: "python",
                                                   timeout_seconds: 9999 } }),
  (e) => /timeout_seconds: at most 300/.test(e.message));
await assert.rejects(
  client.callTool({ name: "run_code", arguments: { code: "1", language: "python", lang: "x" } }),
  (e) => /arguments\.lang: unknown argument/.test(e.message));
report.invalid_message = await client
  .callTool({ name: "run_code", arguments: { code: "print(1)" } })
  .catch((e) => e.message);

// a timeout is a result (isError false: frameworks throw on isError), with
// what was printed before it
r = await run(client, "import time\nprint('before')\ntime.sleep(10)", { timeout_seconds: 1 });
assert.equal(r.isError, false);
assert.equal(r.structuredContent.timed_out, true);
assert.equal(r.structuredContent.stdout, "before\n");

// a session: write a CSV, run Python that reads it and writes a PNG, read it back, close
const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
let res = await call("session_create", {});
assert.equal(res.isError, false);
const sid = res.structuredContent.session_id;
res = await call("session_write_file", { session_id: sid, path: "data/points.csv",
                                         content: "x,y\n0,0\n1,1\n2,4\n3,9\n" });
assert.equal(res.isError, false);
const plot = `
import csv, struct, zlib
rows = [(int(r["x"]), int(r["y"])) for r in csv.DictReader(open("data/points.csv"))]
w, h = 4, 10
pixels = [[255] * w for _ in range(h)]
for x, y in rows:
    pixels[h - 1 - y][x] = 0
raw = b"".join(b"\\x00" + bytes(row) for row in pixels)
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
open("/workspace/plot.png", "wb").write(png)
print(len(rows), "points,", len(png), "bytes")
`;
res = await call("session_run", { session_id: sid, code: plot, language: "python" });
assert.equal(res.isError, false, JSON.stringify(res));
assert.match(res.structuredContent.stdout, /^4 points, \d+ bytes\n$/);
res = await call("session_list_files", { session_id: sid });
assert.deepEqual(res.structuredContent.entries.map((e) => e.name).sort(), ["data", "plot.png"]);
res = await call("session_read_file", { session_id: sid, path: "/workspace/plot.png" });
assert.equal(res.structuredContent.encoding, "base64");
// the picture itself, as image content, for clients that show the model only the content
assert.equal(res.content[1].type, "image");
assert.equal(res.content[1].mimeType, "image/png");
assert.equal(res.content[1].data, res.structuredContent.content);
const png = Buffer.from(res.structuredContent.content, "base64");
assert.equal(png.subarray(0, 8).toString("binary"), "\x89PNG\r\n\x1a\n");
assert.equal(png.length, res.structuredContent.size);
report.session_png_bytes = png.length;
res = await call("session_close", { session_id: sid });
assert.equal(res.isError, false);
res = await call("session_run", { session_id: sid, code: "print(1)", language: "python" });
assert.equal(res.isError, true);

// 20 sessions opened and closed: nothing left
t = now();
const ids = [];
for (let i = 0; i < 20; i++) {
  res = await call("session_create", {});
  assert.equal(res.isError, false, JSON.stringify(res));
  ids.push(res.structuredContent.session_id);
}
await Promise.all(ids.map((id) => call("session_write_file", { session_id: id, path: "f", content: id })));
for (const id of ids) assert.equal((await call("session_close", { session_id: id })).isError, false);
report.twenty_sessions_s = now() - t;
assert.ok(await waitUntil(() => stateEntries().length === 0 && sandboxProcesses(serverPid).length === 0, 2),
          "something is left after 20 sessions");

assert.equal(lateError, null, `the SDK saw an error: ${lateError}`);
await client.close();
console.log(JSON.stringify(report));
