#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The benchmark report: bench/results/report.md and chart.png.

    bench/report.py RAW_DIR RESULTS_DIR

RAW_DIR is build/bench (host/ and vm/, as bench/suite.sh and
bench/profile.sh write them).  Standard library only; the chart is drawn
by gnuplot (Debian's gnuplot-nox).
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

RUNTIMES = ["agentsbx", "agentsbx-cold", "agentsbx-warm", "agentsbx-policy", "runc", "crun", "runsc",
            "floor"]
LABEL = {
    "agentsbx": "agentsbx",
    "agentsbx-cold": "agentsbx, cache cold",
    "agentsbx-warm": "agentsbx, cache warm",
    "agentsbx-policy": "agentsbx, default policy",
    "runc": "runc",
    "crun": "crun",
    "runsc": "runsc (gVisor)",
    "floor": "floor (unshare)",
}
ENVS = [("vm", "pure cgroup v2 guest (QEMU TCG, 1 vCPU)"),
        ("host", "this host (hybrid cgroups)")]


def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def kv(path):
    out = {}
    for line in read(path).splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


class Env:
    def __init__(self, raw, name):
        self.name = name
        self.dir = os.path.join(raw, name)
        self.present = os.path.isfile(os.path.join(self.dir, "env.txt"))
        self.info = kv(os.path.join(self.dir, "env.txt"))
        self.runtimes = read(os.path.join(self.dir, "runtimes.txt")).split()
        self.unavailable = [l for l in read(os.path.join(self.dir, "unavailable.txt")).splitlines() if l]
        self.durations = {}
        for line in read(os.path.join(self.dir, "durations.txt")).splitlines():
            p = line.split()
            if len(p) == 2:
                self.durations[p[0]] = float(p[1])
        self.leftovers = read(os.path.join(self.dir, "leftovers.txt")).strip()
        self.vmrun = read(os.path.join(self.dir, "vmrun.txt")).strip()
        self.skipped = ""  # why the whole environment did not run
        self.skipped_cases = [l for l in read(os.path.join(self.dir, "skipped.txt")).splitlines() if l]
        self.skipped_cases += ["profile: " + l for l in
                               read(os.path.join(self.dir, "profile", "skipped.txt")).splitlines() if l]
        if name == "vm" and not self.present:
            self.skipped = read(os.path.join(self.dir, "not-run.txt")).strip()

    def runs(self, case, rt):
        """(times of the successful runs, exit codes of the failed ones),
        every round merged; seconds."""
        t, bad = [], []
        for f in sorted(glob.glob(os.path.join(self.dir, f"{case}.{rt}.r*.json"))):
            try:
                with open(f) as fh:
                    for r in json.load(fh)["results"]:
                        codes = r.get("exit_codes") or [0] * len(r["times"])
                        for x, c in zip(r["times"], codes):
                            if c == 0:
                                t.append(x)
                            else:
                                bad.append(c)
            except (OSError, ValueError, KeyError):
                pass
        return t, bad

    def times(self, case, rt):
        return self.runs(case, rt)[0]

    def failed(self, case, rt):
        return read(os.path.join(self.dir, f"{case}.{rt}.failed")).strip()

    def stats(self, case, rt):
        t = self.times(case, rt)
        if not t:
            return None
        return {"min": min(t), "median": statistics.median(t), "max": max(t), "n": len(t)}


# ---- formatting ----------------------------------------------------------------

def fmt_t(s):
    if s is None:
        return "—"
    if s >= 10:
        return f"{s:.1f} s"
    if s >= 1:
        return f"{s:.2f} s"
    ms = s * 1000
    if ms >= 100:
        return f"{ms:.0f} ms"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def fmt_r(x):
    return "—" if x is None else f"{x:.2f}×"


def fmt_kib(k):
    if k is None:
        return "—"
    if k >= 1024:
        return f"{k / 1024:.1f} MiB"
    return f"{k:.0f} KiB"


def ratio(a, b):
    if not a or not b:
        return None
    return a["median"] / b["median"]


# ---- cases --------------------------------------------------------------------

CASES = [
    ("c1", "1", "`run` /bin/true, default spec (headline)", ["agentsbx", "agentsbx-policy", "runc", "crun",
                                                             "runsc"]),
    ("c1s", "1b", "the same, {gap1} ms idle before each run (as containers start in practice)",
     ["agentsbx", "runc", "crun", "floor"]),
    ("c2", "2", "create + start + wait + delete", ["agentsbx", "runc", "crun", "runsc"]),
    ("c12", "12", "`run` of `python3 -c 'print(1)'`: the Python image, read-only, as the root",
     ["agentsbx", "agentsbx-policy", "runc", "crun", "runsc"]),
    ("c3docker", "3a", "the same, Docker's default seccomp profile", ["agentsbx-cold", "agentsbx-warm", "runc", "crun"]),
    ("c3strict", "3b", "the same, strict agent profile", ["agentsbx-cold", "agentsbx-warm", "runc", "crun"]),
    ("c4", "4", "{n4} containers one after another (total)", ["agentsbx", "runc", "crun"]),
    ("c5", "5", "{n5} containers started at once (total)", ["agentsbx", "runc", "crun"]),
    ("c6", "6", "exec /bin/true into a running container", ["agentsbx", "runc", "crun"]),
    ("c1", "8", "floor: `unshare --fork --pid --mount --uts --ipc --net /bin/true`", ["floor"]),
]


def c5_failures(env, rt):
    lines = read(os.path.join(env.dir, f"c5.{rt}.fail")).split()
    if not lines:
        return None
    f = sum(int(x) for x in lines[0::2])
    n = sum(int(x) for x in lines[1::2])
    return f, n


def c7rss(env, rt):
    vals = [int(x) for x in re.findall(r"^\d+$", read(os.path.join(env.dir, f"c7rss.{rt}.txt")), re.M)]
    return (statistics.median(vals), min(vals), max(vals), len(vals)) if vals else None


def c7mem(env, rt):
    p = read(os.path.join(env.dir, f"c7mem.{rt}.txt")).split()
    if len(p) < 4 or not all(x.isdigit() for x in p[-3:]):
        return None
    if p[0] in ("<=", ">"):
        return {"text": f"{p[0]} {fmt_kib(int(p[1]) / 1024)}", "kib": int(p[1]) / 1024, "attempts": p[-1]}
    res, lo, hi, tries = p[0], int(p[1]), int(p[2]), p[3]
    return {"text": fmt_kib(int(res) / 1024), "kib": int(res) / 1024,
            "fails": fmt_kib(lo / 1024), "attempts": tries}


def base_rt(rt):
    return rt if rt in ("runc", "crun", "runsc", "floor") else "agentsbx"


def case_table(env):
    out = []
    out.append("| # | case | runtime | min | median | max | runs | × crun | × runc |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for case, num, title, rts in CASES:
        title = title.format(n4=env.info.get("n4", "100"), n5=env.info.get("n5", "50"),
                             gap1=env.info.get("gap1", "20"))
        if case in ("c1s", "c12") and not env.stats(case, "agentsbx"):
            continue
        crun = env.stats(case, "crun")
        runc = env.stats(case, "runc")
        first = True
        for rt in rts:
            s = env.stats(case, rt)
            rc_ = env.info.get("runc_cases", "all")
            if (s is None and rt == "runc" and rc_ != "all"
                    and re.sub(r"(docker|strict)$", "", case) not in rc_.split(",")):
                out.append(f"| {num if first else ''} | {title if first else ''} | {LABEL[rt]} | "
                           "not measured here (time; see the host's figure) | | | | | |")
                first = False
                continue
            if s is None and base_rt(rt) not in env.runtimes and rt != "floor":
                if rt == "agentsbx-policy" and not os.path.exists(os.path.join(env.dir, "policy-available.txt")):
                    continue
                if rt == "runsc" and "runsc" not in env.info:
                    continue  # not installed there (the guest)
                if base_rt(rt) != "agentsbx":
                    cells = "not run here (see below)"
                    out.append(f"| {num if first else ''} | {title if first else ''} | {LABEL[rt]} | {cells} | | | | | |")
                    first = False
                    continue
            extra = ""
            bad = env.runs(case, rt)[1]
            if bad:
                codes = sorted(set(bad))
                extra = f" ({len(bad)} run{'s' if len(bad) > 1 else ''} failed: exit {', '.join(map(str, codes))}; left out)"
            if case == "c5" and s:
                fc = c5_failures(env, rt)
                if fc:
                    extra += f" ({fc[0]} of {fc[1]} containers failed)"
            fail = env.failed(case, rt)
            if s is None:
                skipped = any(l.startswith(f"{case} {rt}") for l in env.skipped_cases)
                why = ("failed: " + fail.splitlines()[-1][:80]) if fail else (
                    "skipped: the guest's time budget ran out" if skipped else "no result")
                out.append(f"| {num if first else ''} | {title if first else ''} | {LABEL[rt]} | {why} | | | | | |")
            else:
                rc = ratio(s, crun) if rt != "crun" else 1.0
                rr = ratio(s, runc) if rt != "runc" else 1.0
                if case == "c1" and num == "8":
                    rc, rr = ratio(s, crun), ratio(s, runc)
                out.append(f"| {num if first else ''} | {title if first else ''} | {LABEL[rt]}{extra} | "
                           f"{fmt_t(s['min'])} | **{fmt_t(s['median'])}** | {fmt_t(s['max'])} | {s['n']} | "
                           f"{fmt_r(rc) if crun else '—'} | {fmt_r(rr) if runc else '—'} |")
            first = False
    # case 7
    for rt in ("agentsbx", "runc", "crun"):
        r = c7rss(env, rt)
        if r:
            out.append(f"| {'7a' if rt == 'agentsbx' else ''} | {'peak RSS of the runtime process during create (GNU time %M, KiB)' if rt == 'agentsbx' else ''} | "
                       f"{rt} | {fmt_kib(r[1])} | **{fmt_kib(r[0])}** | {fmt_kib(r[2])} | {r[3]} | "
                       f"{fmt_r(r[0] / c7rss(env, 'crun')[0]) if c7rss(env, 'crun') else '—'} | "
                       f"{fmt_r(r[0] / c7rss(env, 'runc')[0]) if c7rss(env, 'runc') else '—'} |")
    for rt in ("agentsbx", "runc", "crun"):
        m = c7mem(env, rt)
        if m:
            cm, rm = c7mem(env, "crun"), c7mem(env, "runc")
            note = f" (fails at {m['fails']}; {m['attempts']} attempts)" if "fails" in m else f" ({m['attempts']} attempts)"
            out.append(f"| {'7b' if rt == 'agentsbx' else ''} | {'smallest memory.limit at which /bin/true still runs' if rt == 'agentsbx' else ''} | "
                       f"{rt} | | **{m['text']}**{note} | | | "
                       f"{fmt_r(m['kib'] / cm['kib']) if cm else '—'} | {fmt_r(m['kib'] / rm['kib']) if rm else '—'} |")
    return out


# ---- chart --------------------------------------------------------------------

CHART_CASES = [("c1", "1 run"), ("c1s", "1b run, idle"), ("c2", "2 lifecycle"), ("c3docker", "3a docker"), ("c3strict", "3b strict"),
               ("c4", "4 sequential"), ("c5", "5 concurrent"), ("c6", "6 exec")]


def ref_of(env):
    """crun where it ran (the guest; the host in a private mount namespace
    without the cgroup2 mount), else runc."""
    return "crun" if env and env.stats("c1", "crun") else "runc"


def chart(envs, results):
    """Median / reference median per case: the guest against crun, the host
    against runc (crun cannot run there)."""
    panels = []
    for env in (envs.get("vm"), envs.get("host")):
        ref = ref_of(env)
        if not env or not env.present or ref not in env.runtimes:
            continue
        rows = []
        for case, label in CHART_CASES:
            refs = env.stats(case, ref)
            a = env.stats(case, "agentsbx") or env.stats(case, "agentsbx-warm")
            vals = []
            for rt in ("agentsbx", "runc", "crun"):
                s = env.stats(case, rt) if rt != "agentsbx" else a
                vals.append(ratio(s, refs) if s and refs else None)
            rows.append((label, vals))
        floor = ratio(env.stats("c1", "floor"), env.stats("c1", ref))
        panels.append((env, ref, rows, floor))
    if not panels:
        return False
    colors = {"agentsbx": "#1f77b4", "runc": "#ff7f0e", "crun": "#2ca02c"}
    gp = [
        'set terminal pngcairo size 1100,%d font "DejaVu Sans,10"' % (380 * len(panels)),
        'set output "%s"' % os.path.join(results, "chart.png"),
        "set multiplot layout %d,1" % len(panels),
        "set style data histogram", "set style histogram clustered gap 1",
        "set style fill solid 0.85 border -1", "set boxwidth 0.9",
        "set logscale y 2", "set yrange [0.0625:32]", "set ytics ('1/16' 0.0625, '1/8' 0.125, '1/4' 0.25, '1/2' 0.5, 1, 2, 4, 8, 16, 32)",
        "set grid ytics", "set key top left horizontal",
        "set ylabel 'median / reference median (log scale)'",
    ]
    dats = []
    for i, (env, ref, rows, floor) in enumerate(panels):
        present = [j for j, rt in enumerate(("agentsbx", "runc", "crun")) if any(v[j] for _, v in rows)]
        names = [("agentsbx", "runc", "crun")[j] for j in present]
        dat = os.path.join(results, f".chart{i}.dat")
        dats.append(dat)
        with open(dat, "w") as f:
            for label, vals in rows:
                f.write('"%s" %s\n' % (label, " ".join("%.4f" % vals[j] if vals[j] else "NaN" for j in present)))
        title = dict(ENVS)[env.name]
        ftxt = ("; red: the floor (unshare) %.2f" % floor) if floor else ""
        gp.append("set title \"%s: each runtime's median over %s's (lower is faster)%s\"" % (title, ref, ftxt))
        gp.append("unset arrow; unset label")
        gp.append("set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1.5 lc rgb '#444444'")
        if floor:
            gp.append("set arrow from -0.45, first %.4f to 0.45, first %.4f nohead lw 3 lc rgb '#d62728'" % (floor, floor))
        k = len(names)
        parts = []
        for j, rt in enumerate(names):
            parts.append("%s using %d%s title '%s' lc rgb '%s'" % (
                "'%s'" % dat if j == 0 else "''", j + 2, ":xtic(1)" if j == 0 else "", rt, colors[rt]))
        # value labels over agentsbx's bars (the first cluster member)
        off = -0.45 + 0.9 / (k + 0) * 0.5 if k > 1 else 0
        off = (-(k - 1) / 2.0) * (0.9 / (k + 1)) * 1.0
        parts.append("'' using ($0%+.3f):2:(sprintf('%%.2f',$2)) with labels offset 0,0.7 font ',8' notitle" % off)
        gp.append("plot " + ", ".join(parts))
    gp.append("unset multiplot")
    gpf = os.path.join(results, ".chart.gp")
    with open(gpf, "w") as f:
        f.write("\n".join(gp) + "\n")
    r = subprocess.run(["gnuplot", gpf], capture_output=True, text=True)
    os.unlink(gpf)
    for d in dats:
        os.unlink(d)
    if r.returncode != 0:
        sys.stderr.write("report: gnuplot failed: " + r.stderr)
        return False
    return True


# ---- profile ------------------------------------------------------------------

def ablation(pdir):
    """Rows in the order profile.sh lists them; every round's runs merged."""
    by = {}
    for f in glob.glob(os.path.join(pdir, "ablation.*.json")):
        m = re.search(r"ablation\.(\d+)(?:\.r\d+)?\.json$", f)
        if not m:
            continue
        with open(f) as fh:
            r = json.load(fh)["results"][0]
        e = by.setdefault(int(m.group(1)), [r["command"], []])
        e[1] += r["times"]
    rows = [(name, statistics.median(t), min(t), len(t)) for _, (name, t) in sorted(by.items()) if t]
    fails = [read(f).splitlines()[0] for f in glob.glob(os.path.join(pdir, "ablation.*.failed"))]
    return rows, fails


def cgplace(pdir):
    try:
        with open(os.path.join(pdir, "cgplace.json")) as f:
            res = {r["command"]: min(r["times"]) for r in json.load(f)["results"]}
    except (OSError, ValueError):
        return None
    return res, read(os.path.join(pdir, "cgplace.dirs")).split()


SYSCALL_RE = re.compile(r"^(\d+)\s+([\d.]+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()(.*?)(?:<([\d.]+)>)?\s*$")


def trace_phases(path, rootprefix):
    """Phases of one traced run, from strace -f -ttt -T -y."""
    lines = read(path).splitlines()
    if not lines:
        return None
    t0 = t_ns = t_exec = t_exit = None
    exec_pid = None
    unfinished = {}
    events = []
    freezer = 0
    t_end = None
    cats = {"migration": [0, 0.0], "cgroup": [0, 0.0], "mount": [0, 0.0], "state dir": [0, 0.0], "namespaces/clone": [0, 0.0],
            "loader (.so)": [0, 0.0]}
    total = 0
    for ln in lines:
        p = ln.split(None, 2)
        if len(p) < 3:
            continue
        try:
            t = float(p[1])
        except ValueError:
            continue
        pid, rest = p[0], p[2]
        t0 = t if t0 is None else t0
        t_end = t
        if rest.startswith("+++") or rest.startswith("---"):
            if exec_pid == pid and rest.startswith("+++") and t_exit is None:
                t_exit = t
            continue
        # a syscall interrupted by another process's: "<unfinished ...>"
        # now, "<... NAME resumed>" later; put the two halves together
        if rest.rstrip().endswith("<unfinished ...>"):
            unfinished[pid] = rest
            continue
        if rest.startswith("<... ") and pid in unfinished:
            rest = unfinished.pop(pid).replace("<unfinished ...>", "") + rest.split("resumed>", 1)[-1]
        total += 1
        events.append(t)
        m = re.match(r"(?:<\.\.\. )?(\w+)", rest)
        name = m.group(1) if m else ""
        d = re.search(r"<([\d.]+)>\s*$", rest)
        dur = float(d.group(1)) if d else 0.0
        if t_ns is None and name in ("clone", "clone3", "unshare") and "CLONE_NEW" in rest:
            t_ns = t
        if name == "exit_group" and pid == exec_pid and t_exit is None:
            t_exit = t
        if name == "execve" and '"/bin/true"' in rest and re.search(r"= 0 <", rest) and t_exec is None:
            t_exec, exec_pid = t, pid
        if name in ("wait4", "waitid", "epoll_wait", "epoll_pwait", "futex", "read", "recvmsg", "poll", "ppoll", "pselect6", "select", "nanosleep", "clock_nanosleep", "recvfrom") and dur > 0.0002:
            continue  # blocking: waiting, not work
        if name == "write" and "freezer.state>" in rest:
            freezer += 1
        if name == "write" and "cgroup.procs>" in rest:
            cats["migration"][0] += 1
            cats["migration"][1] += dur
        if "/sys/fs/cgroup" in rest:
            c = "cgroup"
        elif name in ("mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "mount_setattr", "fspick"):
            c = "mount"
        elif name in ("clone", "clone3", "unshare", "setns", "fork", "vfork") and "CLONE_NEW" in rest:
            c = "namespaces/clone"
        elif rootprefix and rootprefix in rest:
            c = "state dir"
        elif ".so" in rest and name in ("openat", "mmap", "read", "close", "newfstatat", "mprotect", "fstat"):
            c = "loader (.so)"
        else:
            continue
        cats[c][0] += 1
        cats[c][1] += dur
    if t0 is None:
        return None
    def count(a, b):
        if a is None or b is None:
            return None
        return sum(1 for t in events if a <= t < b)
    return {"t0": t0, "ns": t_ns, "exec": t_exec, "exit": t_exit, "end": t_end, "syscalls": total, "cats": cats,
            "n_prep": count(t0, t_ns), "n_setup": count(t_ns, t_exec), "n_run": count(t_exec, t_exit),
            "n_down": count(t_exit, t_end + 1), "freezer_writes": freezer}


def strace_c_top(path, n=8):
    rows = []
    for line in read(path).splitlines():
        p = line.split()
        if len(p) >= 5 and re.match(r"^[\d.]+$", p[0]) and p[-1] not in ("total", "syscall"):
            try:
                calls = int(p[3])
            except ValueError:
                continue
            errors = int(p[4]) if len(p) == 6 else 0
            rows.append((p[-1], calls, errors, float(p[1])))
        elif p and p[-1] == "total":
            pass
    rows.sort(key=lambda r: -r[1])
    total = sum(r[1] for r in rows)
    return rows[:n], total


def perf_lines(path, n):
    out = []
    for line in read(path).splitlines()[:n]:
        out.append(line.strip())
    return out


def profile_section(env):
    pdir = os.path.join(env.dir, "profile")
    if not os.path.isdir(pdir):
        return ["(no profile in this environment)"], {}
    o, facts = [], {}
    rows, fails = ablation(pdir)
    full = next((r for r in rows if r[0].startswith("full")), None)
    if rows:
        o.append("Ablation (agentsbx, policy off; one hyperfine each, in rotated rounds; Δ is the row's "
                 "figure minus the full run's. Load only ever adds time, so on a busy machine the "
                 "minimums' Δ is the better estimate):")
        o.append("")
        o.append("| variant | median | min | runs | Δ median | Δ min |")
        o.append("|---|---:|---:|---:|---:|---:|")
        facts["_min"] = {}
        for name, med, mn, n in rows:
            same = not full or name == full[0]
            dmed = "" if same else f"{(med - full[1]) * 1000:+.2f} ms"
            dmin = "" if same else f"{(mn - full[2]) * 1000:+.2f} ms"
            o.append(f"| {name} | {fmt_t(med)} | {fmt_t(mn)} | {n} | {dmed} | {dmin} |")
            facts[name] = med
            facts["_min"][name] = mn
        for f in fails:
            o.append(f"| {f} | failed | | | |")
        o.append("")
    cg = cgplace(pdir)
    if cg:
        res, dirs = cg
        if all(k in res for k in ("none", "migrate", "born")):
            per, gap = 10, 0.020
            mig = (res["migrate"] - res["none"]) / per
            born = (res["born"] - res["none"]) / per
            base = res["none"] / per - gap
            facts["cg_base"], facts["cg_mig"], facts["cg_born"] = base, mig, born
            facts["cg_dirs"] = len(dirs)
            v2 = dirs and dirs[0].rstrip("/") in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
            hier = (f"{len(dirs)} {'hierarchy' if len(dirs) == 1 else 'hierarchies'} ("
                    + ("cgroup2" if v2 and len(dirs) == 1 else
                       ("cgroup2 + " if v2 else "") + f"{len(dirs) - (1 if v2 else 0)} v1") + ")")
            o.append(f"Cgroup placement alone (bench/tools/cgplace, 10 per run, 20 ms apart as containers "
                     f"start in practice, {hier}; the fastest run of each, load only adds): "
                     f"mkdir + fork + exit + rmdir {base * 1e3:.3f} ms per container; "
                     f"migration (the parent writes the pid to cgroup.procs, as runc does) adds "
                     f"**{mig * 1e3:+.3f} ms**; agentsbx's way (born in the cgroup2 directory by "
                     f"clone3(CLONE_INTO_CGROUP), \"0\" into each v1 tasks file by the child itself) adds "
                     f"**{born * 1e3:+.3f} ms**.")
            o.append("")
    prefix = read(os.path.join(pdir, "strace.rootprefix")).strip()
    tr = []
    for rt in ("agentsbx", "runc", "crun"):
        ph = trace_phases(os.path.join(pdir, f"strace.{rt}.trace"), prefix)
        if ph:
            tr.append((rt, ph))
    if tr:
        o.append("One traced run each (`strace -f -ttt -T -y`). Tracing adds a fixed cost to every "
                 "syscall (large under TCG), so a traced phase's length mostly counts its syscalls: "
                 "each cell is syscalls (traced ms).")
        o.append("")
        o.append("| runtime | all | start → namespaces cloned | → /bin/true exec'd | /bin/true | exit → runtime done | cgroup fs (Σ -T) | of which cgroup.procs writes | mount API (Σ -T) | --root state (Σ -T) |")
        o.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for rt, ph in tr:
            def span(n, a, b):
                if a is None or b is None or n is None:
                    return "—"
                return f"{n} ({(b - a) * 1000:.1f} ms)"
            c = ph["cats"]
            o.append(f"| {rt} | {ph['syscalls']} | {span(ph['n_prep'], ph['t0'], ph['ns'])} | "
                     f"{span(ph['n_setup'], ph['ns'], ph['exec'])} | {span(ph['n_run'], ph['exec'], ph['exit'])} | "
                     f"{span(ph['n_down'], ph['exit'], ph['end'])} | "
                     f"{c['cgroup'][0]} ({c['cgroup'][1] * 1000:.1f} ms) | {c['migration'][0]} ({c['migration'][1] * 1000:.2f} ms) | "
                     f"{c['mount'][0]} ({c['mount'][1] * 1000:.1f} ms) | "
                     f"{c['state dir'][0]} ({c['state dir'][1] * 1000:.1f} ms) |")
            facts[f"trace_{rt}"] = ph
        o.append("")
    top, total = strace_c_top(os.path.join(pdir, "strace-c.agentsbx.txt"))
    if top:
        facts["strace_top"] = top
        facts["strace_total"] = total
        o.append(f"agentsbx's syscalls in one run (`strace -f -c`, all its processes): {total} in all; most frequent: "
                 + ", ".join(f"{n} {c}" + (f" ({e} failed)" if e else "") for n, c, e, _ in top) + ".")
        for rt in ("runc", "crun"):
            _, t = strace_c_top(os.path.join(pdir, f"strace-c.{rt}.txt"))
            if t:
                o.append(f"{rt}: {t} syscalls.")
                facts[f"strace_total_{rt}"] = t
        o.append("")
    dso = perf_lines(os.path.join(pdir, "perf-dso.txt"), 8)
    if dso:
        o.append("perf, 50 runs, agentsbx's own process samples by object (self time):")
        o.append("")
        o.append("```")
        o += dso
        o.append("```")
        kern = perf_lines(os.path.join(pdir, "perf-kernel.txt"), 16)
        o.append("")
        o.append("Kernel entry points and paths, inclusive (children) share of agentsbx's samples:")
        o.append("")
        o.append("```")
        o += kern
        o.append("```")
        o.append("")
        for line in dso:
            p = line.split()
            if len(p) >= 2 and p[0].endswith("%"):
                facts["dso_" + p[-1]] = float(p[0].rstrip("%"))
        for line in kern:
            p = line.split()
            if len(p) >= 4 and p[0].endswith("%"):
                facts["k_" + p[-1]] = float(p[0].rstrip("%"))
    return o, facts


# ---- the report -----------------------------------------------------------------

def main():
    raw, results = sys.argv[1], sys.argv[2]
    os.makedirs(results, exist_ok=True)
    envs = {name: Env(raw, name) for name, _ in ENVS}
    have_chart = chart(envs, results)
    vm, host = envs["vm"], envs["host"]
    o = []
    o.append("# agentsbx benchmarks: agentsbx, runc and crun")
    o.append("")
    o.append("Written by `make bench` (bench/run.sh; see [bench/README.md](../README.md)). "
             "Every runtime runs the same bundles in the same run; absolute times are noise "
             "on these machines, **the ratios within one run are the figures**. "
             "Runtimes are measured one hyperfine invocation at a time, in rounds with the "
             "order rotated, so that a change of load falls on all of them.")
    src = kv(os.path.join(raw, "source.txt"))
    if src:
        dirty = int(src.get("uncommitted", "0") or 0)
        o.append("")
        o.append(f"agentsbx built from commit {src.get('commit', '?')}"
                 + (f" with {dirty} uncommitted source file{'s' if dirty != 1 else ''} changed" if dirty else "")
                 + ".")
    o.append("")
    # headline
    o.append("## Headline: case 1, `run` of /bin/true (default spec)")
    o.append("")
    heads = []
    for env in (vm, host):
        if not env.present:
            continue
        ref = ref_of(env)
        a, r, f = env.stats("c1", "agentsbx"), env.stats("c1", ref), env.stats("c1", "floor")
        ap = env.stats("c1", "agentsbx-policy")
        if a and r:
            line = (f"- **{dict(ENVS)[env.name]}**: agentsbx {fmt_t(a['median'])} = "
                    f"**{ratio(a, r):.2f}× {ref}** ({fmt_t(r['median'])}; the minimums' ratio, "
                    f"less sensitive to load: {a['min'] / r['min']:.2f}×)")
            if f:
                line += f", **{ratio(a, f):.2f}× the floor** ({fmt_t(f['median'])})"
            if ref == "crun":
                rc = env.stats("c1", "runc")
                if rc:
                    line += f"; runc {ratio(rc, r):.2f}× crun"
            if ap:
                line += f". With its default sandbox policy on: {fmt_t(ap['median'])}, {ratio(ap, r):.2f}× {ref}"
            a1, r1, f1 = env.stats("c1s", "agentsbx"), env.stats("c1s", ref), env.stats("c1s", "floor")
            if a1 and r1 and f1:
                line += (f". Case 1b, {env.info.get('gap1', '20')} ms idle before each run: agentsbx "
                         f"{fmt_t(a1['median'])} = {ratio(a1, r1):.2f}× {ref} ({fmt_t(r1['median'])}), "
                         f"{ratio(a1, f1):.2f}× the floor ({fmt_t(f1['median'])})")
            heads.append(line + ".")
    o += heads or ["- no results"]
    o.append("")
    verdicts = []
    for env, where in ((vm, "in the guest"), (host, "on this host")):
        a, c, f = env.stats("c1", "agentsbx"), env.stats("c1", "crun"), env.stats("c1", "floor")
        if a and c and f:
            ok1, ok2 = ratio(a, c) <= 0.7, ratio(a, f) <= 2.0
            verdicts.append(f"{where}: {ratio(a, c):.2f}× crun ({'met' if ok1 else 'not met'}), "
                            f"{ratio(a, f):.2f}× the floor ({'met' if ok2 else 'not met'})")
    if verdicts:
        o.append("Target (issue): agentsbx's case-1 median at or below 0.7× crun's and within 2× the floor. "
                 + "; ".join(verdicts) + ".")
    elif not vm.present:
        o.append("Target: not assessed (the guest did not run: "
                 + (vm.skipped or vm.vmrun or "see bench/run.sh output") + ").")
    o.append("")
    o.append("agentsbx is measured with its sandbox policy off (`--policy` with `{\"mode\": \"off\"}`), "
             "so that it does the same work as runc and crun; the `default policy` row shows agentsbx as shipped "
             "(memory/pids/cpu limits, capabilities dropped, the strict agent seccomp profile stacked, ...).")
    o.append("")
    if have_chart:
        o.append("![each runtime's median over crun's (runc's where crun did not run)](chart.png)")
        o.append("")
    # tables
    for name, title in ENVS:
        env = envs[name]
        o.append(f"## {title}")
        o.append("")
        if not env.present:
            o.append("Not run: " + (env.skipped or env.vmrun or "no results (BENCH_VM=0 or BENCH_HOST=0?)") + ".")
            o.append("")
            continue
        i = env.info
        o.append(f"Kernel {i.get('kernel', '?')}, {i.get('cpus', '?')} CPU ({i.get('cpu', '?')}), "
                 f"cgroups {i.get('cgroups', '?')}. {i.get('agentsbx', '').strip()}; {i.get('runc', '')}; "
                 f"{i.get('crun', '')}; " + (f"{i['runsc']}; " if i.get("runsc") else "")
                 + f"{i.get('hyperfine', '')}. Load average at start/end: "
                 f"{i.get('loadavg_start', '?')} / {i.get('loadavg_end', '?')}.")
        if i.get("mountns"):
            o.append("")
            o.append(f"**All runtimes (and the floor) ran in one private mount namespace**: {i['mountns']}")
        o.append("")
        o += case_table(env)
        o.append("")
        for u in env.unavailable:
            rt, _, why = u.partition(": ")
            o.append(f"- **{rt} does not run here**: `{why.strip()}`"
                     + (" — Debian's crun 1.8.1 refuses a hybrid host as soon as the cgroup2 "
                        "hierarchy holds a controller (here hugetlb), even with "
                        "`--cgroup-manager=disabled`; it is measured in the guest." if rt == "crun" else ""))
        if env.vmrun and not env.vmrun.endswith(" 0"):
            o.append(f"- guest: {env.vmrun} (results written before the end are kept)")
        d = env.durations
        if d:
            o.append(f"- time per case (s): " + ", ".join(f"{k} {v:.0f}" for k, v in d.items() if k != "total")
                     + f"; total {d.get('total', 0):.0f} s.")
        if env.skipped_cases:
            o.append("- left out when the time budget ran out: " + "; ".join(env.skipped_cases) + ".")
        o.append(f"- left behind after the run (state, cgroups, mounts): {env.leftovers or '?'}.")
        o.append("")
    o += sandbox_section(os.path.join(raw, "host", "sandbox"))
    o += mcp_http_section(os.path.join(raw, "host", "mcp_http"))
    o += egress_section(os.path.join(raw, "host", "egress"))
    o += density_section(os.path.join(raw, "host", "density"))
    # profile
    o.append("## Where agentsbx's case-1 time goes")
    o.append("")
    facts = {}
    for name, title in ENVS:
        env = envs[name]
        if not env.present:
            continue
        o.append(f"### {title}")
        o.append("")
        sec, facts[name] = profile_section(env)
        o += sec
    o += suggestions(envs, facts)
    o.append("## Method")
    o.append("")
    o.append(METHOD)
    with open(os.path.join(results, "report.md"), "w") as f:
        f.write("\n".join(o) + "\n")
    print(f"report: {os.path.join(results, 'report.md')}" + (", chart.png" if have_chart else " (no chart)"))


SBX_ROWS = [  # (name in bench/sandbox.sh, label)
    ("bare", "the interpreter alone: `chroot IMAGE python3 -c 'print(1)'` (sh: `sh -c 'echo 1'`)"),
    ("sandbox", "`agentsbx sandbox --image python -- ...`, one call, default policy"),
    ("mcp-cold", "`agentsbx mcp`, run_code, cold (a container made for the call)"),
    ("mcp-warm", "`agentsbx mcp --warm {warm}`, run_code, warm (the interpreter started before)"),
    ("mcp-floor", "floor of a warm call: the same interpreter pre-started in a chroot, no container, no MCP"),
    ("session", "`agentsbx session run NAME -- ...` in an open CLI session"),
    ("docker-runc", "`docker run --rm --runtime runc --network none IMAGE ...`"),
    ("docker-agentsbx", "the same, `--runtime agentsbx` (default policy)"),
    ("docker-runsc", "the same, `--runtime runsc` (gVisor)"),
    ("runsc", "`runsc run` of a bundle whose root is the image (gVisor, OCI level)"),
]


def p95(xs):
    xs = sorted(xs)
    return xs[max(0, int(round(0.95 * len(xs))) - 1)] if xs else None


def sandbox_rows(env, mcp):
    """{(name, lang): {"median", "p95", "n"}} in seconds."""
    rows = {}
    for lang, pre in (("python", "py"), ("sh", "sh")):
        for name, _ in SBX_ROWS:
            t = env.times("sandbox", f"{pre}-{name}")
            if t:
                rows[(name, lang)] = {"median": statistics.median(t), "p95": p95(t), "n": len(t)}
        for kind, name in (("cold", "mcp-cold"), ("warm_pool", "mcp-warm")):
            lat = mcp.get(kind, {}).get(lang, {}).get("latency")
            if lat:
                rows[(name, lang)] = {"median": lat["median_ms"] / 1000, "p95": lat["p95_ms"] / 1000,
                                      "n": lat["runs"]}
                if "floor" in lat:
                    f = lat["floor"]
                    rows[("mcp-floor", lang)] = {"median": f["median_ms"] / 1000,
                                                 "p95": f["p95_ms"] / 1000, "n": f["runs"]}
    return rows


def sandbox_section(d):
    """Case 9 (bench/sandbox.sh, bench/mcp_latency.py): print(1) in Python
    and `echo 1` in sh, end to end, every way, in one run; this host only."""
    o = ["## 9. `print(1)` end to end, every way: the interpreter, agentsbx (one call, MCP cold and "
         "warm, a session), Docker with runc, agentsbx and runsc, runsc", ""]
    notrun = read(os.path.join(d, "not-run.txt")).strip()
    info = kv(os.path.join(d, "env.txt"))
    if notrun or not info:
        o += ["Not run: " + (notrun or "no results (BENCH_SANDBOX=0, or bench/sandbox.sh not run)") + ".", ""]
        return o
    env = Env(os.path.dirname(d), os.path.basename(d))
    try:
        with open(os.path.join(d, "mcp_latency.json")) as f:
            mcp = json.load(f)
    except (OSError, ValueError):
        mcp = {}
    rows = sandbox_rows(env, mcp)
    rk = kv_space_eq(info.get("rounds", ""))
    o.append("This host, one rootfs for all (" + info.get("image", "?") + ": Debian bookworm minbase + "
             "python3, tests/sandbox's cached image; `docker import`ed into a private dockerd "
             + info.get("docker", "") + "; " + info.get("runsc", "runsc not installed") + "). Process start "
             "to exit as a caller that shells out sees it (hyperfine: " + rk["rounds"] + " rounds of "
             + rk["runs"] + " runs per command, " + rk["warmup"] + " of warm-up per round, the order "
             "rotated each round); the MCP rows request written to reply read, over stdio (bench/"
             f"mcp_latency.py: {mcp.get('runs', '?')} calls {mcp.get('think_s', '?')} s apart, an agent's "
             "think time in which the warm pool refills). agentsbx's state roots on a tmpfs, as /run is "
             "on a normal host. Load average: " + info.get("loadavg_start", "?") + " at the start, "
             + info.get("loadavg_end", "?") + " at the end (2 CPUs, shared with other work: the ratios "
             "within the run are the figures).")
    o.append("")
    o.append("| way | Python median | p95 | × bare | sh median | p95 | × bare |")
    o.append("|---|---:|---:|---:|---:|---:|---:|")
    bare = {l: rows.get(("bare", l)) for l in ("python", "sh")}
    for name, label in SBX_ROWS:
        cells = []
        for lang in ("python", "sh"):
            r = rows.get((name, lang))
            if not r:
                cells += ["—", "", ""]
                continue
            x = r["median"] / bare[lang]["median"] if bare[lang] else None
            cells += [f"**{fmt_t(r['median'])}**", fmt_t(r["p95"]), fmt_r(x)]
        if all(c in ("—", "") for c in cells):
            continue
        o.append(f"| {label.format(warm=mcp.get('warm', '?'))} | " + " | ".join(cells) + " |")
    o.append("")
    # throughput
    if mcp:
        o.append("MCP `run_code` throughput, runs/s: callers sending their next call as soon as their "
                 f"reply is in, for {mcp.get('seconds', '?')} s each, on one stdio connection "
                 "(`--max-concurrent 16`; the warm pool of "
                 f"{mcp.get('warm', '?')} per language drains and refills as it can):")
        o.append("")
        o.append("| server | language | 1 caller | 4 callers | 16 callers |")
        o.append("|---|---|---:|---:|---:|")
        for kind, label in (("cold", "cold"), ("warm_pool", f"`--warm {mcp.get('warm', '?')}`")):
            for lang in ("python", "sh"):
                r = mcp.get(kind, {}).get(lang, {})
                cells = []
                for c in (1, 4, 16):
                    x = r.get(f"callers_{c}")
                    cells.append(f"{x['runs_per_s']:.1f}" + (" (failures)" if x.get("failed") else "")
                                 if x else "—")
                o.append(f"| {label} | {lang} | " + " | ".join(cells) + " |")
        o.append("")
    # the targets
    w, f_, sb, b = (rows.get(("mcp-warm", "python")), rows.get(("mcp-floor", "python")),
                    rows.get(("sandbox", "python")), bare["python"])
    if w:
        o.append(f"- **Warm `run_code` print(1): median {fmt_t(w['median'])}, p95 {fmt_t(w['p95'])}** "
                 f"(target: ≤ 5 ms and ≤ 10 ms: {'met' if w['median'] <= 0.005 else 'not met'}, "
                 f"{'met' if w['p95'] <= 0.010 else 'not met'})"
                 + (f"; the floor of the same calls, the interpreter pre-started without container or "
                    f"MCP, interleaved with them: median {fmt_t(f_['median'])}, p95 {fmt_t(f_['p95'])}: "
                    f"what agentsbx adds is {fmt_t(max(0.0, w['median'] - f_['median']))} at the median"
                    if f_ else "") + ".")
    if sb and b:
        o.append(f"- **One-call `agentsbx sandbox`: {fmt_t(sb['median'])} = {sb['median'] / b['median']:.2f}× "
                 f"the bare interpreter** ({fmt_t(b['median'])}; target ≤ 1.25×: "
                 f"{'met' if sb['median'] <= 1.25 * b['median'] else 'not met'}).")
    for u in read(os.path.join(d, "unavailable.txt")).splitlines():
        if u.strip():
            n, _, why = u.partition(": ")
            o.append(f"- `{n}` did not run here: {why.strip()[:300]}")
    if read(os.path.join(d, "mcp.failed")).strip():
        o.append("- MCP rows: " + read(os.path.join(d, "mcp.failed")).strip())
    left = read(os.path.join(d, "leftovers.txt")).strip()
    o.append(f"- left behind after the run (dockerd's processes, mounts, cgroups, state, sessions): "
             f"{left.replace(chr(10), '; ') if left else 'nothing'}.")
    notes = read(os.path.join(d, "notes.txt")).strip()
    if notes:
        o.append("- " + notes.replace("\n", "; ") + ".")
    o.append("")
    o += python_latency(os.path.join(os.path.dirname(d), "python"))
    return o


def density_section(d):
    """Case 12b (bench/density.py): 1,000 CLI sessions open at once."""
    o = ["## 13. Density: 1,000 CLI sessions open at once", ""]
    try:
        with open(os.path.join(d, "density.json")) as f:
            r = json.load(f)
    except (OSError, ValueError):
        why = read(os.path.join(d, "not-run.txt")).strip() or "BENCH_DENSITY=0, or bench/density.py not run"
        return o + ["Not run: " + why + ".", ""]
    n = r.get("n", "?")
    f100, l100 = r.get("open_first100_ms", {}), r.get("open_last100_ms", {})
    o.append(f"This host: {n} `agentsbx session create --image python` one after another (the sessions' "
             f"--root on a tmpfs), each used once (`session run NAME -- true`, 4 at a time), then all "
             f"closed (`session close`, 50 names a call, 4 at a time). Load average "
             f"{' '.join(r.get('loadavg_start', []))} at the start, {' '.join(r.get('loadavg_end', []))} "
             "at the end.")
    o.append("")
    o.append("| measure | value |")
    o.append("|---|---:|")
    if f100 and l100:
        o.append(f"| opening the first 100 (total; median of one) | {f100['total'] / 1000:.2f} s; "
                 f"{f100['median']:.1f} ms |")
        o.append(f"| opening the last 100 (total; median of one) | **{l100['total'] / 1000:.2f} s; "
                 f"{l100['median']:.1f} ms** ({l100['total'] / f100['total']:.2f}× the first 100) |")
    if "open_seconds" in r:
        o.append(f"| opening all {n} | {r['open_seconds']:.1f} s |")
    if "used_once_seconds" in r:
        o.append(f"| one run in each (4 at a time) | {r['used_once_seconds']:.1f} s |")
    if "pss_kib_per_session" in r:
        o.append(f"| **host memory per idle session**: Pss of its processes (server and watchdog: "
                 f"{r.get('processes', '?')} processes for {n}) | **{fmt_kib(r['pss_kib_per_session'])}** |")
        o.append(f"| MemAvailable's drop per session (the kernel's part too: mount namespace, workspace "
                 f"tmpfs, overlay; other work on the machine moves it too) | "
                 f"{fmt_kib(r['memavailable_drop_kib_per_session'])} (of which Shmem "
                 f"{fmt_kib(r.get('shmem_kib_per_session', 0))}) |")
        o.append("| its container's charged memory while idle | none: a session has a container only "
                 "during a run |")
    if "idle_cpu_ms" in r:
        o.append(f"| CPU used by all {r.get('processes', '?')} processes in {r.get('idle_seconds', '?')} s "
                 f"idle | {r['idle_cpu_ms']:.0f} ms |")
    if "listed_alive" in r:
        o.append(f"| `session list`: alive | {r['listed_alive']} |")
    if "close_seconds" in r:
        o.append(f"| closing all | {r['close_seconds']:.1f} s |")
    left = r.get("left")
    o.append(f"| left behind (session records, processes, cgroups, identity holders) | "
             f"{'nothing' if not left else json.dumps(left)} |")
    o.append("")
    return o


def python_latency(d):
    """Case 9 from Python (tests/python/test_tables.py -k latency): the
    tutorial's measure, ten print(1) after a warm-up, for its tiers."""
    o = ["### 9b. The same from Python: the tutorial's tiers (tests/python)", ""]
    table = read(os.path.join(d, "latency.md")).strip()
    if not table:
        why = read(os.path.join(d, "not-run.txt")).strip() or "BENCH_PYTHON=0, or not run"
        return o + ["Not run: " + why + ".", ""]
    return o + [table, "", "Ten runs after a warm-up each (the median and the slowest), one "
                "after the other; `docker run` with the hardened flags of the seed's runner "
                "(docs/python.md).", ""]


def mcp_http_section(d):
    """Case 10 (bench/mcp_http.py): run_code print(1) over Streamable HTTP
    against stdio, and runs/s of 20 HTTP clients."""
    o = ["## 10. MCP over Streamable HTTP against stdio: `run_code` print(1)", ""]
    notrun = read(os.path.join(d, "not-run.txt")).strip()
    m = kv_space(os.path.join(d, "mcp_http.txt"))
    if notrun or not m:
        o += ["Not run: " + (notrun or "no results (BENCH_MCP_HTTP=0, or bench/mcp_http.py not run)")
              + ".", ""]
        return o
    o.append("This host, `agentsbx mcp --image python --warm 1` (tests/sandbox's cached image), one "
             "server per transport started in the same run, their calls interleaved; request "
             f"written to reply read, {m.get('runs', '?')} calls each after 3 of warm-up "
             f"(load average {m.get('load_average', '?')} at the end).")
    o.append("")
    o.append("| transport | median | p95 |")
    o.append("|---|---:|---:|")
    for t, label in (("stdio", "stdio: one JSON line each way"),
                     ("http", "Streamable HTTP: one POST, its event stream")):
        o.append(f"| {label} | **{m.get(t + '_print1_median_ms', '?')} ms** | "
                 f"{m.get(t + '_print1_p95_ms', '?')} ms |")
    o.append("")
    o.append(f"- **{m.get('http_runs_per_s', '?')} runs/s** over HTTP with "
             f"{m.get('http_clients', '?')} clients calling back to back for "
             f"{m.get('http_seconds', '?')} s (`--max-concurrent 20`): "
             f"{m.get('http_runs_done', '?')} runs, {m.get('http_runs_failed', '?')} failed.")
    o.append("")
    return o


def egress_section(d):
    """Case 11 (bench/egress.py): egress by name under load."""
    o = ["## 11. Egress by name: the proxy's added latency, and 100 containers x 20 connections", ""]
    notrun = read(os.path.join(d, "not-run.txt")).strip()
    try:
        with open(os.path.join(d, "egress.json")) as f:
            m = json.load(f)
    except (OSError, ValueError):
        m = {}
    if notrun or not m:
        o += ["Not run: " + (notrun or "no results (BENCH_EGRESS=0, or bench/egress.py not run)")
              + ".", ""]
        return o
    o.append("This host, on the tests' fake internet (two network namespaces of the run's own; "
             "the runtime in one of them), a policy listing allowed.test.")
    o.append("")
    o.append("| measure | value |")
    o.append("|---|---:|")
    o.append(f"| one HTTP GET through the proxy (a container's busybox wget, median of 3x50) | "
             f"{m['latency_ms_via_proxy']} ms |")
    o.append(f"| the same GET direct (a container joined to the host side, policy off) | "
             f"{m['latency_ms_direct']} ms |")
    o.append(f"| **added by the proxy per connection** | **{m['added_ms_per_connection']} ms** |")
    o.append(f"| {m['containers']} containers x {m['connections_each']} connections at once: served | "
             f"**{m['served']} of {m['connections']}** |")
    o.append(f"| connections/s over the whole (start of the first to the exit of the last) | "
             f"{m['connections_per_s']} |")
    o.append(f"| memory of the proxies: Pss per proxy (RSS per proxy) | "
             f"{m['pss_kib_per_proxy']} KiB ({m['rss_kib_per_proxy']} KiB) |")
    o.append("")
    return o


def kv_space_eq(line):
    d = {"rounds": "?", "runs": "?", "warmup": "?"}
    d.update(p.split("=", 1) for p in ("rounds=" + line).split() if "=" in p)
    return d


def kv_space(path):
    out = {}
    for line in read(path).splitlines():
        k, _, v = line.partition(" ")
        if k.endswith(":"):
            k = k[:-1]
        out[k] = v.strip()
    return out


def suggestions(envs, facts):
    """What the measurements say, in numbers, and what to change."""
    o = ["### Reading, and what to change", ""]
    F = {}
    for name, title in ENVS:
        env, fa = envs[name], facts.get(name, {})
        full = fa.get("full: default spec")
        if not env.present or not full:
            continue
        F[name] = fa
        fa = dict(fa, **fa.get("_min", {}))  # minimums: load only ever adds time
        full = fa.get("full: default spec")
        parts = []
        start = fa.get("process start only (agentsbx --version)")
        static = fa.get("process start, a static binary (benchdrv nop)")
        if start:
            parts.append(f"starting the process (exec, ld.so, libc; `--version`) {start * 1e3:.2f} ms = {start / full:.0%}"
                         + (f" (a static binary: {static * 1e3:.2f} ms)" if static else ""))
        def part(label, without):
            if not without:
                return
            d = full - without
            if d < 0.03 * full:  # a part cannot cost less than nothing: noise
                parts.append(f"{label}: not resolved (within the noise)")
            else:
                parts.append(f"{label} {d * 1e3:.2f} ms = {d / full:.0%}")
        part("the network namespace", fa.get("no network namespace"))
        part("/sys + /sys/fs/cgroup", fa.get("no /sys, /sys/fs/cgroup mounts"))
        part("masked/read-only paths", fa.get("no masked/read-only paths"))
        fl, fln = fa.get("floor: unshare (5 namespaces)"), fa.get("floor: unshare, no network namespace")
        if fl:
            parts.append(f"the floor {fl * 1e3:.2f} ms" + (f" ({(fl - fln) * 1e3:+.2f} ms of it the network namespace)" if fln else ""))
        o.append(f"- **{title}** (minimums): the ablation's full run {full * 1e3:.2f} ms; " + "; ".join(parts) + ".")
    o.append("")
    o.append("A delta of a few percent of the run is within the noise, on the host especially "
             "(other work ran on it during the run).")
    o.append("")
    o.append("Suggestions, by expected gain (each with the measurement that supports it):")
    o.append("")

    def tr(env, rt):
        return facts.get(env, {}).get(f"trace_{rt}")

    n = 1
    # 1. dynamic loading
    bits = []
    for env in ("vm", "host"):
        fa = F.get(env, {})
        mins = F.get(env, {}).get("_min", {})
        start, static, full = (mins.get("process start only (agentsbx --version)"),
                               mins.get("process start, a static binary (benchdrv nop)"), mins.get("full: default spec"))
        if start and static and full:
            bits.append(f"{'guest' if env == 'vm' else 'host'}: {(start - static) * 1e3:.2f} ms of {full * 1e3:.1f} ms")
    ld = F.get("host", {}).get("dso_ld-linux-x86-64.so.2")
    pf = F.get("host", {}).get("k_asm_exc_page_fault")
    libs = [l.split(".so")[0] for l in envs["host"].info.get("agentsbx_libs", "").split()]
    libs_txt = (f"agentsbx links {len(libs)} shared libraries ({', '.join(libs)}); libnftables, "
                "libsystemd and libmount (with blkid, selinux, pcre2, gcrypt, ...) are opened (dlopen) "
                "only by the calls that need them: egress rules, --systemd-cgroup, a mount option "
                "outside the built-in table. ") if libs else ""
    o.append(f"{n}. **Start-up: fewer shared objects.** " + libs_txt
             + (f"ld.so's symbol lookup and relocation are {ld:.0f}% of agentsbx's own samples in perf"
                + (f"; page faults are {pf:.0f}% (inclusive)" if pf else "") + ". " if ld else "")
             + ("What `agentsbx --version` still costs over a static binary's start, minimums, against "
                "the whole run's minimum: " + "; ".join(bits) + ". " if bits else "")
             + "Measured and not done: linking libseccomp, libcap and yajl statically (their .a files "
             "ship in the -dev packages) took `agentsbx --version` from 1.2 to 0.9-1.1 ms here "
             "(hyperfine, 500 runs each, 2026-12-02), but it would keep Debian's security updates of "
             "yajl (which parses the hostile config.json), libseccomp and libcap out of the binary "
             "until it is rebuilt: not worth 0.1-0.3 ms. The rest of the start is glibc's own (ld.so, "
             "and its CPU-feature probe: cpuid, a VM exit each, 2-3% of agentsbx's samples), which "
             "`unshare` pays too.")
    n += 1
    # 2. teardown of `run`
    t_a, t_c, t_r = tr("vm", "agentsbx"), tr("vm", "crun"), tr("vm", "runc")
    h_a, h_r = tr("host", "agentsbx"), tr("host", "runc")
    cmp_ = []
    if t_a and t_c and t_a.get("n_down") is not None and t_c.get("n_down") is not None:
        cmp_.append(f"guest: {t_a['n_down']} syscalls from /bin/true's exit to agentsbx's, crun {t_c['n_down']}"
                    + (f", runc {t_r['n_down']}" if t_r and t_r.get('n_down') is not None else ""))
    if h_a and h_r and h_a.get("n_down") is not None:
        cmp_.append(f"host: agentsbx {h_a['n_down']}, runc {h_r['n_down']}")
    frz = h_a["freezer_writes"] if h_a else 0
    o.append(f"{n}. **`run`'s teardown from memory.** " + ("; ".join(cmp_) + ". " if cmp_ else "")
             + "Done: after reaping the init, `run` tears down from what its create knew (the cgroup "
             "path and manager, the state directory's identity): no re-read of state.json and "
             "config.json (unless poststop hooks need the state), no /proc check of a process it has "
             "reaped; an empty cgroup is neither frozen nor killed (v1: cgroup.procs read first; v2: "
             "cgroup.events), and the leaf is removed with one rmdir before any walk"
             + (f". Yet {frz} freezer writes per run on this host" if frz else
                " (0 freezer writes per run on this host)")
             + ". `start`, inside `run`, goes on from what create knows too: the state "
             "directory create still holds locked, the state and the spec in memory "
             "(runtime/lifecycle/lifecycle.c container_start_ctx).")
    n += 1
    # 3. cgroups
    cgv = F.get("vm", {})
    cgh = F.get("host", {})
    n_mig = t_a["cats"]["migration"][0] if t_a else None
    hn_mig = h_a["cats"]["migration"][0] if h_a else None
    line = (f"{n}. **The init enters its cgroup without a migration.** A write of a pid to "
            "cgroup.procs takes the kernel's global cgroup_threadgroup_rwsem for writing, and the "
            "first writer after a quiet spell waits for an RCU grace period (rcu_sync): 5-12 ms on "
            "this host, measured by writing a pid after a 50-100 ms pause (2026-12-02), more than the "
            "rest of `run`. Back to back, runs often find the previous run's grace period still in "
            "force, so case 1 hides it in part; case 1b (idle before each run) shows it. Done: on "
            "cgroup v2 the cgroup is made and limited before the clone and the init is born in it "
            "(clone3(CLONE_INTO_CGROUP); ENOSYS/E2BIG/EINVAL fall back to cgroup.procs); on v1 the "
            "directories are made before the clone, their `tasks` files opened by the runtime, and the "
            "init writes \"0\" into each one itself, first thing after its GO: moving the calling "
            "thread only takes no global lock (Linux >= 5.5, also in 5.4.y), and the init has one "
            "thread then "
            "(runtime/cgroup/cgroup.h, cgroup_place_self). exec's process gets in the same way "
            "(into a cgroup at its pids.max or memory.max, where clone3 is refused, by cgroup.procs, "
            "as runc does; on a kernel older than 6.1, whose CLONE_INTO_CGROUP skipped the cpuset, a "
            "cgroup with cpus or mems of its own is entered by cgroup.procs too). "
            + (f"agentsbx's writes of a pid to cgroup.procs per run: {n_mig} in the guest"
               + (f", {hn_mig} on this host" if hn_mig is not None else "") + ". "
               if n_mig is not None else ""))
    for env, fa in (("guest", cgv), ("this host", cgh)):
        if "cg_mig" in fa:
            line += (f"bench/tools/cgplace without a runtime around ({env}, {fa['cg_dirs']} "
                     f"{'hierarchy' if fa['cg_dirs'] == 1 else 'hierarchies'}): making and removing the "
                     f"directories {fa['cg_base'] * 1e3:.2f} ms per container, migration "
                     f"{fa['cg_mig'] * 1e3:+.2f} ms on top, agentsbx's way {fa['cg_born'] * 1e3:+.2f} ms. ")
    if h_a and h_r:
        line += (f"agentsbx makes {h_a['cats']['cgroup'][0]} cgroup-fs syscalls per run on this host, runc "
                 f"{h_r['cats']['cgroup'][0]}. ")
    line += ("What is left on v1 is the kernel's work on the directories themselves: one per "
             "hierarchy, each mkdir creating every controller file and each rmdir taking them down "
             "under cgroup_mutex, which the floor does not do. It would take joining fewer "
             "hierarchies than runc does (not name=systemd, only those with a controller the spec "
             "uses), which `docker stats`, pause and `ps` on v1 need: not done.")
    o.append(line)
    n += 1
    # 4. start-path syscalls
    top = F.get("host", {}).get("strace_top") or F.get("vm", {}).get("strace_top") or []
    fc = next((r for r in top if r[0] == "fcntl"), None)
    if fc and int(fc[1]) > 100:
        o.append(f"{n}. **Fewer syscalls before the clone.** "
                 + f"`fcntl` is the most frequent syscall ({fc[1]} calls, {fc[2]} failing): "
                 "the start-up fd snapshot probes every fd number up to 255 with F_GETFD; read "
                 "/proc/self/fd once (or keep only what LISTEN_FDS/--preserve-fds name, and close the rest "
                 "with close_range). Each is cheap natively, but the count is what strace, ptrace-based "
                 "sandboxes and TCG pay for.")
        n += 1
    # 5. seccomp
    o.append(f"{n}. **Seccomp: keep the cache warm.** Case 3's cold and warm rows differ by what compiling "
             "the profile costs (libseccomp, in the runtime); warm, agentsbx pays a cache read, so "
             "the cache works. The key includes the runtime's commit, so every upgrade starts cold: "
             "compiling the default and the agent profile once after install (`agentsbx features` "
             "could do it) would take that off the first container.")
    n += 1
    o.append(f"{n}. **Not worth chasing:** the mounts already go through the new mount API by fd "
             "(open_tree + mount_setattr + move_mount), a few microseconds each (the `mount API` "
             "column); the network namespace is kernel work (setup_net, loopback registration: the "
             "largest kernel item in perf) that the floor pays too.")
    o.append("")
    for name, where in (("vm", "in the guest"), ("host", "on this host")):
        v = envs[name]
        a, c, f = v.stats("c1", "agentsbx"), v.stats("c1", "crun"), v.stats("c1", "floor")
        if not (a and c and f):
            continue
        o.append(f"Against the target {where}: agentsbx is at {ratio(a, c):.2f}× crun (target 0.7×) and "
                 f"{ratio(a, f):.2f}× the floor (target 2×). The floor is {fmt_t(f['median'])} there; "
                 f"2× the floor means {fmt_t(2 * f['median'])} for everything agentsbx does, process "
                 "start included"
                 + (" — what is left is in the items above, and mostly kernel work the floor does "
                    "not do (cgroup directories, mounts, the exec of the trampoline and of the process)."
                    if ratio(a, f) > 2.0 else "."))
        o.append("")
    return o


METHOD = """\
- `make bench` runs bench/run.sh: it builds ./agentsbx, stages the bundles
  (bench/prepare.py: a busybox-static rootfs; `runc spec` with no terminal
  and `/bin/true` as the process: pid, network, ipc, uts and mount
  namespaces, read-only root, the default mounts, masked and read-only
  paths), runs bench/suite.sh here and in the guest (tests/vm/vmrun.sh:
  Debian's kernel, busybox initramfs, pure cgroup v2 with the memory, pids,
  cpu, io and cpuset controllers enabled, as systemd would), then
  bench/profile.sh in both, then this report (bench/report.py).
- Every runtime gets a private `--root` on a tmpfs; container ids start
  with `abxb-` and carry the driver's pid, so none repeats. Everything runs
  under a child subreaper (tests/tools/subreaper) because PID 1 here does
  not reap orphans. At the end every state, cgroup and mount is removed
  and what was left is reported above.
- Cases 2, 3, 4, 5 and 7a go through bench/tools/benchdrv (static C): it
  runs `create --pid-file`, `start`, reaps the init as the subreaper
  (containerd-shim's part), then `delete`; or N `run`s in a row; or N at
  once. Case 3 (cold) clears agentsbx's compiled-filter cache
  (`<root>/.seccomp-cache`) before every run with hyperfine's `--prepare`.
- Case 7a: GNU time's `%M` (the "Maximum resident set size" of `time -v`)
  of the `create` command: the runtime and every child it reaped (runc's
  `runc init` stages included). Case 7b: geometric bisection on 4 KiB
  pages between 64 KiB and 32 MiB, a capped number of attempts (12 here,
  8 in the guest), each with a timeout.
- The strict agent profile (bench/profiles/agent-strict.json) is this
  suite's own: default ERRNO(EPERM), about 150 syscalls allowed, clone
  without namespace flags, clone3 → ENOSYS so that libcs fall back. It
  stands in for the agent policy's profile until that one exists as data.
- In the guest (TCG, one vCPU) every container costs 10-50× what it costs
  on the host, so the guest runs fewer iterations, cases 4 and 5 with 20
  containers, and runc (4-5× the others there) only in cases 1, 6 and 7:
  its figures for the other cases are the host's. The guest has a time
  budget (what is left of 10 minutes); no measurement starts after it.
  Every binary the cases run is in the guest's memory (runc, crun,
  hyperfine and the floor's unshare copied in by vmrun.sh; agentsbx and the
  drivers copied off the share by bench/guest.sh): a binary run from the
  9p share (cache=none) reads its pages from the host on every start.
- agentsbx is a private copy of ./agentsbx taken when the run starts (the
  build is replaced in place by `make`, which others may run meanwhile);
  the report names its commit and whether the sources had uncommitted
  changes.
"""


if __name__ == "__main__":
    main()
