# SPDX-License-Identifier: Apache-2.0
"""pytest wiring for the attack suite; the work is in attack_lib.py."""

import os
import platform

import pytest

import attack_lib as A
from attack_lib import engines, procs

# The policy's audit log (issue 17): this session's decisions go to a temp
# file of its own (removed at exit), never to /var/log/agentsbx.
if "AGENTSBX_POLICY_LOG" not in os.environ:
    import atexit as _atexit
    import shutil as _shutil
    import tempfile as _tempfile
    _policy_log_dir = _tempfile.mkdtemp(prefix="agentsbx-policylog-")
    os.environ["AGENTSBX_POLICY_LOG"] = os.path.join(_policy_log_dir, "policy.log")
    _atexit.register(_shutil.rmtree, _policy_log_dir, True)


_STATE = {"matrix": None, "skip": None}


@pytest.fixture(scope="session")
def attack_env():
    if os.geteuid() != 0:
        procs.loud_skip("attack suite skipped: it needs root")
    if platform.machine() != "x86_64":
        procs.loud_skip("attack suite skipped: the attack programs use x86_64 syscall numbers")
    if not os.access(A.RUNTIME, os.X_OK):
        pytest.fail("AGENTSBX=%s is not an executable (run `make` first)" % A.RUNTIME)
    for b in (engines.DOCKERD, engines.DOCKER, "/usr/bin/nsenter"):
        if not os.access(b, os.X_OK):
            procs.loud_skip("attack suite skipped: %s not found" % b)
    env = A.Env()
    try:
        why = env.setup()
    except BaseException:
        problems = env.teardown()
        if problems:
            print("teardown after a failed set-up:\n  " + "\n  ".join(problems))
        raise
    if why:
        problems = env.teardown()
        procs.loud_skip("attack suite skipped: dockerd could not start.\n" + why +
                    ("\n" + "\n".join(problems) if problems else ""))
    yield env
    problems = env.teardown()
    assert not problems, "the attack suite left things behind:\n  " + "\n  ".join(problems)


@pytest.fixture(scope="session")
def matrix(attack_env):
    m = A.Matrix(attack_env)
    m.run()
    _STATE["matrix"] = m
    return m


def pytest_terminal_summary(terminalreporter):
    procs.pytest_terminal_summary(terminalreporter)
    m = _STATE["matrix"]
    if m is None:
        return
    terminalreporter.write_sep("=", "attack suite results (%s)" % (
        "partial: ATTACKS=%s" % ",".join(A.ONLY) if m.partial else "tests/attacks/results.md"))
    terminalreporter.write_line(A.summary_tables(m))
    terminalreporter.write_line("matrix: %.0f s; whole session: %.0f s"
                                % (m.seconds, __import__("time").monotonic() - m.env.t0))
