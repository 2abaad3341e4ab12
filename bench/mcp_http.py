#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Case 10 of `make bench`: `agentsbx mcp` over Streamable HTTP against
stdio, the same run, the same server flags (--image python --warm 1):

- one run_code call of print(1), request written to reply read: over stdio
  (one line each way) and over HTTP (one POST, its event stream), the two
  servers' calls interleaved; median and p95 of RUNS each;
- throughput over HTTP: 20 clients (threads, a session each) calling
  run_code print(1) back to back for SECONDS, --max-concurrent 20: runs/s.

    OUT=build/bench/host/mcp_http AGENTSBX=./agentsbx bench/mcp_http.py

The image is the test suite's cached Python rootfs (as bench/sandbox.sh).
Writes $OUT/mcp_http.txt ("key value" lines) or $OUT/not-run.txt."""

import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

OUT = os.environ.get("OUT", "build/bench/host/mcp_http")
AGENTSBX = os.environ.get("AGENTSBX", "./agentsbx")
CACHE = os.environ.get("AGENTSBX_TEST_CACHE", "/var/cache/agentsbx-test")
RUNS = int(os.environ.get("MCP_HTTP_RUNS", "30"))
SECONDS = float(os.environ.get("MCP_HTTP_SECONDS", "10"))
CLIENTS = 20
CODE = {"code": "print(1)", "language": "python"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}


def server_argv(root, *more):
    return [AGENTSBX, "--root", root, "mcp", "--image-root", CACHE, "--image", "python",
            "--warm", "1"] + list(more)


class Stdio:
    def __init__(self, root):
        self.p = subprocess.Popen(server_argv(root), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n = 0
        self.call("initialize", INIT)

    def call(self, method, params):
        self.n += 1
        self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                        "params": params}) + "\n").encode())
        self.p.stdin.flush()
        while True:
            msg = json.loads(self.p.stdout.readline())
            if msg.get("id") == self.n:
                return msg

    def stop(self):
        self.p.stdin.close()
        self.p.wait(30)


class Http:
    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.session = None
        self.n = 0
        self.call("initialize", INIT)

    def call(self, method, params):
        self.n += 1
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session:
            h["Mcp-Session-Id"] = self.session
        self.c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": self.n,
                                                   "method": method, "params": params}), h)
        r = self.c.getresponse()
        body = r.read().decode()
        self.session = self.session or r.getheader("Mcp-Session-Id")
        for part in body.split("\n\n"):
            data = "".join(l[5:].strip() for l in part.splitlines() if l.startswith("data:"))
            if data and json.loads(data).get("id") == self.n:
                return json.loads(data)
        return json.loads(body)


def timed(client):
    t = time.monotonic()
    r = client.call("tools/call", {"name": "run_code", "arguments": CODE})
    took = time.monotonic() - t
    assert r["result"]["structuredContent"]["stdout"] == "1\n", r
    return took


def p95(xs):
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


def start_http(root, *more):
    err = tempfile.NamedTemporaryFile("w+", delete=False)
    p = subprocess.Popen(server_argv(root, "--listen", "127.0.0.1:0", *more),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    for _ in range(400):
        text = open(err.name).read()
        if "listening on " in text:
            os.unlink(err.name)
            return p, int(text.split("listening on http://127.0.0.1:", 1)[1].split("/")[0])
        time.sleep(0.05)
    raise RuntimeError("the HTTP server did not start: " + open(err.name).read())


def stop(p):
    p.terminate()
    p.wait(30)


def latency(root):
    stdio = Stdio(os.path.join(root, "stdio"))
    hp, port = start_http(os.path.join(root, "http"))
    try:
        h = Http(port)
        for _ in range(3):  # warm-up
            timed(stdio), timed(h)
        s, w = [], []
        for _ in range(RUNS):
            s.append(timed(stdio))
            w.append(timed(h))
        return s, w
    finally:
        stdio.stop()
        stop(hp)


def throughput(root):
    hp, port = start_http(os.path.join(root, "tput"), "--max-concurrent", str(CLIENTS))
    done, failed = [0], [0]
    lock = threading.Lock()
    end = time.monotonic() + SECONDS

    def worker():
        c = None
        while time.monotonic() < end:
            try:
                c = c or Http(port)
                timed(c)
                with lock:
                    done[0] += 1
            except Exception:
                # a connection that failed is not used again (it would
                # fail at once, in a loop that starves the machine)
                with lock:
                    failed[0] += 1
                c = None
                time.sleep(0.1)

    try:
        t = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(CLIENTS)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        return done[0] / (time.monotonic() - t), done[0], failed[0]
    finally:
        stop(hp)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in ("mcp_http.txt", "not-run.txt"):
        if os.path.exists(os.path.join(OUT, f)):
            os.unlink(os.path.join(OUT, f))
    if not os.path.isdir(os.path.join(CACHE, "python")):
        open(os.path.join(OUT, "not-run.txt"), "w").write(
            "no python image in %s (run tests/sandbox once)\n" % CACHE)
        return 0
    root = tempfile.mkdtemp(prefix="agentsbx-bench-mcp-http-")
    os.environ.setdefault("AGENTSBX_POLICY_LOG", os.path.join(root, "policy.log"))
    s, w = latency(root)
    rate, n, failed = throughput(root)
    lines = {
        "stdio_print1_median_ms": statistics.median(s) * 1000,
        "stdio_print1_p95_ms": p95(s) * 1000,
        "http_print1_median_ms": statistics.median(w) * 1000,
        "http_print1_p95_ms": p95(w) * 1000,
        "runs": RUNS,
        "http_clients": CLIENTS,
        "http_seconds": SECONDS,
        "http_runs_per_s": rate,
        "http_runs_done": n,
        "http_runs_failed": failed,
        "load_average": os.getloadavg()[0],
    }
    with open(os.path.join(OUT, "mcp_http.txt"), "w") as f:
        for k, v in lines.items():
            f.write("%s %s\n" % (k, round(v, 2) if isinstance(v, float) else v))
    print(open(os.path.join(OUT, "mcp_http.txt")).read(), end="")
    subprocess.run(["rm", "-rf", root])
    return 0


if __name__ == "__main__":
    sys.exit(main())
