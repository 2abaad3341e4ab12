"""Spec features not covered elsewhere: --no-pivot, time namespace offsets,
rootfsPropagation, personality, ioPriority, scheduler, recursive read-only
binds, the session keyring."""

import os

import pytest

from conftest import make_spec, run_cmd, write_spec
from escape_helpers import BUILDS, pick_runtime

PROCINFO = "/usr/local/bin/procinfo"


def kv(out):
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)


def test_no_pivot(env):
    rc, out, err = env.run(make_spec(["sh", "-c", "cat /proc/self/mountinfo | head -1; ls /"]),
                           extra=("--no-pivot",))
    assert rc == 0, err
    assert "bin" in out.split()


def test_time_namespace_offsets(env, agentsbx_only):
    spec = make_spec(["cat", "/proc/uptime", "/proc/self/timens_offsets"])
    spec["linux"]["namespaces"].append({"type": "time"})
    spec["linux"]["timeOffsets"] = {"boottime": {"secs": 86400 * 365, "nanosecs": 0},
                                    "monotonic": {"secs": 3600, "nanosecs": 0}}
    rc, out, err = env.run(spec)
    assert rc == 0, err
    lines = out.splitlines()
    uptime = float(lines[0].split()[0])
    with open("/proc/uptime") as f:
        host = float(f.read().split()[0])
    assert uptime - host > 86400 * 364, (uptime, host)
    assert "monotonic" in out and "3600" in out


def test_personality_linux32(env, agentsbx_only):
    spec = make_spec(["uname", "-m"])
    spec["linux"]["personality"] = {"domain": "LINUX32"}
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out.strip() in ("i686", "i386"), out


def test_io_priority(env, agentsbx_only):
    spec = make_spec([PROCINFO])
    spec["process"]["ioPriority"] = {"class": "IOPRIO_CLASS_BE", "priority": 6}
    rc, out, err = env.run(spec)
    assert rc == 0, err
    info = kv(out)
    assert info["ioprio.class"] == "2" and info["ioprio.level"] == "6", info


def test_scheduler(env, agentsbx_only):
    spec = make_spec([PROCINFO])
    spec["process"]["scheduler"] = {"policy": "SCHED_BATCH", "nice": 7}
    rc, out, err = env.run(spec)
    assert rc == 0, err
    info = kv(out)
    assert info["sched.policy"] == "SCHED_BATCH", info
    assert info["nice"] == "7", info


@pytest.mark.parametrize("prop", ["rprivate", "rslave", "private", "rshared"])
def test_rootfs_propagation(env, prop):
    spec = make_spec(["sh", "-c", "grep ' / / ' /proc/self/mountinfo || head -1 /proc/self/mountinfo"])
    spec["linux"]["rootfsPropagation"] = prop
    rc, out, err = env.run(spec)
    assert rc == 0, err
    line = out.strip()
    if prop.endswith("shared"):
        assert "shared:" in line, line
    elif prop.endswith("slave"):
        # a slave of the host's mount only where that one is shared (here
        # the host's / is often private: then it has no master either)
        with open("/proc/self/mountinfo") as f:
            host_shared = any(" / / " in l and "shared:" in l for l in f)
        assert ("master:" in line) == host_shared, line
        assert "shared:" not in line, line
    else:
        assert "shared:" not in line and "master:" not in line, line


def host_mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [l.split()[4] for l in f if l.split()[4].startswith(path + "/")]


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("prop", ["private", "slave"])
def test_non_recursive_propagation_leaks_no_mount_to_the_host(env, agentsbx_only, prop, build):
    """A rootfs below a shared mount (containerd's under a shared /run)
    with a non-recursive rootfsPropagation: what the runtime mounts on the
    rootfs must not appear in the host's mount table.  Weak (propagation):
    the mounts below / stay shared: the host gets them and pivot_root
    refuses the shared parent."""
    runtime = pick_runtime(build, "propagation")
    shared = env.hostdir("shared")
    cid = env.new_id()
    # run_cmd, not os.system: the suite's reaper may take os.system's child
    # (it then returns -1 with the mount made)
    try:
        run_cmd(["sh", "-c", "mount -t tmpfs -o size=16m,mode=0755 abx-shared %s && "
                 "mount --make-shared %s" % (shared, shared)], check=True)
        bundle = os.path.join(shared, "b")
        os.mkdir(bundle)
        run_cmd(["cp", "-a", env.base_rootfs, os.path.join(bundle, "rootfs")], check=True)
        spec = make_spec(["true"])
        spec["linux"]["rootfsPropagation"] = prop
        write_spec(bundle, spec)
        rc, out, err = run_cmd([runtime, "--root", env.root, "create", "--bundle", bundle, cid],
                               timeout=60)
        leaked = host_mounts_under(shared)
        if build == "real":
            assert rc == 0, err
            assert leaked == [], leaked
        else:
            # the rootfs's mounts went out to the host's peer (seen there
            # unless the dying namespace took them back first), and
            # pivot_root refused the shared parent: the container is lost
            assert rc != 0 and "pivot_root" in err, (rc, err, leaked)
    finally:
        run_cmd([env.runtime, "--root", env.root, "delete", "--force", cid])
        for m in sorted(host_mounts_under(shared), key=len, reverse=True):
            run_cmd(["umount", "-l", m])
        with open("/proc/self/mountinfo") as f:
            if any(l.split()[4] == shared for l in f):
                run_cmd(["umount", "-l", shared])


def test_recursive_readonly_bind(env, agentsbx_only):
    host = env.hostdir("rro")
    sub = os.path.join(host, "sub")
    os.mkdir(sub)
    # a submount below the bind source: rro must reach it, ro alone does not
    rc = os.system("mount -t tmpfs tmpfs %s" % sub)
    assert rc == 0
    try:
        spec = make_spec(["sh", "-c",
                          "touch /data/sub/x 2>/dev/null && echo sub-writable || echo sub-ro"])
        spec["mounts"].append({"destination": "/data", "type": "bind", "source": host,
                               "options": ["rbind", "rro"]})
        rc, out, err = env.run(spec)
        assert rc == 0, err
        assert out.strip() == "sub-ro"
        spec["mounts"][-1]["options"] = ["rbind", "ro"]
        rc, out, err = env.run(spec)
        assert out.strip() == "sub-writable"
    finally:
        os.system("umount %s" % sub)


def test_new_session_keyring(env, agentsbx_only):
    cid = env.new_id()
    spec = make_spec(["cat", "/proc/keys"], linux__maskedPaths=[])
    rc, out, err = env.run(spec, cid=cid)
    assert rc == 0, err
    assert "_ses." + cid in out, out
