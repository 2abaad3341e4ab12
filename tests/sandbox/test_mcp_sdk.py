# SPDX-License-Identifier: Apache-2.0
"""`agentsbx mcp` driven by a client written with the official MCP
TypeScript SDK (mcp-client/client.mjs): what an agent framework sees.

The SDK comes from the npm registry: mcp-client/package.json and its lock
are in the tree, node_modules is not; it is installed here (`npm ci`) when
missing.  Skipped when node or npm is not there (tests/install-deps.sh
installs them)."""

import json
import os
import shutil
import subprocess

import pytest

from sbx_helpers import HERE, RUNTIME, wait_no_leftovers

CLIENT_DIR = os.path.join(HERE, "mcp-client")


@pytest.fixture(scope="session")
def sdk_client():
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip("node and npm are needed for the SDK client (tests/install-deps.sh)")
    if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", "@modelcontextprotocol")):
        p = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CLIENT_DIR,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, "npm ci: " + p.stdout[-2000:] + p.stderr[-2000:]
    return node


def test_the_official_sdk_client(sdk_client, state_root, image_root, python_image):
    env = dict(os.environ, AGENTSBX=RUNTIME, STATE_ROOT=state_root, IMAGE_ROOT=image_root)
    p = subprocess.run([sdk_client, "client.mjs"], cwd=CLIENT_DIR, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    print(json.dumps(report, indent=1))
    assert report["five_concurrent_s"] < 2
    assert report["cancel_dead_s"] < 1
    assert report["after_cancel_ms"] < 1000
    assert report["invalid_message"] == (
        "MCP error -32602: Invalid params: arguments.language: required, a string")
    assert wait_no_leftovers(state_root, 2.0) == {}
