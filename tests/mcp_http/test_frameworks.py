# SPDX-License-Identifier: Apache-2.0
"""The frameworks people build agents with, over `agentsbx mcp --listen`
(clients/frameworks.mjs, pinned in clients/package.json): LangChain's MCP
adapters, Vercel's AI SDK (ai + @ai-sdk/mcp) and the official SDK.  In
each, a timed-out program is a result and not an exception, and a PNG read
back from a session reaches the model-facing output."""

import json
import os

from conftest import CLIENTS, run_node


def test_three_frameworks(serve, node, python_image):
    srv = serve()
    report = run_node(node, os.path.join(CLIENTS, "frameworks.mjs"), srv.url)
    print("frameworks:", json.dumps(report, indent=1))
    assert set(report) == {"sdk", "langchain", "vercel"}
