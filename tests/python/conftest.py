# SPDX-License-Identifier: Apache-2.0
"""
Tests of the Python package (python/agentsbx: Sandbox, Session, the
run_python tool) and of Docker's Python SDK driving agentsbx (issue 31):

    AGENTSBX=$PWD/build/agentsbx /usr/bin/python3 -m pytest -q -p no:cacheprovider -rsx tests/python

The package is imported from python/ (test_install.py installs it into a
fresh venv too).  It runs the CLI given by $AGENTSBX.

Shared with the other suites, not copied:
  - the Python image: tests/lib/images.py's debootstrap cache
    (/var/cache/agentsbx-test), here with pip (`--include=python3,python3-pip`,
    for commands.run("pip list")), built once (about two minutes);
  - the leftover checks of tests/sandbox (sbx_helpers.py);
  - the private dockerd of tests/e2e (e2e_lib.py's `session` fixture,
    tests/lib/engines.py's Docker: its own data-root, exec-root and socket
    under a temp dir, --bridge none, --iptables=false), here with
    "agentsbx" registered under the built-in default policy (plus the
    session's temp dir in bindPrefixes and the session's auditLog, as
    tests/e2e's agentsbx-policy) and Docker's own runc;
  - the orphan reaper (tests/lib/procs.py, started by importing engines):
    dockerd's shims and the session servers daemonize, PID 1 never reaps.
    The package's own subprocesses go through procs.OwnedPopen, so the
    reaper never takes an exit status the package waits for.

Every test has its own --root; after each, nothing of it may be left: no
state, no session record, no sbx-* cgroup or process of a sandbox it ran, no
sandbox mount on the host, no uid it held in /run/agentsbx/.identities.  The
policy's audit log is a temp file (AGENTSBX_POLICY_LOG, and the policy's
auditLog for dockerd), never /var/log/agentsbx/policy.log.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for d in ("python", "tests/lib", "tests/e2e", "tests/sandbox"):
    sys.path.insert(0, os.path.join(REPO, d))

# e2e_lib sets AGENTSBX_POLICY_LOG to a temp file of the session's (when
# unset) and starts the orphan reaper (through engines).
import e2e_lib  # noqa: E402
from e2e_lib import session  # noqa: E402,F401  (the fixture: temp dir, policy files)
import procs  # noqa: E402

import agentsbx  # noqa: E402
import agentsbx._cli  # noqa: E402

import py_helpers as H  # noqa: E402

agentsbx._cli.Popen = procs.OwnedPopen
os.environ[agentsbx._cli.ENV_BINARY] = H.RUNTIME


def pytest_configure(config):
    # python3-docker 5.0.3 compares versions with distutils
    config.addinivalue_line("filterwarnings", "ignore::DeprecationWarning:docker.*")


def pytest_terminal_summary(terminalreporter):
    procs.pytest_terminal_summary(terminalreporter)
    for title, text in H.REPORTS:
        terminalreporter.write_sep("=", title)
        terminalreporter.write_line(text)


@pytest.fixture(scope="session")
def image_root(tmp_path_factory):
    """A directory of images with "python": the cached Debian image with
    python3 and pip."""
    if os.geteuid() != 0:
        pytest.skip("the Python client's tests need root (one test runs as a plain user)")
    if not os.access(H.RUNTIME, os.X_OK):
        pytest.fail("AGENTSBX=%s is not an executable (run `make` first)" % H.RUNTIME)
    path = H.python_image()
    if not path:
        pytest.skip("no python image: debootstrap could not build it here")
    root = str(tmp_path_factory.mktemp("images"))
    os.chmod(root, 0o755)
    os.symlink(path, os.path.join(root, "python"))
    return root


@pytest.fixture
def state_root(tmp_path):
    return str(tmp_path / "state")


@pytest.fixture
def mine(state_root):
    """What this test made, checked after it: the sessions it opened and
    the processes the package started (H.Mine)."""
    m = H.Mine(state_root)
    yield m
    left = m.wait_clean()
    assert left == {}, "left behind: %s" % left


@pytest.fixture
def make_sandbox(image_root, state_root, mine):
    def make(**kw):
        kw.setdefault("image_root", image_root)
        kw.setdefault("root", state_root)
        return agentsbx.Sandbox(**kw)
    return make


@pytest.fixture
def make_session(image_root, state_root, mine):
    """Sessions for one test; any still open at the end is closed (and
    must close cleanly) before the leftovers are checked."""
    made = []

    def make(**kw):
        kw.setdefault("image_root", image_root)
        kw.setdefault("root", state_root)
        s = agentsbx.Session(**kw)
        made.append(s)
        mine.session_opened(s)
        return s
    yield make
    for s in made:
        s.close()


# --------------------------------------------------------------------------
# Docker: tests/e2e's private dockerd, with agentsbx under the default policy


@pytest.fixture(scope="session")
def py_docker_daemon(session, image_root):
    e2e_lib.require((e2e_lib.DOCKERD, e2e_lib.DOCKER), "Docker", "docker.io")
    if session.policy_default is None:
        pytest.skip("the runtime under test has no policy (runc as a control run)")
    runtimes = {"agentsbx": {"path": session.runtime,
                             "runtimeArgs": ["--policy", session.policy_default]}}
    d = e2e_lib.Docker(session, runtimes, "/agentsbx-py-%s-docker" % session.tag, H.DOCKER_IMAGE)

    def start():
        why = d.start()
        if why:
            return "dockerd could not start.\n" + why
        os.makedirs(os.path.dirname(d.state_root), mode=0o700, exist_ok=True)
        H.docker_import_python(d, session.tmp)
        return None
    yield from e2e_lib.session_engine(session, d, "Docker", start, d.stop)


@pytest.fixture
def py_docker(py_docker_daemon, monkeypatch):
    """The daemon, with DOCKER_HOST set for docker.from_env(); every
    container removed and nothing left after the test."""
    monkeypatch.setenv("DOCKER_HOST", "unix://" + py_docker_daemon.sock)
    monkeypatch.delenv("DOCKER_CONTEXT", raising=False)
    monkeypatch.delenv("DOCKER_TLS_VERIFY", raising=False)
    yield from e2e_lib.clean_after_test(py_docker_daemon, py_docker_daemon.leftovers,
                                        lambda: ("dockerd", py_docker_daemon.log_tail()))
