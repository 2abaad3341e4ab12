# SPDX-License-Identifier: Apache-2.0
"""agentsbx run by an unprivileged user (rootless, as podman runs crun):
the caller's own uid and gid mapped to 0 in a new user namespace (one id
each: no newuidmap needed), state under $XDG_RUNTIME_DIR/agentsbx, the
default policy in force, and no cgroup where none is delegated to the user
(this host's v1 hierarchies), said in a warning.

The user is a uid with no passwd entry (setpriv --reuid): nothing is added
to the host's user database."""

import json
import os
import shutil
import tempfile
import time

import pytest

from conftest import make_spec, run_cmd, write_spec

UID = 4711  # no passwd entry needed
SETPRIV = shutil.which("setpriv")

pytestmark = pytest.mark.skipif(SETPRIV is None, reason="setpriv (util-linux) missing")


class Rootless:
    def __init__(self, runtime, base_rootfs, tmp):
        self.runtime = runtime
        self.home = os.path.join(tmp, "home")
        self.xdg = os.path.join(self.home, "run")
        os.makedirs(self.xdg)
        self.bundle = os.path.join(self.home, "bundle")
        os.makedirs(self.bundle)
        run_cmd(["cp", "-a", base_rootfs, os.path.join(self.bundle, "rootfs")], check=True)
        for d in (tmp, self.home):
            os.chmod(d, 0o755)
        for dirpath, dirnames, filenames in os.walk(self.home):
            for n in [dirpath] + [os.path.join(dirpath, x) for x in dirnames + filenames]:
                os.lchown(n, UID, UID)

    def spec(self, args, **changes):
        spec = make_spec(args, **changes)
        spec["linux"]["namespaces"].append({"type": "user"})
        spec["linux"]["uidMappings"] = [{"containerID": 0, "hostID": UID, "size": 1}]
        spec["linux"]["gidMappings"] = [{"containerID": 0, "hostID": UID, "size": 1}]
        # gid 5 (tty) is not mapped: devpts without gid=5 (spec --rootless does the same)
        for m in spec["mounts"]:
            if m["type"] == "devpts":
                m["options"] = [o for o in m["options"] if not o.startswith("gid=")]
        write_spec(self.bundle, spec)
        os.lchown(os.path.join(self.bundle, "config.json"), UID, UID)
        return spec

    def rt(self, *args, timeout=60):
        env = {"PATH": os.environ["PATH"], "XDG_RUNTIME_DIR": self.xdg, "HOME": self.home}
        return run_cmd([SETPRIV, "--reuid", str(UID), "--regid", str(UID),
                        "--clear-groups", self.runtime] + list(args),
                       timeout=timeout, env=env, cwd=self.home)


@pytest.fixture
def rl(runtime, base_rootfs):
    if os.path.exists("/etc/agentsbx/policy.json"):
        pytest.skip("/etc/agentsbx/policy.json exists on this machine")
    # pytest's own temp dirs are root's 0700: the user could not reach them.
    tmp = tempfile.mkdtemp(prefix="agentsbx-rootless-")
    r = Rootless(runtime, base_rootfs, tmp)
    yield r
    remove_containers(r)
    shutil.rmtree(tmp, ignore_errors=True)


def remove_containers(r):
    state = os.path.join(r.xdg, "agentsbx")
    for cid in (os.listdir(state) if os.path.isdir(state) else []):
        if not cid.startswith("."):
            r.rt("delete", "--force", cid)
    left = [c for c in (os.listdir(state) if os.path.isdir(state) else []) if not c.startswith(".")]
    assert left == [], "rootless containers left: %s" % left


def test_rootless_run_maps_the_user_to_root(rl):
    rl.spec(["sh", "-c", "id -u; id -g; cat /proc/self/uid_map; echo x > /tmp/f && cat /tmp/f; exit 3"])
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-run")
    assert rc == 3, err
    lines = out.split("\n")
    assert lines[0] == "0" and lines[1] == "0"
    assert lines[2].split() == ["0", str(UID), "1"]
    assert lines[3] == "x"
    # The state lives under the caller's runtime directory.
    assert not os.path.exists(os.path.join(rl.xdg, "agentsbx", "rl-run"))
    assert os.path.isdir(os.path.join(rl.xdg, "agentsbx"))


def test_rootless_says_it_has_no_cgroup(rl):
    if not os.access("/sys/fs/cgroup/cpu", os.F_OK):
        pytest.skip("no v1 cgroup hierarchies here (a v2 host may delegate)")
    rl.spec(["sh", "-c", "ls -A /sys/fs/cgroup | wc -l; touch /sys/fs/cgroup/x || echo ro"])
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-cg")
    assert rc == 0, err
    assert "rootless: no cgroup for rl-cg" in err
    assert "without cgroup limits" in err
    # None of the host's cgroups inside: an empty, read-only /sys/fs/cgroup.
    assert out.split() == ["0", "ro"], out


def test_rootless_lifecycle_create_start_exec_kill_delete(rl):
    rl.spec(["sleep", "1000"])
    rc, out, err = rl.rt("create", "--bundle", rl.bundle, "rl-life")
    assert rc == 0, err
    rc, out, err = rl.rt("start", "rl-life")
    assert rc == 0, err
    rc, out, err = rl.rt("state", "rl-life")
    st = json.loads(out)
    assert st["status"] == "running" and st["pid"] > 0
    with open("/proc/%d/status" % st["pid"]) as f:
        uids = [l for l in f if l.startswith("Uid:")][0].split()[1:]
    assert uids == [str(UID)] * 4  # host view: the user, not root
    rc, out, err = rl.rt("exec", "rl-life", "sh", "-c",
                         "id -u; cat /proc/self/uid_map; echo pid=$$; exit 5")
    assert rc == 5, err
    lines = out.split("\n")
    assert lines[0] == "0" and lines[1].split() == ["0", str(UID), "1"]
    assert int(lines[2][4:]) > 1  # in the container's pid namespace
    rc, out, err = rl.rt("ps", "rl-life")
    assert rc != 0 and "has no cgroup" in err
    rc, out, err = rl.rt("kill", "rl-life", "KILL")
    assert rc == 0, err
    for _ in range(100):
        rc, out, err = rl.rt("state", "rl-life")
        if json.loads(out)["status"] == "stopped":
            break
        time.sleep(0.05)
    assert json.loads(out)["status"] == "stopped"
    rc, out, err = rl.rt("delete", "rl-life")
    assert rc == 0, err
    rc, out, err = rl.rt("list", "-q")
    assert "rl-life" not in out


def test_rootless_more_ids_without_newuidmap_say_what_is_needed(rl):
    spec = rl.spec(["true"])
    spec["linux"]["uidMappings"] = [{"containerID": 0, "hostID": UID, "size": 1},
                                    {"containerID": 1, "hostID": 200000, "size": 100}]
    write_spec(rl.bundle, spec)
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-many")
    assert rc != 0
    # newuidmap exists on this machine (Debian's uidmap) but uid 4711 has no
    # /etc/subuid range; either way the error names the way out.
    assert "/etc/subuid" in err, err


def test_features_say_what_works_for_the_caller(rl, runtime):
    rc, out, err = run_cmd([runtime, "features"])
    assert rc == 0, err
    mine = json.loads(out)["annotations"]
    assert mine["io.agentsbx.caller"] == "root"
    assert mine["io.agentsbx.cgroup.limits"] == "true"
    rc, out, err = rl.rt("features")
    assert rc == 0, err
    theirs = json.loads(out)["annotations"]
    assert theirs["io.agentsbx.caller"] == "rootless"
    assert theirs["io.agentsbx.cgroup.mode"] == mine["io.agentsbx.cgroup.mode"]
    if mine["io.agentsbx.cgroup.mode"] != "v2":
        # v1 hierarchies are never delegated: no limits rootless here.
        assert theirs["io.agentsbx.cgroup.limits"] == "false"
    assert theirs["io.agentsbx.userns.idmaps"].startswith("own id")


def test_spec_rootless_writes_a_config_that_runs(rl):
    rc, out, err = rl.rt("spec", "--rootless", "-b", rl.bundle)
    assert rc == 0, err
    path = os.path.join(rl.bundle, "config.json")
    with open(path) as f:
        spec = json.load(f)
    assert spec["linux"]["uidMappings"] == [{"containerID": 0, "hostID": UID, "size": 1}]
    # As written (terminal true, sh): only the command is changed, to run
    # without a terminal here.
    spec["process"]["terminal"] = False
    spec["process"]["args"] = ["sh", "-c", "id -u; cat /proc/self/uid_map"]
    with open(path, "w") as f:
        json.dump(spec, f)
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-spec")
    assert rc == 0, err
    lines = out.split("\n")
    assert lines[0] == "0" and lines[1].split() == ["0", str(UID), "1"]


def test_rootless_audit_log_is_the_users_own(rl):
    """Issue 17: a plain user cannot write /var/log/agentsbx: the policy's
    audit log is $XDG_STATE_HOME/agentsbx/policy.log (~/.local/state/...),
    and `policy log` reads it."""
    rl.spec(["true"])
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-audit")
    assert rc == 0, err
    log = os.path.join(rl.home, ".local", "state", "agentsbx", "policy.log")
    assert os.stat(log).st_uid == UID
    rc, out, err = rl.rt("policy", "log", "--container", "rl-audit")
    lines = [json.loads(l) for l in out.splitlines()]
    assert rc == 0 and lines and all(l["container"] == "rl-audit" for l in lines), (out, err)
