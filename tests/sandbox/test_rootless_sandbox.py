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
import time

import pytest

import asuser
from asuser import UID
from sbx_helpers import RUNTIME, debootstrap_image


@pytest.fixture
def user_env():
    if asuser.SETPRIV is None:
        pytest.skip("setpriv (util-linux) missing")
    tmp, xdg = asuser.make_dirs("agentsbx-rootless-sbx-")
    yield xdg
    left, procs = asuser.leftovers(xdg)
    shutil.rmtree(tmp, ignore_errors=True)
    assert left == [] and procs == [], "left: %s, processes: %s" % (left, procs)


@pytest.fixture(scope="module")
def python_rootfs():
    path = debootstrap_image("python", "python3")
    if not path:
        pytest.skip("no python image: debootstrap could not build it here")
    return path


def sandbox_as_user(xdg, *args, input=None):
    p = subprocess.run(asuser.argv(RUNTIME, "sandbox", "--json", *args),
                       input=input.encode() if input else None, env=asuser.env(xdg), cwd="/",
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
    p = subprocess.Popen(asuser.argv(RUNTIME, "mcp", "--rootfs", python_rootfs),
                         env=asuser.env(user_env), cwd="/",
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
    p = subprocess.run(asuser.argv(RUNTIME, "sandbox", "--json", "--image", "py", "--",
                                   "python3", "-c", "print(7)"),
                       env=asuser.env(user_env, XDG_DATA_HOME=data), cwd="/",
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    assert json.loads(p.stdout)["stdout"] == "7\n"


def test_egress_by_name_as_a_plain_user(user_env):
    """A plain user's sandbox with --allow-domain: the proxy runs as the
    user (forked by the user's runtime), the sockets in the sandbox's own
    user and network namespace; the name is reached, another refused."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "lib"))
    from fake_internet import ALLOWED, FakeInternet, egress_policy
    from sbx_helpers import busybox_image

    inet = FakeInternet()
    try:
        base = os.path.dirname(user_env)  # the user's 0755 temp dir
        pol = os.path.join(base, "egress.json")
        log = os.path.join(base, "egress.log")
        with open(pol, "w") as f:
            json.dump(egress_policy(["allowed.test", "denied.test"], log), f)
        os.chmod(pol, 0o644)
        rootfs = busybox_image(os.path.dirname(user_env))
        argv = inet.argv(asuser.argv(RUNTIME, "--policy", pol, "sandbox", "--json",
                                     "--rootfs", rootfs, "--allow-domain", "allowed.test", "--",
                                     "sh", "-c", "wget -qO- http://allowed.test/; "
                                     "wget -qO- http://denied.test/ 2>&1 | head -c 100"))
        p = subprocess.run(argv, env=asuser.env(user_env), cwd="/", capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        out = json.loads(p.stdout)["stdout"]
        assert "hello from %s" % ALLOWED in out and "403" in out, out
    finally:
        inet.close()
