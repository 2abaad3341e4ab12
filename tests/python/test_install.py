# SPDX-License-Identifier: Apache-2.0
"""The package installs offline into a fresh venv (python/pyproject.toml's
in-tree backend: nothing to download) and runs a sandbox as root and as a
plain user (rootless: tests/lib/asuser.py's uid, as
tests/sandbox/test_rootless_sandbox.py)."""

import os
import shutil

import pytest

import asuser
import procs
import py_helpers as H

ONE_LINER = "import agentsbx; print(agentsbx.Sandbox().run('print(6*7)').stdout)"


@pytest.fixture(scope="module")
def venv(image_root):
    """A fresh venv (Debian's python3 -m venv, pip from its own wheel) in a
    0755 temp dir a plain user can read, agentsbx installed into it from
    python/ twice: `pip install --no-index` (the issue's command: the
    backend's build environment needs nothing) and `--no-index
    --no-build-isolation` (the venv's own tools).  No index, no network, no
    cache, nothing written into the checkout.  An image root the user can
    read too (pytest's temp dirs are root's 0700)."""
    if asuser.SETPRIV is None:
        pytest.skip("setpriv (util-linux) missing")
    tmp, xdg = asuser.make_dirs("agentsbx-py-venv-")
    env = dict(os.environ, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("PIP_INDEX_URL", None)
    try:
        v = os.path.join(tmp, "venv")
        images = os.path.join(tmp, "images")
        os.mkdir(images, 0o755)
        os.symlink(os.readlink(os.path.join(image_root, "python")),
                   os.path.join(images, "python"))
        procs.run(["/usr/bin/python3", "-m", "venv", v], timeout=180, env=env).ok()
        pip = os.path.join(v, "bin", "pip")
        installs = [procs.run([pip, "install", "--no-index", H.PYTHON_DIR],
                              timeout=300, env=env),
                    procs.run([pip, "install", "--no-index", "--no-build-isolation",
                               "--force-reinstall", H.PYTHON_DIR], timeout=300, env=env)]
        yield {"tmp": tmp, "xdg": xdg, "python": os.path.join(v, "bin", "python"),
               "env": env, "images": images, "installs": installs}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_offline_install_into_a_fresh_venv(venv):
    for r in venv["installs"]:
        assert r.rc == 0, r
    r = procs.run([venv["python"], "-c", "import agentsbx, sys; print(agentsbx.__version__, "
                   "agentsbx.__file__.startswith(sys.prefix))"], env=venv["env"]).ok()
    assert r.out.split() == ["0.1.0", "True"]
    assert sorted(os.listdir(H.PYTHON_DIR)) == ["README.md", "_build", "agentsbx",
                                                "pyproject.toml"]


def test_the_one_liner_prints_42_as_root(venv):
    """`Sandbox()` with no argument: the image "python" under
    $AGENTSBX_IMAGE_ROOT, the binary $AGENTSBX, the default state root."""
    env = dict(venv["env"], AGENTSBX=H.RUNTIME, AGENTSBX_IMAGE_ROOT=venv["images"])
    p = procs.spawn([venv["python"], "-c", ONE_LINER], env=env, cwd="/")
    rc, out, err = p.wait(timeout=120)
    assert (rc, out) == (0, "42\n\n"), err


def test_the_one_liner_prints_42_as_a_plain_user(venv):
    """Rootless: the CLI makes a user namespace of its own; the image is
    the same cached tree."""
    xdg = venv["xdg"]
    log = os.path.join(xdg, "policy.log")
    env = asuser.env(xdg, AGENTSBX=H.RUNTIME, AGENTSBX_IMAGE_ROOT=venv["images"],
                     AGENTSBX_POLICY_LOG=log, PYTHONDONTWRITEBYTECODE="1")
    p = procs.spawn(asuser.argv(venv["python"], "-c", ONE_LINER), env=env, cwd="/")
    rc, out, err = p.wait(timeout=120)
    assert (rc, out) == (0, "42\n\n"), err
    left, processes = asuser.leftovers(xdg)
    assert left == [] and processes == [], "left: %s, processes: %s" % (left, processes)
