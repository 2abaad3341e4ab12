# SPDX-License-Identifier: Apache-2.0
"""pytest wiring for the e2e suite: the fixtures are in e2e_lib.py, the
engines and helpers in tests/lib/."""

from e2e_lib import (  # noqa: F401  (fixtures and hooks, found by name)
    containerd_daemon, ctr, docker, docker_daemon, podman, podman_engine,
    pytest_terminal_summary, session)
