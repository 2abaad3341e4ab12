# SPDX-License-Identifier: Apache-2.0
"""The official TypeScript SDK's Streamable HTTP client against
`agentsbx mcp --listen` (clients/sdk_http.mjs): initialize, tools/list,
run_code in Python and sh, results shaped for frameworks, progress on the
stream, a session writing a CSV and producing a PNG read back as image
content, 20 concurrent 1-second runs from 4 clients (wall time reported,
not asserted), a DELETE'd session; a cancelled 20-second run frees its
slot at once (a server with one slot)."""

import json
import os

from conftest import CLIENTS, run_node


def test_sdk_streamable_http(serve, node, python_image):
    srv = serve("--max-concurrent", "20", "--max-sessions", "8")
    report = run_node(node, os.path.join(CLIENTS, "sdk_http.mjs"), "main", srv.url)
    print("sdk_http:", json.dumps(report))
    assert report["protocol"] == "2025-11-25"
    assert report["session_png_bytes"] > 50


def test_cancel_frees_the_slot(serve, node, python_image):
    srv = serve("--max-concurrent", "1")
    report = run_node(node, os.path.join(CLIENTS, "sdk_http.mjs"), "cancel", srv.url)
    print("cancel:", json.dumps(report))
    assert report["next_after_cancel_s"] < 10
