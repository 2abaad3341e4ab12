# SPDX-License-Identifier: Apache-2.0
"""Warm interpreters (`agentsbx mcp --warm N`, agent/sandbox/sandbox_pool.c):
each warm container has its interpreter started before the call and serves
one run; nothing of one run is visible to the next.  No timing is asserted
here (bench/warm.py measures)."""

import json
import os
import time

import pytest

from test_mcp import Client, sandboxes
from sbx_helpers import wait_no_leftovers

IDENTITIES = "/run/agentsbx/.identities"

# Run 1: leave something everywhere it can.
LEAVE = r'''
import ctypes, json, os, socket, sys, time, builtins
MARK = "agentsbx-warm-mark"
written = []
for top, dirs, files in os.walk("/", topdown=True):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys")]
    try:
        with open(os.path.join(top, MARK), "w") as f:
            f.write("run 1")
        written.append(top)
    except OSError:
        pass
libc = ctypes.CDLL(None, use_errno=True)
IPC_CREAT = 0o1000
shm = libc.shmget(0x5a5a, 4096, IPC_CREAT | 0o666)
sem = libc.semget(0x5a5b, 1, IPC_CREAT | 0o666)
msg = libc.msgget(0x5a5c, IPC_CREAT | 0o666)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind("\0agentsbx-warm-test")
listener.listen(1)
os.environ["AGENTSBX_LEAK"] = "1"
builtins.agentsbx_leak = 1
sys.modules["agentsbx_leak"] = type(sys)("agentsbx_leak")
if os.fork() == 0:              # a daemon: its own session, the socket kept open
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "600"])
    os._exit(0)
os.wait()
time.sleep(0.2)
print(json.dumps({"written": written, "shm": shm, "sem": sem, "msg": msg,
                  "procs": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
                  "unix": "@agentsbx-warm-test" in open("/proc/net/unix").read()}))
'''

# Run 2: look for all of it.
FIND = r'''
import builtins, json, os, socket, sys
found = {}
marks = []
for top, dirs, files in os.walk("/", topdown=True):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys")]
    if "agentsbx-warm-mark" in files:
        marks.append(top)
found["marks"] = marks
found["procs"] = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, os.getpid())]
found["sysv"] = [l for kind in ("shm", "sem", "msg")
                 for l in open("/proc/sysvipc/" + kind).read().splitlines()[1:]]
found["unix_listed"] = "@agentsbx-warm-test" in open("/proc/net/unix").read()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\0agentsbx-warm-test")
    found["unix_connected"] = True
except OSError:
    found["unix_connected"] = False
found["env"] = "AGENTSBX_LEAK" in os.environ
found["builtins"] = hasattr(builtins, "agentsbx_leak")
found["modules"] = "agentsbx_leak" in sys.modules
with open("/proc/self/stat") as f:
    start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
print(json.dumps({"found": found, "started": start_ticks / os.sysconf("SC_CLK_TCK")}))
'''


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def wait_pool(state_root, n):
    deadline = time.monotonic() + 60
    while len(sandboxes(state_root)) < n:
        assert time.monotonic() < deadline, "the pool never filled"
        time.sleep(0.05)


def start_time(pid):
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def our_holders(state_root, server):
    """Identity holders of this test's sandboxes: their containers' state
    directories under state_root, and the workspaces of the server's own
    (server is "pid:PID:START": a stale holder of a reused pid is not it)."""
    held = []
    if not os.path.isdir(IDENTITIES):
        return held
    for uid in os.listdir(IDENTITIES):
        d = os.path.join(IDENTITIES, uid)
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            try:
                with open(os.path.join(d, name)) as f:
                    text = f.read()
            except OSError:
                continue
            if text.startswith(state_root + "/") or text.strip() == server:
                held.append((uid, text))
    return held


@pytest.fixture
def warm_client(state_root, image_root, python_image):
    clients = []

    def make(*flags, images=(python_image,)):
        c = Client(state_root, image_root, *flags, images=images)
        clients.append(c)
        c.initialize()
        return c

    yield make
    for c in clients:
        if c.p.poll() is None:
            rc, err = c.close()
            assert rc == 0, err


def test_a_warm_run_finds_nothing_of_the_run_before(warm_client, state_root):
    c = warm_client("--warm", "2")
    wait_pool(state_root, 2)
    time.sleep(0.5)
    before = uptime()  # both warm interpreters were started before this
    r1 = c.run_code(LEAVE)["result"]["structuredContent"]
    assert r1["exit_code"] == 0, r1
    left = json.loads(r1["stdout"])
    # What run 1 could write to (so the search below means something).
    assert {"/tmp", "/outputs", "/dev/shm"} <= set(left["written"]), left
    assert min(left["shm"], left["sem"], left["msg"]) >= 0 and left["unix"], left
    assert len(left["procs"]) >= 3, left  # init, the program, the daemon
    r2 = c.run_code(FIND)["result"]["structuredContent"]
    assert r2["exit_code"] == 0, r2
    out = json.loads(r2["stdout"])
    # run 2 ran in a warm container: its interpreter started before run 1
    assert out["started"] < before, (out, before)
    assert out["found"] == {"marks": [], "procs": [], "sysv": [], "unix_listed": False,
                            "unix_connected": False, "env": False, "builtins": False,
                            "modules": False}, out
    rc, err = c.close()
    assert rc == 0, err
    assert wait_no_leftovers(state_root, 1.0) == {}


def test_warm_sandboxes_give_their_identities_back(warm_client, state_root):
    c = warm_client("--warm", "2")
    wait_pool(state_root, 2)
    pid = "pid:%d:%d" % (c.p.pid, start_time(c.p.pid))
    if not os.path.isdir(IDENTITIES) or not our_holders(state_root, pid):
        pytest.skip("the policy in force gives no identities (policy field identities)")
    r = c.run_code("import os; print(os.getuid())")["result"]["structuredContent"]
    assert r["exit_code"] == 0 and int(r["stdout"]) != 0, r
    rc, err = c.close()
    assert rc == 0, err
    assert our_holders(state_root, pid) == []
    assert wait_no_leftovers(state_root, 1.0) == {}


def test_warm_python_is_the_program_as_cold(warm_client, state_root):
    c = warm_client("--warm", "1")
    wait_pool(state_root, 1)
    code = ("import sys\n"
            "print(sys.argv, __name__, sys.stdin.read())\n"
            "6 * 7\n")
    r = c.run_code(code, stdin="in")["result"]["structuredContent"]
    assert r["stdout"] == "['/.agentsbx/main.py'] __main__ in\n", r
    assert r["value"] == "42" and r["exit_code"] == 0, r
    wait_pool(state_root, 1)
    r = c.run_code("def f():\n    1 / 0\nf()\n")["result"]["structuredContent"]
    assert r["exit_code"] == 1 and r["error"]["name"] == "ZeroDivisionError", r
    assert "_agentsbx_main" not in r["stderr"] and 'main.py", line 3' in r["stderr"], r
    wait_pool(state_root, 1)
    r = c.run_code("import sys; sys.exit(5)")["result"]["structuredContent"]
    assert r["exit_code"] == 5, r


def test_warm_sh_is_the_program_as_cold(warm_client, state_root, python_image):
    c = warm_client("--warm", "1")
    wait_pool(state_root, 2)  # python's and sh's (the python image has both)
    r = c.run_code('echo "$0 $# $(cat)"; exit 3', language="sh",
                   stdin="in")["result"]["structuredContent"]
    assert (r["stdout"], r["exit_code"]) == ("/.agentsbx/main.sh 0 in\n", 3), r


def test_warm_node_is_the_program_as_cold(warm_client, state_root, node_image):
    c = warm_client("--warm", "1", images=(node_image,))
    wait_pool(state_root, 2)  # node's and sh's
    code = ("console.log(require.main === module, process.argv[1], "
            "require('fs').readFileSync(0, 'utf8'));\n"
            "process.exitCode = 4;\n")
    r = c.run_code(code, language="node", stdin="in")["result"]["structuredContent"]
    assert (r["stdout"], r["exit_code"]) == ("true /.agentsbx/main.js in\n", 4), r
