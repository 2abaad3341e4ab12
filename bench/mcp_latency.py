#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Case 9's MCP rows: `agentsbx mcp` run_code over stdio, cold (no --warm:
a container made for each call) and warm (--warm WARM: the interpreter
started before the call, agent/sandbox/sandbox_pool.c), for Python
(print(1)) and sh (echo 1):

- latency: RUNS calls one after another, THINK seconds apart (an agent's
  think time: the pool refills meanwhile), request written to reply read:
  median and p95;
- throughput: 1, 4 and 16 callers at once on the one connection, each
  sending its next call as soon as its reply is in, for SECONDS: runs/s
  (--max-concurrent 16; the warm pool drains and refills as it can);
- the floor of a warm call, interleaved with the warm latency's calls: the
  same interpreter started beforehand in a chroot of the image, no
  container, no MCP, handed the same program the same way (a byte on its
  stdin, then it runs the file): go to exit.

    OUT=dir AGENTSBX=./agentsbx IMAGE_ROOT=dir STATE=dir bench/mcp_latency.py

STATE is a directory for the servers' --root (bench/sandbox.sh gives a
tmpfs, as /run is on a normal host).  Writes OUT/mcp_latency.json."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

OUT = os.environ.get("OUT", "build/bench/host/sandbox")
AGENTSBX = os.environ.get("AGENTSBX", "./agentsbx")
IMAGE_ROOT = os.environ["IMAGE_ROOT"]
STATE = os.environ["STATE"]
RUNS = int(os.environ.get("MCP_RUNS", "30"))
THINK = float(os.environ.get("MCP_THINK", "0.25"))
SECONDS = float(os.environ.get("MCP_SECONDS", "6"))
WARM = int(os.environ.get("MCP_WARM", "4"))
CALLERS = (1, 4, 16)
CODE = {"python": ("print(1)", "1\n"), "sh": ("echo 1", "1\n")}
# The floor's interpreters: wait for the go byte, then run /tmp/main.EXT
# (a directory of ours bound on the image's /tmp in a mount namespace of
# the floor's own: the image is not written).
FLOOR = {"python": ["python3", "-c", "import os\nif os.read(0, 1) != b'\\n': os._exit(0)\n"
                    "exec(compile(open('/tmp/main.py').read(), '/tmp/main.py', 'exec'))"],
         "sh": ["sh", "-c", "IFS= read -r _ || exit 0; exec sh /tmp/main.sh"]}
EXT = {"python": "py", "sh": "sh"}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}


class Server:
    """One `agentsbx mcp` on pipes; calls may be in flight at once (a reader
    thread hands each reply to its caller)."""

    def __init__(self, root, *flags):
        self.p = subprocess.Popen([AGENTSBX, "--root", root, "mcp", "--image-root", IMAGE_ROOT,
                                   "--image", "python", "--max-concurrent", "16"] + list(flags),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.lock = threading.Lock()
        self.n = 0
        self.waiting = {}
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()
        self.call("initialize", INIT)

    def read(self):
        for line in self.p.stdout:
            msg = json.loads(line)
            with self.lock:
                slot = self.waiting.pop(msg.get("id"), None)
            if slot:
                slot[1] = msg
                slot[0].set()

    def call(self, method, params):
        ev = threading.Event()
        with self.lock:
            self.n += 1
            i = self.n
            slot = self.waiting[i] = [ev, None]
            self.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                            "params": params}) + "\n").encode())
            self.p.stdin.flush()
        if not ev.wait(120):
            raise RuntimeError("no reply to %s" % method)
        return slot[1]

    def run(self, lang):
        code, want = CODE[lang]
        t = time.monotonic()
        r = self.call("tools/call", {"name": "run_code",
                                     "arguments": {"code": code, "language": lang}})
        took = time.monotonic() - t
        sc = r.get("result", {}).get("structuredContent")
        if not sc or sc.get("stdout") != want:
            raise RuntimeError("run_code %s: %s" % (lang, json.dumps(r)[:500]))
        return took

    def stop(self):
        self.p.stdin.close()
        self.p.wait(60)


def p95(xs):
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


def stats(times):
    return {"median_ms": statistics.median(times) * 1000, "p95_ms": p95(times) * 1000,
            "min_ms": min(times) * 1000, "runs": len(times)}


def floor_once(lang):
    """A pre-started interpreter outside any container: go to exit."""
    image = os.path.join(IMAGE_ROOT, "python")
    tmp = os.path.join(STATE, "floor-tmp")
    os.makedirs(tmp, exist_ok=True)
    with open(os.path.join(tmp, "main." + EXT[lang]), "w") as f:
        f.write(CODE[lang][0] + "\n")
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          'mount --bind "$0" "$1/tmp" && r=$1 && shift && exec chroot "$r" "$@"', tmp,
                          image] + FLOOR[lang][:-1] + [FLOOR[lang][-1]],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    time.sleep(THINK)  # started, waiting
    t = time.monotonic()
    p.stdin.write(b"\n")
    p.stdin.close()
    out = p.stdout.read()
    p.wait()
    took = time.monotonic() - t
    if out.decode() != CODE[lang][1]:
        raise RuntimeError("the floor's %s printed %r" % (lang, out))
    return took


def latency(s, lang, settle, floor=False):
    times, floors = [], []
    time.sleep(settle)
    for _ in range(RUNS):
        if floor:
            floors.append(floor_once(lang))
        time.sleep(THINK)
        times.append(s.run(lang))
    out = stats(times)
    if floor:
        out["floor"] = stats(floors)
    return out


def throughput(s, lang, callers):
    done = [0] * callers
    failed = []
    end = time.monotonic() + SECONDS

    def caller(k):
        try:
            while time.monotonic() < end:
                s.run(lang)
                done[k] += 1
        except Exception as e:  # noqa: BLE001 (reported)
            failed.append(str(e))

    t0 = time.monotonic()
    threads = [threading.Thread(target=caller, args=(k,)) for k in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - t0
    return {"runs_per_s": sum(done) / took, "runs": sum(done), "seconds": took,
            "failed": failed[:3]}


def measure(kind, flags, settle, floor=False):
    res = {}
    s = Server(os.path.join(STATE, "mcp-" + kind), *flags)
    try:
        for lang in CODE:
            s.run(lang)  # the first call of each (the seccomp cache, the page cache)
        for lang in CODE:
            res[lang] = {"latency": latency(s, lang, settle, floor)}
        for lang in CODE:
            for c in CALLERS:
                time.sleep(settle)
                res[lang]["callers_%d" % c] = throughput(s, lang, c)
                print("bench/mcp_latency: %s %s %d callers: %.1f runs/s" %
                      (kind, lang, c, res[lang]["callers_%d" % c]["runs_per_s"]),
                      file=sys.stderr)
    finally:
        s.stop()
    return res


def main():
    os.makedirs(OUT, exist_ok=True)
    try:
        run_all()
    finally:
        shutil.rmtree(os.path.join(STATE, "floor-tmp"), ignore_errors=True)


def run_all():
    load0 = open("/proc/loadavg").read().split()[:3]
    out = {"runs": RUNS, "think_s": THINK, "seconds": SECONDS, "warm": WARM,
           "cold": measure("cold", [], 0.5),
           # the pools of both languages fill before the first measurement
           "warm_pool": measure("warm", ["--warm", str(WARM)], 3.0, floor=True),
           "loadavg_start": load0, "loadavg_end": open("/proc/loadavg").read().split()[:3]}
    with open(os.path.join(OUT, "mcp_latency.json"), "w") as f:
        json.dump(out, f, indent=1)
    for kind in ("cold", "warm_pool"):
        for lang in CODE:
            lat = out[kind][lang]["latency"]
            print("bench/mcp_latency: %s %s: median %.1f ms, p95 %.1f ms%s" %
                  (kind, lang, lat["median_ms"], lat["p95_ms"],
                   "; floor median %.1f ms, p95 %.1f ms" % (lat["floor"]["median_ms"],
                                                            lat["floor"]["p95_ms"])
                   if "floor" in lat else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
