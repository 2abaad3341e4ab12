# SPDX-License-Identifier: Apache-2.0
"""Scheduling outside the CPU floor (issue 12, row 16; spec/policy/policy_process.c).

SCHED_DEADLINE, SCHED_FIFO and SCHED_RR tasks are not under CFS bandwidth
control: the policy's cpu quota does not hold for them (on main a
SCHED_DEADLINE container with runtime 0.9 ms per 1 ms used 0.90 CPU under a
0.2 CPU quota).  RT I/O priority goes before every other process's disk
I/O, and a hard RLIMIT_RTPRIO above 0 lets the container's own code switch
to SCHED_FIFO without any capability.  Under enforce all are refused,
naming the field, unless the policy's realtimeScheduling is true.
"""

import json
import os

import pytest

from conftest import policy_file, make_spec

pytestmark = pytest.mark.usefixtures("agentsbx_only")


# What the probe prints: the scheduling policy of the container's process
# (0 other, 1 fifo, 2 rr, 3 batch, 6 deadline).  One exec, no fork: a
# SCHED_DEADLINE task may not fork.
SHOW = ["grep", "-E", "^policy", "/proc/self/sched"]

REALTIME = {
    "deadline": ("process.scheduler.policy SCHED_DEADLINE",
                 {"scheduler": {"policy": "SCHED_DEADLINE", "runtime": 900000,
                                "deadline": 1000000, "period": 1000000}}),
    "fifo": ("process.scheduler.policy SCHED_FIFO",
             {"scheduler": {"policy": "SCHED_FIFO", "priority": 1}}),
    "rr": ("process.scheduler.policy SCHED_RR",
           {"scheduler": {"policy": "SCHED_RR", "priority": 1}}),
    "ioprio-rt": ("process.ioPriority.class IOPRIO_CLASS_RT",
                  {"ioPriority": {"class": "IOPRIO_CLASS_RT", "priority": 0}}),
    "rlimit-rtprio": ("process.rlimits RLIMIT_RTPRIO above 0",
                      {"rlimits": [{"type": "RLIMIT_RTPRIO", "soft": 99, "hard": 99}]}),
}


@pytest.mark.parametrize("case", sorted(REALTIME))
def test_realtime_scheduling_refused(penv, case):
    field, process = REALTIME[case]
    spec = make_spec(SHOW)
    spec["process"].update(process)
    rc, out, err = penv.run(spec)
    assert rc != 0, "granted under enforce:\n%s" % out
    assert "policy: %s is refused by the policy (built-in default)" % field in err, err
    assert "realtimeScheduling allows it" in err, err


def test_ordinary_scheduling_still_allowed(penv):
    spec = make_spec(SHOW)
    spec["process"]["scheduler"] = {"policy": "SCHED_BATCH", "nice": 5}
    spec["process"]["ioPriority"] = {"class": "IOPRIO_CLASS_BE", "priority": 7}
    rc, out, err = penv.run(spec)
    assert rc == 0, err
    assert out.split()[-1] == "3", out  # SCHED_BATCH


def test_realtime_scheduling_policy_field_allows_it(penv):
    pol = policy_file(penv, {"realtimeScheduling": True})
    penv.policy_args = ["--policy", pol]
    rc, out, err = penv.rt("policy", "show", check=False)
    assert '"realtimeScheduling": true' in out, out
    spec = make_spec(SHOW)
    spec["process"]["ioPriority"] = {"class": "IOPRIO_CLASS_RT", "priority": 0}
    rc, out, err = penv.run(spec)
    assert "refused by the policy" not in err, err
    assert rc == 0, err


def test_exec_realtime_scheduling_refused(penv):
    cid = penv.create(make_spec(["sleep", "300"]))
    penv.rt("start", cid)
    proc = make_spec(SHOW)["process"]
    proc["scheduler"] = {"policy": "SCHED_FIFO", "priority": 1}
    path = os.path.join(penv.tmp, "process.json")
    with open(path, "w") as f:
        json.dump(proc, f)
    rc, out, err = penv.rt("exec", "--process", path, cid, check=False)
    assert rc != 0
    assert "process.scheduler.policy SCHED_FIFO is refused by the policy" in err, err
