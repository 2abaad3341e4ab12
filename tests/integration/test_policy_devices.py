# SPDX-License-Identifier: Apache-2.0
"""Device nodes and the root filesystem (issue 12, rows 9 and 15).

Row 9: a linux.devices[].path must lie under the container's /dev: no "."
or ".." component (checked in the parent, before anything is made, in
every mode), and its directory resolved inside /dev taken as the root, so
that a symlink of the image cannot lead it out either; the node is made
with mknodat in that directory, reopened O_PATH|O_NOFOLLOW, checked, and
its mode and owner set on that fd.

Row 15: under enforce, a root.path that is the host's root, or an ancestor
of the runtime's state (--root) or of the bundle, is refused before
anything is written.

The "host" files here are decoys: files of the bundle's image, and a
directory the test makes in /var/tmp (not under /tmp, where the policy
mounts a tmpfs).  With root.path "/" nothing real is written even by a
runtime that lets it through: /dev is the spec's tmpfs (in the container's
private mount namespace) and the device and cwd paths are the decoy's.

Escape rows run against $AGENTSBX ("real") and a weak build ("weak":
weak-dev-path, weak-rootfs-host) where the attack must work.
"""

import os
import shutil
import stat
import tempfile

import pytest

from conftest import make_spec, run_cmd, write_spec
from escape_helpers import BUILDS, pick_runtime, rt_as, run_as

pytestmark = pytest.mark.usefixtures("agentsbx_only")


@pytest.fixture
def decoy_dir():
    """A directory of the test's own on the host, outside /tmp."""
    d = tempfile.mkdtemp(prefix="asbx-decoy-", dir="/var/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def null_device(path):
    return {"path": path, "type": "c", "major": 1, "minor": 3, "fileMode": 0o666,
            "uid": 0, "gid": 0}


def no_dev_tmpfs(spec):
    """The image's own /dev (no tmpfs over it)."""
    spec["mounts"] = [m for m in spec["mounts"]
                      if m["destination"] not in ("/dev", "/dev/pts", "/dev/shm",
                                                  "/dev/mqueue")]
    return spec


def is_regular_with(path, content):
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return False
    with open(path) as f:
        return f.read() == content


def is_null_node(path):
    st = os.lstat(path)
    return stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and \
        os.minor(st.st_rdev) == 3


def image_file(bundle, rel="etc/passwd"):
    path = os.path.join(bundle, "rootfs", rel)
    with open(path) as f:
        return path, f.read()


# ---- row 9: device paths ----------------------------------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_device_path_with_dotdot(penv, build):
    """/dev/../etc/passwd (numbers the policy allows: c 1:3): the image's
    file replaced by a device node."""
    runtime = pick_runtime(build, "dev-path")
    spec = make_spec(["true"])
    spec["linux"]["devices"] = [null_device("/dev/../etc/passwd")]
    bundle = penv.make_bundle("b")
    target, content = image_file(bundle)
    rc, out, err = run_as(penv, runtime, spec=spec, bundle=bundle)
    if build == "real":
        assert is_regular_with(target, content), "the image's file was changed"
        assert rc != 0
        assert "linux.devices[0].path /dev/../etc/passwd: a device node is made only under /dev" in err, err
    else:
        assert is_null_node(target), (rc, err)


def test_device_path_with_dotdot_refused_policy_off(penv):
    """The same with the policy off: runtime safety, in every mode."""
    off = os.path.join(penv.tmp, "off.json")
    with open(off, "w") as f:
        f.write('{"mode": "off"}')
    spec = make_spec(["true"])
    spec["linux"]["devices"] = [null_device("/dev/../etc/passwd")]
    bundle = penv.make_bundle("b", spec=spec)
    target, content = image_file(bundle)
    rc, out, err = rt_as(penv, penv.runtime, "--policy", off, "run", "--bundle",
                         bundle, penv.new_id())
    assert is_regular_with(target, content), "the image's file was changed"
    assert rc != 0
    assert "a device node is made only under /dev" in err, err


@pytest.mark.parametrize("build", BUILDS)
def test_device_path_through_symlink_in_dev(penv, build):
    """The image's /dev/sub is a symlink to /etc; the device /dev/sub/passwd
    would replace the image's /etc/passwd."""
    runtime = pick_runtime(build, "dev-path")
    spec = no_dev_tmpfs(make_spec(["true"]))
    spec["linux"]["devices"] = [null_device("/dev/sub/passwd")]
    bundle = penv.make_bundle("b")
    os.symlink("/etc", os.path.join(bundle, "rootfs", "dev", "sub"))
    target, content = image_file(bundle)
    rc, out, err = run_as(penv, runtime, spec=spec, bundle=bundle)
    if build == "real":
        assert is_regular_with(target, content), "the image's file was changed"
        # The link is read with the container's /dev as its root (issue 15:
        # a path through a symlink is made where it points, inside the
        # root): /dev/sub -> /etc is /dev/etc, so the node lands there.
        assert rc == 0, err
        assert is_null_node(os.path.join(bundle, "rootfs", "dev", "etc", "passwd")), err
    else:
        assert is_null_node(target), (rc, err)


@pytest.mark.parametrize("build", BUILDS)
def test_dev_itself_a_symlink(penv, build):
    """The image's /dev is a symlink to /etc: /dev/passwd would be its
    /etc/passwd."""
    runtime = pick_runtime(build, "dev-path")
    spec = no_dev_tmpfs(make_spec(["true"]))
    spec["linux"]["devices"] = [null_device("/dev/passwd")]
    bundle = penv.make_bundle("b")
    os.rmdir(os.path.join(bundle, "rootfs", "dev"))
    os.symlink("etc", os.path.join(bundle, "rootfs", "dev"))
    target, content = image_file(bundle)
    rc, out, err = run_as(penv, runtime, spec=spec, bundle=bundle)
    if build == "real":
        assert is_regular_with(target, content), "the image's file was changed"
        assert rc != 0
        assert "the container's /dev" in err, err
    else:
        assert is_null_node(target), (rc, err)


def test_device_under_dev_made_with_mode_and_owner(penv):
    """What is allowed still works: a nested /dev path, its mode and owner
    set on the node (not on whatever the name leads to)."""
    spec = make_spec(["stat", "-c", "%F %t:%T %a %u:%g", "/dev/sub/dir/mynull"])
    d = null_device("/dev/sub/dir/mynull")
    d.update(fileMode=0o640, uid=1, gid=2)
    spec["linux"]["devices"] = [d]
    rc, out, err = penv.run(spec)
    assert rc == 0, err
    assert out.split() == ["character", "special", "file", "1:3", "640", "1:2"], out


# ---- row 15: the rootfs --------------------------------------------------------------

def host_root_spec(args, cwd="/"):
    spec = make_spec(args, root__path="/")
    # A cgroup or sysfs mount over the host's view would be refused later
    # anyway (a mount target inside a sysfs); the attack leaves them out to
    # get as far as it can.
    spec["mounts"] = [m for m in spec["mounts"] if m["type"] not in ("cgroup", "sysfs")]
    spec["process"]["cwd"] = cwd
    return spec


@pytest.mark.parametrize("build", BUILDS)
def test_root_path_host_root(penv, decoy_dir, build):
    """root.path "/": before its pivot_root fails, the runtime makes the
    spec's paths on the host's filesystem (here a cwd in the decoy dir)."""
    runtime = pick_runtime(build, "rootfs-host")
    made = os.path.join(decoy_dir, "made-by-container")
    spec = host_root_spec(["true"], cwd=made)
    rc, out, err = run_as(penv, runtime, spec=spec, bundle=penv.make_bundle("b", rootfs=False))
    assert rc != 0
    if build == "real":
        assert not os.path.exists(made), "created on the host before the refusal"
        assert "policy: root.path / is the host's root directory: refused by the policy" in err, err
    else:
        assert os.path.isdir(made), err


def test_root_path_host_root_device_decoy(penv, decoy_dir):
    """root.path "/" with a device (numbers the policy allows) at a host
    path: the host's file replaced by a char device, on main."""
    decoy = os.path.join(decoy_dir, "decoy")
    with open(decoy, "w") as f:
        f.write("host data")
    spec = host_root_spec(["true"])
    spec["linux"]["devices"] = [null_device(decoy)]
    rc, out, err = penv.run(spec, bundle=penv.make_bundle("b", rootfs=False))
    assert is_regular_with(decoy, "host data"), "the host file was replaced"
    assert os.listdir(decoy_dir) == ["decoy"]
    assert rc != 0
    assert "root.path / is the host's root directory" in err, err


@pytest.mark.parametrize("build", BUILDS)
def test_root_path_holding_the_state_root(penv, build):
    """A rootfs that contains the runtime's state (--root): the container
    sees (with a writable root: changes) every container's state."""
    runtime = pick_runtime(build, "rootfs-host")
    bundle = penv.make_bundle("b")
    state = os.path.join(bundle, "rootfs", "run", "asbx-state")
    cid = penv.new_id()
    write_spec(bundle, make_spec(["ls", "/run/asbx-state"]))
    # The default policy's uid 65534 cannot list the root-only state dir:
    # keep root, so that the weak build shows what the container would see.
    pol = os.path.join(penv.tmp, "keep-root.json")
    with open(pol, "w") as f:
        f.write('{"uid": null, "identities": null}\n')
    rc, out, err = run_cmd([runtime, "--root", state, "--policy", pol, "run",
                            "--bundle", bundle, cid], timeout=60)
    if build == "real":
        assert rc != 0
        assert ("policy: root.path %s contains the runtime's state directory (--root %s)"
                % (os.path.join(bundle, "rootfs"), state)) in err, err
    else:
        assert rc == 0, err
        assert cid in out.split(), out
    assert [e for e in os.listdir(state) if not e.startswith(".")] == []


def test_root_path_may_be_the_bundle(penv):
    """runtime-tools' layout ("root": {"path": "."}), which runc and crun
    run: the container sees its own bundle, read-only, and nothing above."""
    bundle = penv.make_bundle("b")
    rc, out, err = penv.run(make_spec(["/rootfs/bin/busybox", "sh", "-c",
                                       "ls /config.json && ! touch /config.json 2>/dev/null"],
                                      root__path="."), bundle=bundle)
    assert rc == 0, err
    assert "/config.json" in out, out


def test_root_path_above_the_bundle_is_refused(penv):
    bundle = penv.make_bundle("b")
    rc, out, err = penv.run(make_spec(["true"], root__path=".."), bundle=bundle)
    assert rc != 0
    assert "contains the bundle" in err or "contains the runtime's state" in err, err
