# SPDX-License-Identifier: Apache-2.0
"""The floor issue's identity rows, on direct bundles under the built-in
enforce policy (identities: every container a host uid and gid of its own).

  row 6   {"uid": 1000, "gid": 0, "additionalGids": [0]} kept root's group
          (weak: group-zero, the user rule as it was: only uid 0 replaced)
  row 11  two containers shared one host uid (65534), so one took the
          per-uid inotify instances of the other (weak: shared-identity)

Each runs against the real build and the `make weak-NAME` build, where the
attack must succeed.
"""

import os
import shutil
import time

import pytest

from conftest import make_spec, policy_file, proc_status, run_cmd
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")

IDENTITIES = "/run/agentsbx/.identities"


def run(penv, spec, runtime, extra=()):
    bundle = penv.make_bundle("b-%s" % penv.new_id()[-6:], spec=spec)
    cid = penv.track_id(penv.new_id())
    return run_cmd([runtime, "--root", penv.root] + list(extra) +
                   ["run", "--bundle", bundle, cid], timeout=60)


def ids_of(status_text):
    st = proc_status(status_text)
    uids = set(st["Uid"].split())
    gids = set(st["Gid"].split())
    groups = set(st.get("Groups", "").split())
    return uids, gids, groups


# ---- row 6: root's group is dropped whatever the uid ------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_group_zero_is_dropped_whatever_the_uid(penv, build):
    runtime = pick_runtime(build, "group-zero")
    spec = make_spec(["cat", "/proc/self/status"],
                     process__user={"uid": 1000, "gid": 0, "additionalGids": [0]})
    rc, out, err = run(penv, spec, runtime)
    assert rc == 0, err
    uids, gids, groups = ids_of(out)
    if build == "weak":
        assert "0" in gids and "0" in groups, "weak build: group 0 was dropped: %s" % out
        return
    assert "0" not in gids and "0" not in groups, out
    assert "0" not in uids and "1000" not in uids, out


def test_group_zero_dropped_with_identities_off(penv):
    """identities null (the policy's fixed uid): root's group still goes."""
    pol = policy_file(penv, {"identities": None})
    spec = make_spec(["cat", "/proc/self/status"],
                     process__user={"uid": 1000, "gid": 0, "additionalGids": [0, 5]})
    rc, out, err = run(penv, spec, penv.runtime, extra=["--policy", pol])
    assert rc == 0, err
    uids, gids, groups = ids_of(out)
    assert uids == {"1000"} and gids == {"65534"} and groups == {"5"}, out


# ---- row 11: per-uid kernel limits are per tenant ------------------------------------

def inotify_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == "anon_inode:inotify":
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


def wait_filled(pid, timeout=10):
    """Until the holder's inotify count stops growing."""
    last, since = -1, time.time()
    deadline = time.time() + timeout
    while time.time() < deadline:
        n = inotify_fds(pid)
        if n != last:
            last, since = n, time.time()
        elif n > 0 and time.time() - since > 0.3:
            return n
        time.sleep(0.05)
    return last


@pytest.mark.parametrize("build", BUILDS)
def test_one_tenant_cannot_take_another_tenants_per_uid_limits(penv, build):
    runtime = pick_runtime(build, "shared-identity")
    with open("/proc/sys/fs/inotify/max_user_instances") as f:
        limit = int(f.read())
    holder = make_spec(["inotifyfill", str(limit), "60"])
    bundle = penv.make_bundle("holder", spec=holder)
    a = penv.track_id(penv.new_id())
    run_cmd([runtime, "--root", penv.root, "create", "--bundle", bundle, a],
            timeout=60, check=True)
    run_cmd([runtime, "--root", penv.root, "start", a], timeout=60, check=True)
    pid = penv.state(a)["pid"]
    held = wait_filled(pid)
    assert held > 0, "the holder opened no inotify instance"
    rc, out, err = run(penv, make_spec(["inotifyfill", "1", "0"]), runtime)
    assert rc == 0, err
    with open("/proc/%d/status" % pid) as f:
        a_uid = proc_status(f.read())["Uid"].split()[0]
    if build == "weak":
        assert "opened=0 errno=EMFILE" in out, \
            "weak build: the second tenant still got an instance (%s)" % out
        return
    assert "opened=1" in out, "tenant B lost inotify to tenant A (%d held): %s" % (held, out)
    assert a_uid != "65534" and int(a_uid) >= 1879048192, a_uid


def test_identity_is_recorded_held_and_given_back(penv):
    """The uid is in the registry while the container lives (named by its
    state directory) and gone after delete; exec gets the same uid."""
    cid = penv.create(make_spec(["sleep", "60"]))
    penv.rt("start", cid)
    pid = penv.state(cid)["pid"]
    with open("/proc/%d/status" % pid) as f:
        uid = proc_status(f.read())["Uid"].split()[0]
    with open(os.path.join(penv.root, cid, "identity")) as f:
        assert f.read().strip() == uid
    holders = os.listdir(os.path.join(IDENTITIES, uid))
    assert len(holders) == 1
    with open(os.path.join(IDENTITIES, uid, holders[0])) as f:
        assert f.read() == os.path.join(penv.root, cid)
    _, out, _ = penv.rt("exec", "--user", "0:0", cid, "id", "-u")
    assert out.strip() == uid, out
    penv.rt("delete", "--force", cid)
    assert not os.path.exists(os.path.join(IDENTITIES, uid))


def test_two_containers_never_share_a_uid(penv):
    uids = set()
    for _ in range(4):
        cid = penv.create(make_spec(["sleep", "60"]))
        penv.rt("start", cid)
        with open("/proc/%d/status" % penv.state(cid)["pid"]) as f:
            uids.add(proc_status(f.read())["Uid"].split()[0])
    assert len(uids) == 4, uids


def test_stale_holder_is_taken_over(penv):
    """What a create or delete killed at the wrong moment leaves: a holder
    naming a state directory that is gone.  The next create that probes
    that uid takes it over; a live one is never taken."""
    uid = 1900000000 + (os.getpid() % 1000)  # a range of this test's own
    holder_dir = os.path.join(IDENTITIES, str(uid))
    os.makedirs(holder_dir)
    try:
        take_over(penv, uid, holder_dir)
    finally:
        shutil.rmtree(holder_dir, ignore_errors=True)


def take_over(penv, uid, holder_dir):
    with open(os.path.join(holder_dir, "1-2"), "w") as f:
        f.write(os.path.join(penv.tmp, "gone", "state"))
    pol = policy_file(penv, {"identities": {"first": uid, "count": 1}})
    bundle = penv.make_bundle("b2", spec=make_spec(["sleep", "60"]))
    cid = penv.track_id(penv.new_id())
    run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "create",
             "--bundle", bundle, cid], timeout=60, check=True)
    assert os.listdir(holder_dir) != ["1-2"]
    with open(os.path.join(penv.root, cid, "identity")) as f:
        assert f.read().strip() == str(uid)
    # the range is full now: a second create is refused, naming the field
    cid2 = penv.track_id(penv.new_id())
    rc, _, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "create",
                          "--bundle", bundle, cid2], timeout=60)
    assert rc != 0 and '"identities"' in err, err
    run_cmd([penv.runtime, "--root", penv.root, "delete", "--force", cid], check=True)
    assert not os.path.exists(holder_dir)


# ---- what identities break (README, docs/policy.md) ----------------------------------

def test_what_breaks_a_volume_written_by_another_container(penv):
    """A writable volume (writableBinds) written by one container: the next
    container is another uid, so it reads the file (0644) but cannot change
    it, nor add to a directory the first made (0755).  A volume shared this
    way needs group- or world-writable modes, or "identities": null."""
    vol = penv.hostdir("volume")
    os.chmod(vol, 0o1777)
    pol = policy_file(penv, {"writableBinds": True, "extend": {"bindPrefixes": [vol]}})
    spec = make_spec(["sh", "-c", "mkdir /v/d && echo one > /v/d/f && id -u"])
    spec["mounts"].append({"destination": "/v", "type": "bind", "source": vol,
                           "options": ["rbind", "rw"]})
    rc, first, err = run(penv, spec, penv.runtime, extra=["--policy", pol])
    assert rc == 0, err
    spec["process"]["args"] = ["sh", "-c", "cat /v/d/f; echo two >> /v/d/f || echo no-append; "
                               "touch /v/d/g || echo no-create"]
    rc, out, err = run(penv, spec, penv.runtime, extra=["--policy", pol])
    assert out.split() == ["one", "no-append", "no-create"], (out, err)
    assert os.stat(os.path.join(vol, "d", "f")).st_uid == int(first)


def test_what_breaks_an_image_user_owned_directory(penv):
    """An image whose USER owns its home (uid 1000, 0755): the process runs
    as the container's own uid, so it cannot write there (the writable
    layer gives it only the working directory)."""
    spec = make_spec(["sh", "-c", "touch /home/app/x 2>/dev/null && echo wrote || echo refused"],
                     process__user={"uid": 1000, "gid": 1000})
    spec["root"]["readonly"] = False
    bundle = penv.make_bundle("b-home", spec=spec)
    home = os.path.join(bundle, "rootfs", "home", "app")
    os.makedirs(home)
    os.chown(home, 1000, 1000)
    os.chmod(home, 0o755)
    cid = penv.track_id(penv.new_id())
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid],
                           timeout=60)
    assert rc == 0 and out.strip() == "refused", (out, err)
    pol = policy_file(penv, {"identities": None})
    cid = penv.track_id(penv.new_id())
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                            "--bundle", bundle, cid], timeout=60)
    assert rc == 0 and out.strip() == "wrote", (out, err)
