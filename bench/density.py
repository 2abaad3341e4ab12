#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Case 12 of `make bench`: density.  N (1,000) CLI sessions (`agentsbx
session create`, the python image) opened one after another, each used
once (`session run NAME -- true`, 4 at a time), all open at once, then all
closed; measured:

- the time to open each: the first 100 against the last 100 (a cost that
  grows with the sessions already open would show here);
- host memory per idle session: the proportional set size (Pss, from
  /proc/PID/smaps_rollup) of every process of ours (each session's server
  and its watchdog), and MemAvailable's drop over all of them (the kernel's
  part too: mount namespaces, the workspaces' tmpfs, the overlays; other
  users of this machine move it too); an idle session has no container
  (each run's is deleted with it), so none is charged;
- the CPU the idle sessions use: their processes' utime + stime over
  IDLE seconds (no thread or process of an idle session spins);
- nothing left afterwards: no session record, no process, no cgroup, no
  identity holder of theirs.

    OUT=dir AGENTSBX=./agentsbx IMAGE_ROOT=dir STATE=dir bench/density.py

STATE is the --root, on a tmpfs as /run is on a normal host (bench/run.sh
gives one).  Writes OUT/density.json, or OUT/not-run.txt."""

import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

OUT = os.environ.get("OUT", "build/bench/host/density")
AGENTSBX = os.environ.get("AGENTSBX", "./agentsbx")
IMAGE_ROOT = os.environ["IMAGE_ROOT"]
STATE = os.environ["STATE"]
N = int(os.environ.get("DENSITY_N", "1000"))
IDLE = float(os.environ.get("DENSITY_IDLE", "10"))
WORKERS = 4
IDENTITIES = "/run/agentsbx/.identities"


def agentsbx(*args, check=True):
    p = subprocess.run([AGENTSBX, "--root", STATE] + list(args), capture_output=True,
                       timeout=120)
    if check and p.returncode != 0:
        raise RuntimeError("agentsbx %s: rc %d: %s" % (" ".join(args), p.returncode,
                                                         p.stderr.decode()[-500:]))
    return p


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])  # KiB
    return 0


def ours():
    """Pids of our sessions' processes: the servers and their watchdogs
    (forks of `session create`, whose command line names our --root)."""
    pids = []
    mark = STATE.encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if mark in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


def pss_kib(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            p = f.read().rsplit(")", 1)[1].split()
        return int(p[11]) + int(p[12])
    except (OSError, IndexError):
        return 0


def start_time(pid):
    """The process's start time in clock ticks since boot (what an identity
    holder "pid:PID:START" names, so that a reused pid is not taken for it)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def holders_of(procs):
    """Identity holders that name one of procs ({pid: start}: a front
    door's workspace)."""
    found = []
    want = set("pid:%d:%d" % (p, t) for p, t in procs.items() if t is not None)
    if not os.path.isdir(IDENTITIES):
        return found
    for uid in os.listdir(IDENTITIES):
        d = os.path.join(IDENTITIES, uid)
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            try:
                with open(os.path.join(d, name)) as f:
                    if f.read().strip() in want:
                        found.append(uid)
            except OSError:
                pass
    return found


def cgroups_of(pids):
    left = []
    marks = tuple("sbx-%d-" % p for p in pids)
    for parent in [os.path.join("/sys/fs/cgroup", h, "agentsbx") for h in os.listdir("/sys/fs/cgroup")]:
        try:
            left += [n for n in os.listdir(parent) if n.startswith(marks)]
        except OSError:
            pass
    return left


def main():
    os.makedirs(OUT, exist_ok=True)
    names = ["dens-%04d" % i for i in range(N)]
    res = {"n": N, "loadavg_start": open("/proc/loadavg").read().split()[:3]}
    mem0, shmem0 = meminfo("MemAvailable"), meminfo("Shmem")
    opened = []
    t_all = time.monotonic()
    try:
        for name in names:
            t = time.monotonic()
            agentsbx("session", "create", "--image-root", IMAGE_ROOT, "--image", "python",
                     "--idle", "3600", name)
            opened.append(time.monotonic() - t)
        res["open_seconds"] = time.monotonic() - t_all
        first, last = opened[:100], opened[-100:]
        res["open_first100_ms"] = {"total": sum(first) * 1000,
                                   "median": statistics.median(first) * 1000}
        res["open_last100_ms"] = {"total": sum(last) * 1000,
                                  "median": statistics.median(last) * 1000}
        res["open_median_ms_per_100"] = [round(statistics.median(opened[i:i + 100]) * 1000, 2)
                                         for i in range(0, N, 100)]
        # each used once
        t = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
            for p in ex.map(lambda n: agentsbx("session", "run", n, "--", "true", check=False),
                            names):
                if p.returncode != 0:
                    raise RuntimeError("session run: " + p.stderr.decode()[-300:])
        res["used_once_seconds"] = time.monotonic() - t
        time.sleep(2)
        pids = ours()
        res["processes"] = len(pids)
        pss = sum(pss_kib(p) for p in pids)
        res["pss_kib_per_session"] = pss / N
        res["memavailable_drop_kib_per_session"] = (mem0 - meminfo("MemAvailable")) / N
        res["shmem_kib_per_session"] = (meminfo("Shmem") - shmem0) / N
        c0 = sum(cpu_ticks(p) for p in pids)
        time.sleep(IDLE)
        res["idle_cpu_ms"] = (sum(cpu_ticks(p) for p in pids) - c0) * 1000.0 / os.sysconf(
            "SC_CLK_TCK")
        res["idle_seconds"] = IDLE
        listed = agentsbx("session", "list").stdout.decode().splitlines()
        res["listed_alive"] = sum(1 for l in listed[1:] if " alive " in l)
    finally:
        servers = {p: start_time(p) for p in ours()}
        t = time.monotonic()
        batches = [names[i:i + 50] for i in range(0, len(names), 50)]
        with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
            list(ex.map(lambda b: agentsbx("session", "close", *b, check=False), batches))
        res["close_seconds"] = time.monotonic() - t
        deadline = time.monotonic() + 30
        while ours() and time.monotonic() < deadline:
            time.sleep(0.2)
        left = {}
        sess = os.path.join(STATE, ".sessions")
        if os.path.isdir(sess) and os.listdir(sess):
            left["session records"] = len(os.listdir(sess))
        if ours():
            left["processes"] = len(ours())
        cg = cgroups_of(servers)
        if cg:
            left["cgroups"] = cg[:5]
        h = holders_of(servers)
        if h:
            left["identity holders"] = len(h)
        res["left"] = left
        res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        with open(os.path.join(OUT, "density.json"), "w") as f:
            json.dump(res, f, indent=1)
    print("bench/density: %d sessions: opened in %.0f s (first 100: %.0f ms, last 100: %.0f ms), "
          "%.0f KiB Pss and %.0f KiB MemAvailable per idle session, %d processes, "
          "%.0f ms of CPU in %g s idle; left: %s" %
          (N, res["open_seconds"], res["open_first100_ms"]["total"],
           res["open_last100_ms"]["total"], res["pss_kib_per_session"],
           res["memavailable_drop_kib_per_session"], res["processes"], res["idle_cpu_ms"], IDLE,
           res["left"] or "nothing"), file=sys.stderr)


if __name__ == "__main__":
    main()
