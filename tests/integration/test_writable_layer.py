"""The policy's writable layer (issue 17): under the default policy a root
the spec leaves writable becomes an overlay of the read-only image and a
detached tmpfs capped at `writableLayer` bytes (32 MiB).  Code writes to its
working directory as it does under runc; the image on the host is never
written; writing past the cap fails with ENOSPC; what was written goes away
with the container."""

import hashlib
import json
import os
import re

import pytest

from conftest import make_spec, policy_file, run_cmd, write_spec
from escape_helpers import BUILDS, pick_runtime
from test_rootless import UID, rl  # noqa: F401  (rl: the fixture)

pytestmark = pytest.mark.usefixtures("agentsbx_only")

MiB = 1 << 20

# Writes 1-MiB files (each below RLIMIT_FSIZE) until the first error.
FILL = r"""
i=0
while [ $i -lt 60 ]; do
  dd if=/dev/zero of=fill.$i bs=1048576 count=1 2>/tmp/dd.err || { cat /tmp/dd.err; break; }
  i=$((i+1))
done
echo files=$i
"""


def writable_spec(args, cwd="/app"):
    spec = make_spec(args)
    spec["root"]["readonly"] = False  # as Docker, podman and the CRI write it
    spec["process"]["cwd"] = cwd
    return spec


def run(env, spec, runtime=None, policy=None):
    cid = env.new_id()
    bundle = env.make_bundle("b-" + cid[-8:], spec=spec)
    argv = [runtime or env.runtime, "--root", env.root]
    if policy:
        argv += ["--policy", policy]
    rc, out, err = run_cmd(argv + ["run", "--bundle", bundle, cid], timeout=60)
    return rc, out, err, bundle, cid


def tree_digest(root):
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(d, name)
            st = os.lstat(p)
            h.update(("%s %o %d %d %d\n" % (os.path.relpath(p, root), st.st_mode, st.st_uid,
                                            st.st_gid, st.st_size)).encode())
    return h.hexdigest()


def test_code_writes_its_working_directory_and_the_image_is_untouched(penv):
    base = tree_digest(penv.base_rootfs)
    spec = writable_spec(["sh", "-c", "id -u; echo data > out.txt && cat out.txt; "
                          "grep ' / ' /proc/self/mountinfo; touch /etc/x 2>&1; true"])
    rc, out, err, bundle, cid = run(penv, spec)
    assert rc == 0, err
    lines = out.splitlines()
    # the container's own uid (identities) wrote it
    assert int(lines[0]) >= 1879048192 and lines[1] == "data", out
    assert " / / rw," in out and " - overlay " in out, out
    assert "Permission denied" in out, out  # the image's root-owned files stay root's
    rootfs = os.path.join(bundle, "rootfs")
    assert not os.path.exists(os.path.join(rootfs, "app")), "the image was written"
    assert tree_digest(rootfs) == base
    logged = [json.loads(l) for l in open(os.environ["AGENTSBX_POLICY_LOG"])
              if json.loads(l).get("container") == cid]
    layer = [l for l in logged if l["field"] == "root.readonly"]
    assert layer and "33554432-byte writable layer" in layer[0]["to"], logged


@pytest.mark.parametrize("build", BUILDS)
def test_writing_past_the_cap_is_enospc(penv, build):
    """Real: the 33rd MiB fails with ENOSPC.  Weak (layer-size): the tmpfs
    has no size, and 60 MiB fit (half the host's RAM would)."""
    runtime = pick_runtime(build, "layer-size")
    rc, out, err, bundle, _ = run(penv, writable_spec(["sh", "-c", FILL]), runtime=runtime)
    assert rc == 0, err
    files = int(out.split("files=")[1].split()[0])
    if build == "real":
        assert "No space left on device" in out and 28 <= files <= 32, out  # 32 MiB at most
    else:
        assert files == 60, out
    assert os.listdir(os.path.join(bundle, "rootfs", "bin"))  # the image is still there
    assert not os.path.exists(os.path.join(bundle, "rootfs", "app"))


def test_writable_layer_size_is_the_policy_field(penv):
    pol = policy_file(penv, {"writableLayer": 8 * MiB})
    rc, out, err, _, _ = run(penv, writable_spec(["sh", "-c", FILL]), policy=pol)
    assert rc == 0, err
    files = int(out.split("files=")[1].split()[0])
    assert "No space left on device" in out and 5 <= files <= 8, out


@pytest.mark.parametrize("how", ["spec-readonly", "policy-zero"])
def test_a_plain_read_only_root_when_asked(penv, how):
    """docker run --read-only (root.readonly true) and a policy with
    writableLayer 0: every write is EROFS, as before the layer."""
    spec = writable_spec(["sh", "-c", "echo x > /f 2>&1; grep ' / ' /proc/self/mountinfo"], cwd="/")
    pol = None
    if how == "spec-readonly":
        spec["root"]["readonly"] = True
    else:
        pol = policy_file(penv, {"writableLayer": 0})
    rc, out, err, _, _ = run(penv, spec, policy=pol)
    assert rc == 0, err
    assert "Read-only file system" in err and "overlay" not in out, out + err
    assert re.search(r"^\S+ \S+ \S+ \S+ / ro,", out, re.M), out


def test_a_cwd_on_a_bind_mount_is_not_given_away(penv):
    """Only a directory on the layer is given to the policy's uid: a
    volume's directory on the host keeps its owner."""
    vol = penv.hostdir("vol")
    os.chmod(vol, 0o755)
    pol = policy_file(penv, {"extend": {"bindPrefixes": [vol]}, "writableBinds": True})
    spec = writable_spec(["sh", "-c", "touch f 2>&1; echo done"], cwd="/vol")
    spec["mounts"].append({"destination": "/vol", "type": "bind", "source": vol,
                           "options": ["rbind", "rw"]})
    rc, out, err, _, _ = run(penv, spec, policy=pol)
    assert rc == 0, err
    assert "Permission denied" in out and "done" in out, out
    st = os.stat(vol)
    assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o755)
    assert os.listdir(vol) == []


def test_a_bad_writable_layer_value_is_refused(penv):
    pol = policy_file(penv, {"writableLayer": 100})
    rc, out, err, _, _ = run(penv, writable_spec(["true"]), policy=pol)
    assert rc != 0 and "writableLayer" in err and "at least 4096" in err, err
    rc, out, err = run_cmd([penv.runtime, "--policy", policy_file(penv, {}), "policy", "show"])
    assert rc == 0 and json.loads(out)["writableLayer"] == 32 * MiB, out + err


def test_rootless_gets_the_layer_too(rl):
    """A plain user's container (its own user namespace): the layer is
    built there (overlayfs with userxattr on the tmpfs), the image the
    user owns is not written, and the cap holds."""
    spec = rl.spec(["sh", "-c", "echo data > out.txt && cat out.txt; "
                    "grep ' / ' /proc/self/mountinfo;" + FILL])
    spec["root"]["readonly"] = False
    spec["process"]["cwd"] = "/app"
    write_spec(rl.bundle, spec)
    os.lchown(os.path.join(rl.bundle, "config.json"), UID, UID)
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-layer")
    assert rc == 0, err
    assert "writable layer" not in err, err  # built, not fallen back to read-only
    assert out.startswith("data\n") and " - overlay " in out, out
    files = int(out.split("files=")[1].split()[0])
    assert "No space left on device" in out and 28 <= files <= 32, out
    assert not os.path.exists(os.path.join(rl.bundle, "rootfs", "app"))


def test_a_layer_the_kernel_will_not_build_is_a_read_only_root_said_so(rl):
    """The user's namespace maps only the user: an image whose / is the
    host root's shows the overflow uid, which the layer's upper cannot be
    given.  The root is read-only instead (what the policy gives without a
    layer), the warning names writableLayer, and the audit log says so."""
    spec = rl.spec(["sh", "-c", "echo x > /f"])
    spec["root"]["readonly"] = False
    write_spec(rl.bundle, spec)
    os.lchown(os.path.join(rl.bundle, "config.json"), UID, UID)
    os.lchown(os.path.join(rl.bundle, "rootfs"), 0, 0)
    rc, out, err = rl.rt("run", "--bundle", rl.bundle, "rl-nolayer")
    assert rc != 0 and "Read-only file system" in err, err
    assert "the root is read-only instead (policy writableLayer)" in err, err
    log = os.path.join(rl.home, ".local", "state", "agentsbx", "policy.log")
    lines = [json.loads(l) for l in open(log) if "rl-nolayer" in l]
    fell = [l for l in lines if l["from"] == "a writable layer"]
    assert fell and fell[0]["to"].startswith("true (no writable layer: "), lines
