# SPDX-License-Identifier: Apache-2.0
"""Tenants of `agentsbx mcp --listen --tokens FILE`: each bearer token is a
tenant; a tenant sees only its own sessions (another's id is "no session",
and another's Mcp-Session-Id is 404); no or a wrong token is 401 with
WWW-Authenticate; quotas are refused with a JSON-RPC error naming the
quota; the token file must be the operator's and 0600; a tenant's
allow_domains must be within the policy's egress names (refused naming the
field otherwise, accepted within them); SIGHUP reloads the tokens without
dropping sessions."""

import json
import os
import signal
import threading
import time

import pytest

from http_helpers import Mcp

TOKEN_A = "a" * 24 + "-token-of-tenant-a"
TOKEN_B = "b" * 24 + "-token-of-tenant-b"
TOKEN_C = "c" * 24 + "-token-of-tenant-c"


def write_tokens(path, tenants, mode=0o600):
    with open(path, "w") as f:
        json.dump({"tenants": tenants}, f)
    os.chmod(path, mode)
    return str(path)


TENANTS = [
    {"name": "a", "token": TOKEN_A, "sessions": 2, "concurrent_runs": 1, "queued_runs": 0,
     "memory": "128m", "cpus": 0.5},
    {"name": "b", "token": TOKEN_B},
]


@pytest.fixture
def tokens(tmp_path):
    return write_tokens(tmp_path / "tokens.json", TENANTS)


def error_message(reply):
    assert "error" in reply, reply
    return reply["error"]["message"]


def test_tokens_401(serve, tokens, python_image):
    srv = serve("--tokens", tokens)
    status, h, text = Mcp(srv.url).raw("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 401 and h["www-authenticate"] == 'Bearer realm="agentsbx"', (status, h)
    status, h, text = Mcp(srv.url, token="x" * 40).raw(
        "POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert status == 401 and 'error="invalid_token"' in h["www-authenticate"]
    # the health endpoint needs none (load balancers)
    status, _, text = Mcp(srv.url).raw("GET", path="/health")
    assert status == 200 and json.loads(text)["status"] == "ok"


def test_another_tenants_session_is_not_there(serve, tokens, python_image):
    srv = serve("--tokens", tokens)
    a, b = Mcp(srv.url, TOKEN_A), Mcp(srv.url, TOKEN_B)
    a.initialize()
    b.initialize()
    _, r = a.tool("session_create")
    sid = r["result"]["structuredContent"]["session_id"]
    _, r = a.tool("session_write_file", session_id=sid, path="secret.txt", content="A's")
    assert r["result"]["isError"] is False
    # B tries to list, read, run in and close it: "no session" each time
    _, r = b.tool("session_list")
    assert r["result"]["structuredContent"]["sessions"] == []
    for name, args in [("session_list_files", {}), ("session_read_file", {"path": "secret.txt"}),
                       ("session_run", {"code": "print(open('secret.txt').read())",
                                        "language": "python"}),
                       ("session_write_file", {"path": "x", "content": "B"}),
                       ("session_close", {})]:
        _, r = b.tool(name, session_id=sid, **args)
        assert r["result"]["isError"] is True, (name, r)
        assert "no session" in r["result"]["content"][0]["text"], (name, r)
    # B with A's Mcp-Session-Id: 404, as an unknown one
    status, _, _ = Mcp(srv.url, TOKEN_B).raw(
        "POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"Mcp-Session-Id": a.session})
    assert status == 404
    status, _, _ = Mcp(srv.url, TOKEN_B).raw("DELETE", headers={"Mcp-Session-Id": a.session})
    assert status == 404
    # A's session is untouched
    _, r = a.tool("session_read_file", session_id=sid, path="secret.txt")
    assert r["result"]["structuredContent"]["content"] == "A's"
    _, r = a.tool("session_list")
    assert [s["session_id"] for s in r["result"]["structuredContent"]["sessions"]] == [sid]
    _, r = a.tool("session_close", session_id=sid)
    assert r["result"]["isError"] is False


def test_quotas_named(serve, tokens, python_image):
    srv = serve("--tokens", tokens)
    a = Mcp(srv.url, TOKEN_A)
    a.initialize()
    _, r = a.tool("session_create", memory_mb=512)
    assert r["error"]["code"] == -32000
    assert error_message(r).startswith("Quota exceeded: memory: tenant a may have 128 MiB")
    _, r = a.tool("session_create", cpus=1)
    assert error_message(r).startswith("Quota exceeded: cpus: tenant a may have 0.5 CPUs")
    ids = []
    for _ in range(2):
        _, r = a.tool("session_create")
        ids.append(r["result"]["structuredContent"]["session_id"])
    _, r = a.tool("session_create")
    assert error_message(r).startswith("Quota exceeded: sessions: tenant a may have 2 open")
    for sid in ids:
        a.tool("session_close", session_id=sid)
    # each run gets the tenant's memory: 128 MiB
    _, r = a.tool("run_code", language="sh", code="cat /sys/fs/cgroup/memory.max "
                  "/sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null")
    assert str(128 << 20) in r["result"]["structuredContent"]["stdout"], r
    # concurrent_runs 1, queued_runs 0: a second run while one runs is refused
    slow = {}
    t = threading.Thread(target=lambda: slow.update(r=a.tool(
        "run_code", language="python", code="import time; time.sleep(3)")))
    t.start()
    time.sleep(1.0)
    _, r = a.tool("run_code", language="python", code="print(1)")
    t.join()
    assert error_message(r).startswith("Quota exceeded: concurrent_runs: tenant a may run 1")
    assert slow["r"][1]["result"]["isError"] is False
    # B has no quota of its own: the server's bounds only
    b = Mcp(srv.url, TOKEN_B)
    b.initialize()
    _, r = b.tool("session_create", memory_mb=200)
    assert r["result"]["isError"] is False
    b.tool("session_close", session_id=r["result"]["structuredContent"]["session_id"])


def test_token_file_refused(serve, tmp_path, python_image):
    loose = write_tokens(tmp_path / "loose.json", TENANTS, mode=0o644)
    srv = serve("--tokens", loose, wait=False)
    assert srv.p.wait(30) != 0
    assert "mode 0644 lets group or others at the tokens" in srv.stderr()
    domains = write_tokens(tmp_path / "domains.json",
                           [dict(TENANTS[1], allow_domains=["pypi.org"])])
    srv = serve("--tokens", domains, wait=False)
    assert srv.p.wait(30) != 0
    # The built-in policy names no domain: refused, naming the field.
    assert ("tenants[0]: allow domain pypi.org is not within the policy's names "
            "(rule egress; the policy field egress.allowDomains") in srv.stderr(), srv.stderr()
    # Within a policy's names: served.
    policy = tmp_path / "egress-policy.json"
    policy.write_text(json.dumps({"mode": "enforce", "auditLog": str(tmp_path / "audit.log"),
                                  "egress": {"allowDomains": ["pypi.org", "*.pythonhosted.org"]}}))
    srv = serve("--tokens", domains, policy=policy)
    srv.stop()
    over = write_tokens(tmp_path / "over.json", [dict(TENANTS[1], memory="64g")])
    srv = serve("--tokens", over, wait=False)
    assert srv.p.wait(30) != 0
    assert "over the policy's limit" in srv.stderr(), srv.stderr()
    short = write_tokens(tmp_path / "short.json", [{"name": "a", "token": "short"}])
    srv = serve("--tokens", short, wait=False)
    assert srv.p.wait(30) != 0 and "token: 16 to 512 characters" in srv.stderr()


def test_sighup_reloads_without_dropping_sessions(serve, tokens, python_image):
    srv = serve("--tokens", tokens)
    a = Mcp(srv.url, TOKEN_A)
    a.initialize()
    _, r = a.tool("session_create")
    sid = r["result"]["structuredContent"]["session_id"]
    assert Mcp(srv.url, TOKEN_C).raw("POST", {"jsonrpc": "2.0", "id": 1, "method": "ping"})[0] == 401
    write_tokens(tokens, TENANTS + [{"name": "c", "token": TOKEN_C}])
    srv.p.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    c = Mcp(srv.url, TOKEN_C)
    while time.monotonic() < deadline:
        try:
            c.initialize()
            break
        except AssertionError:
            time.sleep(0.1)
    assert c.session, "tenant c was not loaded"
    # a refused file keeps the tenants as they were
    os.chmod(tokens, 0o644)
    srv.p.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert srv.p.poll() is None
    _, r = a.tool("session_list")
    assert [s["session_id"] for s in r["result"]["structuredContent"]["sessions"]] == [sid]
    _, r = a.tool("session_close", session_id=sid)
    assert r["result"]["isError"] is False
