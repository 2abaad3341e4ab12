# SPDX-License-Identifier: Apache-2.0
"""Issue 12, row 15c: nothing outlives its caller unwatched.

Frameworks end a tool call that ran too long with `kill -9 -PGID`: every
process of the caller's process group at once.  The sandbox's watchdog
(agent/sandbox/sandbox_watchdog.c) must not be one of them: it has its own
session, sees its parent die (PR_SET_PDEATHSIG and a getppid() check) and
deletes every container of that parent (kills the cgroup, removes the state
and the cgroups).  Checked for `agentsbx sandbox` running a busy loop and
for `agentsbx mcp --warm 2` with two never-started warm sandboxes: within
2 s of the kill nothing of them is left.

The busybox image of tests/sandbox (the host's static busybox) is made per
test; the runtime runs under a child subreaper (as in tests/sandbox), which
reaps whatever is re-parented to it.
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "sandbox"))

from sbx_helpers import busybox_image  # noqa: E402

from conftest import RUNTIME  # noqa: E402
from escape_helpers import BUILDS, pick_runtime  # noqa: E402

pytestmark = pytest.mark.usefixtures("agentsbx_only")

# argv: state_root, mode (sandbox|mcp), n containers to wait for, runtime argv.
# Prints what was left 2 s after the group kill, as "LEFT <kind> <what>".
GROUP_KILL = r"""
import ctypes, glob, os, signal, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
state_root, mode, want, argv = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, process_group=0)
prefix = "sbx-%d-" % p.pid

def ours():
    try:
        return [n for n in os.listdir(state_root) if n.startswith(prefix)]
    except OSError:
        return []

def cgroups():
    found = []
    for parent in glob.glob("/sys/fs/cgroup/*/agentsbx") + ["/sys/fs/cgroup/agentsbx"]:
        try:
            found += [os.path.join(parent, n) for n in os.listdir(parent)
                      if n.startswith(prefix)]
        except OSError:
            pass
    return found

def procs():
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cgroup" % pid) as f:
                if "/agentsbx/" + prefix in f.read():
                    with open("/proc/%s/stat" % pid) as s:
                        if s.read().rsplit(")", 1)[1].split()[0] != "Z":
                            found.append(pid)
        except OSError:
            pass
    return found

end = time.monotonic() + 30
while len(ours()) < want:
    assert p.poll() is None, "the runtime exited early: %s" % p.returncode
    assert time.monotonic() < end, "the containers never appeared: %s" % ours()
    time.sleep(0.02)
time.sleep(0.5)
before = procs()
print("BEFORE", len(ours()), len(cgroups()), len(before), flush=True)
os.killpg(p.pid, signal.SIGKILL)
p.wait()
end = time.monotonic() + 2.0
while time.monotonic() < end and (ours() or cgroups() or procs()):
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass
    time.sleep(0.05)
for kind, what in (("state", ours()), ("cgroup", cgroups()), ("process", procs())):
    for w in what:
        print("LEFT", kind, w, flush=True)
# Clean up after a failing runtime, so that the host is left clean anyway.
for cid in ours():
    subprocess.run([argv[0], "--root", state_root, "delete", "--force", cid],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
end = time.monotonic() + 20
while time.monotonic() < end:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.02)
    except ChildProcessError:
        break
"""


@pytest.fixture
def images(tmp_path):
    root = str(tmp_path / "images")
    os.makedirs(root)
    busybox_image(root)
    return root


def group_kill(tmp_path, mode, want, argv, runtime=RUNTIME):
    state_root = str(tmp_path / "state")
    full = [runtime, "--root", state_root] + argv
    p = subprocess.run([sys.executable, "-c", GROUP_KILL, state_root, mode, str(want)] + full,
                       capture_output=True, timeout=120)
    out = p.stdout.decode()
    assert p.returncode == 0, (out, p.stderr.decode())
    assert "BEFORE %d" % want in out, out
    return [l for l in out.splitlines() if l.startswith("LEFT")], out


@pytest.mark.parametrize("build", BUILDS)
def test_group_kill_of_sandbox_leaves_no_container(tmp_path, images, build):
    runtime = pick_runtime(build, "watchdog-session")
    left, out = group_kill(tmp_path, "sandbox", 1,
                           ["sandbox", "--image-root", images, "--image", "busybox",
                            "--timeout", "60", "--", "sh", "-c", "while :; do :; done"],
                           runtime=runtime)
    if build == "weak":
        # The watchdog died with the group: the container ran on (the
        # script deleted it afterwards).
        assert any(l.startswith("LEFT process") for l in left), (
            "weak build (watchdog-session): nothing was left, the test proves "
            "nothing:\n" + out)
        return
    assert not left, "after kill -9 -PGID of `agentsbx sandbox`:\n" + out


def test_group_kill_of_mcp_leaves_no_warm_sandbox(tmp_path, images):
    left, out = group_kill(tmp_path, "mcp", 2,
                           ["mcp", "--image-root", images, "--image", "busybox",
                            "--warm", "2"])
    assert not left, "after kill -9 -PGID of `agentsbx mcp --warm 2`:\n" + out
