# SPDX-License-Identifier: Apache-2.0
"""Helpers of tests/python (see conftest.py): the image, what a test made
and must not leave, and the identities registry."""

import glob
import os
import time

import images
import procs
import sbx_helpers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RUNTIME = os.path.abspath(os.environ.get("AGENTSBX") or os.path.join(REPO, "build", "agentsbx"))
PYTHON_DIR = os.path.join(REPO, "python")
IMAGE_NAME = "python-pip"          # the cache's name for it
IMAGE_PACKAGES = "python3,python3-pip"
DOCKER_IMAGE = "agentsbx-py-python:latest"
IDENTITIES = "/run/agentsbx/.identities"

# (title, text) printed at the end of the run (the tables).
REPORTS = []
# test_tables.py's results: {column: {program: (verdict, why)}}, {row: (median, slowest)}
HOSTILE = {}
LATENCY = {}


def python_image():
    """The cached Debian image with python3 and pip, or None."""
    return images.debootstrap_image(IMAGE_NAME, IMAGE_PACKAGES)


def docker_import_python(d, tmp):
    """The same image into the private dockerd, as the attack suite does
    (a tarball of the cached tree, read under the cache's lock)."""
    tar = os.path.join(tmp, "python-image.tar")
    with images.cache_lock():
        rootfs = images.debootstrap_locked(IMAGE_NAME, IMAGE_PACKAGES)
        procs.run(["tar", "--numeric-owner", "--exclude", "./" + images.MARKER, "-C", rootfs,
                   "-cf", tar, "."], timeout=300).ok()
    try:
        d("import", "--change", 'CMD ["python3"]', tar, DOCKER_IMAGE, timeout=300).ok()
    finally:
        os.unlink(tar)


# --------------------------------------------------------------------------
# The identities registry: a directory per uid in use, a holder file per
# container (or sandbox workspace) holding it, whose content is its path.


def identity_holders():
    """[(uid, holder path)] of every uid held now."""
    out = []
    for d in glob.glob(os.path.join(IDENTITIES, "[0-9]*")):
        for h in glob.glob(os.path.join(d, "*")):
            try:
                with open(h) as f:
                    out.append((int(os.path.basename(d)), f.read().strip()))
            except (OSError, ValueError):
                pass
    return out


# --------------------------------------------------------------------------
# What a test made


def alive(pid):
    st = procs.proc_stat(pid)
    return st is not None and st[0] != "Z"


class Mine:
    """A test's own: its --root, the processes the package started for it
    (procs.OwnedPopen.SPAWNED, from the test's start), the servers of the
    sessions it opened.  A sandbox's ids are sbx-PID-N-RAND with the pid
    of the agentsbx process that made it (a `sandbox` call, a session's
    server), so its cgroups and workspaces are found by those pids."""

    def __init__(self, state_root):
        self.state_root = state_root
        self.before = set(procs.OwnedPopen.SPAWNED)
        self.servers = set()

    def session_opened(self, s):
        for e in s.cli.call(s.cli.argv("session", "list", "--json"), None, guard=60)[1]:
            if e.get("session_id") == s.session_id and e.get("pid"):
                self.servers.add(int(e["pid"]))

    def pids(self):
        return (set(procs.OwnedPopen.SPAWNED) - self.before) | self.servers

    def leftovers(self):
        pids = self.pids()
        prefixes = tuple("sbx-%d-" % p for p in pids)
        sessions = os.path.join(self.state_root, ".sessions")
        left = {
            "state": sbx_helpers.state_entries(self.state_root),
            "sessions": os.listdir(sessions) if os.path.isdir(sessions) else [],
            "cgroups": [c for c in sbx_helpers.sandbox_cgroups()
                        if os.path.basename(c).startswith(prefixes)],
            "mounts": sbx_helpers.sandbox_mounts(),
            "processes": sorted(p for p in pids if alive(p)),
            "identities": [(u, p) for u, p in identity_holders()
                           if p.startswith(self.state_root + "/") or
                           os.path.basename(p).startswith(prefixes)],
        }
        return {k: v for k, v in left.items() if v}

    def wait_clean(self, timeout=5.0):
        end = time.monotonic() + timeout
        while True:
            left = self.leftovers()
            if not left or time.monotonic() > end:
                return left
            time.sleep(0.05)
