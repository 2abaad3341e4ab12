# SPDX-License-Identifier: Apache-2.0
"""Running agentsbx as a plain user (issue 20): uid 4711 through setpriv,
with no passwd entry added to the host, and the directories such a user
needs (a 0755 temp dir, an XDG_RUNTIME_DIR of its own)."""

import os
import shutil
import subprocess
import tempfile
import time

UID = 4711
SETPRIV = shutil.which("setpriv")


def argv(*cmd):
    """cmd run as the user, no supplementary groups."""
    return [SETPRIV, "--reuid", str(UID), "--regid", str(UID), "--clear-groups"] + \
        [str(c) for c in cmd]


def make_dirs(prefix):
    """(tmp, xdg): a temp dir the user can reach (pytest's are root's
    0700) and an XDG_RUNTIME_DIR in it that the user owns."""
    tmp = tempfile.mkdtemp(prefix=prefix)
    os.chmod(tmp, 0o755)
    xdg = os.path.join(tmp, "run")
    os.mkdir(xdg, 0o700)
    os.chown(xdg, UID, UID)
    return tmp, xdg


def env(xdg, **more):
    e = {"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": xdg, "HOME": "/"}
    e.update(more)
    return e


def leftovers(xdg, timeout=2.0):
    """(container states left under xdg, processes of the user left): a
    sandbox's watchdog leaves a moment after its parent, so wait a little."""
    deadline = time.monotonic() + timeout
    while True:
        procs = subprocess.run(["pgrep", "-u", str(UID)], stdout=subprocess.PIPE).stdout.split()
        if not procs or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    state = os.path.join(xdg, "agentsbx")
    left = [n for n in os.listdir(state) if not n.startswith(".")] if os.path.isdir(state) else []
    return left, procs
