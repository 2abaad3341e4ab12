# SPDX-License-Identifier: Apache-2.0
"""agentsbx.Sandbox: one call, one throwaway container; the Result's fields
from the CLI's JSON; errors as exceptions with the runtime's message;
KeyboardInterrupt; the run_python tool."""

import json
import os
import signal
import threading
import time

import pytest

import agentsbx


def test_result_has_the_tutorials_fields_and_more(make_sandbox):
    sb = make_sandbox(timeout=20)
    r = sb.run("print(6*7)")
    assert (r.stdout, r.stderr, r.exit_code, r.timed_out) == ("42\n", "", 0, False)
    assert isinstance(r.seconds, float) and 0 < r.seconds < 20
    assert r.ok and r.oom_killed is False and r.value is None and r.error is None
    # The last expression's value, as a REPL shows it.
    assert sb.run("x = [1, 2]\nx + [3]").value == "[1, 2, 3]"
    assert sb.run("'hi'").text == "'hi'"
    # An uncaught exception: its name, value and traceback, as E2B's.
    r = sb.run("def f():\n    return 1 / 0\nf()\n")
    assert r.exit_code == 1 and not r.ok
    assert (r.error.name, r.error.value) == ("ZeroDivisionError", "division by zero")
    assert "line 2, in f" in r.error.traceback and "ZeroDivisionError" in r.stderr
    # The /outputs files, with their content for a one-call sandbox.
    r = sb.run("open('/outputs/report.txt', 'w').write('done\\n')")
    assert [(o.path, o.size, o.content) for o in r.outputs] == \
        [("/outputs/report.txt", 5, b"done\n")]
    # stdin, arguments, other languages, a command line.
    assert sb.run("import sys; print(sys.stdin.read().upper(), sys.argv[1:])",
                  stdin="abc", args=["x", "-y"]).stdout == "ABC ['x', '-y']\n"
    r = sb.run("echo $((6*7)); exit 3", lang="sh")
    assert (r.stdout, r.exit_code) == ("42\n", 3)
    assert sb.run_command(["python3", "-c", "import os; print(os.getcwd())"]).stdout == "/tmp\n"
    d = r.to_dict()
    assert json.loads(json.dumps(d))["exit_code"] == 3


def test_the_readmes_examples(make_sandbox, make_session):
    """python/README.md's first examples, as written there."""
    sb = make_sandbox(image="python", timeout=10, memory="128m")
    r = sb.run("import statistics as s\nq = [i*i for i in range(1, 1001)]\ns.mean(q)")
    assert (r.stdout, r.exit_code, r.timed_out, r.value) == ("", 0, False, "333833.5")
    s = make_session(image="python")
    s.files.write("data.csv", "x,y\n1,2\n3,4\n")
    r = s.run_code("import csv\nlen(list(csv.DictReader(open('data.csv'))))")
    assert (r.text, r.error) == ("2", None)
    s.files.write("a.csv", "x\n1\n")
    assert s.run_code("open('a.csv').read()").text == "'x\\n1\\n'"  # the top README's


def test_timeout_memory_and_limits(make_sandbox):
    sb = make_sandbox(timeout=1, memory="64m", pids=16)
    t = time.monotonic()
    r = sb.run("print('before', flush=True)\nwhile True: pass")
    assert r.timed_out and r.exit_code == 137 and r.stdout == "before\n"
    assert time.monotonic() - t < 15
    r = sb.run("x = bytearray(200 * 2**20)\nfor i in range(0, len(x), 4096): x[i] = 1",
               timeout=20)
    assert not r.ok and (r.oom_killed or (r.error and r.error.name == "MemoryError")), r
    r = make_sandbox(timeout=20, pids=16).run(
        "import os\nn = 0\ntry:\n    while n < 64:\n        if os.fork() == 0:\n"
        "            import time; time.sleep(5); os._exit(0)\n        n += 1\n"
        "except OSError as e:\n    print('stopped at', n, type(e).__name__)\n")
    assert r.stdout.startswith("stopped at") and int(r.stdout.split()[2]) < 16, r


def test_sandbox_errors_carry_the_runtimes_message(make_sandbox, image_root):
    with pytest.raises(agentsbx.SandboxError) as e:
        make_sandbox(image="no-such-image").run("print(1)")
    assert 'image "no-such-image" not found' in e.value.message and e.value.status == 125
    with pytest.raises(agentsbx.SandboxError) as e:
        make_sandbox(memory="4g").run("print(1)")
    assert "limits.memory" in e.value.message and "policy" in str(e.value)
    with pytest.raises(agentsbx.SandboxError, match="network namespace"):
        make_sandbox(network=True)
    with pytest.raises(agentsbx.SandboxError, match="lang 'cobol'"):
        make_sandbox().run("x", lang="cobol")
    with pytest.raises(agentsbx.SandboxError, match="cannot run .nonexistent.agentsbx"):
        agentsbx.Sandbox(binary="/nonexistent/agentsbx", image_root=image_root).run("1")


def test_allow_domains_beyond_the_policy_are_refused_naming_its_field(make_sandbox,
                                                                      make_session):
    """allow_domains go to agentsbx as --allow-domain; the default policy
    lists no name, so any is more than it allows: refused, naming
    egress.allowDomains (tests/sandbox/test_egress_sandbox.py reaches
    names through a policy that lists them)."""
    for make in (make_sandbox, make_session):
        with pytest.raises(agentsbx.SandboxError) as e:
            make(allow_domains=["pypi.org"]).run("print(1)") if make is make_sandbox else \
                make(allow_domains=["pypi.org"])
        assert "egress.allowDomains" in str(e.value), str(e.value)
    # None or empty: nothing asked, nothing refused.
    assert make_sandbox(allow_domains=[]).run("print(1)").stdout == "1\n"


def interrupt_after(seconds):
    """SIGINT to this process (Python's KeyboardInterrupt in the main
    thread) after a while, as a Ctrl-C."""
    t = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    t.start()
    return t


def test_keyboard_interrupt_kills_the_run_and_leaves_nothing(make_sandbox, state_root):
    sb = make_sandbox(timeout=60)
    t = time.monotonic()
    timer = interrupt_after(1.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            sb.run("import time\nprint('started', flush=True)\ntime.sleep(20)")
    finally:
        timer.cancel()
    assert time.monotonic() - t < 10
    # the container is gone (the mine fixture checks cgroups and processes too)
    assert not [n for n in os.listdir(state_root) if not n.startswith(".")] \
        if os.path.isdir(state_root) else True
    assert sb.run("print('next')").stdout == "next\n"


def test_run_python_tool_definition_and_handler(make_sandbox):
    for fmt, key in (("anthropic", "input_schema"), ("mcp", "inputSchema")):
        tool = agentsbx.run_python_tool(fmt)
        assert tool["name"] == "run_python" and len(tool["description"]) > 100
        schema = tool[key]
        assert schema["type"] == "object" and schema["required"] == ["code"]
        assert schema["properties"]["code"]["type"] == "string"
        assert schema["additionalProperties"] is False
        json.dumps(tool)
    fn = agentsbx.run_python_tool("openai")
    assert fn["type"] == "function" and fn["function"]["name"] == "run_python"
    assert fn["function"]["parameters"]["required"] == ["code"]
    sb = make_sandbox(timeout=20)
    # What the model sent, as the API hands it over (a dict or JSON text).
    out = json.loads(agentsbx.handle_run_python({"code": "print(2**10)\n2**11"}, sb))
    assert (out["stdout"], out["exit_code"], out["value"]) == ("1024\n", 0, "2048")
    out = json.loads(agentsbx.handle_run_python(
        '{"code": "while True: pass", "timeout_seconds": 1}', sb))
    assert out["timed_out"] is True
    out = json.loads(agentsbx.handle_run_python({"code": "int('x')"}, sb))
    assert out["error"]["name"] == "ValueError"
    for bad in ({}, {"code": 1}, {"code": "1", "timeout_seconds": 301},
                {"code": "1", "shell": "rm -rf /"}):
        with pytest.raises(ValueError):
            agentsbx.handle_run_python(bad, sb)
