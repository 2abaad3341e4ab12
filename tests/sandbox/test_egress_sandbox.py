# SPDX-License-Identifier: Apache-2.0
"""Egress by name (issue 27) through the agent front door: `agentsbx
sandbox --allow-domain`, `pip install` from a local index served as
allowed.test on a fake internet (tests/lib/fake_internet.py), and an MCP
session_create with allow_domains.  The runtime runs in the fake
internet's host-sim namespace; names resolve by the policy's pins."""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from fake_internet import ALLOWED, FakeInternet, egress_policy, wheel_index  # noqa: E402
from images import debootstrap_image  # noqa: E402
from sbx_helpers import RUNTIME  # noqa: E402


@pytest.fixture
def inet():
    i = FakeInternet()
    yield i
    i.close()


@pytest.fixture(scope="module")
def pip_image(image_root):
    path = debootstrap_image("python-pip", "python3,python3-pip")
    if not path:
        pytest.skip("no python image with pip: debootstrap could not build it here")
    link = os.path.join(image_root, "python-pip")
    if not os.path.exists(link):
        os.symlink(path, link)
    return "python-pip"


def policy(tmp_path, allow):
    p = tmp_path / "egress-policy.json"
    p.write_text(json.dumps(egress_policy(allow, os.environ["AGENTSBX_POLICY_LOG"])))
    return str(p)


def sandbox(inet, state_root, image_root, pol, image, *args, timeout=120):
    argv = inet.argv([RUNTIME, "--root", state_root, "--policy", pol, "sandbox", "--json",
                      "--image-root", image_root, "--image", image, "--timeout", "90"] + list(args))
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert p.stdout, p.stderr
    return json.loads(p.stdout.splitlines()[-1])


PIP = ("pip install --no-cache-dir --disable-pip-version-check --trusted-host allowed.test --index-url "
       "http://allowed.test/files/simple/ --target /tmp/site agentsbx-probe && "
       "PYTHONPATH=/tmp/site python3 -c 'import agentsbx_probe; print(agentsbx_probe.VALUE)'")


def test_pip_install_from_an_allowed_index(inet, state_root, image_root, pip_image, tmp_path,
                                           no_leftovers):
    wheel_index(inet.files)
    pol = policy(tmp_path, ["allowed.test", "other.test"])
    r = sandbox(inet, state_root, image_root, pol, pip_image, "--allow-domain", "allowed.test",
                "--", "sh", "-c", PIP)
    assert r["exit_code"] == 0 and r["stdout"].strip().endswith("42"), r
    assert any("agentsbx-probe" in l for l in inet.lines()), inet.lines()
    # the same call without allowed.test among its names: pip is refused,
    # and says the proxy's reason
    r = sandbox(inet, state_root, image_root, pol, pip_image, "--allow-domain", "other.test",
                "--", "sh", "-c", PIP.replace("pip install", "pip install -vvv"))
    out = r["stdout"] + r["stderr"]
    assert r["exit_code"] != 0, r
    assert "403 Client Error: Forbidden" in out, out


def test_allow_domain_beyond_the_policy_is_refused(inet, state_root, image_root, tmp_path):
    pol = policy(tmp_path, ["allowed.test"])
    argv = inet.argv([RUNTIME, "--root", state_root, "--policy", pol, "sandbox", "--image-root",
                      image_root, "--image", "busybox", "--allow-domain", "github.com", "--",
                      "true"])
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "egress.allowDomains (list github.com)" in p.stderr, p.stderr


def test_an_mcp_session_with_allow_domains(inet, state_root, image_root, tmp_path):
    pol = policy(tmp_path, ["allowed.test", "denied.test"])
    argv = inet.argv([RUNTIME, "--root", state_root, "--policy", pol, "mcp", "--image-root",
                      image_root, "--image", "busybox"])
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "session_create",
                    "arguments": {"language": "sh", "allow_domains": ["github.com"]}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "session_create",
                    "arguments": {"language": "sh", "allow_domains": ["allowed.test"]}}},
    ]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        for m in msgs:
            p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()
        replies = {}
        while len(replies) < 3:
            line = p.stdout.readline()
            assert line, p.stderr.read()
            m = json.loads(line)
            if "id" in m:
                replies[m["id"]] = m
        refused = replies[2]
        assert "egress.allowDomains" in json.dumps(refused), refused
        assert refused.get("error") or refused["result"]["isError"], refused
        assert not replies[3]["result"].get("isError"), replies[3]
        sid = replies[3]["result"]["structuredContent"]["session_id"]
        code = ("wget -qO- http://allowed.test/ 2>&1; wget -qO- http://denied.test/ 2>&1 | "
                "head -c 100")
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                                  "params": {"name": "session_run",
                                             "arguments": {"session_id": sid, "code": code,
                                                           "language": "sh"}}}) + "\n")
        p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == 4:
                break
        out = m["result"]["structuredContent"]["stdout"]
        assert "hello from %s" % ALLOWED in out and "403" in out, m
    finally:
        p.stdin.close()
        p.wait(60)
