# SPDX-License-Identifier: Apache-2.0
"""What a run gives back besides its streams (agent/sandbox/sandbox_outputs.c): a
Python program's last expression's value, REPL-like, and the files it left
in /outputs -- through `sandbox --json`, `session run` and MCP."""

import base64
import json
import os
import subprocess

import pytest

from sbx_helpers import REPO, RUNTIME
from test_session_cli import settled, subreaper  # noqa: F401 (a fixture)


def run_py(sbx, code, image):
    return sbx.run("--code", "-", "--lang", "python", image=image, input=code)


@pytest.mark.parametrize("code, value", [
    ("1 + 2", "3"),
    ("x = [1]\nx * 3", "[1, 1, 1]"),
    ("'a' + 'b'", "'ab'"),
    ("x = 1", None),
    ("print('p')", None),        # None is no value, as in a REPL
    ("import os\nif True:\n    5", None),  # only a last expression statement
])
def test_the_last_expression_is_the_value(sbx, python_image, code, value):
    r = run_py(sbx, code, python_image)
    assert r["exit_code"] == 0, r
    assert r.get("value") == value, r


def test_the_program_runs_as_main_as_before(sbx, python_image):
    code = ("import sys, pickle, __main__\n"
            "class A: pass\n"
            "print(__name__, sys.argv, __file__, sys.path[0])\n"
            "print(len(pickle.dumps(A())) > 0, __main__.A is A)\n")
    r = run_py(sbx, code, python_image)
    assert r["stdout"] == ("__main__ ['/.agentsbx/main.py'] /.agentsbx/main.py /.agentsbx\n"
                           "True True\n"), r
    r = run_py(sbx, "import sys; print('out'); sys.exit(3)", python_image)
    assert (r["exit_code"], r["stdout"]) == (3, "out\n")


def test_errors_look_as_python_prints_them(sbx, python_image):
    r = run_py(sbx, "def f():\n    return 1 / 0\nf()\n", python_image)
    assert r["exit_code"] == 1 and "value" not in r
    assert r["error"]["name"] == "ZeroDivisionError"
    tb = r["stderr"]
    assert tb.startswith("Traceback (most recent call last):\n  File \"/.agentsbx/main.py\", line 3")
    assert "<string>" not in tb and "_agentsbx" not in tb, tb
    r = run_py(sbx, "def f(:\n", python_image)
    assert r["exit_code"] == 1 and r["error"]["name"] == "SyntaxError"
    assert r["stderr"].startswith("  File \"/.agentsbx/main.py\", line 1\n"), r["stderr"]
    r = run_py(sbx, "x = 1\nx.nope", python_image)  # the last expression fails
    assert r["error"]["name"] == "AttributeError" and "line 2" in r["stderr"], r


def test_one_call_returns_its_outputs_with_content(sbx, python_image):
    code = ("import os\n"
            "open('/outputs/a.txt', 'w').write('hello')\n"
            "os.makedirs('/outputs/d/e')\n"
            "open('/outputs/d/e/b.bin', 'wb').write(bytes(range(256)))\n"
            "os.symlink('/etc/passwd', '/outputs/link')\n")
    r = run_py(sbx, code, python_image)
    outs = {o["path"]: o for o in r["outputs"]}
    assert set(outs) == {"/outputs/a.txt", "/outputs/d/e/b.bin"}, r  # no symlink
    assert base64.b64decode(outs["/outputs/a.txt"]["content_base64"]) == b"hello"
    assert base64.b64decode(outs["/outputs/d/e/b.bin"]["content_base64"]) == bytes(range(256))
    assert outs["/outputs/d/e/b.bin"]["size"] == 256


def test_big_outputs_are_listed_without_content(sbx, python_image):
    r = run_py(sbx, "open('/outputs/big', 'wb').write(b'x' * (5 << 20))", python_image)
    assert r["outputs"] == [{"path": "/outputs/big", "size": 5 << 20}], r


def test_a_command_has_outputs_too(sbx):
    r = sbx.run("--", "sh", "-c", "echo hi > /outputs/x; echo done")
    assert r["stdout"] == "done\n" and "value" not in r
    assert [(o["path"], base64.b64decode(o["content_base64"])) for o in r["outputs"]] == [
        ("/outputs/x", b"hi\n")]


# ---- in a session: what this run created or changed ------------------------------------

def test_a_session_run_lists_what_it_wrote_in_outputs(subreaper, state_root, image_root,
                                                      python_image):
    base = [RUNTIME, "--root", state_root, "session"]
    name = subprocess.run(base + ["create", "--image-root", image_root, "--image", python_image],
                          capture_output=True, check=True).stdout.decode().strip()
    try:
        def run(code):
            p = subprocess.run(base + ["run", name, "--json", "--code", "-"], input=code.encode(),
                               capture_output=True)
            assert p.returncode == 0, p.stderr
            return json.loads(p.stdout)
        r = run("open('/outputs/one', 'w').write('1')\n7 * 6")
        assert r["value"] == "42"
        assert r["outputs"] == [{"path": "/outputs/one", "size": 1}], r  # no content here
        r = run("open('/outputs/two', 'w').write('22')")
        assert r["outputs"] == [{"path": "/outputs/two", "size": 2}], r  # not "one" again
        p = subprocess.run(base + ["read", name, "/outputs/two"], capture_output=True)
        assert p.stdout == b"22"
        r = run("import os; print(sorted(os.listdir('/outputs')), os.listdir('/workspace'))")
        assert r["stdout"] == "['one', 'two'] []\n" and r["outputs"] == []
        r = run("open('/outputs/one', 'a').write('11')")  # changed: news again
        assert r["outputs"] == [{"path": "/outputs/one", "size": 3}], r
        p = subprocess.run(base + ["ls", name, "/outputs"], capture_output=True)
        assert p.returncode == 0 and sorted(p.stdout.split()[2::3]) == [b"one", b"two"], p.stdout
    finally:
        subprocess.run(base + ["close", name])
        assert settled(state_root) == {}


# ---- through MCP ------------------------------------------------------------------------

def test_mcp_run_code_gives_value_and_outputs(state_root, image_root, python_image):
    from test_mcp import Client
    c = Client(state_root, image_root, images=(python_image,))
    try:
        c.initialize()
        r = c.run_code("open('/outputs/r.csv', 'w').write('a,b\\n')\n'done'")["result"]
        sc = r["structuredContent"]
        assert sc["value"] == "'done'" and r["isError"] is False
        assert [(o["path"], base64.b64decode(o["content_base64"])) for o in sc["outputs"]] == [
            ("/outputs/r.csv", b"a,b\n")]
        text = r["content"][0]["text"]
        assert "--- value ---\n'done'" in text and "/outputs/r.csv (4 bytes)" in text, text
        schema = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
        props = schema["run_code"]["outputSchema"]["properties"]
        assert props["value"]["type"] == "string" and props["outputs"]["type"] == "array"
    finally:
        rc, err = c.close()
        assert rc == 0, err


# ---- the program plants a symlink where the runtime reads -------------------------------

_WEAK = {}


def weak_runtime(name):
    """build-weak-NAME/agentsbx (lib/weaken.h), made (or brought up to
    date) once per test session."""
    if name not in _WEAK:
        p = subprocess.run(["make", "-C", REPO, "weak-" + name], capture_output=True,
                           timeout=900)
        assert p.returncode == 0, p.stderr.decode()[-3000:]
        _WEAK[name] = os.path.join(REPO, "build-weak-" + name, "agentsbx")
    return _WEAK[name]


@pytest.mark.parametrize("build", ["real", "weak"])
def test_a_planted_symlink_never_reads_a_host_file(sbx, python_image, tmp_path, build):
    """/.agentsbx/meta/value made a symlink to a host file: the runtime,
    reading it on the host, must not follow it (weak build: value-nofollow,
    where the host file's content comes back as the value)."""
    secret = tmp_path / "host-secret"
    secret.write_text("host only")
    code = "import os\nos.symlink(%r, '/.agentsbx/meta/value')\n" % str(secret)
    runtime = RUNTIME if build == "real" else weak_runtime("value-nofollow")
    argv = [runtime] + sbx.argv("--code", "-", "--lang", "python", image=python_image)[1:]
    p = subprocess.run(argv, input=code.encode(), capture_output=True, timeout=60)
    r = json.loads(p.stdout)
    assert r["exit_code"] == 0, r
    if build == "real":
        assert "value" not in r, r
    else:
        assert r.get("value") == "host only", (
            "weak build (value-nofollow): the host file was not read, the test proves nothing: %s" % r)
