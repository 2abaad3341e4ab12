# SPDX-License-Identifier: Apache-2.0
"""The floor oracle's run: mutated specs through `create`, the checker on
every accepted one.

    /usr/bin/python3 tests/floor/floor_fuzz.py run [--specs N] [--seed S]
        [--out DIR] [--runtime PATH]
    /usr/bin/python3 tests/floor/floor_fuzz.py replay FILE...

`make floor-fuzz` runs `run` (FLOOR_SPECS, FLOOR_SEED); the bounded slice
in `make test` is tests/floor/test_oracle_slice.py, which calls fuzz() and
replay() below in the pytest process.  Importing this module imports the
integration suite's conftest: this process becomes the child subreaper
with its reaper thread, as pytest does.

Every case the checker finds a violation in is written to --out as
<seed>-<index>.json (the case with its placeholders, the violations, the
runtime's stderr): copy it to tests/floor/regressions/ to keep it.
"""

import argparse
import collections
import json
import os
import signal
import sys
import tempfile
import time

FLOOR_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, FLOOR_DIR)

import floor_harness as fh  # noqa: E402
import floor_mutator as fm  # noqa: E402

ct = fh.ct
REPO = os.path.dirname(os.path.dirname(FLOOR_DIR))
REGRESSIONS = os.path.join(FLOOR_DIR, "regressions")


KNOWN = os.path.join(FLOOR_DIR, "known.json")


def load_known(path=KNOWN):
    try:
        with open(path) as f:
            return json.load(f)["known"]
    except (OSError, ValueError, KeyError):
        return []


def split_known(violations, known):
    """(unknown, known) violations: known ones match an entry of
    known.json (a runtime bug reported and not fixed yet)."""
    un, kn = [], []
    for x in violations:
        hit = any(k["kind"] == x["kind"] and fh.fc.glob_match(k.get("what", "*"), x["what"])
                  for k in known)
        (kn if hit else un).append(x)
    return un, kn


class Stats:
    def __init__(self):
        self.tried = self.accepted = self.started = self.violating = self.pending = 0
        self.known = 0
        self.known_kinds = collections.Counter()
        self.kinds = collections.Counter()
        self.pending_kinds = collections.Counter()
        self.by_policy = collections.Counter()
        self.accepted_by = collections.Counter()
        self.mutations = collections.Counter()
        self.files = []
        self.seconds = 0.0

    def line(self):
        def kinds(c):
            return (" " + json.dumps(dict(c))) if c else ""
        return ("specs tried %d, accepted %d (started %d), violations %d%s; known (reported, "
                "not fixed) %d%s; identity pending %d%s" % (
                    self.tried, self.accepted, self.started, self.violating, kinds(self.kinds),
                    self.known, kinds(self.known_kinds), self.pending,
                    kinds(self.pending_kinds)))


def record(stats, case, res, out_dir, known=()):
    res["violations"], res["known"] = split_known(res["violations"], known)
    if res["known"]:
        stats.known += 1
        for x in res["known"]:
            stats.known_kinds[x["kind"]] += 1
        if out_dir and stats.known <= 50:
            write_case(os.path.join(out_dir, "known"), case, res, stats.tried)
    stats.tried += 1
    stats.by_policy[case.get("policy")] += 1
    for m in case.get("mutations") or []:
        stats.mutations[m] += 1
    if res["accepted"]:
        stats.accepted += 1
        stats.accepted_by[case.get("policy")] += 1
    if res["started"]:
        stats.started += 1
    if res.get("pending"):
        stats.pending += 1
        for x in res["pending"]:
            stats.pending_kinds[x["kind"]] += 1
    if res["violations"]:
        stats.violating += 1
        for x in res["violations"]:
            stats.kinds[x["kind"]] += 1
        if out_dir:
            stats.files.append(write_case(out_dir, case, res, stats.tried))
    elif res.get("pending") and out_dir and stats.pending <= 20:
        write_case(os.path.join(out_dir, "pending"), case, res, stats.tried)


def write_case(out_dir, case, res, n):
    os.makedirs(out_dir, exist_ok=True)
    name = "%s-%s.json" % (case.get("seed", "case"), case.get("index", n))
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        json.dump({"case": case, "violations": res["violations"],
                   "known": res.get("known") or [],
                   "pending": res.get("pending") or [], "accepted": res["accepted"],
                   "rc": res["rc"], "stderr": res["stderr"]}, f, indent=1)
    return path


def fuzz(runner, seed, count, start=0, out_dir=None, log=None, deadline=None, known=None):
    stats = Stats()
    known = load_known() if known is None else known
    t0 = time.time()
    for i in range(start, start + count):
        if deadline and time.time() > deadline:
            break
        case = fm.case(seed, i)
        res = runner.run(case)
        record(stats, case, res, out_dir, known)
        if log and (res["violations"] or res.get("pending") or res.get("known") or
                    i % 100 == 0):
            log("[%s:%d] %s %s %s -> %s%s%s%s" % (
                seed, i, case["template"], case["policy"], ",".join(case["mutations"]),
                "accepted" if res["accepted"] else "refused: " + res["stderr"].strip()[-160:],
                "".join("\n    VIOLATION %s: %s" % (x["kind"], x["what"][:400])
                        for x in res["violations"]),
                "".join("\n    known %s: %s" % (x["kind"], x["what"][:200])
                        for x in res.get("known") or []),
                "".join("\n    pending (identity) %s: %s" % (x["kind"], x["what"][:200])
                        for x in res.get("pending") or [])))
        if log and i % 250 == 249:
            log("... %d done in %.0fs: %s" % (i + 1 - start, time.time() - t0, stats.line()))
    stats.seconds = time.time() - t0
    return stats


def replay(runner, paths, runtime=None):
    """[(path, data, result)] of every regression file replayed (with the
    identity checks on where the file says "identity")."""
    out = []
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        case = data.get("case", data)
        r = fh.TrialRunner(runner.o, runner.runtime, identity=True) if data.get("identity") \
            else runner
        out.append((p, data, r.run(case, runtime=runtime)))
    return out


def session(runtime=None, base=None):
    """HostObjects with a base rootfs of its own, for the CLI."""
    runtime = runtime or os.environ.get("AGENTSBX") or os.path.join(REPO, "agentsbx")
    ct.RUNTIME = runtime
    if not os.environ.get("TOOLS"):
        ct.TOOLS = os.path.join(REPO, "build", "tests", "tools")
    sd = tempfile.mkdtemp(prefix="agentsbx-floor-session-")
    os.chmod(sd, 0o755)
    base = base or ct.base_rootfs.__wrapped__(sd)
    return sd, fh.HostObjects(runtime, base).start()


ENGINE_FAKES = {
    "/var/lib/kubelet/pods/0f0f0f0f-1111-2222-3333-444444444444/volumes/"
    "kubernetes.io~secret/token/token": "%s\n",
    "/var/lib/docker/containers/" + "e" * 64 + "/config.v2.json":
    '{"Config":{"Env":["API_KEY=%s"]}}\n',
    "/var/lib/docker/volumes/v1/_data/file": "%s\n",
    "/run/containerd/io.containerd.runtime.v2.task/k8s.io/" + "d" * 64 + "/config.json":
    '{"process":{"env":["API_KEY=%s"]}}\n',
}


def engine_row(case_path, runtime):
    """Rows 5 and 9 need the real engine directories, which this host may
    not have and a test must not make: run in a private mount namespace
    (the caller's `unshare -m --propagation private`), with tmpfs over
    /run and /var/lib there only, and the engines' directories faked on
    them, each with a secret."""
    if fh.fc.ns_of("self", "mnt") == fh.fc.ns_of(os.getppid(), "mnt"):
        print("engine-row: not in a mount namespace of its own", file=sys.stderr)
        return 4
    for d in ("/run", "/var/lib"):
        rc, _, err = ct.run_cmd(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755",
                                 "floor-engines", d])
        if rc != 0:
            print("engine-row: mount %s: %s" % (d, err), file=sys.stderr)
            return 4
    secret = fh.SECRET + "engine"
    for path, text in ENGINE_FAKES.items():
        fh._write(path, text % secret)
    sd, objects = session()
    objects.secrets.append(secret)
    try:
        with open(case_path) as f:
            case = json.load(f)
        res = fh.TrialRunner(objects).run(case, runtime=runtime)
    finally:
        left = objects.close()
        ct.run_cmd(["rm", "-rf", sd])
    print(json.dumps({"accepted": res["accepted"], "violations": res["violations"],
                      "pending": res["pending"], "stderr": res["stderr"], "left": left}))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--specs", type=int, default=int(os.environ.get("FLOOR_SPECS") or 1000))
    r.add_argument("--seed", default=os.environ.get("FLOOR_SEED") or str(int(time.time())))
    r.add_argument("--start", type=int, default=0)
    r.add_argument("--out", default=os.environ.get("FLOOR_OUT") or
                   os.path.join(REPO, "build", "floor"))
    r.add_argument("--runtime")
    rp = sub.add_parser("replay")
    rp.add_argument("files", nargs="*")
    rp.add_argument("--runtime")
    er = sub.add_parser("engine-row", help="in a private mount namespace (unshare -m): "
                        "fake the real engine directories, run one case, print its result")
    er.add_argument("--case", required=True)
    er.add_argument("--runtime", required=True)
    a = ap.parse_args(argv)
    if a.cmd == "engine-row":
        return engine_row(a.case, a.runtime)
    if os.path.exists("/etc/agentsbx/policy.json"):
        print("floor: /etc/agentsbx/policy.json exists; the built-in policy would not be "
              "in force", file=sys.stderr)
        return 4
    def stop(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    signal.signal(signal.SIGTERM, stop)  # clean up as on ^C
    sd, objects = session(a.runtime)
    rc = 0
    try:
        runner = fh.TrialRunner(objects)
        if a.cmd == "run":
            print("floor-fuzz: seed %s, %d specs, runtime %s, violations to %s" % (
                a.seed, a.specs, objects.runtime, a.out), flush=True)
            st = fuzz(runner, a.seed, a.specs, a.start, a.out,
                      log=lambda s: print(s, flush=True))
            print("floor-fuzz: seed %s: %s in %.0fs" % (a.seed, st.line(), st.seconds))
            print("floor-fuzz: accepted by policy %s of %s" % (dict(st.accepted_by),
                                                                dict(st.by_policy)))
            print("floor-fuzz: mutations %s" % dict(st.mutations))
            for f in st.files:
                print("floor-fuzz: wrote %s" % f)
            rc = 1 if st.violating else 0
        else:
            files = a.files or sorted(os.path.join(REGRESSIONS, f) for f in
                                      os.listdir(REGRESSIONS) if f.endswith(".json"))
            for p, data, res in replay(runner, files):
                print("%s: %s, %d violation(s)%s%s" % (
                    p, "accepted" if res["accepted"] else "refused", len(res["violations"]),
                    " (known: %s)" % data["known"] if data.get("known") else "",
                    "".join("\n    %s: %s" % (x["kind"], x["what"][:400])
                            for x in res["violations"])))
                # a known one must still be seen; any other must hold
                rc |= 1 if bool(res["violations"]) != bool(data.get("known")) else 0
    finally:
        left = objects.close()
        ct.run_cmd(["rm", "-rf", sd])
        if left:
            print("floor: left behind: %s" % left, file=sys.stderr)
            rc = 2
    return rc


if __name__ == "__main__":
    sys.exit(main())
