# SPDX-License-Identifier: Apache-2.0
"""
Tests of `agentsbx sandbox` and `agentsbx mcp`:

    AGENTSBX=build/agentsbx /usr/bin/python3 -m pytest -q tests/sandbox

Images
------
- busybox: made per session from the host's static /bin/busybox.
- python: `debootstrap --variant=minbase --include=python3 bookworm DIR`,
  the set-up the README documents, built once and cached in
  $AGENTSBX_TEST_CACHE (default /var/cache/agentsbx-test) -- about a minute
  the first time, 260 MB.  debootstrap is installed with apt-get when it is
  missing.  Tests that need it are skipped when it cannot be built.
- node: the same with nodejs, built only for the node test.

Every test runs with its own --root, and the autouse `no_leftovers` fixture
checks afterwards that nothing is left: no state, no cgroup named sbx-*
under any hierarchy's agentsbx/, no mount of a sandbox workspace or overlay
on the host, nothing in /run/agentsbx-sandbox, no process in a sandbox's
cgroup.
"""

import os

import pytest

from sbx_helpers import (Sandbox, debootstrap_image, make_image_root,
                         python_image_in, use_private_policy_log, wait_no_leftovers)

use_private_policy_log()



@pytest.fixture(scope="session")
def image_root(tmp_path_factory):
    return make_image_root(tmp_path_factory)


@pytest.fixture(scope="session")
def python_image(image_root):
    return python_image_in(image_root)


@pytest.fixture(scope="session")
def node_image(image_root):
    path = debootstrap_image("node", "nodejs")
    if not path:
        pytest.skip("no node image: debootstrap could not build it here")
    link = os.path.join(image_root, "node")
    if not os.path.exists(link):
        os.symlink(path, link)
    return "node"


@pytest.fixture
def state_root(tmp_path):
    root = tmp_path / "state"
    return str(root)


@pytest.fixture
def sbx(state_root, image_root):
    return Sandbox(state_root, image_root)


@pytest.fixture(autouse=True)
def no_leftovers(state_root):
    yield
    assert wait_no_leftovers(state_root, 0.5) == {}
