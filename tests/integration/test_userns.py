# SPDX-License-Identifier: Apache-2.0
"""A user namespace with uid/gid mappings: the process runs as mapped root."""

import os

import pytest

from conftest import add_mount, cap_mask, kv_lines, make_spec, proc_status

HOST_ID = 100000
SIZE = 65536


def userns_spec(args, **changes):
    spec = make_spec(args, **changes)
    spec["linux"]["namespaces"].append({"type": "user"})
    spec["linux"]["uidMappings"] = [{"containerID": 0, "hostID": HOST_ID, "size": SIZE}]
    spec["linux"]["gidMappings"] = [{"containerID": 0, "hostID": HOST_ID, "size": SIZE}]
    return spec


def chown_tree(path, uid, gid):
    """Shift ownership of the rootfs copy into the mapped range."""
    for dirpath, dirnames, filenames in os.walk(path):
        for name in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
            st = os.lstat(name)
            os.lchown(name, st.st_uid + uid, st.st_gid + gid)
            if not os.path.islink(name):
                os.chmod(name, st.st_mode & 0o7777)  # chown clears setuid bits


@pytest.fixture
def shifted_bundle(env):
    b = env.default_bundle()
    rootfs = os.path.join(b, "rootfs")
    chown_tree(rootfs, HOST_ID, HOST_ID)
    os.lchown(rootfs, HOST_ID, HOST_ID)
    return b


def test_userns_runs_as_mapped_root(env, shifted_bundle):
    spec = userns_spec(["sh", "-c", "cat /proc/self/uid_map; cat /proc/self/gid_map; "
                        "id -u; id -g; procinfo uid gid; touch /tmp/x && echo tmp=ok"],
                       root__readonly=False)
    rc, out, err = env.run(spec)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["0", str(HOST_ID), str(SIZE)]
    assert lines[1].split() == ["0", str(HOST_ID), str(SIZE)]
    assert lines[2] == "0" and lines[3] == "0"
    kv = kv_lines(out)
    assert kv["uid"] == "0,0,0" and kv["gid"] == "0,0,0"
    assert kv["tmp"] == "ok"
    st = os.stat(os.path.join(shifted_bundle, "rootfs", "tmp", "x"))
    assert (st.st_uid, st.st_gid) == (HOST_ID, HOST_ID)


def test_userns_host_view(env, shifted_bundle):
    cid = env.create(userns_spec(["sleep", "1000"]))
    env.rt("start", cid)
    pid = env.state(cid)["pid"]
    with open("/proc/%d/status" % pid) as f:
        status = proc_status(f.read())
    assert status["Uid"].split() == [str(HOST_ID)] * 4
    assert status["Gid"].split() == [str(HOST_ID)] * 4
    assert os.readlink("/proc/%d/ns/user" % pid) != os.readlink("/proc/self/ns/user")
    with open("/proc/%d/uid_map" % pid) as f:
        assert f.read().split() == ["0", str(HOST_ID), str(SIZE)]


def test_userns_capabilities(env, shifted_bundle):
    spec = userns_spec(["cat", "/proc/self/status"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    status = proc_status(out)
    want = cap_mask(spec["process"]["capabilities"]["bounding"])
    assert int(status["CapBnd"], 16) == want
    assert int(status["CapEff"], 16) == want


def test_userns_bind_mount_file_owner(env, shifted_bundle):
    hostdir = env.hostdir("h")
    spec = userns_spec(["sh", "-c", "touch /h/made-inside"])
    add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    st = os.stat(os.path.join(hostdir, "made-inside"))
    assert (st.st_uid, st.st_gid) == (HOST_ID, HOST_ID)


def test_userns_unshifted_readonly_rootfs(env):
    """A rootfs owned by host root (unmapped: nobody inside) still works
    read-only, as long as it is world-readable."""
    spec = userns_spec(["sh", "-c", "id -u; stat -c %u /bin/busybox"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out.split() == ["0", "65534"]


@pytest.mark.parametrize("kind", ["dir", "file"])
def test_userns_bind_source_only_host_root_reaches(env, shifted_bundle, kind):
    """A bind source under a directory only host root may search (0700,
    root's): opened as the runtime (host root), not with the container's
    user-namespace identity (runc and crun open it before the userns)."""
    private = os.path.join(env.tmp, "root-only")
    os.makedirs(os.path.join(private, "shared"))
    os.chmod(private, 0o700)
    with open(os.path.join(private, "shared", "f"), "w") as f:
        f.write("reached\n")
    os.chmod(os.path.join(private, "shared", "f"), 0o644)
    src = os.path.join(private, "shared") if kind == "dir" else \
        os.path.join(private, "shared", "f")
    spec = userns_spec(["cat", "/h/f" if kind == "dir" else "/h"])
    add_mount(spec, "/h", "bind", src, ["rbind", "ro"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out == "reached\n"
