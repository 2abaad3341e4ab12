# SPDX-License-Identifier: Apache-2.0
"""`agentsbx mcp --listen` as a service: the systemd unit `make install`
installs (systemd-analyze verify), logs as JSON lines, the health endpoint,
a plain user's server with rootless sandboxes (uid 4711 through setpriv, as
tests/sandbox/test_rootless_sandbox.py), a stop that leaves nothing."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, RUNTIME
from sbx_helpers import debootstrap_image
from http_helpers import Mcp

sys.path.insert(0, os.path.join(REPO, "tests", "lib"))
import asuser  # noqa: E402

UNIT = os.path.join(REPO, "contrib", "systemd", "agentsbx-mcp.service")


def test_systemd_unit(tmp_path):
    # make install puts it in place, pointed at BINDIR
    p = subprocess.run(["make", "-n", "-C", REPO, "install", "DESTDIR=" + str(tmp_path)],
                       capture_output=True, text=True, timeout=60)
    assert "agentsbx-mcp.service" in p.stdout, p.stdout
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not here")
    unit = tmp_path / "agentsbx-mcp.service"
    unit.write_text(open(UNIT).read().replace("/usr/local/bin/agentsbx", RUNTIME))
    p = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    text = unit.read_text()
    assert "ExecReload=/bin/kill -HUP $MAINPID" in text and "--log-format json" in text


def test_json_log_lines(serve, tmp_path, python_image):
    srv = serve(log_json=True)
    m = Mcp(srv.url)
    m.initialize()
    m.tool("run_code", language="python", code="print(1)")
    srv.stop()
    lines = [json.loads(l) for l in open(tmp_path / "server.jsonl")]
    msgs = [l["msg"] for l in lines]
    assert any(x.startswith("mcp: listening on http://127.0.0.1:") for x in msgs), msgs
    assert any(x.startswith("mcp http: POST /mcp 200 tenant=-") for x in msgs), msgs
    assert all({"level", "msg", "time"} <= set(l) for l in lines)


def test_plain_user_server(tmp_path, python_image):
    if asuser.SETPRIV is None:
        pytest.skip("setpriv (util-linux) missing")
    rootfs = debootstrap_image("python", "python3")  # the cache: readable by all
    tmp, xdg = asuser.make_dirs("agentsbx-mcp-http-user-")
    try:
        tokens = os.path.join(tmp, "tokens.json")
        with open(tokens, "w") as f:
            json.dump({"tenants": [{"name": "u", "token": "u" * 32}]}, f)
        os.chmod(tokens, 0o600)
        os.chown(tokens, asuser.UID, asuser.UID)
        log = os.path.join(tmp, "server.err")
        with open(log, "w") as err:
            os.chown(log, asuser.UID, asuser.UID)
            p = subprocess.Popen(asuser.argv(RUNTIME, "mcp", "--rootfs", rootfs,
                                             "--listen", "127.0.0.1:0",
                                             "--tokens", tokens),
                                 env=asuser.env(xdg), cwd="/", stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=err)
        try:
            url = None
            for _ in range(200):
                text = open(log).read()
                if "listening on " in text:
                    url = text.split("listening on ", 1)[1].split()[0]
                    break
                assert p.poll() is None, text
                time.sleep(0.05)
            assert url, open(log).read()
            m = Mcp(url, token="u" * 32)
            m.initialize()
            _, r = m.tool("run_code", language="python", code="import os; print(os.getuid())")
            assert r["result"]["isError"] is False, r
            assert r["result"]["structuredContent"]["stdout"] == "0\n"
        finally:
            p.send_signal(signal.SIGTERM)
            assert p.wait(30) == 0, open(log).read()
        left, procs = asuser.leftovers(xdg)
        assert left == [] and procs == [], (left, procs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
