# SPDX-License-Identifier: Apache-2.0
"""The first seed program's hardened runner, on Docker's Python SDK (Debian's
python3-docker), as its users write it: a container per call with the
network off, a read-only root, a small /tmp, memory without swap, one CPU,
a pids limit, no capabilities, no new privileges; logs, wait (with the
timeout), kill, remove(force=True).  The only addition is `runtime`
(dockerd's "runc" or "agentsbx") and hardened=False, the same call without
the flags (a plain `containers.run`, for comparison).  The tests run it
unchanged against the private dockerd (DOCKER_HOST, conftest.py)."""

import time
from dataclasses import dataclass

import docker
import requests

IMAGE = "agentsbx-py-python:latest"

HARDENED = dict(
    network_disabled=True,
    read_only=True,
    mem_limit="256m",
    memswap_limit="256m",      # = mem_limit: no swap
    nano_cpus=1_000_000_000,   # one CPU
    pids_limit=64,
    cap_drop=["ALL"],
    security_opt=["no-new-privileges:true"],
    tmpfs={"/tmp": "rw,size=16m,mode=1777"},
)


@dataclass
class Result:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool
    seconds: float
    oom_killed: bool = False


def run(code, timeout=10, runtime="runc", hardened=True, image=IMAGE):
    client = docker.from_env()
    flags = HARDENED if hardened else {}
    container = client.containers.create(image, ["python3", "-c", code], runtime=runtime,
                                         **flags)
    start = time.monotonic()
    timed_out = False
    try:
        container.start()
        try:
            status = container.wait(timeout=timeout)
        except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
            timed_out = True
            container.kill()
            status = container.wait(timeout=30)
        seconds = time.monotonic() - start
        stdout = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        stderr = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
        container.reload()
        oom = bool(container.attrs["State"].get("OOMKilled"))
        return Result(stdout, stderr, status["StatusCode"], timed_out, seconds, oom)
    finally:
        container.remove(force=True)
        client.close()
