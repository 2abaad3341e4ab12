# SPDX-License-Identifier: Apache-2.0
"""Issue 12 rows 6 and 7: what the container's code can grab from a process
that `agentsbx exec` brings in, or from a sibling container's, under the
default (enforce) policy.

The attacker is tests/tools/exec_watcher, run inside the container: it polls
for new pids and tries open(/proc/PID/exe), open(/proc/PID/fd/N) (the
caller's stdio), open(/proc/PID/mem, O_RDWR), open(/proc/PID/environ) and
ptrace(PTRACE_ATTACH) on each, filing every success under the phase the
process was in: "runtime" (a clone of the runtime, or the exec trampoline)
or "exec" (the command exec'd).

The defence (runtime/init/landlock.c): the init and every exec'd process each
enter a Landlock domain of their own, siblings, so that no process of one
tree passes the ptrace check on a process of another; the runtime phase is
also non-dumpable.  Weak build: exec-landlock (no domains).
"""

import os
import re
import time

import pytest

from conftest import Env, add_mount, make_spec, write_spec
from escape_helpers import BUILDS, pick_runtime, rt_as, wait_file_contains

pytestmark = pytest.mark.usefixtures("agentsbx_only")

EXECS = int(os.environ.get("EXEC_RACE_EXECS", "1000"))
KINDS = ("exe", "fd", "mem", "environ", "ptrace")


def _landlock_abi():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return libc.syscall(444, None, 0, 1)


needs_landlock = pytest.mark.skipif(_landlock_abi() < 1,
                                    reason="the kernel has no Landlock")


@pytest.fixture
def penv(runtime, base_rootfs, request):
    """An Env under the default policy, but for bindPrefixes: the one
    directory the watcher writes its log to (a writable directory bind,
    hence writableBinds)."""
    if os.path.exists("/etc/agentsbx/policy.json"):
        pytest.skip("/etc/agentsbx/policy.json exists on this machine")
    e = Env(runtime, base_rootfs, request, ())
    e.out = e.hostdir("out")
    pol = os.path.join(e.tmp, "policy.json")
    with open(pol, "w") as f:
        f.write('{"bindPrefixes": ["%s"], "writableBinds": true}' % e.out)
    e.policy_args = ["--policy", pol]
    yield e
    left = e.cleanup()
    if left:
        e.force_clean()
    os.system("rm -rf '%s'" % e.tmp)
    assert not left, "the test left things behind:\n  " + "\n  ".join(left)


def _watcher(env, runtime, name, args, spec_changes=None):
    """Start (run -d) a container whose init is exec_watcher ARGS, logging
    to <out>/NAME.log; return (cid, log path)."""
    log = os.path.join(env.out, name + ".log")
    spec = make_spec(["sh", "-c", "exec exec_watcher %s --ready /out/%s.ready > /out/%s.log 2>&1"
                      % (" ".join(args), name, name)])
    add_mount(spec, "/out", "bind", env.out, ["rbind", "rw"])
    if spec_changes:
        spec_changes(spec)
    bundle = env.make_bundle("b-" + name)
    write_spec(bundle, spec)
    cid = env.new_id()
    rt_as(env, runtime, "run", "-d", "--bundle", bundle, cid, check=True)
    ready = os.path.join(env.out, name + ".ready")
    deadline = time.time() + 10
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.02)
    assert os.path.exists(ready), "the watcher did not start"
    return cid, log


def _result(env, runtime, cid, log):
    rt_as(env, runtime, "kill", cid, "TERM")
    text = wait_file_contains(log, "result ", timeout=30)
    m = re.search(r"^result (.*)$", text, re.M)
    assert m, "exec_watcher gave no result:\n" + text[-3000:]
    counts = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))}
    return counts, text


def m_line(text):
    return re.search(r"^result .*$", text, re.M).group(0)


def _grabbed(counts, phase):
    return {k: counts["%s_%s" % (phase, k) + ("_rw" if phase == "exec" and k == "mem" else "")]
            for k in KINDS}


@pytest.mark.slow  # 1000 execs against a watcher
@needs_landlock
@pytest.mark.parametrize("build", BUILDS)
def test_exec_race_watcher_grabs_nothing(penv, build):
    """Row 6: 1000 `exec sleep 0.02` while the watcher runs."""
    runtime = pick_runtime(build, "exec-landlock")
    cid, log = _watcher(penv, runtime, "race", ["--target", "sleep", "--timeout", "170"])
    failed = 0
    t0 = time.time()
    for i in range(EXECS if build == "real" else 200):
        rc, out, err = rt_as(penv, runtime, "exec", cid, "sleep", "0.02")
        failed += rc != 0
        assert failed < 5, (rc, out, err)
    spent = time.time() - t0
    counts, text = _result(penv, runtime, cid, log)
    summary = "%s\n(%d execs in %.1f s)" % (text[-4000:], i + 1, spent)
    rt_grab = _grabbed(counts, "runtime")
    ex_grab = _grabbed(counts, "exec")
    print(m_line(text), "(%d execs in %.1f s)" % (i + 1, spent))
    if build == "real":
        assert sum(rt_grab.values()) == 0, (
            "a handle on a runtime-phase process (the runtime's clone or the "
            "trampoline): %s\n%s" % (rt_grab, summary))
        assert sum(ex_grab.values()) == 0, (
            "the container's code got a handle on an exec'd process (mem_rw: "
            "it could rewrite its memory; fd: reopen the caller's stdio): %s\n%s"
            % (ex_grab, summary))
        # Not vacuous: the watcher did find the exec'd processes.
        assert counts["exec_seen"] >= EXECS // 2, summary
    else:
        # (Not fd: the caller's stdio pipes belong to host root, and the
        # policy's uid 65534 may not reopen them through /proc anyway.)
        assert ex_grab["mem"] > 0, (
            "weak build (exec-landlock): the watcher got no writable "
            "/proc/PID/mem of an exec'd process, so the test proves nothing:\n"
            + summary)


@needs_landlock
@pytest.mark.parametrize("build", BUILDS)
def test_sibling_in_shared_pidns_cannot_grab(penv, build):
    """Row 7: container B joins container A's pid namespace (a pod) and goes
    for A's processes: A's init, and a process exec'd into A."""
    runtime = pick_runtime(build, "exec-landlock")
    bundle = penv.make_bundle("victim", spec=make_spec(["sleep", "300"]))
    cid_a = penv.new_id()
    rt_as(penv, runtime, "run", "-d", "--bundle", bundle, cid_a, check=True)
    rc, out, err = rt_as(penv, runtime, "state", cid_a, check=True)
    pid_a = int(re.search(r'"pid":\s*(\d+)', out).group(1))
    exec_a = None
    try:
        from conftest import spawn
        exec_a = spawn([runtime, "--root", penv.root] + penv.policy_args +
                       ["exec", cid_a, "sleep", "30"])

        def join_a(spec):
            spec["linux"]["namespaces"] = [
                {"type": "pid", "path": "/proc/%d/ns/pid" % pid_a}
                if n["type"] == "pid" else n for n in spec["linux"]["namespaces"]]
            # a pod's containers share its identity (one uid: the pod's),
            # as CRI's annotation says: the kernel's uid checks let B at
            # A's processes, and the Landlock domain is what stops it
            spec["annotations"] = {"io.kubernetes.cri.sandbox-id": cid_a}
        time.sleep(0.3)
        cid_b, log = _watcher(penv, runtime, "sibling",
                              ["--target", "sleep", "--timeout", "2", "--stay"],
                              spec_changes=join_a)
        text = wait_file_contains(log, "result ", timeout=30)
        counts, text = _result(penv, runtime, cid_b, log)
    finally:
        if exec_a:
            exec_a.popen.kill()
            exec_a.wait()
        rt_as(penv, runtime, "kill", cid_a, "KILL")
    grab = _grabbed(counts, "exec")
    print(m_line(text))
    if build == "real":
        assert counts["exec_seen"] >= 2, text
        assert sum(grab.values()) == 0, (
            "container B got a handle on container A's processes through "
            "the shared pid namespace: %s\n%s" % (grab, text))
    else:
        assert grab["mem"] >= 2, (
            "weak build (exec-landlock): no writable /proc/PID/mem of the "
            "sibling's processes, so the test proves nothing:\n" + text)


@pytest.mark.parametrize("build", ["real", "weak"])
def test_trampoline_never_exec_through_container_proc(env, build):
    """Row 17: when execveat is refused (a seccomp profile that allows only
    execve), the trampoline is exec'd as /proc/self/fd/N -- a path looked up
    in the container's own mount namespace.  Without a procfs mount there,
    the image decided what it was: here, a script that takes the place of
    the container's command.  Now that path is taken only when /proc is a
    procfs root; otherwise a clear error.  (Policy off: a plain OCI bundle.)"""
    runtime = pick_runtime(build, "exec-proc-fallback")
    spec = make_spec(["true"])
    spec["mounts"] = [m for m in spec["mounts"] if m["destination"] != "/proc"]
    spec["linux"]["maskedPaths"] = []
    spec["linux"]["readonlyPaths"] = []
    spec["linux"]["seccomp"] = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": ["execveat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
    bundle = env.make_bundle("no-proc", spec=spec)
    fd_dir = os.path.join(bundle, "rootfs", "proc", "self", "fd")
    os.makedirs(fd_dir)
    for n in range(3, 64):
        path = os.path.join(fd_dir, str(n))
        with open(path, "w") as f:
            f.write("#!/bin/sh\necho HIJACKED by the image as $0\n")
        os.chmod(path, 0o755)
    rc, out, err = rt_as(env, runtime, "run", "--bundle", bundle, env.new_id())
    if build == "real":
        assert "HIJACKED" not in out, (
            "the image's /proc/self/fd/N ran in place of the trampoline:\n" + out)
        assert rc != 0 and "/proc is not a procfs" in err, (rc, out, err)
    else:
        assert "HIJACKED" in out, (
            "weak build (exec-proc-fallback): the image's file did not run, so "
            "the test proves nothing: rc %d\n%s\n%s" % (rc, out, err))
