# SPDX-License-Identifier: Apache-2.0
"""`agentsbx session`: sandbox sessions from the command line, kept between
invocations by a server process per session (agent/session/session.h).

    AGENTSBX=build/agentsbx /usr/bin/python3 -m pytest -q tests/sandbox/test_session_cli.py

The session servers leave the caller's process group and outlive it: while
a test runs, pytest is a child subreaper (PID 1 never reaps here) and the
servers that ended are reaped after it (only then: the other modules'
tests expect their orphans to go to PID 1).  Every test also checks that no
session record is left under ROOT/.sessions.
"""

import base64
import ctypes
import json
import os
import signal
import subprocess
import time

import pytest

from sbx_helpers import RUNTIME, leftovers

PR_SET_CHILD_SUBREAPER = 36


def reap():
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if rest[0] == "Z" and int(rest[1]) == me:
            try:
                os.waitpid(int(name), os.WNOHANG)
            except ChildProcessError:
                pass


class Cli:
    def __init__(self, state_root, image_root):
        self.root = state_root
        self.images = image_root

    def argv(self, verb, *args, policy=None):
        argv = [RUNTIME, "--root", self.root]
        if policy:
            argv += ["--policy", policy]
        return argv + ["session", verb] + [str(a) for a in args]

    def raw(self, verb, *args, input=None, policy=None, timeout=60):
        p = subprocess.run(self.argv(verb, *args, policy=policy), input=input,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def ok(self, verb, *args, input=None):
        rc, out, err = self.raw(verb, *args, input=input)
        assert rc == 0, "session %s: rc %d: %s" % (verb, rc, err.decode())
        return out

    def json(self, verb, *args, input=None, rc=0):
        r, out, err = self.raw(verb, "--json", *args, input=input)
        assert r == rc, "session %s: rc %d: %s %s" % (verb, r, out, err.decode())
        lines = out.decode().splitlines()
        assert len(lines) == 1, out
        return json.loads(lines[0])

    def create(self, *args, image="busybox"):
        return self.ok("create", "--image-root", self.images, "--image", image,
                       *args).decode().strip()

    def sessions(self):
        d = os.path.join(self.root, ".sessions")
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def server_pid(self, name):
        for s in self.json("list"):
            if s["session_id"] == name:
                return s["pid"]
        return None


def settled(state_root, timeout=5.0):
    """Leftovers once the orphans re-parented to us are reaped ({} if none)."""
    end = time.monotonic() + timeout
    while True:
        reap()
        left = leftovers(state_root)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


@pytest.fixture
def subreaper(state_root):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    yield
    try:
        assert settled(state_root) == {}
    finally:
        libc.prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


@pytest.fixture
def cli(subreaper, state_root, image_root):
    c = Cli(state_root, image_root)
    yield c
    for name in c.sessions():
        c.raw("close", name)
    assert settled(state_root) == {}
    assert c.sessions() == []


def wait_for(cond, timeout=10.0, what="condition"):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out waiting for " + what
        time.sleep(0.02)


def containers(root):
    return [n for n in os.listdir(root) if n.startswith("sbx-")] if os.path.isdir(root) else []


# ---- a session end to end -------------------------------------------------------

MAKE_PLOT = r"""
import csv, os, struct, zlib
rows = list(csv.DictReader(open("data.csv")))
def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data)))
pixels = b"\0" + bytes(int(r["n"]) * 10 for r in rows)
png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", len(rows), 1, 8, 0, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b""))
os.makedirs("out", exist_ok=True)
open("out/plot.png", "wb").write(png)
print("rows", len(rows), "total", sum(int(r["n"]) for r in rows))
"""


def test_a_session_end_to_end(cli, python_image, state_root):
    name = cli.create("--idle", "60", image=python_image)
    assert cli.sessions() == [name]
    cli.ok("write", name, "data.csv", input=b"name,n\na,1\nb,2\nc,3\n")
    r = cli.json("run", name, "--code", "-", input=MAKE_PLOT.encode())
    assert r["exit_code"] == 0, r
    assert r["stdout"] == "rows 3 total 6\n"
    png = cli.ok("read", name, "/workspace/out/plot.png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 40
    j = cli.json("read", name, "out/plot.png")
    assert base64.b64decode(j["content_base64"]) == png and j["size"] == len(png)
    names = {e["name"]: e["type"] for e in cli.json("ls", name)["entries"]}
    assert names == {"data.csv": "file", "out": "directory"}
    # The next invocation sees the same files; the rest of the root is fresh.
    r = cli.json("run", name, "--code", "-", input=b"import os; print(sorted(os.listdir('.')))")
    assert r["stdout"] == "['data.csv', 'out']\n"
    cli.ok("close", name)
    assert cli.sessions() == []
    rc, out, err = cli.raw("run", name, "--code", "-", input=b"print(1)")
    assert rc == 125 and b"no session " + name.encode() in err


def test_a_python_exception_is_the_programs_result_not_a_failure(cli, python_image):
    """A result with "error" (the exception's name, value, traceback) is
    the program's: exit status 0 with --json, the result printed."""
    name = cli.create(image=python_image)
    r = cli.json("run", name, "--code", "-", input=b"x = 1\nundefined_name\n")
    assert r["exit_code"] == 1 and r["error"]["name"] == "NameError", r
    assert "undefined_name" in r["error"]["value"] and "line 2" in r["error"]["traceback"]
    rc, out, err = cli.raw("run", name, "--code", "-", input=b"1/0")
    assert rc == 1 and b"ZeroDivisionError" in err, (rc, err)
    cli.ok("close", name)


def test_commands_stdin_exit_codes_and_timeouts(cli):
    name = cli.create("--lang", "sh")
    rc, out, err = cli.raw("run", name, "--", "sh", "-c", "echo hi > a; cat a; exit 3")
    assert (rc, out) == (3, b"hi\n")
    rc, out, _ = cli.raw("run", name, "--code", "-", input=b"cat a; pwd")
    assert (rc, out) == (0, b"hi\n/workspace\n")
    rc, out, _ = cli.raw("run", name, "--stdin", "-", "--", "sh", "-c", "tr a-z A-Z",
                         input=b"shout\n")
    assert (rc, out) == (0, b"SHOUT\n")
    r = cli.json("run", name, "--timeout", "0.5", "--", "sh", "-c", "echo before; sleep 30")
    assert r["timed_out"] is True and r["stdout"] == "before\n"
    rc, _, err = cli.raw("run", name, "--", "no-such-command")
    assert rc == 127 and b"no-such-command" in err
    cli.ok("close", name)


def test_paths_stay_inside_the_workspace(cli):
    name = cli.create("--lang", "sh")
    cli.ok("run", name, "--", "sh", "-c", "ln -s /etc/passwd link; ln -s / root")
    for path in ("/etc/passwd", "link", "root/etc/passwd", "../../etc/passwd"):
        r = cli.json("read", name, path, rc=125)
        assert "error" in r, path
    r = cli.json("write", name, "root/etc/evil", input=b"x", rc=125)
    assert "error" in r
    assert not os.path.exists("/etc/evil")
    cli.ok("close", name)


def test_files_round_trip_binary(cli):
    name = cli.create()
    blob = bytes(range(256)) * 1000
    cli.ok("write", name, "sub/dir/blob.bin", input=blob)
    assert cli.ok("read", name, "sub/dir/blob.bin") == blob
    rc, out, _ = cli.raw("run", name, "--", "wc", "-c", "/workspace/sub/dir/blob.bin")
    assert rc == 0 and out.split()[0] == b"256000"
    cli.ok("close", name)


# What the code does to a file the host put in: change it, rename it, delete
# it and the directories made for it, as with a file uploaded to E2B.  Under
# the default policy the code runs as the session's own uid (identities),
# never root: a root-owned 0644 file in a root-owned directory was EACCES.
CHANGE_RENAME_DELETE = r"""
set -e
echo more >> up/a.txt
echo new > top.txt
mv up/a.txt up/b.txt
mv top.txt up/c.txt
cat up/b.txt up/c.txt
chmod 600 up/b.txt
rm up/b.txt up/c.txt
rmdir up/deeper/dir up/deeper up
ls -A /workspace
echo done
"""


def test_files_the_host_wrote_are_the_codes_to_change_rename_delete(cli):
    name = cli.create("--lang", "sh")
    cli.ok("write", name, "up/a.txt", input=b"from the host\n")
    cli.ok("write", name, "/workspace/top.txt", input=b"old\n")
    cli.ok("write", name, "up/deeper/dir/x", input=b"x")
    cli.ok("run", name, "--", "rm", "up/deeper/dir/x")
    r = cli.json("run", name, "--code", "-", input=CHANGE_RENAME_DELETE.encode())
    assert (r["exit_code"], r["stderr"]) == (0, ""), r
    assert r["stdout"] == "from the host\nmore\nnew\ndone\n"
    # A file the code made and the host then overwrites stays the code's.
    cli.ok("run", name, "--", "sh", "-c", "echo mine > own; chmod 600 own")
    cli.ok("write", name, "own", input=b"host\n")
    rc, out, err = cli.raw("run", name, "--", "sh", "-c", "echo again >> own && cat own && rm own")
    assert (rc, out) == (0, b"host\nagain\n"), err
    cli.ok("close", name)


# ---- life and death ---------------------------------------------------------------

def test_an_idle_session_closes_itself(cli, state_root):
    name = cli.create("--idle", "1")
    wait_for(lambda: cli.sessions() == [], 10, "the idle session to close")
    rc, _, err = cli.raw("ls", name)
    assert rc == 125 and b"no session" in err
    assert settled(state_root) == {}


def test_close_kills_a_run_in_progress(cli, state_root):
    name = cli.create()
    p = subprocess.Popen(cli.argv("run", name, "--json", "--", "sleep", "60"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: containers(state_root), 10, "the run's container")
    t = time.monotonic()
    cli.ok("close", name)
    assert time.monotonic() - t < 5
    out, _ = p.communicate(timeout=10)
    assert p.returncode == 125 and "error" in json.loads(out)
    assert cli.sessions() == []
    assert settled(state_root) == {}


def test_a_client_that_goes_away_kills_its_run(cli, state_root):
    name = cli.create()
    p = subprocess.Popen(cli.argv("run", name, "--", "sleep", "60"),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: containers(state_root), 10, "the run's container")
    p.send_signal(signal.SIGINT)  # Ctrl-C
    p.wait(timeout=10)
    wait_for(lambda: not containers(state_root), 5, "the run's container to go")
    rc, out, _ = cli.raw("run", name, "--", "echo", "still here")
    assert (rc, out) == (0, b"still here\n")
    cli.ok("close", name)


def test_a_killed_server_is_dead_and_close_removes_what_is_left(cli, state_root):
    name = cli.create()
    p = subprocess.Popen(cli.argv("run", name, "--", "sleep", "60"),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: containers(state_root), 10, "the run's container")
    os.kill(cli.server_pid(name), signal.SIGKILL)
    p.wait(timeout=10)
    assert p.returncode == 125
    reap()
    # Its watchdog deletes the container; its workspace went with its
    # mount namespace.  The record stays, dead, until close.
    wait_for(lambda: not containers(state_root), 10, "the watchdog")
    assert [s["status"] for s in cli.json("list")] == ["dead"]
    rc, _, err = cli.raw("run", name, "--", "true")
    assert rc == 125 and b"not running" in err
    r = cli.json("close", name)
    assert r == {"session_id": name, "closed": True, "was_dead": True}
    assert cli.sessions() == []
    assert settled(state_root) == {}


def test_names_and_errors(cli):
    name = cli.create()
    assert name.startswith("s-")
    rc, _, err = cli.raw("create", "--image-root", cli.images, "--image", "busybox", name)
    assert rc == 125 and b"exists already" in err
    r = cli.json("create", "--image-root", cli.images, "--image", "busybox", "../x", rc=125)
    assert "session name" in r["error"]["message"]
    r = cli.json("create", "--image-root", cli.images, "--image", "missing", rc=125)
    assert "image \"missing\" not found" in r["error"]["message"]
    r = cli.json("run", "nosuch", "--", "true", rc=125)
    assert "no session nosuch" in r["error"]["message"]
    cli.ok("close", name)
    assert cli.sessions() == []


def test_twenty_sessions_opened_and_closed_leave_nothing(cli, state_root):
    names = [cli.create("--lang", "sh") for _ in range(20)]
    assert cli.sessions() == sorted(names)
    assert [s["status"] for s in cli.json("list")] == ["alive"] * 20
    cli.ok("close", *names)
    assert cli.sessions() == []
    assert settled(state_root) == {}


def test_two_sessions_never_share_a_uid(cli, tmp_path):
    """A session's workspace holds its uid from inside the session server's
    own mount namespace; another process could not see that path and took
    the holder for stale (two sessions on one uid).  A range of one uid:
    the second session is refused while the first lives, and gets it once
    the first is closed."""
    pol = tmp_path / "one-uid.json"
    pol.write_text('{"identities": {"first": 1879990000, "count": 1}}')
    rc, out, err = cli.raw("create", "--image-root", cli.images, "--image", "busybox",
                           "--lang", "sh", policy=str(pol))
    assert rc == 0, err
    first = out.decode().strip()
    rc, out, err = cli.raw("create", "--image-root", cli.images, "--image", "busybox",
                           "--lang", "sh", policy=str(pol))
    assert rc != 0 and b'"identities"' in err, (out, err)
    cli.ok("close", first)
    rc, out, err = cli.raw("create", "--image-root", cli.images, "--image", "busybox",
                           "--lang", "sh", policy=str(pol))
    assert rc == 0, err
    cli.ok("close", out.decode().strip())


# ---- limits and network, as the policy allows ------------------------------------------

@pytest.mark.parametrize("flags, field", [
    (("--memory", "1g"), "limits.memory"),
    (("--pids", "100000"), "limits.pids"),
    (("--cpus", "4"), "limits.cpuQuota"),
    (("--network", "/proc/self/ns/net"), "networkAllowed"),
])
def test_over_the_policy_is_refused_with_the_policy_field(cli, flags, field):
    r = cli.json("create", "--image-root", cli.images, "--image", "busybox", *flags, rc=125)
    msg = r["error"]["message"]
    assert field in msg and "built-in default" in msg, msg
    assert cli.sessions() == []


def test_limits_within_the_policy_apply_to_each_run(cli):
    name = cli.create("--memory", "64m", "--pids", "16")
    # The container's own cgroup files (v2, or the v1 memory and pids ones).
    script = ("cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max 2>/dev/null || "
              "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max")
    rc, out, err = cli.raw("run", name, "--", "sh", "-c", script)
    if rc != 0:
        pytest.skip("no cgroup files in the container here: " + err.decode())
    assert out.split() == [str(64 << 20).encode(), b"16"]
    cli.ok("close", name)


def test_network_the_policy_allows(cli, tmp_path, state_root):
    netns = "agentsbx-sess-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        policy = tmp_path / "policy.json"
        policy.write_text(json.dumps({"relaxable": ["network"]}))
        rc, out, err = cli.raw("create", "--image-root", cli.images, "--image", "busybox",
                               "--network", "/var/run/netns/" + netns, policy=str(policy))
        assert rc == 0, err
        name = out.decode().strip()
        rc, out, err = cli.raw("run", name, "--", "cat", "/proc/net/dev")
        assert rc == 0 and b"lo:" in out, err
        cli.ok("close", name)
    finally:
        subprocess.run(["ip", "netns", "delete", netns])


def test_a_relative_root_and_policy_still_work_for_the_server(cli, tmp_path, state_root):
    """The server lives in /, not in the caller's directory: --root and
    --policy given relative are made absolute for it."""
    (tmp_path / "p.json").write_text("{}")
    rel_root = os.path.relpath(state_root, str(tmp_path))
    base = [RUNTIME, "--root", rel_root, "--policy", "p.json", "session"]
    p = subprocess.run(base + ["create", "--image-root", cli.images, "--image", "busybox", "rel"],
                       cwd=str(tmp_path), capture_output=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run(base + ["run", "rel", "--", "echo", "ok"], cwd=str(tmp_path),
                       capture_output=True)
    assert (p.returncode, p.stdout) == (0, b"ok\n"), p.stderr
    cli.ok("close", "rel")


def test_close_works_for_a_session_created_with_sigterm_ignored(cli, state_root):
    """A framework may spawn us with SIGTERM ignored (nohup): the server
    still stops at once on close's SIGTERM (it blocks the signal for its
    signalfd, and a blocked signal is kept even when its action is to
    ignore it)."""
    p = subprocess.run(["sh", "-c", "trap '' TERM INT HUP; exec \"$@\"", "sh"] +
                       cli.argv("create", "--image-root", cli.images, "--image", "busybox",
                                "ign"), capture_output=True)
    assert p.returncode == 0, p.stderr
    t = time.monotonic()
    r = cli.json("close", "ign")
    assert r["was_dead"] is False and time.monotonic() - t < 3, r
