# SPDX-License-Identifier: Apache-2.0
"""`agentsbx sandbox` for a plain user (issue 20): the sandbox process
makes a user namespace of its own (its ids mapped to themselves) for its
private mount namespace, tmpfs workspace and overlay (userxattr), and the
containers are rootless ones inside it (uid 0 in the container is the
user).  On this host no cgroup is delegated to the user: the run says so
and the wall-clock timeout still holds."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from sbx_helpers import RUNTIME, debootstrap_image

UID = 4711
SETPRIV = shutil.which("setpriv")


@pytest.fixture
def user_env():
    if SETPRIV is None:
        pytest.skip("setpriv (util-linux) missing")
    tmp = tempfile.mkdtemp(prefix="agentsbx-rootless-sbx-")
    os.chmod(tmp, 0o755)
    xdg = os.path.join(tmp, "run")
    os.mkdir(xdg, 0o700)
    os.chown(xdg, UID, UID)
    yield xdg
    left = [n for n in os.listdir(os.path.join(xdg, "agentsbx"))
            if not n.startswith(".")] if os.path.isdir(os.path.join(xdg, "agentsbx")) else []
    # The server's watchdog leaves a moment after its parent (a rescan).
    for _ in range(40):
        procs = subprocess.run(["pgrep", "-u", str(UID)], stdout=subprocess.PIPE).stdout.split()
        if not procs:
            break
        time.sleep(0.05)
    shutil.rmtree(tmp, ignore_errors=True)
    assert left == [] and procs == [], "left: %s, processes: %s" % (left, procs)


@pytest.fixture(scope="module")
def python_rootfs():
    path = debootstrap_image("python", "python3")
    if not path:
        pytest.skip("no python image: debootstrap could not build it here")
    return path


def sandbox_as_user(xdg, *args, input=None):
    env = {"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": xdg, "HOME": "/"}
    p = subprocess.run([SETPRIV, "--reuid", str(UID), "--regid", str(UID), "--clear-groups",
                        RUNTIME, "sandbox", "--json"] + list(args),
                       input=input.encode() if input else None, env=env, cwd="/",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_python_print_as_a_plain_user(user_env, python_rootfs):
    rc, out, err = sandbox_as_user(user_env, "--rootfs", python_rootfs, "--lang", "python",
                                   "--code", "-", input="import os\nprint(1, os.getuid())\n")
    assert rc == 0, err
    r = json.loads(out)
    assert r["stdout"] == "1 0\n" and r["exit_code"] == 0
    assert "rootless: no cgroup" in err  # said, not silently dropped


def test_timeout_holds_rootless(user_env, python_rootfs):
    t = time.monotonic()
    rc, out, err = sandbox_as_user(user_env, "--rootfs", python_rootfs, "--timeout", "1",
                                   "--", "python3", "-c", "while True: pass")
    r = json.loads(out)
    assert r["timed_out"] is True and r["exit_code"] == 137
    assert time.monotonic() - t < 5


def test_mcp_run_code_as_a_plain_user(user_env, python_rootfs):
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "run_code", "arguments": {"language": "python", "code": "print(6*7)"}}},
    ]
    env = {"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": user_env, "HOME": "/"}
    p = subprocess.Popen([SETPRIV, "--reuid", str(UID), "--regid", str(UID), "--clear-groups",
                          RUNTIME, "mcp", "--rootfs", python_rootfs], env=env, cwd="/",
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for m in msgs:
        p.stdin.write((json.dumps(m) + "\n").encode())
    p.stdin.flush()
    replies = {}
    while 2 not in replies:
        line = p.stdout.readline()
        assert line, p.stderr.read().decode()
        r = json.loads(line)
        replies[r.get("id")] = r
    p.stdin.close()
    assert p.wait(30) == 0
    result = replies[2]["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["stdout"] == "42\n"


def test_a_users_images_are_under_xdg_data_home(user_env, python_rootfs):
    """--image NAME for a plain user: $XDG_DATA_HOME/agentsbx/images/NAME."""
    data = os.path.join(os.path.dirname(user_env), "data")
    images = os.path.join(data, "agentsbx", "images")
    os.makedirs(images)
    os.symlink(python_rootfs, os.path.join(images, "py"))
    for d in (data, os.path.join(data, "agentsbx"), images):
        os.chown(d, UID, UID)
    env = {"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": user_env, "HOME": "/",
           "XDG_DATA_HOME": data}
    p = subprocess.run([SETPRIV, "--reuid", str(UID), "--regid", str(UID), "--clear-groups",
                        RUNTIME, "sandbox", "--json", "--image", "py", "--",
                        "python3", "-c", "print(7)"], env=env, cwd="/",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["stdout"] == "7\n"
