# SPDX-License-Identifier: Apache-2.0
"""
End-to-end suite: agentsbx driven by the real callers.  The fixtures live
here (conftest.py re-exports them), under a name of their own so that
tests/integration/conftest.py never shadows them; the engines, process
spawning and the leftover checks are tests/lib/ (engines.py, procs.py,
images.py), shared with tests/attacks.

    AGENTSBX=$PWD/agentsbx /usr/bin/python3 -m pytest -q -p no:cacheprovider -rsx tests/e2e

  - Docker (Debian's dockerd 20.10 + its own containerd + containerd-shim-runc-v2),
    `docker run --runtime agentsbx ...`: tests/e2e/test_docker.py
  - containerd's `ctr` with the io.containerd.runc.v2 shim and --runc-binary:
    tests/e2e/test_ctr.py
  - `podman --runtime <binary>` (podman 4.3 + conmon 2.1 from Debian):
    tests/e2e/test_podman.py

Needs root and the Debian packages docker.io, containerd, podman, conmon,
busybox-static (tests/e2e/README-snippets.md lists them).  Nothing is pulled
from a registry: one busybox-static rootfs is built per session and imported
into each engine (`docker import`, `ctr images import` of an OCI archive made
here, `podman import`).

Environment:
  AGENTSBX      the runtime under test (default: ./agentsbx of this checkout)
  E2E_DOCKERD, E2E_DOCKER, E2E_CONTAINERD, E2E_CTR, E2E_PODMAN
                the engine binaries (defaults: Debian's, by absolute path;
                /usr/local/bin/docker is a newer client, not used)
  E2E_TRACE=DIR every engine calls a logging wrapper instead of the runtime:
                DIR/invocations.log gets the argv of every call (with the
                caller's name and the exit status) and DIR/runtime-logs.log
                the lines each call added to its --log file.  That is how
                the invocation list in the README was made.
  E2E_KEEP=1    keep the session's temp dir (logs of dockerd/containerd).

agentsbx's sandbox policy: the compatibility tests (everything the issue
lists for Docker) run agentsbx with {"mode": "off"}, a plain OCI runtime,
as tests/integration does; the Docker tests named test_policy_* run it
under its built-in default floor (runtime "agentsbx-policy"), and so do the
ctr and podman tests: that is what a user of those engines gets.  See
setup_policy().  With a runtime that has no `policy` command (runc, as a
control run: AGENTSBX=/usr/sbin/runc) no --policy is passed and the
test_policy_* tests are skipped.

Isolation and cleanliness.  Every daemon is started by this process with
its own state under one temp dir (/tmp/agentsbx-e2e-*): dockerd with its own
--data-root, --exec-root, --pidfile, socket and no bridge/iptables (it
starts its own containerd under the exec-root); a second containerd for ctr;
podman with its own --root/--runroot/--tmpdir and a private containers.conf
and storage.conf.  Each engine's fixture checks after EVERY test that no
container state is left under the runtime's --root, no cgroup directory is
left for the test's containers, no mount is left under the temp dir, no new
namespace (nsfs) mount exists, and no shim/conmon of the test is still
running.  At the end everything started
here is stopped by PID, and directories the engines create outside the temp
dir (/run/docker, /run/containerd, /opt/containerd, /run/agentsbx,
/var/lib/containers, the cgroup parents) are removed if this session
created them.

The process is a child subreaper with an orphan reaper thread
(tests/lib/procs.py): start processes only through spawn()/run().  Run this
suite in a pytest process of its own (not together with tests/integration,
whose orphan reaper would take this one's children).

If dockerd cannot start at all, the Docker tests are skipped, and the
reason is printed in a banner at the end of the run.
"""

import glob
import json
import os
import shutil
import sys
import tempfile
import uuid

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))

from engines import (CONMON, CONMON_SOCKETS, CONTAINERD, CTR, DOCKER,  # noqa: E402,F401
                     DOCKERD, HOST_PATHS, PODMAN, PODMAN_CGROUP_PARENT, RUNTIME,
                     Containerd, Docker, Podman)
from images import build_rootfs, oci_archive  # noqa: E402
from procs import (KEEP, PtySession, cgroup_hierarchies, kill_pids,  # noqa: E402,F401
                   leftover_report, loud_skip, mounts_under, netns_mounts,
                   only_empty_dirs, pids_with_arg, poll_until, proc_cmdline,
                   pytest_terminal_summary, run, spawn, state_entries, wait_clean)

# The policy's audit log (issue 17): this session's decisions go to a temp
# file of its own (removed at exit), never to /var/log/agentsbx.  dockerd,
# containerd and podman pass it on to the runtime they run.
if "AGENTSBX_POLICY_LOG" not in os.environ:
    import atexit as _atexit
    import shutil as _shutil
    import tempfile as _tempfile
    _policy_log_dir = _tempfile.mkdtemp(prefix="agentsbx-policylog-")
    os.environ["AGENTSBX_POLICY_LOG"] = os.path.join(_policy_log_dir, "policy.log")
    _atexit.register(_shutil.rmtree, _policy_log_dir, True)

TRACE = os.environ.get("E2E_TRACE", "")
IMAGE = "agentsbx-e2e:latest"


def runtime_lacks(command):
    """True when the runtime under test has no such command (for the
    xfail marks of what is not implemented yet)."""
    try:
        return run([RUNTIME, command, "--help"], timeout=10).rc != 0
    except OSError:
        return True


TRACE_WRAPPER = r"""#!/bin/bash
# E2E_TRACE wrapper: log the argv, run the real runtime, log what it added
# to its --log file.
T=%(trace)s
caller=$(tr '\0' ' ' < /proc/$PPID/cmdline 2>/dev/null | cut -c1-60)
log=""; prev=""
for a in "$@"; do
  case "$prev" in --log) log="$a";; esac
  case "$a" in --log=*) log="${a#--log=}";; esac
  prev="$a"
done
sz=0; [ -n "$log" ] && [ -f "$log" ] && sz=$(stat -c %%s "$log")
printf '%%s caller=[%%s] argv: %%s\n' "$(date +%%T.%%N)" "$caller" "$*" >> "$T/invocations.log"
%(runtime)s "$@"
rc=$?
printf '%%s   rc=%%d for: %%s\n' "$(date +%%T.%%N)" "$rc" "$*" >> "$T/invocations.log"
if [ -n "$log" ] && [ -f "$log" ]; then
  n=$(stat -c %%s "$log")
  if [ "$n" -gt "$sz" ]; then
    { echo "== rc=$rc: $*"; tail -c +$((sz+1)) "$log"; echo; } >> "$T/runtime-logs.log"
  fi
fi
exit $rc
"""


class Session:
    """Session-wide facts shared by the engine fixtures."""

    def __init__(self, tmp):
        self.tmp = tmp
        # names cgroup parents and the containerd namespace: [a-z0-9] only
        # (containerd forbids two separators in a row, mkdtemp uses "_")
        self.tag = uuid.uuid4().hex[:8]
        self.runtime = RUNTIME  # what the engines are told to run
        # agentsbx's sandbox policy (see setup_policy): None when the
        # runtime has none (runc, as a control run of this suite)
        self.policy_off = None      # {"mode": "off"}: a plain OCI runtime
        self.policy_default = None  # the built-in floor, enforced
        self.policy = None          # `policy show` of policy_default
        self.runtime_off = None     # wrappers adding --policy, for the
        self.runtime_default = None  # engines that cannot pass arguments
        self.rootfs = os.path.join(tmp, "rootfs")
        self.rootfs_tar = os.path.join(tmp, "rootfs.tar")
        self.oci_tar = os.path.join(tmp, "image-oci.tar")
        self.problems = []  # end-of-session leftovers
        self.preexisting = {p: os.path.lexists(p) for p in HOST_PATHS}
        self.tmp_sockets = set(glob.glob(CONMON_SOCKETS))


POLICY_WRAPPER = """#!/bin/sh
exec %(runtime)s --policy %(policy)s "$@"
"""


def setup_policy(s):
    """agentsbx enforces a sandbox policy unless told otherwise
    (--policy FILE, else /etc/agentsbx/policy.json, else its built-in
    floor).  The suite uses two policy files of its own:

      policy-off.json      {"mode": "off"}: agentsbx as a plain OCI runtime,
                           as runc; the compatibility tests use it, like
                           tests/integration does;
      policy-default.json  the built-in floor, enforced, with one change:
                           bindPrefixes also allow this session's temp dir,
                           where the engines keep the files they bind into
                           containers (their defaults, /var/lib/docker/...,
                           are allowed by the built-in list).

    dockerd passes them with daemon.json runtimeArgs; ctr and podman, which
    pass no runtime arguments, get a two-line wrapper that adds --policy."""
    if runtime_lacks("policy"):
        return
    bindir = os.path.join(s.tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    s.policy_off = os.path.join(s.tmp, "policy-off.json")
    with open(s.policy_off, "w") as f:
        f.write('{"mode": "off"}\n')
    empty = os.path.join(s.tmp, "policy-builtin.json")
    with open(empty, "w") as f:
        f.write("{}\n")
    builtin = json.loads(run([RUNTIME, "--policy", empty, "policy", "show"]).ok().out)
    s.policy_default = os.path.join(s.tmp, "policy-default.json")
    with open(s.policy_default, "w") as f:
        # auditLog: the session's (dockerd does not pass its environment
        # on to the runtime), never /var/log/agentsbx.
        json.dump({"bindPrefixes": builtin["bindPrefixes"] + [s.tmp],
                   "auditLog": os.environ["AGENTSBX_POLICY_LOG"]}, f, indent=2)
    s.policy = json.loads(run([RUNTIME, "--policy", s.policy_default,
                               "policy", "show"]).ok().out)
    for name, pol in (("agentsbx-off", s.policy_off), ("agentsbx-default", s.policy_default)):
        path = os.path.join(bindir, name)
        with open(path, "w") as f:
            f.write(POLICY_WRAPPER % {"runtime": s.runtime, "policy": pol})
        os.chmod(path, 0o755)
        setattr(s, "runtime_" + name.split("-")[1], path)


def prepare_session(s):
    """The trace wrapper, the policy files, the rootfs and its tarballs."""
    if TRACE:
        os.makedirs(TRACE, exist_ok=True)
        wrapper = os.path.join(s.tmp, "bin", "agentsbx")
        os.makedirs(os.path.dirname(wrapper), exist_ok=True)
        with open(wrapper, "w") as f:
            f.write(TRACE_WRAPPER % {"trace": os.path.abspath(TRACE), "runtime": RUNTIME})
        os.chmod(wrapper, 0o755)
        s.runtime = wrapper
    setup_policy(s)
    build_rootfs(s.rootfs)
    run(["tar", "--numeric-owner", "-C", s.rootfs, "-cf", s.rootfs_tar, "."]).ok()
    oci_archive(s.rootfs_tar, s.oci_tar, "docker.io/library/" + IMAGE)


@pytest.fixture(scope="session")
def session():
    if os.geteuid() != 0:
        pytest.skip("the e2e suite needs root")
    if not os.access(RUNTIME, os.X_OK):
        pytest.fail("AGENTSBX=%s is not an executable (run `make` first)" % RUNTIME)
    tmp = tempfile.mkdtemp(prefix="agentsbx-e2e-", dir="/tmp")
    os.chmod(tmp, 0o755)
    s = Session(tmp)
    try:
        prepare_session(s)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    yield s
    # Engines are stopped by their own (session) fixtures, which pytest
    # finalizes before this one.  Remove host directories this session made.
    for p in HOST_PATHS:
        if s.preexisting[p] or not os.path.lexists(p):
            continue
        if p in ("/run/agentsbx", "/run/" + os.path.basename(RUNTIME)):
            if state_entries(p):
                s.problems.append("container state left in %s: %s" % (p, state_entries(p)))
                continue
            shutil.rmtree(p, ignore_errors=True)
        elif p == "/var/lib/containers":
            shutil.rmtree(p, ignore_errors=True)  # podman's blob-info cache
        elif only_empty_dirs(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            s.problems.append("%s was created during this session and is not empty" % p)
    for sock in set(glob.glob(CONMON_SOCKETS)) - s.tmp_sockets:
        os.unlink(sock)
    for pid in pids_with_arg(tmp):
        s.problems.append("process left running: %d %s" % (pid, proc_cmdline(pid)))
        kill_pids([pid])
    left = mounts_under(tmp)
    if left:
        s.problems.append("mounts left under %s: %s" % (tmp, left))
    if not KEEP and not left:
        shutil.rmtree(tmp, ignore_errors=True)
    assert not s.problems, "e2e session left things behind:\n  " + "\n  ".join(s.problems)


# --------------------------------------------------------------------------
# The engines' fixtures: one engine per session, checked after every test


def require(binaries, what, packages):
    for b in binaries:
        if not os.access(b, os.X_OK):
            loud_skip("%s e2e tests skipped: %s not found (apt-get install %s)"
                      % (what, b, packages))


def session_engine(session, engine, what, start, stop):
    """Yield ENGINE once start() (None, or why not) has made it ready; a
    failed start is a loud skip.  stop() returns the problems it found,
    which fail the session."""
    try:
        why = start()
    except BaseException:
        session.problems += stop()
        raise
    if why:
        session.problems += stop()
        loud_skip("%s e2e tests skipped: %s" % (what, why))
    yield engine
    session.problems += stop()


def new_netns(before):
    """Namespace mounts (nsfs) that were not there before."""
    return sorted(set(netns_mounts()) - set(before))


def clean_after_test(engine, leftovers, log_tail=None):
    """Yield ENGINE to the test; then every container removed, and nothing
    left behind by the runtime (leftovers(), new namespace mounts)."""
    ns_before = netns_mounts()
    yield engine
    engine.remove_all()
    left = wait_clean(lambda: leftovers() +
                      leftover_report("namespace mounts", new_netns(ns_before)), timeout=15)
    assert not left, ("left behind after the test:\n  " + "\n  ".join(left) +
                      ("\n--- %s log tail:\n%s" % log_tail() if log_tail else ""))


# --------------------------------------------------------------------------
# Docker

def docker_runtimes(s):
    """The README snippet ("runtimes"), with two runtimes: "agentsbx" (the
    compatibility tests: policy off) and "agentsbx-policy" (the default
    floor enforced)."""
    runtimes = {"agentsbx": {"path": s.runtime}}
    if s.policy_off:
        runtimes["agentsbx"]["runtimeArgs"] = ["--policy", s.policy_off]
        runtimes["agentsbx-policy"] = {"path": s.runtime,
                                       "runtimeArgs": ["--policy", s.policy_default]}
    return runtimes


@pytest.fixture(scope="session")
def docker_daemon(session):
    require((DOCKERD, DOCKER), "Docker", "docker.io")
    d = Docker(session, docker_runtimes(session), "/agentsbx-e2e-%s-docker" % session.tag, IMAGE)

    def start():
        why = d.start()
        if why:
            return "dockerd could not start.\n" + why
        # dockerd hands every runtime --root <exec-root>/runtime-runc/moby;
        # runc creates it with all parents on the first create.  Create
        # the parent as a first runc run would have left it;
        # test_first_container_fresh_root checks the runtime's own
        # handling of a missing parent.
        os.makedirs(os.path.dirname(d.state_root), mode=0o700, exist_ok=True)
        d("import", "--change", 'CMD ["sh"]', session.rootfs_tar, IMAGE, timeout=120).ok()
        return None
    yield from session_engine(session, d, "Docker", start, d.stop)


@pytest.fixture
def docker(docker_daemon):
    yield from clean_after_test(docker_daemon, docker_daemon.leftovers,
                                lambda: ("dockerd", docker_daemon.log_tail()))


# --------------------------------------------------------------------------
# containerd + ctr

# The README snippet for containerd's CRI plugin (Kubernetes), with the
# runtime's path filled in.  ctr's --runc-binary/--runc-root set the same
# runc-v2 shim options (BinaryName, Root) that this runtime handler does.
CRI_SNIPPET = """version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx.options]
    BinaryName = "%(runtime)s"
"""


@pytest.fixture(scope="session")
def containerd_daemon(session):
    require((CONTAINERD, CTR), "ctr", "containerd")
    c = Containerd(session, "agentsbx-e2e-%s-ctr" % session.tag, "docker.io/library/" + IMAGE)

    def start():
        why = c.start()
        if why:
            return "containerd could not start.\n" + why
        c("images", "import", session.oci_tar, timeout=120).ok()
        return None
    yield from session_engine(session, c, "ctr", start, c.stop)


@pytest.fixture
def ctr(containerd_daemon):
    yield from clean_after_test(containerd_daemon, containerd_daemon.leftovers,
                                lambda: ("containerd", containerd_daemon.log_tail()))


# --------------------------------------------------------------------------
# podman + conmon

@pytest.fixture(scope="session")
def podman_engine(session):
    require((PODMAN, CONMON), "podman", "podman conmon")
    created_parent = not any(os.path.isdir(os.path.join(h, PODMAN_CGROUP_PARENT))
                             for h in cgroup_hierarchies())
    p = Podman(session, "localhost/" + IMAGE)
    yield from session_engine(session, p, "podman", p.setup, lambda: p.stop(created_parent))


@pytest.fixture
def podman(podman_engine):
    before = podman_engine.snapshot()
    yield from clean_after_test(podman_engine, lambda: podman_engine.leftovers(before))


def unique(prefix="e2e"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])
