# SPDX-License-Identifier: Apache-2.0
"""agentsbx through `podman --runtime <binary>` (podman 4.3 and conmon 2.1
from Debian).  Podman as root passes the runtime no --root: the state is
under agentsbx's default /run/agentsbx.  See e2e_lib.py."""

import re
import signal
import time

from e2e_lib import PtySession, poll_until, unique


def status(podman, name):
    return podman("inspect", "-f", "{{.State.Status}}", name).out.strip()


def start_detached(podman, name, *cmd, opts=()):
    podman("run", "-d", "--name", name, "--network", "none", *opts, podman.image, *cmd).ok()
    assert poll_until(lambda: status(podman, name) == "running"), status(podman, name)


def test_podman_run_output_and_exit_status(podman):
    r = podman("run", "--rm", "--network", "none", podman.image, "echo", "hello via podman")
    assert r.rc == 0 and r.out == "hello via podman\n", str(r)
    r = podman("run", "--rm", "--network", "none", podman.image, "sh", "-c", "exit 7")
    assert r.rc == 7, str(r)


def test_podman_runtime_by_name(podman):
    """The containers.conf snippet: [engine.runtimes] agentsbx = [path],
    then `podman --runtime agentsbx`."""
    r = podman("run", "--rm", "--network", "none", podman.image, "echo", "by name",
               runtime="agentsbx")
    assert r.rc == 0 and r.out == "by name\n", str(r)
    r = podman("info", "--format", "{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}",
               runtime="agentsbx")
    assert r.out.split()[0] == "agentsbx", str(r)


def test_podman_failing_shows_reason(podman):
    r = podman("run", "--rm", "--network", "none", podman.image, "/nonexistent")
    assert r.rc == 127, str(r)
    assert "/nonexistent" in r.err, str(r)


def test_podman_lifecycle(podman):
    """run -d, exec (output, status, -u, -e, -w), top, pause/unpause,
    kill, rm."""
    name = unique("pm-life")
    start_detached(podman, name, "sh", "-c", 'trap "exit 9" TERM; while :; do sleep 0.1; done')
    r = podman("exec", name, "sh", "-c", "echo exec-out; exit 4")
    assert r.rc == 4 and r.out == "exec-out\n", str(r)
    r = podman("exec", "-u", "1000:1000", "-e", "FOO=bar", "-w", "/tmp", name,
               "sh", "-c", 'id; pwd; echo "FOO=$FOO"')
    assert r.rc == 0, str(r)
    # -u 1000:1000: under the default policy the container's own uid and
    # gid all the same (identities), with no supplementary group
    m = re.match(r"uid=(\d+) gid=(\d+)$", r.out.splitlines()[0])
    assert m and int(m.group(1)) >= 1879048192 and m.group(1) == m.group(2), str(r)
    assert r.out.splitlines()[1:] == ["/tmp", "FOO=bar"], str(r)
    r = podman("exec", name, "sh", "-c", "kill -TERM $$")
    assert r.rc == 128 + signal.SIGTERM, str(r)
    r = podman("top", name).ok()
    assert "while :" in r.out, str(r)
    podman("pause", name).ok()
    assert status(podman, name) == "paused"
    podman("unpause", name).ok()
    assert status(podman, name) == "running"
    podman("kill", "-s", "TERM", name).ok()
    r = podman("wait", name)
    assert r.out.strip() == "9", str(r)
    podman("rm", name).ok()


def test_podman_stop_sigkill_after_timeout(podman):
    name = unique("pm-stop")
    start_detached(podman, name, "sh", "-c", 'trap "" TERM; while :; do sleep 0.1; done')
    t0 = time.monotonic()
    podman("stop", "-t", "2", name).ok()
    assert time.monotonic() - t0 >= 1.8
    assert podman("inspect", "-f", "{{.State.ExitCode}}", name).out.strip() == "137"
    podman("rm", name).ok()


def test_podman_rm_force_running(podman):
    name = unique("pm-rmf")
    start_detached(podman, name, "sleep", "1000")
    podman("rm", "-f", "-t", "0", name).ok()
    assert podman("ps", "-aq").out.split() == []


def test_podman_run_it_pty(podman):
    """conmon creates the console socket and passes --console-socket."""
    s = PtySession(podman.argv("run", "-it", "--rm", "--network", "none", podman.image, "sh"),
                   rows=30, cols=88, env=podman.env)
    try:
        # The default policy runs a host-root process as a uid of its own: the
        # shell's prompt is "$ ", not "# ".
        s.expect(r"\$ ")
        s.expect_stty_size(30, 88)
        s.send("echo pm-typed-$((40+2))\r")
        s.expect(r"echo pm-typed-\$\(\(40\+2\)\)\n")
        s.expect(r"pm-typed-42\n")
        s.send("exit 5\r")
        assert s.wait() == 5, s.text
    finally:
        s.close()


def test_podman_exec_it_pty(podman):
    name = unique("pm-execit")
    start_detached(podman, name, "sleep", "1000")
    s = PtySession(podman.argv("exec", "-it", name, "sh"), rows=19, cols=70, env=podman.env)
    try:
        # The default policy runs a host-root process as a uid of its own: the
        # shell's prompt is "$ ", not "# ".
        s.expect(r"\$ ")
        s.expect_stty_size(19, 70)
        s.send("exit 2\r")
        assert s.wait() == 2, s.text
    finally:
        s.close()
    podman("rm", "-f", "-t", "0", name).ok()
