# SPDX-License-Identifier: Apache-2.0
"""The official MCP conformance suite (npx @modelcontextprotocol/conformance
server --url ..., pinned in clients/package.json) against
`agentsbx mcp --listen`:

- every scenario (--suite all: the active ones and the pending ones) against
  a server with --conformance-fixtures, which serves the suite's own tools,
  resources and prompts next to run_code; conformance-baseline.yml lists
  the scenarios expected to fail (none) and why one only warns;
- the scenarios that apply to a production server (no fixtures: its
  tools are run_code and the session tools) against one without.

The result of each scenario is printed (pytest -s, or the report's
captured output)."""

import os
import re
import subprocess

from conftest import CLIENTS, HERE

SUITE = os.path.join(CLIENTS, "node_modules", "@modelcontextprotocol", "conformance", "dist",
                     "index.js")
APPLY_WITHOUT_FIXTURES = ["server-initialize", "ping", "tools-list",
                          "server-sse-multiple-streams", "dns-rebinding-protection"]


def run_suite(node, url, tmp_path, *args):
    p = subprocess.run([node, SUITE, "server", "--url", url, "-o", str(tmp_path / "results"),
                        "--expected-failures", os.path.join(HERE, "conformance-baseline.yml")]
                       + list(args), capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    summary = out[out.rfind("=== SUMMARY ==="):]
    results = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in
               re.finditer(r"^[^\w\n]*\s*([\w-]+): (\d+) passed, (\d+) failed", summary, re.M)}
    one = re.search(r"Passed: (\d+)/\d+, (\d+) failed", out)
    if "--scenario" in args and one:  # one scenario: no summary
        results = {args[args.index("--scenario") + 1]: (int(one.group(1)), int(one.group(2)))}
    results.pop("Total", None)
    return p.returncode, results, out


def report(title, results):
    print("\n%s" % title)
    for name, (ok, bad) in results.items():
        print("  %-32s %s (%d checks passed, %d failed)" %
              (name, "FAILED" if bad else "passed" if ok else "no checks", ok, bad))
    print("  scenarios: %d passed, %d failed, %d without checks" % (
        sum(1 for ok, bad in results.values() if ok and not bad),
        sum(1 for _, bad in results.values() if bad),
        sum(1 for ok, bad in results.values() if not ok and not bad)))


def test_conformance_suite_with_fixtures(serve, node, python_image, tmp_path):
    srv = serve("--conformance-fixtures")
    rc, results, out = run_suite(node, srv.url, tmp_path, "--suite", "all")
    report("conformance, --suite all, --conformance-fixtures:", results)
    assert len(results) >= 32, out[-3000:]
    assert not [n for n, (_, bad) in results.items() if bad], out[-6000:]
    assert rc == 0, out[-3000:]


def test_conformance_scenarios_of_a_production_server(serve, node, python_image, tmp_path):
    srv = serve()
    results = {}
    for scenario in APPLY_WITHOUT_FIXTURES:
        rc, r, out = run_suite(node, srv.url, tmp_path, "--scenario", scenario)
        results.update(r)
        assert rc == 0 and r.get(scenario, (0, 1))[1] == 0, out[-3000:]
    report("conformance, the scenarios that apply without fixtures:", results)
