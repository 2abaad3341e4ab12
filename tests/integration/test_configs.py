# SPDX-License-Identifier: Apache-2.0
"""Bad configs and bad ids are refused, and leave nothing behind."""

import os

import pytest

from conftest import drop_namespace, find_cgroups, make_spec, reap_orphans, write_spec


def spec_with(fn):
    s = make_spec(["true"])
    fn(s)
    return s


def _set(path, value):
    def fn(s):
        obj = s
        keys = path.split(".")
        for k in keys[:-1]:
            obj = obj.setdefault(k, {})
        obj[keys[-1]] = value
    return fn


def _del(path):
    def fn(s):
        obj = s
        keys = path.split(".")
        for k in keys[:-1]:
            obj = obj[k]
        del obj[keys[-1]]
    return fn


def _append(path, value):
    def fn(s):
        obj = s
        for k in path.split("."):
            obj = obj.setdefault(k, [] if k == path.split(".")[-1] else {})
        obj.append(value)
    return fn


def _no_ns(nstype):
    return lambda s: drop_namespace(s, nstype)


def _both(*fns):
    def fn(s):
        for f in fns:
            f(s)
    return fn


# name: (config text or spec-changing function, substring agentsbx's error
#        must contain: the JSON path of the field, or the offending value)
# runc 1.1.5 refuses every one of these too.
BAD = {
    "invalid-json": ("{", "config.json"),
    "empty-file": ("", "config.json"),
    "top-level-array": ("[]", "config.json"),
    "truncated": ('{"ociVersion": "1.0.2", "process": {"args": ["sh"', "config.json"),
    "args-not-array": (_set("process.args", "sh"), "process.args"),
    "args-empty": (_set("process.args", []), "process.args"),
    "args-element-not-string": (_set("process.args", ["sh", 1]), "process.args[1]"),
    "no-process": (_del("process"), "process"),
    "cwd-relative": (_set("process.cwd", "tmp"), "process.cwd"),
    "uid-negative": (_set("process.user.uid", -1), "process.user.uid"),
    "uid-string": (_set("process.user.uid", "0"), "process.user.uid"),
    "rlimit-unknown": (_append("process.rlimits", {"type": "RLIMIT_FOO", "soft": 1, "hard": 1}),
                       "process.rlimits[1]"),
    "no-root": (_del("root"), "root"),
    "rootfs-missing": (_set("root.path", "nonexistent"), "nonexistent"),
    "namespace-unknown": (_append("linux.namespaces", {"type": "foo"}),
                          "linux.namespaces[5]"),
    "namespace-duplicate": (_append("linux.namespaces", {"type": "pid"}),
                            "linux.namespaces["),
    "namespace-path-missing": (lambda s: s["linux"]["namespaces"][1].update(
        path="/proc/999999/ns/net"), "/proc/999999/ns/net"),
    "hostname-without-uts": (_no_ns("uts"), "hostname"),
    "sysctl-net-without-netns": (_both(_no_ns("network"),
                                       _set("linux.sysctl", {"net.ipv4.ip_forward": "1"})),
                                 "net.ipv4.ip_forward"),
    "sysctl-host-wide": (_set("linux.sysctl", {"kernel.nosuch": "1"}), "kernel.nosuch"),
    "device-type": (_set("linux.devices", [{"path": "/dev/x", "type": "x",
                                            "major": 1, "minor": 3}]),
                    "linux.devices[0]"),
    "seccomp-action": (_set("linux.seccomp", {"defaultAction": "SCMP_ACT_FOO"}),
                       "linux.seccomp.defaultAction"),
    # refused late, by the container's init: the cleanup path must work too
    "rlimit-soft-above-hard": (_set("process.rlimits", [{"type": "RLIMIT_NOFILE",
                                                         "soft": 100, "hard": 10}]),
                               "process.rlimits[0]"),
    "env-without-equals": (_set("process.env", ["PATH=/bin", "NOEQUALS"]), "process.env[1]"),
    "oom-score-out-of-range": (_set("process.oomScoreAdj", 5000), "process.oomScoreAdj"),
    "bind-source-missing": (_append("mounts", {"destination": "/x", "type": "bind",
                                               "source": "/nonexistent/src",
                                               "options": ["bind"]}),
                            "/nonexistent/src"),
    "program-missing": (_set("process.args", ["/no/such/program"]), "/no/such/program"),
}

# Refused by agentsbx, accepted by runc 1.1.5: the spec says MUST (or
# REQUIRED), runc does not check.
BAD_AGENTSBX = {
    "no-ociversion": (_del("ociVersion"), "ociVersion"),
    "uidmappings-without-userns": (_set("linux.uidMappings",
                                        [{"containerID": 0, "hostID": 1000, "size": 1}]),
                                   "linux.uidMappings"),
    "device-path-relative": (_set("linux.devices", [{"path": "dev/x", "type": "c",
                                                     "major": 1, "minor": 3}]),
                             "linux.devices[0].path"),
    "masked-path-relative": (_set("linux.maskedPaths", ["proc/kcore"]),
                             "linux.maskedPaths[0]"),
    "readonly-path-relative": (_set("linux.readonlyPaths", ["proc/sys"]),
                               "linux.readonlyPaths[0]"),
    "namespace-path-relative": (lambda s: s["linux"]["namespaces"][1].update(
        path="proc/1/ns/net"), "linux.namespaces[1].path"),
    "capability-unknown": (lambda s: s["process"]["capabilities"]["bounding"].append(
        "CAP_FOO"), "CAP_FOO"),
    "ociversion-major-2": (_set("ociVersion", "2.0.0"), "ociVersion"),
}


def write_bad(bundle, bad):
    if isinstance(bad, str):
        write_spec(bundle, bad)
    else:
        write_spec(bundle, spec_with(bad))


def assert_refused_and_clean(env, cmd, cid):
    rc, out, err = env.rt(cmd, "--bundle", env.default_bundle(), cid, check=False)
    assert rc != 0, "accepted: %s %s\n%s" % (cmd, cid, err)
    assert err.strip(), "refused without an error message"
    # Nothing left behind -- checked now, before the teardown's own
    # kill/delete could clean up after the runtime.
    reap_orphans()
    assert os.listdir(env.root) == [], "state left: %s" % os.listdir(env.root)
    with open("/proc/self/mountinfo") as f:
        assert not [l for l in f if env.tmp in l]
    assert env.processes_in_bundles() == []
    assert find_cgroups([cid]) == []
    rc, out, err2 = env.rt("state", cid, check=False)
    assert rc != 0
    return err


@pytest.mark.parametrize("cmd", ["create", "run"])
@pytest.mark.parametrize("case", list(BAD))
def test_bad_config_refused(env, case, cmd):
    write_bad(env.default_bundle(), BAD[case][0])
    assert_refused_and_clean(env, cmd, env.new_id())


@pytest.mark.parametrize("case", list(BAD))
def test_bad_config_error_names_field(env, case, agentsbx_only):
    write_bad(env.default_bundle(), BAD[case][0])
    err = assert_refused_and_clean(env, "create", env.new_id())
    assert BAD[case][1] in err, err


@pytest.mark.parametrize("case", list(BAD_AGENTSBX))
def test_bad_config_refused_agentsbx(env, case, agentsbx_only):
    write_bad(env.default_bundle(), BAD_AGENTSBX[case][0])
    err = assert_refused_and_clean(env, "create", env.new_id())
    assert BAD_AGENTSBX[case][1] in err, err


def test_unknown_fields_are_ignored(env):
    spec = make_spec(["sh", "-c", "echo ok"])
    spec["x-future-field"] = {"a": [1, 2]}
    spec["process"]["x-other"] = True
    spec["linux"]["x-more"] = "y"
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out == "ok\n"


def test_missing_config_json(env):
    os.makedirs(os.path.join(env.tmp, "empty-bundle"))
    cid = env.new_id()
    rc, out, err = env.rt("create", "--bundle", os.path.join(env.tmp, "empty-bundle"),
                          cid, check=False)
    assert rc != 0
    assert "config.json" in err
    assert os.listdir(env.root) == []


def test_missing_bundle_dir(env):
    cid = env.new_id()
    rc, out, err = env.rt("create", "--bundle", os.path.join(env.tmp, "nope"), cid,
                          check=False)
    assert rc != 0
    assert os.listdir(env.root) == []


def test_relative_mount_destination_is_relative_to_root(env):
    # The spec allows (deprecated) relative destinations, taken from "/".
    spec = make_spec(["sh", "-c", "grep -c ' /relative/dst ' /proc/self/mountinfo"])
    spec["mounts"].append({"destination": "relative/dst", "type": "tmpfs",
                           "source": "tmpfs"})
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out.strip() == "1"


# ---- container ids ------------------------------------------------------------

BAD_IDS = ["../x", "a/b", "", "x" * 1000, "..", "/abs"]
# accepted by runc 1.1.5, refused by agentsbx ([A-Za-z0-9][A-Za-z0-9_.+-]*, no "..")
BAD_IDS_AGENTSBX = [".x", "a..b", "_x", "a b", "a\nb", "x" * 300, "é"]
GOOD_IDS = ["a", "A1", "a_b.c+d-e", "0123456789", "x" * 64]


@pytest.mark.parametrize("cid", BAD_IDS, ids=lambda c: repr(c[:12]))
def test_bad_ids_refused(env, cid):
    write_spec(env.default_bundle(), make_spec(["true"]))
    rc, out, err = env.rt("create", "--bundle", env.default_bundle(), cid,
                          check=False)
    if rc == 0:
        env.track_id(cid)
    assert rc != 0
    assert err.strip()
    assert os.listdir(env.root) == []
    assert not os.path.exists(os.path.join(os.path.dirname(env.root), "x"))


@pytest.mark.parametrize("cid", BAD_IDS + BAD_IDS_AGENTSBX, ids=lambda c: repr(c[:12]))
def test_bad_ids_refused_agentsbx(env, cid, agentsbx_only):
    write_spec(env.default_bundle(), make_spec(["true"]))
    for cmd in ("create", "run"):
        rc, out, err = env.rt(cmd, "--bundle", env.default_bundle(), cid,
                              check=False)
        if rc == 0:
            env.track_id(cid)
        assert rc != 0, (cmd, cid)
        assert "id" in err.lower(), err
        assert os.listdir(env.root) == []
    for cmd in (["state"], ["kill"], ["delete"], ["start"]):
        rc, out, err = env.rt(*cmd, cid, check=False)
        assert rc != 0


@pytest.mark.parametrize("cid", GOOD_IDS, ids=lambda c: repr(c[:12]))
def test_good_ids_accepted(env, cid):
    # made unique per test run, keeping the shape under test
    suffix = os.urandom(3).hex()
    cid = cid[:-6] + suffix if len(cid) >= 64 else cid + "-" + suffix
    env.create(make_spec(["sleep", "1000"]), cid=cid)
    st = env.state(cid)
    assert st["id"] == cid and st["status"] == "created"
