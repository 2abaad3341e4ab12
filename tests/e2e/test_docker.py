# SPDX-License-Identifier: Apache-2.0
"""agentsbx through Docker: `docker ... --runtime agentsbx` (dockerd 20.10,
its containerd 1.6 and containerd-shim-runc-v2).  See conftest.py."""

import json
import os
import re
import shutil
import signal
import time

import pytest

from e2e_lib import (IMAGE, RUNTIME, PtySession, poll_until, run, runtime_lacks, state_entries,
                     unique)
from images import debootstrap_image

RT = ("--runtime", "agentsbx")


def wait_status(docker, cid, status, timeout=20):
    got = poll_until(lambda: docker("inspect", "-f", "{{.State.Status}}", cid).out.strip() == status,
                     timeout=timeout)
    assert got, "container %s never became %s (is %s)" % (
        cid, status, docker("inspect", "-f", "{{.State.Status}}", cid).out.strip())


def start_detached(docker, *cmd, opts=()):
    r = docker.run_rt("-d", *opts, IMAGE, *cmd).ok()
    cid = r.out.strip()
    wait_status(docker, cid, "running")
    return cid


def cgroup_file(v1, v2):
    """Shell that prints a cgroup file as seen inside the container: the
    v2 name on a cgroup2 /sys/fs/cgroup, else the v1 one."""
    return ("if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cat /sys/fs/cgroup/%s; "
            "else cat /sys/fs/cgroup/%s; fi" % (v2, v1))


# --------------------------------------------------------------------------
# run, exit status, errors


def test_run_rm_prints_output(docker):
    r = docker.run_rt("--rm", IMAGE, "echo", "hello from agentsbx")
    assert r.rc == 0, str(r)
    assert r.out == "hello from agentsbx\n", str(r)


def test_run_stdin_is_passed(docker):
    r = docker.run_rt("--rm", "-i", IMAGE, "sh", "-c", "tr a-z A-Z; echo rc=$?",
                      input="piped through\n")
    assert r.rc == 0, str(r)
    assert r.out == "PIPED THROUGH\nrc=0\n", str(r)


def test_exit_status_propagates(docker):
    r = docker.run_rt("--rm", IMAGE, "sh", "-c", "echo before; exit 7")
    assert r.rc == 7, str(r)
    assert r.out == "before\n", str(r)


def test_signal_exit_propagates(docker):
    """A container killed by signal N exits 128+N, for `docker run` and in
    `docker inspect`."""
    name = unique("sigexit")
    run = docker.spawn("run", *RT, "--name", name, IMAGE, "sleep", "1000")
    wait_status(docker, name, "running")
    docker("kill", "-s", "KILL", name).ok()
    rc, out, err = run.wait(timeout=30)
    assert rc == 128 + signal.SIGKILL, (rc, out, err)
    assert docker.inspect(name, "{{.State.ExitCode}}") == "137"
    docker("rm", name).ok()


def test_failing_container_shows_runtime_reason(docker):
    """The shim reads the runtime's --log (json) and shows its last error:
    agentsbx's own reason must reach the user."""
    r = docker.run_rt("--rm", IMAGE, "/nonexistent")
    assert r.rc != 0, str(r)
    assert 'exec: "/nonexistent"' in r.err, str(r)
    assert re.search(r"(?i)no such file or directory", r.err), str(r)


def test_failing_exec_exit_code_127(docker):
    """docker maps a missing executable to 127 (like a shell) by matching
    the Go/runc wording "no such file or directory" in the error."""
    r = docker.run_rt("--rm", IMAGE, "/nonexistent")
    assert r.rc == 127, str(r)


def test_non_executable_exit_code_126(docker):
    """... and a non-executable file to 126 ("permission denied")."""
    r = docker.run_rt("--rm", IMAGE, "/etc/passwd")
    assert r.rc == 126, str(r)
    assert "/etc/passwd" in r.err, str(r)


def test_first_container_fresh_root(docker):
    """On a fresh host nothing has created <exec-root>/runtime-runc yet:
    runc creates its --root with all parents on the first create; so must
    agentsbx."""
    parent = os.path.dirname(docker.state_root)
    assert state_entries(docker.state_root) == []
    shutil.rmtree(parent)
    try:
        r = docker.run_rt("--rm", IMAGE, "true")
        assert r.rc == 0, str(r)
    finally:
        os.makedirs(parent, mode=0o700, exist_ok=True)


# --------------------------------------------------------------------------
# detached, exec


def test_detached_then_exec(docker):
    cid = start_detached(docker, "sleep", "1000")
    r = docker("exec", cid, "sh", "-c", "echo exec-out; echo exec-err >&2")
    assert r.rc == 0 and r.out == "exec-out\n" and r.err == "exec-err\n", str(r)
    r = docker("exec", cid, "sh", "-c", "exit 5")
    assert r.rc == 5, str(r)
    r = docker("exec", cid, "id")
    assert r.out.startswith("uid=0(root) gid=0(root)"), str(r)
    r = docker("exec", "-u", "1000:1000", cid, "id")
    assert r.rc == 0 and r.out.startswith("uid=1000(user) gid=1000(user)"), str(r)
    r = docker("exec", "-u", "user", cid, "sh", "-c", "id -u; echo $HOME")
    assert r.rc == 0 and r.out == "1000\n/home/user\n", str(r)
    r = docker("exec", "-e", "FOO=bar baz", cid, "sh", "-c", 'echo "FOO=$FOO"')
    assert r.out == "FOO=bar baz\n", str(r)
    r = docker("exec", "-w", "/tmp", cid, "pwd")
    assert r.out == "/tmp\n", str(r)
    # an exec'd process is no PID 1: its death by signal is 128+N
    r = docker("exec", cid, "sh", "-c", "kill -TERM $$")
    assert r.rc == 128 + signal.SIGTERM, str(r)
    # the exec joined the container: same pid namespace as its init
    r = docker("exec", cid, "sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '")
    assert r.out.strip() == "sleep 1000", str(r)
    docker("rm", "-f", cid).ok()


def test_exec_nonexistent_shows_reason(docker):
    cid = start_detached(docker, "sleep", "1000")
    r = docker("exec", cid, "/nonexistent")
    assert r.rc != 0, str(r)
    assert "/nonexistent" in r.out + r.err, str(r)
    # the container survives a failed exec
    assert docker.inspect(cid, "{{.State.Status}}") == "running"
    docker("rm", "-f", cid).ok()


# --------------------------------------------------------------------------
# terminals


def test_run_it_pty(docker):
    """docker run -it: the container's terminal echoes what is typed, has
    the size of the user's terminal, follows a resize, and the exit status
    comes back."""
    s = PtySession(docker.argv("run", "-it", "--rm", *RT, IMAGE, "sh"), rows=33, cols=97,
                   env=docker.env)
    try:
        s.expect(r"# ")
        s.expect_stty_size(33, 97)  # the typed command is echoed by the container's tty
        s.send("echo typed-$((6*7))\r")
        s.expect(r"echo typed-\$\(\(6\*7\)\)\n")
        s.expect(r"typed-42\n")
        s.send("tty; [ -t 0 ] && echo stdin-is-a-tty\r")
        s.expect(r"/dev/pts/\d+\n")
        s.expect(r"stdin-is-a-tty")
        s.set_size(40, 120)  # SIGWINCH to docker, which resizes the console
        s.expect_stty_size(40, 120)
        s.send("exit 3\r")
        assert s.wait() == 3, s.text
    finally:
        s.close()


def test_exec_it_pty(docker):
    cid = start_detached(docker, "sleep", "1000")
    s = PtySession(docker.argv("exec", "-it", cid, "sh"), rows=21, cols=77, env=docker.env)
    try:
        s.expect(r"# ")
        s.expect_stty_size(21, 77)
        s.send("echo exec-typed-$((3+4))\r")
        s.expect(r"echo exec-typed-\$\(\(3\+4\)\)\n")
        s.expect(r"exec-typed-7\n")
        s.send("exit 4\r")
        assert s.wait() == 4, s.text
    finally:
        s.close()
    docker("rm", "-f", cid).ok()


# --------------------------------------------------------------------------
# stop, kill, pause, top, stats, update


TRAPPER = ('trap "echo got-hup" HUP; trap "echo got-term; exit 0" TERM; '
           'echo ready; while :; do sleep 0.1; done')


def test_stop_sigterm_honoured(docker):
    cid = start_detached(docker, "sh", "-c", TRAPPER)
    poll_until(lambda: "ready" in docker("logs", cid).out)
    t0 = time.monotonic()
    docker("stop", "-t", "20", cid).ok()
    took = time.monotonic() - t0
    assert took < 10, "docker stop took %.1fs: SIGTERM not delivered?" % took
    assert docker.inspect(cid, "{{.State.ExitCode}}") == "0"
    assert "got-term" in docker("logs", cid).out
    docker("rm", cid).ok()


def test_stop_sigkill_after_timeout(docker):
    cid = start_detached(docker, "sh", "-c", 'trap "" TERM; echo ready; while :; do sleep 0.1; done')
    poll_until(lambda: "ready" in docker("logs", cid).out)
    t0 = time.monotonic()
    docker("stop", "-t", "2", cid).ok()
    took = time.monotonic() - t0
    assert 1.8 <= took < 15, "docker stop -t 2 took %.1fs" % took
    assert docker.inspect(cid, "{{.State.ExitCode}}") == "137"
    docker("rm", cid).ok()


def test_kill_hup(docker):
    cid = start_detached(docker, "sh", "-c", TRAPPER)
    poll_until(lambda: "ready" in docker("logs", cid).out)
    docker("kill", "-s", "HUP", cid).ok()
    seen = poll_until(lambda: "got-hup" in docker("logs", cid).out, timeout=10)
    status = docker("exec", cid, "grep", "-E", "^Sig(Ign|Cgt)", "/proc/1/status").out
    assert seen, "SIGHUP not seen by the container; its /proc/1/status:\n" + status
    assert docker.inspect(cid, "{{.State.Status}}") == "running"
    docker("rm", "-f", cid).ok()


def test_pause_unpause(docker):
    cid = start_detached(docker, "sh", "-c", "i=0; while :; do i=$((i+1)); echo tick$i; sleep 0.1; done")
    pid = int(docker.inspect(cid, "{{.State.Pid}}"))
    docker("pause", cid).ok()
    assert docker.inspect(cid, "{{.State.Status}}") == "paused"
    with open("/proc/%d/cgroup" % pid) as f:
        frz = [line.split(":", 2)[2].strip() for line in f if ":freezer:" in line]
    if frz:  # cgroup v1: the freezer says so
        with open("/sys/fs/cgroup/freezer%s/freezer.state" % frz[0]) as f:
            assert f.read().strip() == "FROZEN"
    time.sleep(0.3)  # what was written before the freeze reaches the log
    n1 = len(docker("logs", cid).out.split())
    time.sleep(1.0)
    n2 = len(docker("logs", cid).out.split())
    assert n1 == n2, "the container kept running while paused (%d -> %d lines)" % (n1, n2)
    docker("unpause", cid).ok()
    assert docker.inspect(cid, "{{.State.Status}}") == "running"
    assert poll_until(lambda: len(docker("logs", cid).out.split()) > n2 + 3, timeout=10), \
        "the container did not run on after unpause"
    docker("rm", "-f", cid).ok()


def test_top(docker):
    cid = start_detached(docker, "sleep", "4242")
    pid = docker.inspect(cid, "{{.State.Pid}}")
    r = docker("top", cid).ok()
    lines = r.out.splitlines()
    assert "PID" in lines[0], str(r)
    rows = [l for l in lines[1:] if "sleep 4242" in l]
    assert len(rows) == 1 and pid in rows[0].split(), str(r)
    docker("rm", "-f", cid).ok()


def test_stats_shows_memory(docker):
    """docker stats reads the container's cgroup through the shim (no
    runtime `events` call)."""
    cid = start_detached(docker, "sh", "-c", "x=$(head -c 4000000 /dev/zero | tr '\\0' a); sleep 1000",
                         opts=("--memory", "64m"))
    r = docker("stats", "--no-stream", "--format", "{{.MemUsage}}", cid).ok()
    m = re.match(r"([\d.]+)([KMG]i?B|B) / 64MiB", r.out.strip())
    assert m, str(r)
    assert float(m.group(1)) > 0, str(r)
    docker("rm", "-f", cid).ok()


@pytest.mark.xfail(runtime_lacks("update"), reason="update/events not implemented yet")
def test_update_memory(docker):
    cid = start_detached(docker, "sleep", "1000", opts=("--memory", "64m"))
    try:
        r = docker("update", "--memory", "128m", "--memory-swap", "256m", cid)
        assert r.rc == 0, str(r)
        r = docker("exec", cid, "sh", "-c", cgroup_file("memory/memory.limit_in_bytes", "memory.max"))
        assert r.out.strip() == str(128 << 20), str(r)
    finally:
        docker("rm", "-f", cid)


@pytest.mark.xfail(runtime_lacks("update"), reason="update/events not implemented yet")
def test_update_failure_shows_reason(docker):
    """go-runc reports a failed `update` with the runtime's stderr (only
    create/start/exec read the --log file): runc prints its error there as
    well as in the log, so docker shows why ("unable to set memory limit
    to 8388608 (current usage: ...)")."""
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
        pytest.skip("cgroup v2 lowers memory.max below the usage without an error")
    cid = start_detached(docker, "sh", "-c", "head -c 30000000 /dev/zero > /dev/shm/x; echo ready; sleep 1000",
                         opts=("--memory", "64m"))
    try:
        poll_until(lambda: "ready" in docker("logs", cid).out)
        r = docker("update", "--memory", "8m", "--memory-swap", "16m", cid)
        assert r.rc != 0, str(r)
        m = re.search(r"exit status \d+: (.*?):? unknown", r.err, re.S)
        assert m and m.group(1).strip(), "docker shows no reason from the runtime: " + str(r)
    finally:
        docker("rm", "-f", cid)


# --------------------------------------------------------------------------
# configuration visible from inside


@pytest.mark.parametrize("opts,shell,expect", [
    (("--memory", "64m"), cgroup_file("memory/memory.limit_in_bytes", "memory.max"),
     str(64 << 20)),
    (("--pids-limit", "50"), cgroup_file("pids/pids.max", "pids.max"), "50"),
    (("--cpus", "0.5"),
     "if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cat /sys/fs/cgroup/cpu.max; "
     "else echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); fi",
     "50000 100000"),
], ids=["memory", "pids-limit", "cpus"])
def test_resource_limit_visible_inside(docker, opts, shell, expect):
    r = docker.run_rt("--rm", *opts, IMAGE, "sh", "-c", shell)
    assert r.rc == 0, str(r)
    assert r.out.strip() == expect, str(r)


def test_read_only(docker):
    r = docker.run_rt("--rm", "--read-only", IMAGE, "sh", "-c",
                      "touch /probe 2>&1; echo rc=$?; grep ' / ' /proc/mounts")
    assert "Read-only file system" in r.out and "rc=1" in r.out, str(r)
    assert re.search(r" / \S+ ro[,\s]", r.out), str(r)


def test_network_none(docker):
    r = docker.run_rt("--rm", "--network", "none", IMAGE, "sh", "-c",
                      "ls /sys/class/net; readlink /proc/self/ns/net")
    assert r.rc == 0, str(r)
    names = r.out.split()
    assert names[:-1] == ["lo"], str(r)
    assert names[-1] != os.readlink("/proc/self/ns/net"), str(r)


def test_cap_drop_all(docker):
    r = docker.run_rt("--rm", "--cap-drop", "ALL", IMAGE, "grep", "^Cap", "/proc/self/status")
    caps = dict(l.split(":") for l in r.out.splitlines())
    assert {k: v.strip() for k, v in caps.items()} == {
        "CapInh": "0" * 16, "CapPrm": "0" * 16, "CapEff": "0" * 16,
        "CapBnd": "0" * 16, "CapAmb": "0" * 16}, str(r)
    # and root can no longer do root things
    r = docker.run_rt("--rm", "--cap-drop", "ALL", IMAGE, "sh", "-c",
                      "chown 1000 /tmp 2>&1; echo rc=$?")
    assert "rc=1" in r.out, str(r)


def test_no_new_privileges(docker):
    r = docker.run_rt("--rm", "--security-opt", "no-new-privileges", IMAGE,
                      "grep", "^NoNewPrivs", "/proc/self/status")
    assert r.out.split() == ["NoNewPrivs:", "1"], str(r)
    r = docker.run_rt("--rm", IMAGE, "grep", "^NoNewPrivs", "/proc/self/status")
    assert r.out.split() == ["NoNewPrivs:", "0"], str(r)


def test_user(docker):
    r = docker.run_rt("--rm", "--user", "1000:1000", IMAGE, "sh", "-c",
                      "id; touch /root/x 2>&1; echo rc=$?")
    assert r.out.splitlines()[0] == "uid=1000(user) gid=1000(user) groups=1000(user)", str(r)
    assert "rc=1" in r.out, str(r)


def test_tmpfs(docker):
    r = docker.run_rt("--rm", "--read-only", "--tmpfs", "/tmp", IMAGE, "sh", "-c",
                      "grep ' /tmp ' /proc/mounts; echo data > /tmp/f && cat /tmp/f")
    assert r.rc == 0, str(r)
    assert re.search(r"^\S+ /tmp tmpfs rw", r.out, re.M), str(r)
    assert r.out.strip().endswith("data"), str(r)


def test_signal_dispositions_default(docker):
    """The container's process starts with no signal ignored or blocked."""
    r = docker.run_rt("--rm", IMAGE, "grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status")
    assert r.out.split() == ["SigBlk:", "0" * 16, "SigIgn:", "0" * 16], str(r)


# --------------------------------------------------------------------------
# logs, rm -f


def test_logs(docker):
    cid = docker.run_rt("-d", IMAGE, "sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 0").ok().out.strip()
    poll_until(lambda: docker.inspect(cid, "{{.State.Status}}") == "exited")
    r = docker("logs", cid).ok()
    assert r.out == "to-stdout\n" and r.err == "to-stderr\n", str(r)
    docker("rm", cid).ok()


def test_rm_force_running(docker):
    cid = start_detached(docker, "sh", "-c", 'trap "" TERM; sleep 1000 & wait')
    pid = int(docker.inspect(cid, "{{.State.Pid}}"))
    t0 = time.monotonic()
    docker("rm", "-f", cid).ok()
    assert time.monotonic() - t0 < 10
    assert docker("ps", "-aq", "--no-trunc").out.split() == []
    assert poll_until(lambda: not os.path.exists("/proc/%d" % pid), timeout=10)


# --------------------------------------------------------------------------
# agentsbx's default sandbox policy, through Docker (runtime
# "agentsbx-policy": the built-in floor enforced, see e2e_lib.setup_policy)

POL = ("--runtime", "agentsbx-policy")


@pytest.fixture
def policy(docker):
    if not docker.s.policy:
        pytest.skip("the runtime has no sandbox policy (`%s policy` fails)" % docker.s.runtime)
    return docker.s.policy


def test_policy_floor_visible(docker, policy):
    """A plain `docker run` gets the floor: the writable layer over the
    read-only image, a tmpfs /tmp,
    no capabilities, no_new_privs, no network, the policy's limits."""
    lim = policy["limits"]
    r = docker("run", "--rm", *POL, IMAGE, "sh", "-c",
               "grep -E ' (/|/tmp) ' /proc/mounts; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status;"
               "echo net: $(ls /sys/class/net);"
               "echo mem: $(%s); echo pids: $(%s); touch /etc/probe 2>&1"
               % (cgroup_file("memory/memory.limit_in_bytes", "memory.max"),
                  cgroup_file("pids/pids.max", "pids.max")))
    out = r.out
    assert re.search(r"^\S+ / overlay rw[,\s]", out, re.M), str(r)  # the writable layer
    if any(t["path"] == "/tmp" for t in policy["tmpfs"]):
        assert re.search(r"^\S+ /tmp tmpfs rw", out, re.M), str(r)
    assert re.search(r"^CapEff:\s+0{16}$", out, re.M) and re.search(r"^CapBnd:\s+0{16}$", out, re.M), str(r)
    assert re.search(r"^NoNewPrivs:\s+1$", out, re.M), str(r)
    assert "net: lo\n" in out, str(r)
    assert "mem: %d\n" % lim["memory"] in out, str(r)
    assert "pids: %d\n" % lim["pids"] in out, str(r)
    assert "Permission denied" in out, str(r)  # a uid of its own; the image's /etc is root's


def policy_log(docker, *args):
    """The audit log's lines (this session's: AGENTSBX_POLICY_LOG, which
    dockerd passes on to the runtime)."""
    r = run([RUNTIME, "--policy", docker.s.policy_default, "policy", "log"] + list(args)).ok()
    return [json.loads(l) for l in r.out.splitlines()]


def test_policy_refuses_docker_options_it_cannot_grant(docker, policy):
    """Docker asks for more than the floor allows (issue 17): refused, and
    docker shows the policy's one message naming what, the rule, the policy
    file and the field that would allow it; the audit log has it."""
    r = docker("run", "--rm", *POL, "--memory", "%d" % (policy["limits"]["memory"] * 4),
               "--cap-add", "NET_ADMIN", IMAGE, "true")
    assert r.rc != 0, str(r)
    assert "policy: refused: the container asks for capabilities beyond the engine's default set: CAP_NET_ADMIN (--cap-add)" in r.err, str(r)
    assert "a memory limit of %d bytes (--memory)" % (policy["limits"]["memory"] * 4) in r.err, str(r)
    assert docker.s.policy_default in r.err and "onRequestAboveFloor" in r.err, str(r)
    lines = [l for l in policy_log(docker) if l["action"] == "refused" and l["engine"] == "docker"
             and "CAP_NET_ADMIN" in l["from"]]
    assert lines and lines[-1]["applied"], lines


def test_policy_plain_docker_run_is_tightened_and_logged(docker, policy):
    """A plain `docker run`: Docker's default caps, profile and no limits
    are not requests: tightened quietly, each change in `policy log`."""
    name = unique("plain")
    docker("run", "--name", name, *POL, IMAGE, "true").ok()
    cid = docker("inspect", "-f", "{{.Id}}", name).ok().out.strip()
    docker("rm", name).ok()
    lines = policy_log(docker, "--container", cid)
    rules = {l["rule"] for l in lines}
    assert {"capabilities", "limits", "seccomp"} <= rules, lines
    # (and, on a cgroup v1 host, the warning that TCP socket memory is not
    # bounded by the memory limit there)
    assert all(l["engine"] == "docker" for l in lines), lines
    assert all(l["action"] == "applied" or (l["action"] == "warning" and l["from"] == "cgroup v1")
               for l in lines), lines


def test_policy_init_and_no_rlimit_cpu(docker, policy):
    """`docker run --init` under the default policy (Debian's docker-init
    is a symlink to tini-static), and no RLIMIT_CPU on a -d service."""
    r = docker("run", "--rm", *POL, "--init", IMAGE, "echo", "init-ok")
    assert r.rc == 0 and r.out.strip() == "init-ok", str(r)
    cid = docker("run", "-d", *POL, IMAGE, "sleep", "60").ok().out.strip()
    try:
        pid = int(docker("inspect", "-f", "{{.State.Pid}}", cid).ok().out)
        with open("/proc/%d/limits" % pid) as f:
            cpu = [l for l in f if l.startswith("Max cpu time")][0].split()
        assert cpu[3:5] == ["unlimited", "unlimited"], cpu
    finally:
        docker("rm", "-f", cid).ok()


def test_policy_update_capped(docker, policy):
    """`docker update` above the floor (issue 16): refused naming the cap
    (capped with onRequestAboveFloor clamp); either way the cgroup stays
    within the policy's limits."""
    lim = policy["limits"]
    cid = docker("run", "-d", *POL, "--memory", "64m", IMAGE, "sleep", "1000").ok().out.strip()
    try:
        wait_status(docker, cid, "running")
        r = docker("update", "--memory", "%d" % (lim["memory"] * 4),
                   "--memory-swap", "%d" % (lim["memory"] * 8), "--cpus", "4", cid)
        mem = docker("exec", cid, "sh", "-c",
                     cgroup_file("memory/memory.limit_in_bytes", "memory.max")).ok().out.strip()
        assert int(mem) <= lim["memory"], (mem, str(r))
        quota = docker("exec", cid, "sh", "-c",
                       "if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cut -d' ' -f1 "
                       "/sys/fs/cgroup/cpu.max; else cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us; "
                       "fi").ok().out.strip()
        assert 0 < int(quota) <= lim["cpuQuota"], (quota, str(r))
    finally:
        docker("rm", "-f", cid)


def test_policy_update_below_the_caps_is_applied(docker, policy):
    """`docker update` *below* the floor's caps (the floor issue: it
    returned 0 and docker inspect showed the values, but the cgroup kept
    the policy's 256 MiB and a full CPU): lowering a limit always works."""
    cid = docker("run", "-d", *POL, IMAGE, "sleep", "1000").ok().out.strip()
    try:
        wait_status(docker, cid, "running")
        docker("update", "--memory", "100m", "--memory-swap", "100m", cid).ok()
        mem = docker("exec", cid, "sh", "-c",
                     cgroup_file("memory/memory.limit_in_bytes", "memory.max")).ok().out.strip()
        assert int(mem) == 100 << 20, mem
        docker("update", "--cpus", "0.5", cid).ok()
        quota = docker("exec", cid, "sh", "-c",
                       "if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cat /sys/fs/cgroup/cpu.max; "
                       "else echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) "
                       "$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); fi").ok().out.split()
        assert int(quota[0]) * 2 == int(quota[1]), quota
        docker("update", "--pids-limit", "50", cid).ok()
        pids = docker("exec", cid, "sh", "-c",
                      cgroup_file("pids/pids.max", "pids.max")).ok().out.strip()
        assert pids == "50", pids
        # each update sends every resource, the ones not asked for as 0:
        # those are left as they are, never reset to the policy's caps
        mem = docker("exec", cid, "sh", "-c",
                     cgroup_file("memory/memory.limit_in_bytes", "memory.max")).ok().out.strip()
        assert int(mem) == 100 << 20, "the --cpus update reset the memory limit: %s" % mem
        quota = docker("exec", cid, "sh", "-c",
                       "if [ -f /sys/fs/cgroup/cgroup.controllers ]; then cat /sys/fs/cgroup/cpu.max; "
                       "else echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) "
                       "$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us); fi").ok().out.split()
        assert int(quota[0]) * 2 == int(quota[1]), "the --pids-limit update reset the cpu: %s" % quota
    finally:
        docker("rm", "-f", cid)


@pytest.mark.parametrize("flag,name", [("--pid", "pid"), ("--ipc", "ipc"), ("--uts", "uts")])
def test_policy_host_namespaces_refused(docker, policy, flag, name):
    """docker --pid/--ipc/--uts host: refused with the policy's one error
    for the host's namespaces (the same as a Kubernetes hostPID/hostIPC
    pod, tests/cri).  (--network host: dockerd keeps a bind mount of its
    namespace while it runs, which this fixture's leftover check would
    report; tests/integration/test_policy_pod_net.py and the attack suite
    run it.)"""
    r = docker("run", "--rm", *POL, flag, "host", IMAGE, "true")
    assert r.rc != 0, str(r)
    assert ("the container asks for the host's %s namespace (%s=host) [rule namespaces; "
            "no policy field allows it" % (name, flag)) in r.err, str(r)


def test_policy_lifecycle(docker, policy):
    """run -d, exec (-u, -w, -e), stop with SIGTERM honoured, under the
    floor."""
    cid = docker("run", "-d", *POL, IMAGE, "sh", "-c", TRAPPER).ok().out.strip()
    wait_status(docker, cid, "running")
    r = docker("exec", "-u", "1000:1000", "-w", "/tmp", "-e", "X=y", cid, "sh", "-c",
               'id -u; pwd; echo "X=$X"; echo scratch > /tmp/f && cat /tmp/f')
    # -u 1000:1000: the container's own uid all the same (identities)
    lines = r.out.splitlines()
    assert r.rc == 0 and int(lines[0]) >= 1879048192, str(r)
    assert lines[1:] == ["/tmp", "X=y", "scratch"], str(r)
    r = docker("exec", cid, "sh", "-c", "exit 5")
    assert r.rc == 5, str(r)
    t0 = time.monotonic()
    docker("stop", "-t", "20", cid).ok()
    assert time.monotonic() - t0 < 10
    assert "got-term" in docker("logs", cid).out
    docker("rm", cid).ok()


def test_policy_run_it_pty(docker, policy):
    s = PtySession(docker.argv("run", "-it", "--rm", *POL, IMAGE, "sh"), rows=27, cols=81,
                   env=docker.env)
    try:
        # The default policy runs a host-root process as a uid of its own: the
        # shell's prompt is "$ ", not "# ".
        s.expect(r"\$ ")
        s.expect_stty_size(27, 81)
        s.send("echo pol-$((5*5))\r")
        s.expect(r"echo pol-\$\(\(5\*5\)\)\n")
        s.expect(r"pol-25\n")
        s.send("exit 8\r")
        assert s.wait() == 8, s.text
    finally:
        s.close()


def test_policy_refusal_reaches_the_user(docker, policy):
    """A bind mount from outside the policy's bindPrefixes is refused, and
    docker shows the policy's reason."""
    r = docker("run", "--rm", *POL, "-v", "/etc:/hostetc:ro", IMAGE, "true")
    assert r.rc != 0, str(r)
    assert "not allowed by the policy" in r.err and "/etc" in r.err, str(r)


PY_IMAGE = "agentsbx-e2e-python:latest"

# Writes 1-MiB files in its working directory until the first error.
PY_FILL = r"""
import errno, os
n = 0
try:
    while n < 60:
        with open("fill.%d" % n, "wb") as f:
            f.write(b"x" * (1 << 20))
        n += 1
    print("no error after", n, "MiB")
except OSError as e:
    print("stopped after", n, "MiB:", errno.errorcode[e.errno])
"""


@pytest.fixture
def python_image(docker, tmp_path):
    """Debian's python3 (the debootstrap image the sandbox suite uses),
    imported into this session's dockerd."""
    path = debootstrap_image("python", "python3")
    if not path:
        pytest.skip("no python3 image: debootstrap could not build one here")
    tar = str(tmp_path / "python.tar")
    run(["tar", "-C", path, "-cf", tar, "."], timeout=300).ok()
    docker("import", "--change", 'CMD ["python3"]', tar, PY_IMAGE, timeout=300).ok()
    os.unlink(tar)
    yield PY_IMAGE
    docker("rmi", "-f", PY_IMAGE)


def test_policy_writable_layer_what_users_see(docker, policy, python_image, tmp_path):
    """Issue 17, as users meet it under the default policy (the README says
    the same): Python writes to its working directory (the policy's writable
    layer over the read-only image), up to the cap, then ENOSPC; /tmp is the
    policy's tmpfs; `docker cp` and `docker commit` work on Docker's own
    writable layer, which is the policy layer's read-only lower: a file
    copied in is seen, what the container wrote is not copied out nor
    committed."""
    r = docker("run", "--rm", *POL, "-w", "/app", python_image, "python3", "-c",
               "import os; open('out.txt', 'w').write('data'); print(open('out.txt').read(), "
               "os.getuid(), sorted(os.listdir('.')))")
    data, uid, listing = r.out.strip().split(" ", 2)
    assert r.rc == 0 and data == "data" and listing == "['out.txt']", str(r)
    assert int(uid) >= 1879048192, str(r)  # a uid of the container's own
    r = docker("run", "--rm", *POL, "-w", "/app", python_image, "python3", "-c", PY_FILL)
    assert r.rc == 0, str(r)
    mib = int(r.out.split("after")[1].split()[0])
    assert "ENOSPC" in r.out and 28 <= mib <= 32, str(r)
    name = unique("wl")
    docker("run", "-d", "--name", name, *POL, "-w", "/app", IMAGE, "sh", "-c",
           "echo inside > made-inside; echo inside > /tmp/made-inside; sleep 60").ok()
    try:
        assert poll_until(lambda: docker("exec", name, "cat", "/app/made-inside").out == "inside\n",
                          timeout=20)
        src = tmp_path / "copied-in"
        src.write_text("from the host\n")
        cp_in = docker("cp", str(src), name + ":/copied-in")
        cp_in_tmp = docker("cp", str(src), name + ":/tmp/copied-in")
        seen = docker("exec", name, "sh", "-c", "cat /copied-in; ls /tmp")
        cp_out = docker("cp", name + ":/app/made-inside", str(tmp_path / "out"))
        committed = docker("commit", name, unique("wlimg"))
        assert cp_in.rc == 0 and cp_in_tmp.rc == 0, str(cp_in) + str(cp_in_tmp)
        assert seen.out.startswith("from the host\n"), str(seen)  # through the lower layer
        assert "copied-in" not in seen.out.split("\n", 1)[1], str(seen)  # /tmp: the tmpfs hides it
        assert cp_out.rc != 0 and "No such container:path" in cp_out.err, str(cp_out)
        assert committed.rc == 0, str(committed)
        img = committed.out.strip()
        ls = docker("run", "--rm", "--runtime", "runc", img, "sh", "-c", "ls /app /tmp; cat /copied-in")
        assert "made-inside" not in ls.out and "from the host" in ls.out, str(ls)
        docker("rmi", "-f", img)
    finally:
        docker("rm", "-f", name)
