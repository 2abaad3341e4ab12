# SPDX-License-Identifier: Apache-2.0
"""Helpers of the sandbox suite (see conftest.py): the runtime under test,
image building, running `agentsbx sandbox`, and the leftovers check."""

import glob
import json
import os
import shutil
import subprocess
import sys
import time


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))

# debootstrap_image: the python and node images, cached (tests/lib/images.py)
from images import debootstrap_image  # noqa: E402,F401

RUNTIME = os.environ.get("AGENTSBX") or os.path.join(REPO, "build", "agentsbx")
BUSYBOX = shutil.which("busybox", path="/bin:/usr/bin:/sbin:/usr/sbin") or "/bin/busybox"
WORK_DIR = "/run/agentsbx-sandbox"


# --------------------------------------------------------------------------
# Images

def busybox_image(root):
    img = os.path.join(root, "busybox")
    os.makedirs(os.path.join(img, "bin"))
    shutil.copy2(BUSYBOX, os.path.join(img, "bin", "busybox"))
    out = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True).stdout
    for applet in out.split():
        if applet != "busybox":
            os.symlink("busybox", os.path.join(img, "bin", applet))
    for d in ("tmp", "proc", "sys", "dev", "etc"):
        os.makedirs(os.path.join(img, d))
    with open(os.path.join(img, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n")
    return img


# --------------------------------------------------------------------------
# Running the runtime

class Sandbox:
    """`agentsbx --root ROOT sandbox --image-root IMAGES ...` for one test."""

    def __init__(self, state_root, image_root):
        self.state_root = state_root
        self.image_root = image_root

    def argv(self, *args, image="busybox", policy=None, json_out=True):
        argv = [RUNTIME, "--root", self.state_root]
        if policy:
            argv += ["--policy", policy]
        argv += ["sandbox", "--image-root", self.image_root]
        if image:
            argv += ["--image", image]
        if json_out:
            argv.append("--json")
        return argv + [str(a) for a in args]

    def run(self, *args, image="busybox", policy=None, input=None, timeout=120):
        """Run with --json; return the result dict (fails on a bad exit)."""
        p = subprocess.run(self.argv(*args, image=image, policy=policy),
                           input=input.encode() if isinstance(input, str) else input,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        assert p.returncode == 0, "rc %d, stderr: %s" % (p.returncode, p.stderr.decode())
        lines = p.stdout.decode().splitlines()
        assert len(lines) == 1, p.stdout[:2000]
        return json.loads(lines[0])

    def raw(self, *args, image="busybox", policy=None, input=None, json_out=False,
            timeout=120):
        """Run; return (rc, stdout bytes, stderr bytes)."""
        p = subprocess.run(self.argv(*args, image=image, policy=policy, json_out=json_out),
                           input=input.encode() if isinstance(input, str) else input,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout, p.stderr


# --------------------------------------------------------------------------
# Nothing left behind

def sandbox_cgroups():
    found = []
    for parent in glob.glob("/sys/fs/cgroup/*/agentsbx") + ["/sys/fs/cgroup/agentsbx"]:
        try:
            found += [os.path.join(parent, n) for n in os.listdir(parent) if n.startswith("sbx-")]
        except OSError:
            pass
    return found


def sandbox_mounts():
    with open("/proc/self/mountinfo") as f:
        return [l for l in f if WORK_DIR in l or "/sbx-" in l]


def sandbox_processes():
    """Processes whose cgroup is a sandbox's."""
    procs = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cgroup" % pid) as f:
                if "/agentsbx/sbx-" in f.read():
                    procs.append(int(pid))
        except OSError:
            pass
    return procs


def state_entries(root):
    if not os.path.isdir(root):
        return []
    return [n for n in os.listdir(root) if not n.startswith(".")]


def leftovers(state_root):
    left = {
        "state": state_entries(state_root),
        "default state": [n for n in state_entries("/run/agentsbx") if n.startswith("sbx-")],
        "cgroups": sandbox_cgroups(),
        "mounts": sandbox_mounts(),
        "workspaces": os.listdir(WORK_DIR) if os.path.isdir(WORK_DIR) else [],
        "processes": sandbox_processes(),
    }
    return {k: v for k, v in left.items() if v}


def wait_no_leftovers(state_root, timeout=5.0):
    end = time.monotonic() + timeout
    while True:
        left = leftovers(state_root)
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


# ---- shared by the suites of the front door (sandbox, mcp_http) ----------

def use_private_policy_log():
    """The policy's audit log: this test session's decisions go to a temp
    file of its own (removed at exit), never to /var/log/agentsbx."""
    if "AGENTSBX_POLICY_LOG" in os.environ:
        return
    import atexit
    import tempfile
    log_dir = tempfile.mkdtemp(prefix="agentsbx-policylog-")
    os.environ["AGENTSBX_POLICY_LOG"] = os.path.join(log_dir, "policy.log")
    atexit.register(shutil.rmtree, log_dir, True)


def make_image_root(tmp_path_factory):
    """A directory of images: busybox always, python when it can be built."""
    root = str(tmp_path_factory.mktemp("images"))
    busybox_image(root)
    py = debootstrap_image("python", "python3")
    if py:
        os.symlink(py, os.path.join(root, "python"))
    return root


def python_image_in(image_root):
    """The python image's name, or the test skipped when it could not be
    built here."""
    import pytest
    if not os.path.exists(os.path.join(image_root, "python")):
        pytest.skip("no python image: debootstrap could not build it here")
    return "python"
