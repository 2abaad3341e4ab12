# SPDX-License-Identifier: Apache-2.0
"""The HTTP edge of `agentsbx mcp --listen`: Host and Origin (DNS
rebinding), a 100-MiB body refused before a byte of it is read, 200 idle
connections and a byte-a-second client do not keep a normal client from
being served, 429 over the run queue, the protocol's status codes, TLS with
a test certificate, plain HTTP on a non-loopback address refused without
--insecure-listen (an address on a veth interface in a network namespace
this test makes -- this kernel has no dummy module; 127.0.0.2 counts as
loopback, as all of 127.0.0.0/8 does),
a unix socket."""

import json
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import RUNTIME
from http_helpers import Mcp

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def test_host_and_origin(serve):
    srv = serve()
    m = Mcp(srv.url)
    m.initialize()
    assert m.raw("POST", PING, {"Origin": "http://localhost:5173"})[0] == 200
    assert m.raw("POST", PING, {"Origin": "http://127.0.0.1"})[0] == 200
    status, _, text = m.raw("POST", PING, {"Origin": "https://evil.example.com"})
    assert status == 403 and "Origin" in text
    assert m.raw("POST", PING, {"Origin": "null"})[0] == 403
    assert m.raw("POST", PING, {"Host": "evil.example.com:%d" % srv.port})[0] == 403
    assert m.raw("POST", PING, {"Host": "localhost:%d" % srv.port})[0] == 200
    # an Origin the operator allows
    srv2 = serve("--allow-origin", "https://app.example.com", "--allow-host", "mcp.internal")
    m2 = Mcp(srv2.url)
    m2.initialize()
    assert m2.raw("POST", PING, {"Origin": "https://app.example.com"})[0] == 200
    assert m2.raw("POST", PING, {"Host": "mcp.internal"})[0] == 200


def test_status_codes(serve):
    srv = serve()
    m = Mcp(srv.url)
    assert m.raw("POST", PING)[0] == 400  # no session, not initialize
    m.initialize()
    assert m.raw("GET")[0] == 405
    assert m.raw("PUT", PING)[0] == 405
    assert m.raw("POST", PING, path="/other")[0] == 404
    assert m.raw("POST", PING, {"Accept": "application/json"})[0] == 406
    assert m.raw("POST", "x=1", {"Content-Type": "application/x-www-form-urlencoded"})[0] == 415
    assert m.raw("POST", PING, {"MCP-Protocol-Version": "1999-01-01"})[0] == 400
    assert m.raw("POST", PING, {"MCP-Protocol-Version": "2025-03-26"})[0] == 200
    status, _, text = m.raw("POST", "{not json")
    assert status == 400 and json.loads(text)["error"]["code"] == -32700
    # a notification: 202, no body
    status, _, text = m.raw("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202 and text == ""
    assert m.raw("DELETE")[0] == 200
    assert m.raw("POST", PING)[0] == 404


def test_big_body_refused_unread(serve):
    srv = serve()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Accept: application/json, text/event-stream\r\n"
               "Content-Length: %d\r\n\r\n" % (100 << 20)).encode())
    t = time.monotonic()
    answer = s.recv(4096).decode()
    took = time.monotonic() - t
    assert answer.startswith("HTTP/1.1 413"), answer
    assert took < 2
    # and the connection is closed rather than read: sending the body fails
    sent = 0
    with pytest.raises(OSError):
        for _ in range(200):
            s.sendall(b"x" * (1 << 20))
            sent += 1
    s.close()
    assert sent < 100, "%d MiB of the body went in" % sent
    # a chunked body without a length is cut at --max-body
    srv2 = serve("--max-body", "64k")
    m = Mcp(srv2.url)
    m.initialize()
    status, _, _ = m.raw("POST", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping",
                                             "params": {"pad": "x" * 100000}}))
    assert status == 413


def test_idle_and_slow_clients_do_not_stop_a_normal_one(serve):
    srv = serve("--idle-timeout", "60")
    idle = [socket.create_connection(("127.0.0.1", srv.port), timeout=10) for _ in range(200)]
    slow = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    stop = threading.Event()

    def drip():
        request = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"y" * 1000
        for b in request:
            if stop.wait(1.0):
                return
            slow.send(bytes([b]))

    t = threading.Thread(target=drip)
    t.start()
    try:
        time.sleep(2.5)
        start = time.monotonic()
        m = Mcp(srv.url, timeout=10)
        m.initialize()
        status, _, reply = m.request("tools/list")
        took = time.monotonic() - start
        assert status == 200 and reply["result"]["tools"]
        print("a normal client beside 200 idle and a byte-a-second one: %.3f s" % took)
        assert took < 5
    finally:
        stop.set()
        t.join()
        for s in idle + [slow]:
            s.close()


def test_429_over_the_run_queue(serve, python_image):
    srv = serve("--max-concurrent", "1", "--max-queued", "1")
    m = Mcp(srv.url)
    m.initialize()
    results = []

    def run():
        results.append(m.tool("run_code", language="python",
                              code="import time; time.sleep(2)"))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
        time.sleep(0.5)
    status, h, reply = m.request("tools/call", {"name": "run_code", "arguments": {
        "language": "python", "code": "print(1)"}})
    for t in threads:
        t.join()
    assert status == 429 and h.get("retry-after") == "1", (status, h, reply)
    assert reply["error"]["code"] == -32001 and "--max-queued" in reply["error"]["message"]
    assert [r[1]["result"]["isError"] for r in results] == [False, False]


@pytest.fixture
def cert(tmp_path):
    if not shutil.which("openssl"):
        pytest.skip("openssl is needed for a test certificate (tests/install-deps.sh)")
    key, crt = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                    "-out", str(crt)], check=True, capture_output=True)
    return str(crt), str(key)


def test_tls(serve, cert, python_image):
    crt, key = cert
    srv = serve("--tls-cert", crt, "--tls-key", key)
    assert srv.url.startswith("https://127.0.0.1:")
    m = Mcp(srv.url, cafile=crt)
    m.initialize()
    _, r = m.tool("run_code", language="python", code="print('over tls')")
    assert r["result"]["structuredContent"]["stdout"] == "over tls\n"
    # plain HTTP to it is not answered as HTTP
    with pytest.raises(Exception):
        Mcp(srv.url.replace("https", "http")).initialize()
    # one without the other is refused
    srv2 = serve("--tls-cert", crt, wait=False)
    assert srv2.p.wait(30) != 0 and "--tls-cert and --tls-key go together" in srv2.stderr()


def test_non_loopback_needs_tls_or_the_flag(serve, tmp_path):
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tenants": [{"name": "t", "token": "t" * 32}]}))
    os.chmod(tokens, 0o600)
    # refused before any socket: no traffic anywhere
    srv = serve("--tokens", str(tokens), listen=("192.0.2.1:8080",), wait=False)
    assert srv.p.wait(30) != 0
    assert "not a loopback address, and plain HTTP would carry" in srv.stderr()
    srv = serve(listen=("192.0.2.1:8080",), wait=False)
    assert srv.p.wait(30) != 0
    # 127.0.0.2 is loopback: no TLS needed
    srv = serve(listen=("127.0.0.2:0",))
    assert Mcp(srv.url).raw("GET", path="/health")[0] == 200


def test_non_loopback_in_a_netns_with_the_flag(tmp_path, state_root, image_root):
    """With --insecure-listen (and --tokens) it serves an address of a
    veth interface, in a network namespace made here for it (and gone with
    it: nothing to clean up)."""
    if not shutil.which("unshare") or not shutil.which("ip") or not shutil.which("curl"):
        pytest.skip("unshare, ip and curl are needed")
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"tenants": [{"name": "t", "token": "t" * 32}]}))
    os.chmod(tokens, 0o600)
    script = """
set -e
ip link set lo up
ip link add agentsbx-t0 type veth peer name agentsbx-t1
ip addr add 192.0.2.1/24 dev agentsbx-t0
ip link set agentsbx-t0 up
ip link set agentsbx-t1 up
"$RUNTIME" --root "$ROOT" mcp --image-root "$IMAGES" --image busybox \
    --listen 192.0.2.1:8080 --insecure-listen --tokens "$TOKENS" 2>"$LOG" &
pid=$!
for i in $(seq 100); do grep -q listening "$LOG" && break; sleep 0.1; done
curl -s -o /dev/null -w '%{http_code} ' http://192.0.2.1:8080/health
curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d '{}' http://192.0.2.1:8080/mcp
kill -TERM $pid; wait $pid || true
"""
    env = dict(os.environ, RUNTIME=RUNTIME, ROOT=state_root, IMAGES=image_root,
               TOKENS=str(tokens), LOG=str(tmp_path / "netns.log"))
    p = subprocess.run(["unshare", "--net", "sh", "-c", script], env=env, capture_output=True,
                       text=True, timeout=60)
    log = tmp_path / "netns.log"
    assert p.returncode == 0, p.stderr + (log.read_text() if log.exists() else "")
    assert p.stdout == "200 401", p.stdout  # served; the token is still needed


def test_unix_socket(serve, tmp_path):
    path = str(tmp_path / "mcp.sock")
    srv = serve(listen=("unix:" + path,))
    assert srv.urls[0].startswith("unix:" + path)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    out = subprocess.run(["curl", "-s", "--unix-socket", path, "http://x/health"],
                         capture_output=True, text=True, timeout=10).stdout
    assert json.loads(out)["status"] == "ok"
    srv.stop()
    assert not os.path.exists(path)


def test_silent_stream_keepalive(serve, python_image):
    """A run that says nothing for a while: its event stream carries
    ": keepalive" comments (--sse-keepalive, 15 s by default), which the
    SSE clients skip, so a balancer's idle timeout does not cut it."""
    srv = serve("--sse-keepalive", "1")
    m = Mcp(srv.url)
    m.initialize()
    status, h, text = m.raw("POST", {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "run_code", "arguments": {"language": "python",
                                          "code": "import time; time.sleep(3.5); print('done')"}}})
    assert status == 200 and h["content-type"] == "text/event-stream"
    assert text.count(": keepalive\n\n") >= 1, text
    assert text.index(": keepalive") < text.index('"id":7')
    assert '"stdout":"done\\n"' in text


def test_slowloris_is_cut(serve):
    """A client that sends its request head a byte a second is not idle
    (libmicrohttpd's --idle-timeout counts silence only): --request-timeout
    closes it; a body that trickles in is cut the same way."""
    srv = serve("--request-timeout", "2", "--idle-timeout", "60")
    slow = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    start = time.monotonic()
    closed = None
    for b in b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"y" * 30:
        try:
            slow.send(bytes([b]))
            slow.settimeout(0.5)
            if slow.recv(1) == b"":
                closed = time.monotonic() - start
                break
        except socket.timeout:
            continue
        except OSError:
            closed = time.monotonic() - start
            break
    slow.close()
    assert closed is not None and closed < 6, closed
    print("a byte-a-second head was cut after %.1f s" % closed)
    # a normal client is served as before
    m = Mcp(srv.url)
    m.initialize()
    assert m.request("ping")[0] == 200
