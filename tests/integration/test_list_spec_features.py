# SPDX-License-Identifier: Apache-2.0
"""`list`, `spec`, `features`, `--version`, `--log`."""

import json
import os

import pytest

from conftest import is_agentsbx, make_spec, write_spec


# ---- list -------------------------------------------------------------------

def test_list_empty(env):
    rc, out, err = env.rt("list", "-q")
    assert out.strip() == ""
    rc, out, err = env.rt("list", "--format", "json")
    assert json.loads(out) in (None, [])
    rc, out, err = env.rt("list")
    assert out.split()[:3] == ["ID", "PID", "STATUS"]


def test_list_shows_containers(env):
    c1 = env.create(make_spec(["sleep", "1000"]))
    b2 = env.make_bundle("bundle2", make_spec(["sleep", "1000"]))
    c2 = env.create(bundle=b2)
    env.rt("start", c2)
    pid1 = env.state(c1)["pid"]
    pid2 = env.state(c2)["pid"]

    rc, out, err = env.rt("list", "-q")
    assert sorted(out.split()) == sorted([c1, c2])
    rc, out, err = env.rt("list", "--quiet")
    assert sorted(out.split()) == sorted([c1, c2])

    rc, out, err = env.rt("list")
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER"]
    rows = {l.split()[0]: l.split() for l in lines[1:] if l.strip()}
    assert rows[c1][1:4] == [str(pid1), "created", env.default_bundle()]
    assert rows[c2][1:4] == [str(pid2), "running", b2]

    for fmt in (["--format", "json"], ["-f", "json"]):
        rc, out, err = env.rt("list", *fmt)
        items = {i["id"]: i for i in json.loads(out)}
        assert set(items) == {c1, c2}
        assert items[c1]["pid"] == pid1 and items[c1]["status"] == "created"
        assert items[c2]["pid"] == pid2 and items[c2]["status"] == "running"
        assert items[c2]["bundle"] == b2
        assert items[c1]["rootfs"] == os.path.join(env.default_bundle(), "rootfs")
        for i in items.values():
            assert {"ociVersion", "id", "pid", "status", "bundle", "rootfs",
                    "created", "owner"} <= set(i)


def test_list_shows_stopped(env):
    cid = env.create(make_spec(["true"]))
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    rc, out, err = env.rt("list", "--format", "json")
    (item,) = json.loads(out)
    assert item["id"] == cid and item["status"] == "stopped"


# ---- spec -------------------------------------------------------------------

def load(path):
    with open(path) as f:
        return json.load(f)


def check_default_spec(spec):
    assert isinstance(spec["ociVersion"], str)
    assert spec["root"]["path"] == "rootfs"
    assert spec["process"]["cwd"] == "/"
    assert isinstance(spec["process"]["args"], list) and spec["process"]["args"]
    types = [n["type"] for n in spec["linux"]["namespaces"]]
    assert {"pid", "ipc", "uts", "mount"} <= set(types)
    dests = [m["destination"] for m in spec["mounts"]]
    assert "/proc" in dests and "/dev" in dests


def test_spec_in_cwd(env):
    d = os.path.join(env.tmp, "specdir")
    os.mkdir(d)
    env.rt("spec", cwd=d)
    spec = load(os.path.join(d, "config.json"))
    check_default_spec(spec)
    assert "network" in [n["type"] for n in spec["linux"]["namespaces"]]


def test_spec_refuses_to_overwrite(env):
    d = os.path.join(env.tmp, "specdir")
    os.mkdir(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write("{}")
    rc, out, err = env.rt("spec", cwd=d, check=False)
    assert rc != 0
    with open(os.path.join(d, "config.json")) as f:
        assert f.read() == "{}"


@pytest.mark.parametrize("flag", ["--bundle", "-b"])
def test_spec_bundle_flag(env, flag):
    d = os.path.join(env.tmp, "specdir")
    os.mkdir(d)
    env.rt("spec", flag, d, cwd=env.tmp)
    check_default_spec(load(os.path.join(d, "config.json")))
    assert not os.path.exists(os.path.join(env.tmp, "config.json"))


def test_spec_rootless(env, runtime_version):
    d = os.path.join(env.tmp, "specdir")
    os.mkdir(d)
    env.rt("spec", "--rootless", "--bundle", d)
    spec = load(os.path.join(d, "config.json"))
    check_default_spec(spec)
    types = [n["type"] for n in spec["linux"]["namespaces"]]
    assert "user" in types
    if is_agentsbx(runtime_version):
        # agentsbx keeps the network namespace: no network is the safe
        # default for untrusted code, and sysfs can still be mounted.
        assert "network" in types
    else:
        assert "network" not in types
    for key in ("uidMappings", "gidMappings"):
        (m,) = spec["linux"][key]
        assert m["containerID"] == 0 and m["size"] == 1
    assert spec["linux"]["uidMappings"][0]["hostID"] == os.geteuid()
    assert spec["linux"]["gidMappings"][0]["hostID"] == os.getegid()


def test_spec_then_run(env):
    """`spec && run -b DIR ID` with its own default config, only made
    non-interactive."""
    b = env.make_bundle("specbundle")
    env.rt("spec", "--bundle", b)
    spec = load(os.path.join(b, "config.json"))
    spec["process"]["terminal"] = False
    spec["process"]["args"] = ["sh", "-c", "echo spec-ok; hostname"]
    write_spec(b, spec)
    rc, out, err = env.run(bundle=b, extra=())
    assert rc == 0, err
    assert out.splitlines()[0] == "spec-ok"
    if spec.get("hostname"):
        assert out.splitlines()[1] == spec["hostname"]


# ---- features ---------------------------------------------------------------

def test_features(env):
    rc, out, err = env.rt("features")
    f = json.loads(out)
    assert f["ociVersionMin"] == "1.0.0"
    assert isinstance(f["ociVersionMax"], str)
    assert tuple(int(x) for x in f["ociVersionMax"].split("-")[0].split(".")) >= (1, 0, 2)
    assert {"prestart", "createRuntime", "createContainer", "startContainer",
            "poststart", "poststop"} <= set(f["hooks"])
    assert {"bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec"} <= set(f["mountOptions"])
    ns = set(f["linux"]["namespaces"])
    assert {"pid", "network", "ipc", "uts", "mount", "user", "cgroup"} <= ns
    caps = set(f["linux"]["capabilities"])
    assert {"CAP_SYS_ADMIN", "CAP_KILL", "CAP_NET_BIND_SERVICE"} <= caps


def test_features_agentsbx(env, agentsbx_only):
    rc, out, err = env.rt("features")
    f = json.loads(out)
    assert f["ociVersionMax"] == "1.3.0"
    assert "time" in f["linux"]["namespaces"]


# ---- global flags -----------------------------------------------------------

def test_version(env):
    rc, out, err = env.rt("--version")
    assert out.strip()


def test_version_agentsbx(env, agentsbx_only):
    rc, out, err = env.rt("--version")
    assert "agentsbx" in out


def test_log_json_records_errors(env):
    log = os.path.join(env.tmp, "log.json")
    cid = env.new_id()
    rc, out, err = env.rt("--log", log, "--log-format", "json", "state", cid,
                          check=False)
    assert rc != 0
    with open(log) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    errors = [l for l in lines if l.get("level") == "error"]
    assert errors, lines
    assert "does not exist" in errors[-1]["msg"]
    assert "time" in errors[-1]


def test_unknown_command_fails(env):
    rc, out, err = env.rt("no-such-command", check=False)
    assert rc != 0
