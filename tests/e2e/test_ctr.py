# SPDX-License-Identifier: Apache-2.0
"""agentsbx through containerd's `ctr`: the io.containerd.runc.v2 shim with
--runc-binary (and --runc-root under the session's temp dir).  See
e2e_lib.py."""

import os
import re
import signal

from e2e_lib import CONTAINERD, CRI_SNIPPET, PtySession, poll_until, run, unique


def task_status(ctr, cid):
    for line in ctr("task", "ls").out.splitlines()[1:]:
        f = line.split()
        if f and f[0] == cid:
            return f[2]
    return None


def start_detached(ctr, cid, *cmd):
    ctr.run_rt("-d", ctr.image, cid, *cmd).ok()
    assert poll_until(lambda: task_status(ctr, cid) == "RUNNING"), ctr("task", "ls")


def test_ctr_run_output_and_exit_status(ctr):
    r = ctr.run_rt("--rm", ctr.image, unique("ctr-run"), "sh", "-c", "echo hello via ctr; exit 7")
    assert r.rc == 7, str(r)
    assert r.out.replace("\r", "") == "hello via ctr\n", str(r)


def test_ctr_run_failing_shows_reason(ctr):
    r = ctr.run_rt("--rm", ctr.image, unique("ctr-fail"), "/nonexistent")
    assert r.rc != 0, str(r)
    assert 'exec: "/nonexistent"' in r.err, str(r)


def test_ctr_lifecycle(ctr):
    """run -d, exec (output, status, user, cwd, env), ps, pause/resume,
    kill, delete."""
    cid = unique("ctr-life")
    start_detached(ctr, cid, "sh", "-c", 'trap "exit 3" TERM; while :; do sleep 0.1; done')
    r = ctr("task", "exec", "--exec-id", "e1", cid, "sh", "-c", "echo exec-out; exit 4")
    assert r.rc == 4 and r.out == "exec-out\n", str(r)
    r = ctr("task", "exec", "--exec-id", "e2", "--user", "1000", "--cwd", "/tmp", cid,
            "sh", "-c", "id -u; pwd")
    # under the default policy every process of the container runs as its
    # own host uid (identities), whatever --user says
    uid, cwd = r.out.split()
    assert r.rc == 0 and int(uid) >= 1879048192 and cwd == "/tmp", str(r)
    r = ctr("task", "ps", cid).ok()
    assert len(r.out.splitlines()) >= 2, str(r)
    ctr("task", "pause", cid).ok()
    assert task_status(ctr, cid) == "PAUSED"
    ctr("task", "resume", cid).ok()
    assert task_status(ctr, cid) == "RUNNING"
    r = ctr("task", "metrics", cid).ok()
    assert re.search(r"memory\.usage_in_bytes|memory\.current|memory_usage", r.out), str(r)
    ctr("task", "kill", "-s", "SIGTERM", cid).ok()
    assert poll_until(lambda: task_status(ctr, cid) == "STOPPED"), ctr("task", "ls")
    r = ctr("task", "rm", cid)
    assert r.rc == 0, str(r)
    assert "exit code 3" in r.err, str(r)  # ctr warns of the non-zero status
    ctr("container", "rm", cid).ok()


def test_ctr_kill_propagates_signal_status(ctr):
    cid = unique("ctr-kill")
    run = ctr.spawn_run(ctr.image, cid, "sleep", "1000")
    assert poll_until(lambda: task_status(ctr, cid) == "RUNNING"), run.output()
    ctr("task", "kill", "-s", "SIGKILL", cid).ok()
    rc, out, err = run.wait(timeout=30)
    assert rc == 128 + signal.SIGKILL, (rc, out, err)


def test_ctr_kill_all(ctr):
    """`ctr task kill --all` reaches every process of the container."""
    cid = unique("ctr-killall")
    start_detached(ctr, cid, "sh", "-c", 'trap "" TERM; sleep 1000 & sleep 1001 & wait')
    ctr("task", "kill", "--all", "-s", "SIGKILL", cid).ok()
    assert poll_until(lambda: task_status(ctr, cid) == "STOPPED"), ctr("task", "ls")
    ctr("task", "rm", cid)
    ctr("container", "rm", cid).ok()


def test_ctr_tty(ctr):
    cid = unique("ctr-tty")
    s = PtySession(ctr.run_argv("-t", "--rm", ctr.image, cid, "sh"), rows=25, cols=90)
    try:
        # The default policy runs a host-root process as a uid of its own: the
        # shell's prompt is "$ ", not "# ".
        s.expect(r"\$ ")
        s.expect_stty_size(25, 90)
        s.send("echo ctr-typed-$((2*21))\r")
        s.expect(r"echo ctr-typed-\$\(\(2\*21\)\)\n")
        s.expect(r"ctr-typed-42\n")
        s.send("exit 6\r")
        assert s.wait() == 6, s.text
    finally:
        s.close()


def test_ctr_signal_dispositions_reset(ctr):
    """containerd here runs with SIGHUP ignored (as under `nohup`): the
    shim and the runtime inherit that, and runc and crun reset it before
    the container's process starts.  A container must start with no
    signal ignored, or `kill -HUP` and `trap ... HUP` silently do
    nothing."""
    r = ctr.run_rt("--rm", ctr.image, unique("ctr-sig"), "grep", "-E", "^Sig(Ign|Blk)",
                "/proc/self/status")
    assert r.rc == 0, str(r)
    assert r.out.split() == ["SigBlk:", "0" * 16, "SigIgn:", "0" * 16], str(r)


def test_cri_config_snippet_loads(ctr):
    """The config.toml snippet for Kubernetes (CRI) is read into the CRI
    plugin's runtime table as a runc-v2 runtime with agentsbx as its
    binary.  (No kubelet here: the pod path itself is not run.)"""
    cfg = os.path.join(ctr.dir, "cri-snippet.toml")
    with open(cfg, "w") as f:
        f.write(CRI_SNIPPET % {"runtime": ctr.binary})
    r = run([CONTAINERD, "--config", cfg, "config", "dump"]).ok()
    table = '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx]'
    assert table in r.out, str(r)
    section = r.out.split(table, 1)[1].split("\n\n      [", 1)[0]
    assert 'runtime_type = "io.containerd.runc.v2"' in section, section
    assert 'BinaryName = "%s"' % ctr.binary in section, section


def test_ctr_requests_refused_and_defaults_tightened(ctr):
    """Through containerd (issue 17): ctr's own defaults (containerd's
    capability set, no seccomp profile: its default, as in CRI) run at the
    floor; --cap-add and --privileged are requests, refused with the
    policy's message."""
    r = ctr.run_rt("--rm", ctr.image, unique("ctr-plain"), "sh", "-c",
                   "grep -E 'CapEff|Seccomp:' /proc/self/status")
    assert r.rc == 0 and "CapEff:\t0000000000000000" in r.out and "Seccomp:\t2" in r.out, str(r)
    for flags, needle in ((["--cap-add", "CAP_NET_ADMIN"],
                           "capabilities beyond the engine's default set: CAP_NET_ADMIN"),
                          (["--privileged"], "every capability")):
        r = ctr.run_rt("--rm", *flags, ctr.image, unique("ctr-req"), "true")
        assert r.rc != 0 and "policy: refused: the container asks for" in r.err, str(r)
        assert needle in r.err and "onRequestAboveFloor" in r.err, str(r)
