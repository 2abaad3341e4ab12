# SPDX-License-Identifier: Apache-2.0
"""`agentsbx sandbox`: the classic agent-sandbox cases."""

import hashlib
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time

import pytest

from sbx_helpers import RUNTIME, leftovers, wait_no_leftovers

RESULT_KEYS = {"stdout", "stderr", "exit_code", "timed_out", "seconds", "truncated", "outputs",
               "oom_killed"}


def test_squares_mean_and_stdev(sbx, python_image):
    code = ("import statistics\n"
            "squares = [i * i for i in range(1, 1001)]\n"
            "print(statistics.mean(squares))\n"
            "print(statistics.stdev(squares))\n")
    r = sbx.run("--lang", "python", "--code", "-", image=python_image, input=code)
    assert set(r) == RESULT_KEYS
    squares = [i * i for i in range(1, 1001)]
    mean, stdev = r["stdout"].split()
    assert float(mean) == statistics.mean(squares) == 333833.5
    assert abs(float(stdev) - statistics.stdev(squares)) < 1e-6
    assert r["exit_code"] == 0 and r["stderr"] == ""
    assert not r["timed_out"] and not r["truncated"] and not r["oom_killed"]
    assert 0 < r["seconds"] < 10


def test_command_line_python(sbx, python_image):
    r = sbx.run("--", "python3", "-c", "print(1)", image=python_image)
    assert r["stdout"] == "1\n" and r["exit_code"] == 0


def test_cpu_loop_times_out_and_nothing_is_left(sbx, python_image, state_root):
    t = time.monotonic()
    r = sbx.run("--timeout", "2", "--", "python3", "-c", "while True: pass",
                image=python_image)
    wall = time.monotonic() - t
    assert r["timed_out"] is True
    assert r["exit_code"] == 137
    assert 2.0 <= r["seconds"] < 2.3, r
    assert wall < 2.5, "returned after %.3f s" % wall
    assert leftovers(state_root) == {}


def test_timeout_kills_every_process_of_the_container(sbx, state_root):
    script = "sleep 1000 & sleep 1000 & (while :; do :; done) & while :; do :; done"
    t = time.monotonic()
    r = sbx.run("--timeout", "1", "--", "sh", "-c", script)
    assert r["timed_out"] and time.monotonic() - t < 1.8
    assert leftovers(state_root) == {}


def test_memory_grab_is_oom_killed(sbx, python_image):
    r = sbx.run("--", "python3", "-c", "x = b'x' * (1 << 30); print(len(x))",
                image=python_image)
    assert r["oom_killed"] is True
    assert r["exit_code"] == 137 and not r["timed_out"]
    assert r["stdout"] == ""


def test_memory_flag_lowers_the_limit(sbx, python_image):
    grab = "x = b'x' * (96 << 20); print('survived')"
    assert sbx.run("--", "python3", "-c", grab, image=python_image)["stdout"] == "survived\n"
    r = sbx.run("--memory", "64m", "--", "python3", "-c", grab, image=python_image)
    assert r["oom_killed"] and r["exit_code"] == 137


def test_100mb_print_is_truncated_with_a_marker(sbx, python_image):
    code = "import sys\nsys.stdout.write('a' * 50_000_000 + 'b' * 50_000_000 + 'END')\n"
    t = time.monotonic()
    r = sbx.run("--lang", "python", "--code", "-", image=python_image, input=code)
    assert time.monotonic() - t < 30
    out = r["stdout"]
    assert r["truncated"] is True and r["exit_code"] == 0
    assert len(out) < 1024 * 1024 + 200
    assert out.startswith("a" * 1000) and out.endswith("b" * 1000 + "END")
    assert "[agentsbx: %d bytes trimmed" % (100_000_003 - 1024 * 1024) in out


def test_output_limit_flag_and_stderr_cap(sbx):
    r = sbx.run("--output-limit", "100", "--", "sh", "-c",
                "seq 1 10000; seq 1 10000 >&2")
    assert r["truncated"]
    for stream in ("stdout", "stderr"):
        assert r[stream].startswith("1\n2\n") and r[stream].endswith("9999\n10000\n")
        assert "bytes trimmed" in r[stream] and len(r[stream]) < 200


def test_small_output_is_not_truncated(sbx):
    r = sbx.run("--output-limit", "100", "--", "sh", "-c", "printf %0100d 0")
    assert r["stdout"] == "0" * 100 and not r["truncated"]


def test_exit_code_stdout_stderr(sbx):
    r = sbx.run("--", "sh", "-c", "echo out; echo err >&2; exit 7")
    assert (r["stdout"], r["stderr"], r["exit_code"]) == ("out\n", "err\n", 7)
    assert r["timed_out"] is False and r["oom_killed"] is False


def test_without_json_output_passes_through_with_the_exit_status(sbx):
    rc, out, err = sbx.raw("--", "sh", "-c", "echo out; echo err >&2; exit 9")
    assert (rc, out, err) == (9, b"out\n", b"err\n")
    rc, _, err = sbx.raw("--timeout", "0.5", "--", "sleep", "10")
    assert rc == 124 and b"timed out" in err


def test_missing_command_is_exit_127(sbx):
    r = sbx.run("--", "no-such-command")
    assert r["exit_code"] == 127 and "no-such-command" in r["stderr"]


def test_binary_output_is_valid_json(sbx):
    r = sbx.run("--", "sh", "-c", r"printf 'ok \377\376 \000 end'")
    assert r["stdout"] == "ok \ufffd\ufffd \x00 end"


def test_stdin_file_and_dash(sbx, tmp_path):
    f = tmp_path / "input"
    f.write_bytes(b"from a file\n")
    assert sbx.run("--stdin", str(f), "--", "cat")["stdout"] == "from a file\n"
    assert sbx.run("--stdin", "-", "--", "cat", input="from stdin\n")["stdout"] == "from stdin\n"
    assert sbx.run("--", "cat")["stdout"] == ""  # default: empty, never blocks


def test_sh_language_and_arguments(sbx):
    r = sbx.run("--lang", "sh", "--code", "-", "--", "a b", "c",
                input='echo "$# [$1] [$2]"; echo "$0"')
    assert r["stdout"] == "2 [a b] [c]\n/.agentsbx/main.sh\n"


def test_node_language(sbx, node_image):
    r = sbx.run("--lang", "node", "--code", "-", image=node_image,
                input="console.log([1,2,3].map(x => x * x).join(','))")
    assert r["stdout"] == "1,4,9\n" and r["exit_code"] == 0


def test_env_and_cwd(sbx):
    r = sbx.run("-e", "FOO=bar", "-e", "HOME=/x", "--", "sh", "-c", 'echo "$FOO $HOME $(pwd)"')
    assert r["stdout"] == "bar /x /tmp\n"


def test_the_policy_floor_is_in_force(sbx):
    script = ("grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status; "
              "grep Seccomp: /proc/self/status; ls /sys/class/net; "
              "touch /rootfile 2>&1; touch /tmp/ok && echo tmp-ok")
    out = sbx.run("--", "sh", "-c", script)["stdout"]
    assert "CapEff:\t0000000000000000" in out
    assert "NoNewPrivs:\t1" in out and "Seccomp:\t2" in out
    assert "\nlo\n" in out and "eth" not in out  # no network but loopback
    assert "Read-only file system" in out and "tmp-ok" in out


def test_network_namespace_when_the_policy_allows_it(sbx, tmp_path):
    ns = "sbx-test-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        # an address of TEST-NET-1 on lo: no traffic leaves anything
        subprocess.run(["ip", "-n", ns, "addr", "add", "192.0.2.7/32", "dev", "lo"], check=True)
        policy = tmp_path / "policy.json"
        policy.write_text(json.dumps({"relaxable": ["network"]}))
        r = sbx.run("--network", "/var/run/netns/" + ns, "--", "ip", "addr", "show", "lo",
                    policy=str(policy))
        assert "192.0.2.7" in r["stdout"], r
        assert "192.0.2.7" not in sbx.run("--", "ip", "addr", "show", "lo")["stdout"]
    finally:
        subprocess.run(["ip", "netns", "del", ns])


def tree_digest(path):
    """Names, modes, sizes, link targets and contents of everything."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            h.update(("%s %o %d %d\n" % (os.path.relpath(p, path), st.st_mode, st.st_size,
                                         st.st_mtime_ns)).encode())
            if os.path.islink(p):
                h.update(os.readlink(p).encode())
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    h.update(f.read())
    st = os.lstat(path)
    h.update(("%o %d" % (st.st_mode, st.st_mtime_ns)).encode())
    return h.hexdigest()


WRITE_EVERYWHERE = r"""
for d in / /bin /etc /tmp /dev /dev/shm /root /.agentsbx /var /usr; do
  mkdir -p $d/agent-dir 2>/dev/null; echo x > $d/agent-file 2>/dev/null
done
rm -rf /bin/ls /etc /.agentsbx 2>/dev/null
chmod 777 / 2>/dev/null; ln -s /tmp /agent-link 2>/dev/null
ls /agent-file /agent-dir 2>/dev/null
true
"""


@pytest.mark.parametrize("writable_root", [False, True])
def test_the_image_never_changes_and_nothing_persists(sbx, image_root, tmp_path, writable_root):
    policy = None
    if writable_root:
        policy = tmp_path / "policy.json"
        policy.write_text(json.dumps({"readonlyRoot": False}))
    image = os.path.join(image_root, "busybox")
    before = tree_digest(image)
    r = sbx.run("--", "sh", "-c", WRITE_EVERYWHERE, policy=policy and str(policy))
    assert r["exit_code"] == 0
    if writable_root:
        # the code could write its root: in the overlay, thrown away
        assert "/agent-file" in r["stdout"]
    assert tree_digest(image) == before
    r = sbx.run("--", "sh", "-c", "ls -d /agent-file /tmp/agent-file /bin/ls 2>&1; true",
                policy=policy and str(policy))
    assert "No such file" in r["stdout"] and r["stdout"].count("No such file") == 2
    assert "/bin/ls" in r["stdout"].replace("No such file", "")


def test_twenty_concurrent_calls_all_succeed(sbx, python_image, state_root):
    results, errors = {}, []

    def call(i):
        try:
            results[i] = sbx.run("--", "python3", "-c", "print(%d * %d)" % (i, i),
                                 image=python_image, timeout=300)
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i in range(20):
        assert results[i]["stdout"] == "%d\n" % (i * i), results[i]
        assert results[i]["exit_code"] == 0
    assert wait_no_leftovers(state_root, 1.0) == {}


def container_started(root):
    return os.path.isdir(root) and any(n.startswith("sbx-") for n in os.listdir(root))


def test_sigterm_to_the_sandbox_removes_the_container(sbx, state_root):
    p = subprocess.Popen(sbx.argv("--", "sh", "-c", "sleep 1000"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not container_started(state_root):
        assert time.monotonic() < deadline, "the container never appeared"
        time.sleep(0.02)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=10)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert wait_no_leftovers(state_root, 1.0) == {}


# Run the sandbox under a child subreaper (PID 1 never reaps here), wait
# until its container runs, SIGKILL it, then reap until no child is left.
KILL_SCRIPT = r"""
import ctypes, os, signal, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
state_root, argv = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
end = time.monotonic() + 20
while not (os.path.isdir(state_root) and
           any(n.startswith("sbx-") for n in os.listdir(state_root))):
    assert time.monotonic() < end, "the container never appeared"
    time.sleep(0.02)
time.sleep(0.3)
os.kill(p.pid, signal.SIGKILL)
p.wait()
end = time.monotonic() + 20
while time.monotonic() < end:
    try:
        if os.waitpid(-1, os.WNOHANG)[0] == 0:
            time.sleep(0.02)
    except ChildProcessError:
        sys.exit(0)
sys.exit("children left after 20 s")
"""


def test_sigkill_to_the_sandbox_still_removes_the_container(sbx, state_root):
    argv = sbx.argv("--", "sh", "-c", "sleep 1000 & sleep 1000")
    p = subprocess.run([sys.executable, "-c", KILL_SCRIPT, state_root] + argv,
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    assert wait_no_leftovers(state_root, 2.0) == {}


def test_default_state_root_is_left_clean(image_root):
    p = subprocess.run([RUNTIME, "sandbox", "--image-root", image_root, "--image", "busybox",
                        "--json", "--", "true"], capture_output=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout)["exit_code"] == 0
    assert not [n for n in os.listdir("/run/agentsbx") if n.startswith("sbx-")]


@pytest.mark.parametrize("args,message", [
    (["--image", "no-such-image", "--", "true"], "not found"),
    (["--image", "../etc", "--", "true"], "an image name is"),
    (["--image", "busybox", "--lang", "python", "--code", "-"], "no python interpreter"),
    (["--image", "busybox", "--code", "-"], "go together"),
    (["--image", "busybox"], "a command is required"),
    (["--rootfs", "/", "--", "true"], "not an image"),
    (["--image", "busybox", "--timeout", "0", "--", "true"], "--timeout"),
    (["--image", "busybox", "--network", "bridge", "--", "true"], "--network"),
    (["--image", "busybox", "--network", "/proc/1/ns/net", "--", "true"], "relaxation"),
])
def test_bad_requests_fail_with_a_message(sbx, args, message):
    rc, out, err = sbx.raw(*args, image=None, input="")
    assert rc in (1, 125), (rc, err)
    assert message in err.decode(), err
    assert out == b""


# ---- the sandbox's own failures, PID 1, unbuffered Python ------------------

def test_json_error_for_a_missing_image(sbx):
    rc, out, err = sbx.raw("--", "true", image="no-such-image", json_out=True)
    assert rc == 125
    lines = out.decode().splitlines()
    assert len(lines) == 1, out
    r = json.loads(lines[0])
    assert set(r) == {"error"} and "no-such-image" in r["error"]["message"]
    assert "not found" in r["error"]["message"]


def test_json_error_for_a_bad_language(sbx):
    rc, out, _ = sbx.raw("--lang", "cobol", "--code", "-", input="1", json_out=True)
    assert rc == 125
    assert "--lang cobol" in json.loads(out)["error"]["message"]


def test_abort_is_134_and_a_self_sent_sigterm_works(sbx, python_image):
    r = sbx.run("--", "python3", "-c", "import os; print('x', flush=True); os.abort()",
                image=python_image)
    assert r["exit_code"] == 134 and r["stdout"] == "x\n"
    r = sbx.run("--", "python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
                image=python_image)
    assert r["exit_code"] == 143
    # The program is not PID 1 (our init is) and its orphans are reaped.
    r = sbx.run("--", "python3", "-c", "import os; print(os.getpid(), os.getppid())",
                image=python_image)
    assert r["stdout"] == "2 1\n"


def test_a_timed_out_python_programs_output_is_all_there(sbx, python_image):
    code = "import time\nfor i in range(5):\n    print('line', i)\ntime.sleep(30)\n"
    r = sbx.run("--timeout", "1", "--lang", "python", "--code", "-", image=python_image,
                input=code)
    assert r["timed_out"] is True
    assert r["stdout"] == "".join("line %d\n" % i for i in range(5))


def test_runtime_log_never_lands_in_the_programs_stderr(sbx, tmp_path):
    policy = tmp_path / "audit.json"
    policy.write_text(json.dumps({"mode": "audit"}))
    argv = sbx.argv("--", "sh", "-c", "echo out; echo err >&2", policy=str(policy))
    argv.insert(1, "--debug")
    p = subprocess.run(argv, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert (r["stdout"], r["stderr"]) == ("out\n", "err\n")
    assert b"agentsbx" in p.stderr  # the log went to the runtime's own stderr


def test_a_python_exception_comes_back_structured(sbx, python_image):
    code = "def f():\n    return 1 / 0\nprint('before')\nf()\n"
    r = sbx.run("--lang", "python", "--code", "-", image=python_image, input=code)
    assert r["exit_code"] == 1 and r["stdout"] == "before\n"
    e = r["error"]
    assert (e["name"], e["value"]) == ("ZeroDivisionError", "division by zero")
    assert e["traceback"].startswith("Traceback (most recent call last):\n")
    assert "line 2, in f" in e["traceback"]
    r = sbx.run("--lang", "python", "--code", "-", image=python_image, input="x x\n")
    assert r["error"]["name"] == "SyntaxError"
    # No exception, no error member; nor for a program that is not Python.
    r = sbx.run("--lang", "python", "--code", "-", image=python_image,
                input="import sys; sys.exit(1)")
    assert "error" not in r and r["exit_code"] == 1
    r = sbx.run("--", "sh", "-c", "echo 'ValueError: no' >&2; exit 1")
    assert "error" not in r
