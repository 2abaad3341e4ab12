# SPDX-License-Identifier: Apache-2.0
"""`agentsbx mcp`: the queue of runs waiting for a slot is first in, first
out; session_create takes its own limits and network, within the policy."""

import json
import os
import subprocess
import time

import pytest

from sbx_helpers import RUNTIME
from test_mcp import Client, call, tool


class PolicyClient(Client):
    """test_mcp.py's client, with --policy FILE when given."""

    def __init__(self, state_root, image_root, *flags, images, policy=None):
        argv = [RUNTIME, "--root", state_root]
        if policy:
            argv += ["--policy", policy]
        argv += ["mcp", "--image-root", image_root]
        for image in images:
            argv += ["--image", image]
        self.p = subprocess.Popen(argv + list(flags), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0
        self.buf = b""


@pytest.fixture
def make_client(state_root, image_root):
    clients = []

    def make(*flags, images, policy=None):
        c = PolicyClient(state_root, image_root, *flags, images=images, policy=policy)
        clients.append(c)
        return c

    yield make
    for c in clients:
        if c.p.poll() is None:
            rc, err = c.close()
            assert rc == 0, err


def test_queued_runs_are_served_in_arrival_order(make_client, python_image):
    c = make_client("--max-concurrent", "1", images=(python_image,))
    c.initialize()
    call(c, 100, "import time; time.sleep(1)")  # holds the only slot
    time.sleep(0.2)
    for i in range(1, 9):
        call(c, 100 + i, "print(%d)" % i)
    order = [c.recv(30)["id"] for _ in range(9)]
    assert order == list(range(100, 109)), order


def test_a_cancelled_queued_run_leaves_the_line(make_client, python_image):
    c = make_client("--max-concurrent", "1", images=(python_image,))
    c.initialize()
    call(c, 1, "import time; time.sleep(0.6)")
    time.sleep(0.2)
    for i in (2, 3, 4):
        call(c, i, "print(%d)" % i)
    c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 3, "reason": "test"}})
    assert [c.recv(30)["id"] for _ in range(3)] == [1, 2, 4]
    assert c.no_reply(0.3)


# ---- session_create's limits and network ------------------------------------------

def test_session_create_schema_has_limits_and_network(make_client, python_image):
    c = make_client(images=(python_image,))
    c.initialize()
    tools = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
    props = tools["session_create"]["inputSchema"]["properties"]
    assert props["memory_mb"]["type"] == "integer" and props["memory_mb"]["minimum"] == 4
    assert props["cpus"]["type"] == "number" and props["pids"]["type"] == "integer"
    assert props["network"]["type"] == "boolean"


@pytest.mark.parametrize("args, field", [
    ({"memory_mb": 1024}, "limits.memory"),
    ({"pids": 100000}, "limits.pids"),
    ({"cpus": 4}, "limits.cpuQuota"),
])
def test_session_limits_over_the_policy_are_refused(make_client, python_image, args, field):
    c = make_client(images=(python_image,))
    c.initialize()
    r = tool(c, "session_create", **args)
    text = r["content"][0]["text"]
    assert r["isError"] is True and field in text and "built-in default" in text, text


def test_session_limits_within_the_policy_apply(make_client, python_image):
    c = make_client(images=(python_image,))
    c.initialize()
    sid = tool(c, "session_create", memory_mb=64, pids=16)["structuredContent"]["session_id"]
    code = ("import os\n"
            "for f in ('memory.max', 'pids.max', 'memory/memory.limit_in_bytes', 'pids/pids.max'):\n"
            "    p = '/sys/fs/cgroup/' + f\n"
            "    if os.path.exists(p): print(open(p).read().strip())\n")
    r = tool(c, "session_run", session_id=sid, language="python", code=code)
    assert r["structuredContent"]["stdout"].split() == [str(64 << 20), "16"], r
    tool(c, "session_close", session_id=sid)


def test_bad_limit_arguments_say_why(make_client, python_image):
    c = make_client(images=(python_image,))
    c.initialize()
    for args, want in (({"memory_mb": "lots"}, "arguments.memory_mb"),
                       ({"memory_mb": 1}, "arguments.memory_mb"),
                       ({"cpus": 0}, "arguments.cpus"),
                       ({"network": "yes"}, "arguments.network")):
        r = c.request("tools/call", {"name": "session_create", "arguments": args})
        assert r["error"]["code"] == -32602 and want in r["error"]["message"], r


def test_session_network_as_the_policy_allows(make_client, python_image, tmp_path):
    netns = "agentsbx-mcp-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", netns], check=True)
    try:
        path = "/var/run/netns/" + netns
        c = make_client(images=(python_image,))
        c.initialize()
        r = tool(c, "session_create", network=True)
        assert r["isError"] is True and "offers no network" in r["content"][0]["text"]
        c = make_client("--network", path, images=(python_image,))
        c.initialize()
        r = tool(c, "session_create", network=True)
        assert r["isError"] is True and "networkAllowed" in r["content"][0]["text"], r
        policy = tmp_path / "policy.json"
        policy.write_text(json.dumps({"relaxable": ["network"]}))
        c = make_client("--network", path, images=(python_image,), policy=str(policy))
        c.initialize()
        r = tool(c, "session_create", network=True)
        assert r["isError"] is False, r
        sid = r["structuredContent"]["session_id"]
        r = tool(c, "session_run", session_id=sid, language="python",
                 code="print(open('/proc/net/dev').read())")
        assert "lo:" in r["structuredContent"]["stdout"], r
        tool(c, "session_close", session_id=sid)
    finally:
        subprocess.run(["ip", "netns", "delete", netns])
