# SPDX-License-Identifier: Apache-2.0
"""The checker is shown to catch each row of issue 26: the row's spec runs
against the `make weak-NAME` build with the row's defence off, where the
checker must report the row's violation, and against the real build, where
it must report none.  A check that never fires would pass the slice
vacuously; these tests are what says it can fire.

  row 1   a hook of another mount namespace (/proc/<pid>/root/...)   weak: locate
  row 2   an allowed hook binary with LD_PRELOAD                      weak: hook-prefixes
  row 3   an allowed hook binary, argv writing a host file            weak: hook-prefixes
  row 4   an allowed hook binary, argv echoing a root-only file       weak: hook-prefixes
  row 5   a bind of the parent engine directories                     weak: engine-parents
  row 6   a socket as a bind source                                   weak: bind-special
          process.user gid 0, additionalGids [0]                      weak: group-zero
  row 7   a tmpfs under a bind reaching the host                      weak: bind-propagation
  row 8   root.path a host directory                                  weak: rootfs-anywhere
  row 9   a writable bind of another task's (tmpfs) directory         weak: engine-parents
  row 10  linux.seccomp.listenerPath any socket                       weak: seccomp-listener
  row 11  every container as the policy's one uid                     weak: shared-identity
          (and check_identity on two containers of one uid, policy off)
  and, beyond the issue's rows: the host's namespaces (ns-host), any
  filesystem type (fs-types), writable cgroupfs (cgroup-ro), relative bind
  sources not judged (bind-relative), hooks not judged (hook-prefixes).

Rows 5 and 9 name the real engine directories (/var/lib/kubelet/pods,
/run/containerd, ...), which this host may not have and a test must not
make: they run in a private mount namespace (unshare), with a tmpfs over
/run and /var/lib there only (floor_fuzz.py engine-row).
"""

import json
import os
import shutil

import pytest

import floor_fuzz
import floor_harness as fh
import floor_mutator as fm
from conftest import make_spec, run_cmd
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")

CANARY = ["sh", "-c", "touch @EV@/@CID@.prestart.0"]


def spec_with(**kw):
    s = make_spec(list(fm.ARGS))
    for k, v in kw.items():
        s[k] = v
    return s


def hook(path="@T@/hookbin/floorhook", args=CANARY, env=None):
    h = {"path": path, "args": list(args)}
    if env is not None:
        h["env"] = list(env)
    return {"prestart": [h]}


def bind(spec, source, dest="/m", options=("rbind", "ro")):
    spec["mounts"].append({"destination": dest, "type": "bind", "source": source,
                           "options": list(options)})
    return spec


def row7():
    s = make_spec(list(fm.ARGS), linux__rootfsPropagation="private")
    bind(s, "@T@/allowed/shared/sub")
    s["mounts"].append({"destination": "/m/inner", "type": "tmpfs", "source": "tmpfs",
                        "options": ["size=1m"]})
    return s


def row10():
    s = make_spec(list(fm.ARGS))
    s["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
                             "listenerPath": "@T@/sock/outside.sock",
                             "listenerMetadata": "author-chosen",
                             "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}]}
    return s


def row_ns_host():
    s = make_spec(list(fm.ARGS))
    s["linux"]["namespaces"] = [n for n in s["linux"]["namespaces"] if n["type"] != "ipc"]
    s["linux"]["namespaces"].append({"type": "ipc", "path": "/proc/@HOST_PID@/ns/ipc"})
    return s


def row_fs_types():
    s = make_spec(list(fm.ARGS))
    s["mounts"].append({"destination": "/m", "type": "ramfs", "source": "ramfs",
                        "options": ["ro"]})
    return s


# name: (weak build, policy, spec, the kinds the weak build must show)
ROWS = {
    "row1-locate": ("locate", "harness",
                    lambda: spec_with(hooks=hook("/proc/@TENANT_PID@/root@T@/hookbin/floorhook")),
                    {"proc.hook"}),
    "row2-ld-preload": ("hook-prefixes", "harness",
                        lambda: spec_with(hooks=hook(env=["LD_PRELOAD=/nonexistent-floor.so"])),
                        {"proc.hook"}),
    "row3-argv-writes": ("hook-prefixes", "harness",
                         lambda: spec_with(hooks=hook(args=[
                             "sh", "-c", "touch @EV@/@CID@.prestart.0 && echo $$ > @T@/hostfile"])),
                         {"host.object"}),
    "row4-argv-echoes": ("hook-prefixes", "harness",
                         lambda: spec_with(hooks=hook(args=[
                             "sh", "-c", "touch @EV@/@CID@.prestart.0; cat @T@/hostfile >&2; "
                             "exit 1"])),
                         {"secret.leak"}),
    "row6-socket": ("bind-special", "harness",
                    lambda: bind(make_spec(list(fm.ARGS)), "@T@/allowed/other.sock", "/api.sock",
                                 ("bind", "ro")),
                    {"mount.bind-special"}),
    "row6-group-zero": ("group-zero", "builtin",
                        lambda: make_spec(list(fm.ARGS), process__user={
                            "uid": 1000, "gid": 0, "additionalGids": [0]}),
                        {"cred.gid", "cred.groups"}),
    "row7-propagation": ("bind-propagation", "harness", row7, {"host.mounts"}),
    "row8-rootfs": ("rootfs-anywhere", "builtin",
                    lambda: make_spec(list(fm.ARGS), root__path="@T@/home"), {"root.host-dir"}),
    "row10-listener": ("seccomp-listener", "builtin", row10, {"host.socket"}),
    "row11-shared-identity": ("shared-identity", "builtin", lambda: make_spec(list(fm.ARGS)),
                              {"identity.range", "identity.shared", "identity.record"}),
    "ns-host": ("ns-host", "builtin", row_ns_host, {"ns.host"}),
    "fs-types": ("fs-types", "builtin", row_fs_types, {"mount.fs-type"}),
    "cgroup-ro": ("cgroup-ro", "builtin", lambda: make_spec(list(fm.ARGS)), {"mount.cgroup-rw"}),
    "bind-relative": ("bind-relative", "builtin",
                      lambda: bind(make_spec(list(fm.ARGS)), "@TREL@/tenant"),
                      {"mount.bind-tenant"}),
    "hook-shell": ("hook-prefixes", "builtin",
                   lambda: spec_with(hooks=hook("/bin/sh")), {"proc.hook"}),
}

ENGINE_ROWS = {
    "row5-engine-parents": ("engine-parents", "builtin", lambda: bind(bind(bind(
        make_spec(list(fm.ARGS)), "/var/lib/kubelet/pods", "/p"),
        "/var/lib/docker/containers", "/c"), "/var/lib/docker/volumes", "/v"),
        {"mount.bind-tenant"}),
    "row9-task-dir-rw": ("engine-parents", "builtin", lambda: bind(
        make_spec(list(fm.ARGS)), "/run/containerd/io.containerd.runtime.v2.task", "/t",
        ("rbind", "rw")), {"mount.bind-tenant"}),
}



def kinds(res):
    return {x["kind"] for x in res["violations"]}


def show(res):
    return "%s; violations:\n%s\nstderr: %s" % (
        "accepted" if res["accepted"] else "refused",
        "\n".join("  %s: %s" % (x["kind"], x["what"][:500]) for x in res["violations"]),
        res["stderr"][-600:])


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("row", sorted(ROWS))
def test_checker_catches_the_row(floor_objects, row, build):
    weak, policy, make, want = ROWS[row]
    runtime = pick_runtime(build, weak)
    try:
        res = fh.TrialRunner(floor_objects).run(
            {"spec": make(), "policy": policy}, runtime=runtime)
    finally:
        floor_objects.restore()
    if build == "weak":
        assert want & kinds(res), "weak build %s: the checker saw no %s: %s" % (
            weak, sorted(want), show(res))
    else:
        assert not res["violations"], "real build: %s" % show(res)


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("row", sorted(ENGINE_ROWS))
def test_checker_catches_the_engine_rows(runtime, tmp_path, row, build):
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1)")
    weak, policy, make, want = ENGINE_ROWS[row]
    rt = pick_runtime(build, weak)
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"spec": make(), "policy": policy}))
    rc, out, err = run_cmd(["unshare", "--mount", "--propagation", "private",
                            "/usr/bin/python3", floor_fuzz.__file__, "engine-row",
                            "--case", str(case), "--runtime", rt],
                           timeout=300, env=dict(os.environ, AGENTSBX=runtime))
    assert rc == 0 and out.strip(), "engine-row rc %d\n%s\n%s" % (rc, out[-2000:], err[-3000:])
    res = json.loads(out.strip().splitlines()[-1])
    assert not res["left"], res["left"]
    if build == "weak":
        assert want & kinds(res), "weak build %s: the checker saw no %s: %s" % (
            weak, sorted(want), show(res))
    else:
        assert not res["violations"], "real build: %s" % show(res)


def test_lowering_a_limit_is_applied(floor_objects):
    """The issue's row the other way round: a limit below the cap is applied
    (the checker's cgroup.lowering)."""
    s = make_spec(list(fm.ARGS))
    s["linux"]["resources"] = {"memory": {"limit": 100 << 20}, "pids": {"limit": 50},
                               "cpu": {"quota": 50000, "period": 100000}}
    res = fh.TrialRunner(floor_objects).run({"spec": s, "policy": "builtin"})
    assert res["accepted"], show(res)
    assert not res["violations"], show(res)


def test_identity_check_sees_a_shared_uid(env):
    """Row 11's check itself (check_identity): two containers with one host
    uid are reported, two with uids of their own are not.  Policy off, so
    that the uids are the spec's."""
    import floor_checker as fc
    pids = {}
    for name, uid in (("a", 4242), ("b", 4242), ("c", 4343)):
        b = env.make_bundle("b-" + name, spec=make_spec(
            ["sleep", "60"], process__user={"uid": uid, "gid": uid}))
        cid = env.new_id()
        env.create(bundle=b, cid=cid)
        env.rt("start", cid)
        pids[name] = env.state(cid)["pid"]
    import time
    deadline = time.time() + 5
    while time.time() < deadline and not all(
            (fc.status_of(p) or {}).get("Uid", "").startswith(("4242", "4343"))
            for p in pids.values()):
        time.sleep(0.02)
    shared = fc.check_identity({"a": pids["a"]}, {"b": pids["b"]})
    assert any(x["kind"] == "identity.shared" for x in shared), shared
    apart = fc.check_identity({"a": pids["a"]}, {"c": pids["c"]})
    assert not [x for x in apart if x["kind"] == "identity.shared"], apart
