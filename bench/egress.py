#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Case 11 of `make bench`: egress by name (issue 27) under load.

On the tests' fake internet (tests/lib/fake_internet.py: two network
namespaces of this run's own), with a policy that lists allowed.test:

  - latency: 50 sequential HTTP GETs of allowed.test through a container's
    proxy, against the same 50 made directly from the host-sim namespace
    (no container, no proxy), in the same run: the median of each, and
    the time the proxy adds per connection;
  - load: N containers (100) started at once, each opening C (20)
    connections at once: every one must be served; connections/s over the
    whole, and the proxies' memory (VmRSS of every proxy, summed).

Writes OUT/egress.md and OUT/egress.json.  Env: AGENTSBX, OUT,
EGRESS_CONTAINERS, EGRESS_CONNS.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
from fake_internet import ALLOWED, FakeInternet, egress_policy  # noqa: E402

RUNTIME = os.environ.get("AGENTSBX") or os.path.join(REPO, "build", "agentsbx")
OUT = os.environ.get("OUT") or os.path.join(REPO, "build", "bench", "host", "egress")
N = int(os.environ.get("EGRESS_CONTAINERS", "100"))
C = int(os.environ.get("EGRESS_CONNS", "20"))
BUSYBOX = "/bin/busybox"

SEQ = ('i=0; while [ $i -lt %d ]; do wget -qO- http://allowed.test/ >/dev/null || '
       'echo FAIL; i=$((i+1)); done; echo done')
LOAD = ('n=0; for i in $(seq %d); do (wget -qO- http://allowed.test/ >/dev/null && echo ok) & done; '
        'wait' % C)


def rootfs(tmp):
    """busybox in the bundle (the policy takes a rootfs the bundle holds)."""
    root = os.path.join(tmp, "rootfs")
    os.makedirs(os.path.join(root, "bin"))
    shutil.copy2(BUSYBOX, os.path.join(root, "bin", "busybox"))
    for a in ("sh", "wget", "seq", "date", "sleep"):
        os.symlink("busybox", os.path.join(root, "bin", a))
    for d in ("proc", "dev", "sys", "tmp"):
        os.makedirs(os.path.join(root, d))
    return root


def bundle(tmp, name, args):
    b = os.path.join(tmp, name)
    os.makedirs(b)
    subprocess.run([RUNTIME, "spec"], cwd=b, check=True)
    with open(os.path.join(b, "config.json")) as f:
        s = json.load(f)
    rootfs(b)
    s["root"]["path"] = "rootfs"
    s["process"]["terminal"] = False
    s["process"]["args"] = ["sh", "-c", args]
    with open(os.path.join(b, "config.json"), "w") as f:
        json.dump(s, f)
    return b


def proxies_rss(root):
    """(VmRSS, Pss) of every proxy, KiB: RSS counts the pages a proxy
    shares with the others (libraries, what the fork left shared), Pss its
    share of them."""
    total = pss = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            if root.encode() not in argv or b"create" not in argv:
                continue
            with open("/proc/%s/status" % pid) as f:
                total += int([l for l in f if l.startswith("VmRSS:")][0].split()[1])
            with open("/proc/%s/smaps_rollup" % pid) as f:
                pss += int([l for l in f if l.startswith("Pss:")][0].split()[1])
        except (OSError, IndexError):
            continue
    return total, pss


def main():
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="agentsbx-bench-egress-")
    inet = FakeInternet()
    state = os.path.join(tmp, "state")
    log = os.path.join(tmp, "audit.log")
    env = dict(os.environ, AGENTSBX_POLICY_LOG=log)
    pol = os.path.join(tmp, "policy.json")
    with open(pol, "w") as f:
        json.dump(egress_policy(["allowed.test"], log), f)
    rt = inet.argv([RUNTIME, "--root", state, "--policy", pol])
    res = {}
    try:
        # latency: through the proxy, and direct from the host-sim namespace
        # a container's run with 50 GETs against one with none: the
        # difference over 50 is one GET through the proxy (3 runs each,
        # the median)
        def run_seq(n, k):
            b = bundle(tmp, "seq%d-%d" % (n, k), SEQ % n)
            t0 = time.monotonic()
            r = subprocess.run(rt + ["run", "--bundle", b, "seq%d-%d" % (n, k)],
                               capture_output=True, text=True, env=env, timeout=300)
            if "done" not in r.stdout or "FAIL" in r.stdout:
                raise SystemExit("bench/egress.py: the latency run failed: %s %s"
                                 % (r.stdout[-500:], r.stderr[-500:]))
            return time.monotonic() - t0
        with50 = statistics.median(run_seq(50, k) for k in range(3))
        with0 = statistics.median(run_seq(0, k) for k in range(3))
        via = (with50 - with0) / 50 * 1000
        # direct: the same loop in a container under the policy off that
        # joins the host-sim namespace (no proxy, the address dialled)
        off = os.path.join(tmp, "off.json")
        with open(off, "w") as f:
            f.write('{"mode": "off"}')

        def run_direct(n, k):
            cid = "direct%d-%d" % (n, k)
            b = bundle(tmp, cid, (SEQ % n).replace("allowed.test", ALLOWED))
            with open(os.path.join(b, "config.json")) as f:
                sp = json.load(f)
            for ns in sp["linux"]["namespaces"]:
                if ns["type"] == "network":
                    ns["path"] = "/run/netns/" + inet.host_ns
            with open(os.path.join(b, "config.json"), "w") as f:
                json.dump(sp, f)
            t0 = time.monotonic()
            r = subprocess.run([RUNTIME, "--root", state, "--policy", off, "run", "--bundle", b,
                                cid], capture_output=True, text=True, env=env, timeout=300)
            if "done" not in r.stdout or "FAIL" in r.stdout:
                raise SystemExit("bench/egress.py: the direct run failed: %s %s"
                                 % (r.stdout[-500:], r.stderr[-500:]))
            return time.monotonic() - t0
        d50 = statistics.median(run_direct(50, k) for k in range(3))
        d0 = statistics.median(run_direct(0, k) for k in range(3))
        direct_total = (d50 - d0) / 50 * 1000
        res["latency_ms_via_proxy"] = round(via, 2)
        res["latency_ms_direct"] = round(direct_total, 2)
        res["added_ms_per_connection"] = round(via - direct_total, 2)
        # load: N containers, C connections each, at once
        b = bundle(tmp, "load", LOAD)
        ids = ["l%d" % i for i in range(N)]
        t0 = time.monotonic()
        for cid in ids:
            # the init keeps create's stdio: no pipe here, or we wait on it
            subprocess.run(rt + ["create", "--bundle", b, cid], check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        created = time.monotonic() - t0
        rss, pss = proxies_rss(state)
        t0 = time.monotonic()
        # start them all at once; what was served: the proxies' audit lines
        procs = []
        for cid in ids:
            procs.append(subprocess.Popen(rt + ["start", cid], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for p in procs:
            p.wait(120)
        # wait for every container to have run its connections
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            st = [json.loads(subprocess.run(rt + ["state", cid], capture_output=True,
                                            text=True).stdout or '{"status":"stopped"}')
                  ["status"] for cid in ids]
            if all(s == "stopped" for s in st):
                break
            time.sleep(0.2)
        wall = time.monotonic() - t0
        served = 0
        refused = {}
        with open(log) as f:
            for l in f:
                rec = json.loads(l)
                if rec.get("op") != "egress" or rec.get("container") not in ids:
                    continue
                if rec.get("action") == "allowed":
                    served += 1
                else:
                    refused[rec.get("to", "?")[:80]] = refused.get(rec.get("to", "?")[:80], 0) + 1
        res["refused"] = refused
        res.update({"containers": N, "connections_each": C, "connections": N * C,
                    "served": served, "wall_s": round(wall, 2),
                    "connections_per_s": round(N * C / wall, 1),
                    "create_s_per_container": round(created / N, 4),
                    "proxies_rss_kib": rss, "rss_kib_per_proxy": rss // max(N, 1),
                    "proxies_pss_kib": pss, "pss_kib_per_proxy": pss // max(N, 1)})
    finally:
        for cid in ["%s%d-%d" % (w, n, k) for w in ("seq", "direct") for n in (0, 50)
                    for k in range(3)] + \
                ["l%d" % i for i in range(N)]:
            subprocess.run(rt + ["delete", "--force", cid], capture_output=True, env=env)
        inet.close()
        shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(OUT, "egress.json"), "w") as f:
        json.dump(res, f, indent=2)
    with open(os.path.join(OUT, "egress.md"), "w") as f:
        f.write("| measure | value |\n|---|---|\n")
        for k, v in res.items():
            f.write("| %s | %s |\n" % (k, v))
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
