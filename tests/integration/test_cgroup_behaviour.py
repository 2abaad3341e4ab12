"""Cgroup behaviour of real containers on this (v1/hybrid) host: the same
script the pure cgroup v2 guest runs (tests/vm/container-tests.sh): OOM kill
and its event, fork bomb at pids.max, exec into it at pids.max, ps --format
json, delete --force,
cpu throttling, live update, pause/resume, the cgroup namespace, unified
keys that cannot lift the default policy's limits, the policy's writable layer
(capped, charged to the memory cgroup)."""

import os

import pytest

from conftest import run_cmd

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "vm", "container-tests.sh")


def test_cgroup_behaviour_on_this_host(runtime, agentsbx_only):
    # pytest is the subreaper (conftest): the scripts' detached inits are
    # re-parented to it and reaped.
    rc, out, err = run_cmd(["sh", SCRIPT, runtime], timeout=240)
    lines = out.splitlines()
    failed = [l for l in lines if l.startswith("FAIL")]
    assert not failed and rc == 0, "\n".join(failed) + "\n" + err[-2000:]
    assert sum(l.startswith("ok ") for l in lines) == 14, out
