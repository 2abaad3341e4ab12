# SPDX-License-Identifier: Apache-2.0
"""Concurrent commands on one id: one wins, the other gets a clear error,
nothing is corrupted."""

import json
import os
import threading

from conftest import make_spec, pid_alive, spawn

ROUNDS = 20


def race(env, argvs):
    """Start all argvs at once (as close as threads allow); return results."""
    results = [None] * len(argvs)
    barrier = threading.Barrier(len(argvs))

    def go(i):
        barrier.wait()
        results[i] = spawn(argvs[i]).wait(timeout=30)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(len(argvs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(r is not None for r in results), results
    return results


def create_race_rounds(env, strict):
    b1 = env.make_bundle("b1", make_spec(["sleep", "1000"]))
    b2 = env.make_bundle("b2", make_spec(["sleep", "1000"]))
    wins = 0
    for _ in range(ROUNDS):
        cid = env.new_id()
        results = race(env, [env.argv("create", "--bundle", b, cid) for b in (b1, b2)])
        ok = [i for i, r in enumerate(results) if r[0] == 0]
        assert len(ok) <= 1, results
        for i, r in enumerate(results):
            if i not in ok:
                assert r[2].strip(), "a loser must say why"
        if strict:
            assert len(ok) == 1, results
            loser = results[1 - ok[0]][2].lower()
            assert "exist" in loser or "busy" in loser or "lock" in loser, loser
        if ok:
            wins += 1
            # the winner's state is intact and valid
            rc, out, err = env.rt("state", cid)
            st = json.loads(out)
            assert st["id"] == cid and st["status"] == "created"
            assert st["bundle"] == (b1, b2)[ok[0]]
            assert pid_alive(st["pid"])
            env.state(cid)  # record the pid for the leak check
            rc, out, err = env.rt("list", "--format", "json")
            assert [i["id"] for i in json.loads(out)] == [cid]
            env.rt("delete", "--force", cid)
        else:
            # both lost: then nothing at all may be left of either
            assert env.state(cid, check=False) is None
        assert os.listdir(env.root) == []
    return wins


# runc 1.1.5 cannot do this: two simultaneous creates of one id often both
# fail ("file exists" / "unable to store init state"), or one reports
# success while the other's failure path removes the winner's state,
# leaving an unmanaged init and its cgroups behind.  So: agentsbx only.

def test_concurrent_create_same_id(env, agentsbx_only):
    """Exactly one of two simultaneous creates of one id wins, the loser
    gets a clear error, and the winner's container is intact."""
    assert create_race_rounds(env, strict=True) == ROUNDS


def test_concurrent_create_different_ids(env):
    b = env.make_bundle("b", make_spec(["sleep", "1000"]))
    ids = [env.new_id() for _ in range(4)]
    results = race(env, [env.argv("create", "--bundle", b, cid) for cid in ids])
    assert all(r[0] == 0 for r in results), results
    rc, out, err = env.rt("list", "--format", "json")
    assert sorted(i["id"] for i in json.loads(out)) == sorted(ids)
    for cid in ids:
        assert env.state(cid)["status"] == "created"


# runc 1.1.5 cannot do this either: of two simultaneous starts one can hang
# forever on the exec fifo.
def test_concurrent_start_same_container(env, agentsbx_only):
    b = env.make_bundle("b", make_spec(["sleep", "1000"]))
    for _ in range(5):
        cid = env.create(bundle=b)
        results = race(env, [env.argv("start", cid)] * 2)
        assert sorted(r[0] == 0 for r in results) == [False, True], results
        assert env.state(cid)["status"] == "running"
        env.rt("delete", "--force", cid)


def test_concurrent_delete_force(env):
    b = env.make_bundle("b", make_spec(["sleep", "1000"]))
    for _ in range(5):
        cid = env.create(bundle=b)
        env.rt("start", cid)
        env.state(cid)
        results = race(env, [env.argv("delete", "--force", cid)] * 3)
        assert any(r[0] == 0 for r in results), results
        assert env.state(cid, check=False) is None
        assert os.listdir(env.root) == []
