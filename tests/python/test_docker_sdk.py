# SPDX-License-Identifier: Apache-2.0
"""Docker's Python SDK driving the private dockerd with runtime="agentsbx"
(the built-in default policy): the seed's hardened runner as written."""

import threading
import time

import docker

import seed_runner


def test_the_seed_runner_works_under_agentsbx(py_docker):
    r = seed_runner.run("import os, sys\nprint(6*7)\nprint('err', file=sys.stderr)\n"
                        "print(os.getuid())", runtime="agentsbx")
    out = r.stdout.split()
    assert (out[0], r.stderr, r.exit_code, r.timed_out) == ("42", "err\n", 0, False), r
    # Under the default policy the process is a host uid of the
    # container's own (identities), never root.
    assert int(out[1]) >= 1879048192
    # What the flags ask for is in force: a read-only root, a 16 MiB /tmp,
    # no network, no capabilities, no new privileges.
    r = seed_runner.run(
        "import os, socket\n"
        "try:\n    open('/x', 'w')\nexcept OSError as e:\n    print('root', e.errno)\n"
        "st = os.statvfs('/tmp'); print('tmp', st.f_blocks * st.f_frsize // 2**20)\n"
        "print('ifaces', sorted(n for _, n in socket.if_nameindex()))\n"
        "s = open('/proc/self/status').read()\n"
        "print([l.split()[1] for l in s.splitlines() if l.startswith(('CapEff', 'NoNewPrivs'))])",
        runtime="agentsbx")
    assert r.exit_code == 0, r
    lines = r.stdout.splitlines()
    assert lines[0] in ("root 30", "root 13")  # EROFS, or EACCES as a plain uid
    assert lines[1] == "tmp 16" and lines[2] == "ifaces ['lo']"
    assert lines[3] == "['0000000000000000', '1']"


def test_wait_timeout_kill_and_remove(py_docker):
    t = time.monotonic()
    r = seed_runner.run("print('spin', flush=True)\nwhile True: pass", timeout=2,
                        runtime="agentsbx")
    assert r.timed_out and r.exit_code == 137 and r.stdout == "spin\n", r
    assert time.monotonic() - t < 20
    r = seed_runner.run("b = bytearray(400 * 2**20)\nfor i in range(0, len(b), 4096): b[i] = 1",
                        timeout=30, runtime="agentsbx")
    assert r.exit_code != 0 and (r.oom_killed or "MemoryError" in r.stderr), r


def test_kill_and_remove_of_a_running_container_from_another_thread(py_docker):
    """The SDK's objects as a supervising thread uses them: kill() while
    wait() blocks, then remove(force=True); nothing is left (the fixture
    checks state, cgroups, mounts, shims)."""
    client = docker.from_env()
    c = client.containers.create(seed_runner.IMAGE, ["python3", "-c", "import time; time.sleep(60)"],
                                 runtime="agentsbx", **seed_runner.HARDENED)
    try:
        c.start()
        threading.Timer(1.0, c.kill).start()
        t = time.monotonic()
        assert c.wait(timeout=30)["StatusCode"] == 137
        assert time.monotonic() - t < 15
        c.reload()
        assert c.attrs["HostConfig"]["Runtime"] == "agentsbx"
    finally:
        c.remove(force=True)
        client.close()
