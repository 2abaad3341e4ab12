# SPDX-License-Identifier: Apache-2.0
"""The policy's mount rules against hostile config.json mounts (issue 12,
rows 1, 2, 5, 8, 12 and two of 17), with the built-in enforce policy (or a
policy file that only names a temp dir as bindPrefixes):

- a relative bind source climbing out of the bundle ("../../../../../");
- non-bind filesystems: a block device's ext4, a second proc, binfmt_misc,
  tracefs, debugfs, devtmpfs, overlay of a host dir;
- the bind-source symlink-exchange race (CVE-2021-30465 class);
- tmpfs sizes the kernel reads as "unlimited" or huge (size=0, 1t, 16e);
- writable directory binds (host disk);
- mount destinations under /proc (any mode), readonlyPaths only "ro".

The escape rows run against the real build and a weak build with the one
defence off (escape_helpers.weak_runtime), where the attack must succeed.
Nothing touches a real host file: a bind of "/" only reads a decoy in the
test's temp dir, /dev/vda is only asked for under the real build, and every
weak-build mount lives in the container's own mount namespace.
"""

import json
import os
import subprocess
import sys
import uuid

import pytest

from conftest import policy_file, add_mount, make_spec, run_cmd, write_spec
from escape_helpers import BUILDS, in_private_mountns, pick_runtime, quote

pytestmark = pytest.mark.usefixtures("agentsbx_only")


def new_bundle(env, spec):
    return env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)


def run_with(env, runtime, spec, policy=None, bundle=None, timeout=60):
    """`run` spec with runtime (and --policy FILE); (rc, out, err)."""
    bundle = bundle or new_bundle(env, spec)
    if bundle and spec is not None:
        write_spec(bundle, spec)
    cid = env.new_id()
    pol = ["--policy", policy] if policy else []
    return run_cmd([runtime, "--root", env.root] + pol + ["run", "--bundle", bundle, cid],
                   timeout=timeout)


def decoy(env):
    """A file in the test's temp dir, reachable from the host's /."""
    path = os.path.join(env.tmp, "decoy-" + uuid.uuid4().hex[:6])
    with open(path, "w") as f:
        f.write("HOST-DECOY")
    return path


# ---- row 1: relative bind sources --------------------------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_relative_bind_source_climbing_to_host_root(penv, build):
    rt = pick_runtime(build, "bind-relative")
    marker = decoy(penv)
    spec = make_spec(["cat", "/host" + marker])
    add_mount(spec, "/host", "bind", "../../../../../../../../../../", ["rbind", "ro"])
    rc, out, err = run_with(penv, rt, spec)
    if build == "weak":
        assert rc == 0 and out == "HOST-DECOY", (rc, out, err)
        return
    assert rc != 0 and out == "", (rc, out, err)
    assert "bind mount of host path / on /host" in err and "bindPrefixes" in err, err


def test_relative_bind_source_to_etc_refused(penv):
    spec = make_spec(["cat", "/e/hostname"])
    add_mount(spec, "/e", "bind", "../../../../../../../../../../etc", ["rbind", "ro"])
    rc, out, err = run_with(penv, penv.runtime, spec)
    assert rc != 0 and out == "", (rc, out, err)
    assert "host path /etc" in err, err


def test_policy_explain_refuses_relative_bind(penv):
    spec = make_spec(["true"])
    add_mount(spec, "/host", "bind", "../../../../../../../../../../", ["rbind", "rw"])
    bundle = new_bundle(penv, spec)
    rc, out, err = run_cmd([penv.runtime, "policy", "explain", "--bundle", bundle])
    assert rc != 0, out
    assert "refused" in out and "host path /" in out, out


def test_relative_bind_inside_allowed_prefix_works(penv):
    """A relative source that stays under bindPrefixes is mounted."""
    allowed = penv.hostdir("allowed")
    spec = make_spec(["cat", "/v/f"])
    bundle = os.path.join(allowed, "bundle")
    os.mkdir(bundle)
    subprocess.run(["cp", "-a", penv.base_rootfs, os.path.join(bundle, "rootfs")], check=True)
    os.mkdir(os.path.join(allowed, "vol"))
    with open(os.path.join(allowed, "vol", "f"), "w") as f:
        f.write("inside")
    add_mount(spec, "/v", "bind", "../vol", ["rbind", "ro"])
    pol = policy_file(penv, {"bindPrefixes": [allowed]})
    rc, out, err = run_with(penv, penv.runtime, spec, policy=pol, bundle=bundle)
    assert rc == 0 and out == "inside", (rc, out, err)


# ---- row 2: filesystem types -------------------------------------------------------

# (type, source, options, the check inside that shows it mounted)
FS_CASES = {
    "proc-at-hp": ("proc", "proc", [], "test -e /x/sys/kernel/core_pattern && echo MOUNTED"),
    "binfmt_misc": ("binfmt_misc", "binfmt_misc", [], "test -e /x/register && echo MOUNTED"),
    "tracefs": ("tracefs", "tracefs", [], "test -e /x/tracing_on && echo MOUNTED"),
    "debugfs": ("debugfs", "debugfs", [], "grep -q ' /x debugfs ' /proc/self/mounts && echo MOUNTED"),
    "devtmpfs": ("devtmpfs", "devtmpfs", [], "test -c /x/null && echo MOUNTED"),
}


def _fs_spec(fstype, source, options, check):
    spec = make_spec(["sh", "-c", check])
    add_mount(spec, "/x", fstype, source, options)
    return spec


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("case", sorted(FS_CASES))
def test_non_bind_filesystem_refused(penv, build, case):
    rt = pick_runtime(build, "fs-types")
    fstype, source, options, check = FS_CASES[case]
    # Root inside (the policy's uid 65534 cannot look into tracefs): what
    # the weak build shows is the mount, not the uid rule.
    pol = policy_file(penv, {"uid": None, "identities": None})
    rc, out, err = run_with(penv, rt, _fs_spec(fstype, source, options, check), policy=pol)
    if build == "weak":
        assert rc == 0 and "MOUNTED" in out, (rc, out, err)
        return
    assert rc != 0 and "MOUNTED" not in out, (rc, out, err)
    if fstype == "proc":
        assert "proc on /x" in err and "only at /proc" in err, err
    else:
        assert "filesystem type %s on /x is not allowed by the policy" % fstype in err, err


@pytest.mark.parametrize("build", BUILDS)
def test_overlay_of_host_dir_refused(penv, build):
    rt = pick_runtime(build, "fs-types")
    lower = penv.hostdir("lower")
    with open(os.path.join(lower, "f"), "w") as f:
        f.write("HOST-LOWER")
    spec = make_spec(["cat", "/x/f"])
    lower2 = penv.hostdir("lower2")  # read-only overlay: two lower dirs
    add_mount(spec, "/x", "overlay", "overlay", ["lowerdir=%s:%s" % (lower, lower2)])
    rc, out, err = run_with(penv, rt, spec)
    if build == "weak":
        assert rc == 0 and out == "HOST-LOWER", (rc, out, err)
        return
    assert rc != 0 and out == "", (rc, out, err)
    assert "filesystem type overlay on /x" in err and "lowerdir" in err, err


@pytest.mark.parametrize("fstype", ["ext4", "xfs", "btrfs", "securityfs", "bpf", "configfs",
                                    "fusectl", "nfs", "cifs", "9p"])
def test_block_and_other_filesystems_refused(penv, fstype):
    """Only asked for, never mounted: the real build refuses before."""
    spec = make_spec(["true"])
    add_mount(spec, "/x", fstype, "/dev/vda", [])
    rc, out, err = run_with(penv, penv.runtime, spec)
    assert rc != 0, (rc, out, err)
    assert "filesystem type %s on /x is not allowed by the policy" % fstype in err, err


def test_proc_at_proc_and_pseudo_fs_allowed(penv):
    """The default spec's own mounts (proc, sysfs, devpts, mqueue, tmpfs,
    cgroup) stay allowed, sysfs and cgroup made read-only."""
    rc, out, err = run_with(penv, penv.runtime,
                            make_spec(["sh", "-c", "grep -E ' /sys | /sys/fs/cgroup ' /proc/self/mounts"]))
    assert rc == 0, err
    for line in out.splitlines():
        assert "ro" in line.split()[3].split(","), line


def test_bind_onto_proc_refused_under_enforce(penv):
    allowed = penv.hostdir("allowed")
    with open(os.path.join(allowed, "f"), "w") as f:
        f.write("|/bin/evil")
    spec = make_spec(["true"])
    add_mount(spec, "/sys/kernel/x", "bind", os.path.join(allowed, "f"), ["bind", "ro"])
    pol = policy_file(penv, {"bindPrefixes": [allowed]})
    rc, out, err = run_with(penv, penv.runtime, spec, policy=pol)
    assert rc != 0 and "under /proc or /sys" in err, (rc, err)


# ---- row 17: no destination under /proc, in any mode --------------------------------

def test_mount_under_proc_refused_with_policy_off(penv):
    off = policy_file(penv, {"mode": "off"})
    spec = make_spec(["sh", "-c", "grep ' /proc/sys ' /proc/self/mounts; echo done"])
    add_mount(spec, "/proc/sys", "tmpfs", "tmpfs", ["size=1m"])
    rc, out, err = run_with(penv, penv.runtime, spec, policy=off)
    assert rc != 0, (rc, out, err)
    assert "destination /proc/sys is under /proc" in err, err


def test_mount_through_image_symlink_into_proc_refused_with_policy_off(penv):
    """The image's /p -> /proc: a destination /p/sys lands in the procfs;
    judged where the target really is, not by its name."""
    off = policy_file(penv, {"mode": "off"})
    spec = make_spec(["sh", "-c", "grep ' /proc/sys ' /proc/self/mounts; echo done"])
    add_mount(spec, "/p/sys", "tmpfs", "tmpfs", ["size=1m"])
    bundle = new_bundle(penv, spec)
    os.symlink("proc", os.path.join(bundle, "rootfs", "p"))
    rc, out, err = run_with(penv, penv.runtime, None, policy=off, bundle=bundle)
    assert rc != 0, (rc, out, err)
    assert "mount target /p/sys is inside a procfs" in err, err


def test_bind_through_image_symlink_into_sys_refused(penv):
    allowed = penv.hostdir("allowed")
    spec = make_spec(["true"])
    add_mount(spec, "/s/kernel/mm", "bind", allowed, ["rbind", "ro"])
    bundle = new_bundle(penv, spec)
    os.symlink("sys", os.path.join(bundle, "rootfs", "s"))
    pol = policy_file(penv, {"bindPrefixes": [allowed]})
    rc, out, err = run_with(penv, penv.runtime, None, policy=pol, bundle=bundle)
    assert rc != 0, (rc, out, err)
    assert "inside a sysfs" in err, err


def test_lxcfs_style_bind_under_proc_allowed_with_policy_off(penv):
    off = policy_file(penv, {"mode": "off"})
    src = os.path.join(penv.hostdir("lxcfs"), "meminfo")
    with open(src, "w") as f:
        f.write("MemTotal: 1 kB\n")
    spec = make_spec(["cat", "/proc/meminfo"])
    add_mount(spec, "/proc/meminfo", "bind", src, ["bind", "ro"])
    rc, out, err = run_with(penv, penv.runtime, spec, policy=off)
    assert rc == 0 and out == "MemTotal: 1 kB\n", (rc, out, err)


def test_readonly_paths_only_ro(penv):
    """readonlyPaths adds "ro" only, as runc: not nosuid, nodev, noexec."""
    off = policy_file(penv, {"mode": "off"})
    spec = make_spec(["sh", "-c", "grep ' /etc ' /proc/self/mountinfo"],
                     root__readonly=False)
    spec["linux"]["readonlyPaths"] = ["/etc"]
    rc, out, err = run_with(penv, penv.runtime, spec, policy=off)
    assert rc == 0, err
    opts = out.split()[5].split(",")
    assert "ro" in opts, out
    assert not {"nosuid", "nodev", "noexec"} & set(opts), out


# ---- row 5: the bind-source symlink-exchange race -------------------------------------

RACER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
"""

RACE_ATTEMPTS = 80


@pytest.mark.parametrize("build", BUILDS)
def test_bind_source_symlink_exchange_race(penv, build):
    """<allowed>/x flips between a directory and a symlink to a decoy
    outside bindPrefixes (a host-side racer); the container binds <allowed>/x.
    Never may the decoy be what is mounted."""
    rt = pick_runtime(build, "bind-race")
    allowed = penv.hostdir("allowed")
    outside = penv.hostdir("outside")
    with open(os.path.join(outside, "marker"), "w") as f:
        f.write("DECOY")
    x = os.path.join(allowed, "x")
    os.mkdir(x)
    with open(os.path.join(x, "marker"), "w") as f:
        f.write("inside")
    os.symlink(outside, os.path.join(allowed, "y"))
    pol = policy_file(penv, {"bindPrefixes": [allowed]})
    spec = make_spec(["cat", "/m/marker"])
    add_mount(spec, "/m", "bind", x, ["rbind", "ro"])
    bundle = new_bundle(penv, spec)
    racer = subprocess.Popen([sys.executable, "-c", RACER, x, os.path.join(allowed, "y")])
    results = {"inside": 0, "DECOY": 0, "refused": 0}
    try:
        for _ in range(RACE_ATTEMPTS):
            rc, out, err = run_with(penv, rt, None, policy=pol, bundle=bundle)
            if rc == 0 and out in results:
                results[out] += 1
            else:
                results["refused"] += 1
    finally:
        racer.kill()
        racer.wait()
    print("race results (%s): %s" % (build, results))
    if build == "weak":
        assert results["DECOY"] > 0, results
    else:
        assert results["DECOY"] == 0, results
        assert results["inside"] > 0, results  # the race did not break binds


# ---- row 8: tmpfs sizes ------------------------------------------------------------

def _tmpfs_kib(penv, dest, size, policy=None):
    spec = make_spec(["sh", "-c", "df -k %s | tail -1" % dest])
    spec["mounts"] = [m for m in spec["mounts"] if m["destination"] != dest]
    add_mount(spec, dest, "tmpfs", "tmpfs", ["nosuid", "nodev", "mode=1777", size])
    rc, out, err = run_with(penv, penv.runtime, spec, policy=policy)
    assert rc == 0, err
    return int(out.split()[1])


@pytest.mark.parametrize("size", ["size=0", "size=1t", "size=1T", "size=16e", "size=0%",
                                  "nr_blocks=0", "size=junk"])
def test_tmpfs_size_capped(penv, size):
    # An explicit size above the cap is a request (refused by default,
    # test_policy_speak.py): clamped here, as the operator can choose.
    clamp = policy_file(penv, {"onRequestAboveFloor": "clamp"})
    assert _tmpfs_kib(penv, "/tmp", size, policy=clamp) == 32 * 1024


def test_tmpfs_elsewhere_capped_at_memory_limit(penv):
    assert _tmpfs_kib(penv, "/dev/shm", "size=0") == 256 * 1024


def test_tmpfs_within_cap_kept(penv):
    assert _tmpfs_kib(penv, "/tmp", "size=8m") == 8 * 1024


# ---- row 12: writable directory binds ------------------------------------------------

def _volume(penv, name="vol"):
    allowed = penv.hostdir("allowed-" + name)
    vol = os.path.join(allowed, name)
    os.mkdir(vol)
    os.chmod(vol, 0o777)
    return allowed, vol


def test_writable_directory_bind_refused(penv):
    allowed, vol = _volume(penv)
    spec = make_spec(["sh", "-c", "echo data > /v/f"])
    add_mount(spec, "/v", "bind", vol, ["rbind", "rw"])
    rc, out, err = run_with(penv, penv.runtime, spec,
                            policy=policy_file(penv, {"bindPrefixes": [allowed]}))
    assert rc != 0, (rc, out, err)
    assert "writable directory bind" in err and "writableBinds" in err and "/v" in err, err
    assert not os.path.exists(os.path.join(vol, "f"))


def test_readonly_directory_bind_allowed(penv):
    allowed, vol = _volume(penv)
    with open(os.path.join(vol, "f"), "w") as f:
        f.write("read-me")
    spec = make_spec(["sh", "-c", "cat /v/f; echo x > /v/g 2>/dev/null || echo ' ro'"])
    add_mount(spec, "/v", "bind", vol, ["rbind", "ro"])
    rc, out, err = run_with(penv, penv.runtime, spec,
                            policy=policy_file(penv, {"bindPrefixes": [allowed]}))
    assert rc == 0 and out == "read-me ro\n", (rc, out, err)


def test_writable_bind_from_tmpfs_allowed(penv):
    shm = os.path.join("/dev/shm", "agentsbx-it-" + uuid.uuid4().hex[:8])
    os.mkdir(shm)
    try:
        os.chmod(shm, 0o777)
        spec = make_spec(["sh", "-c", "echo data > /v/f && echo ok"])
        add_mount(spec, "/v", "bind", shm, ["rbind", "rw"])
        rc, out, err = run_with(penv, penv.runtime, spec,
                                policy=policy_file(penv, {"bindPrefixes": [shm]}))
        assert rc == 0 and out == "ok\n", (rc, out, err)
    finally:
        subprocess.run(["rm", "-rf", shm])


def test_writable_binds_policy_field_allows(penv):
    allowed, vol = _volume(penv)
    spec = make_spec(["sh", "-c", "echo data > /v/f && echo ok"])
    add_mount(spec, "/v", "bind", vol, ["rbind", "rw"])
    pol = policy_file(penv, {"bindPrefixes": [allowed], "writableBinds": True})
    rc, out, err = run_with(penv, penv.runtime, spec, policy=pol)
    assert rc == 0 and out == "ok\n", (rc, out, err)
    rc, out, err = run_cmd([penv.runtime, "--policy", pol, "policy", "show"])
    assert json.loads(out)["writableBinds"] is True


def test_writable_file_bind_allowed(penv):
    """/etc/hosts style: a file, writable, stays allowed."""
    allowed = penv.hostdir("allowed")
    hosts = os.path.join(allowed, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1 localhost\n")
    os.chmod(hosts, 0o666)
    spec = make_spec(["sh", "-c", "echo '10.0.0.1 x' >> /etc/hosts && echo ok"])
    add_mount(spec, "/etc/hosts", "bind", hosts, ["rbind", "rw"])
    rc, out, err = run_with(penv, penv.runtime, spec,
                            policy=policy_file(penv, {"bindPrefixes": [allowed]}))
    assert rc == 0 and out == "ok\n", (rc, out, err)
    with open(hosts) as f:
        assert "10.0.0.1 x" in f.read()


# ---- the clone made in the parent keeps the old propagation ---------------------------

@pytest.mark.parametrize("rootfs_prop,want", [(None, "private"), ("rslave", "master"),
                                              ("rprivate", "private")])
def test_bind_clone_propagation_follows_rootfs_propagation(penv, rootfs_prop, want):
    """The bind is cloned in the runtime's mount namespace (open_tree in the
    parent), where the source may be shared with the host: it gets the
    rootfs propagation as the child's own copy used to (no mount event
    crosses to or from the host unless rslave/rshared is asked)."""
    off = policy_file(penv, {"mode": "off"})
    src = penv.hostdir("shared-src")
    spec = make_spec(["sh", "-c", "grep ' /m ' /proc/self/mountinfo"])
    add_mount(spec, "/m", "bind", src, ["rbind", "rw"])
    if rootfs_prop:
        spec["linux"]["rootfsPropagation"] = rootfs_prop
    bundle = new_bundle(penv, spec)
    cid = penv.new_id()
    script = ("mount --make-rshared / && mount -t tmpfs t %s && mount --make-shared %s && "
              "%s --root %s --policy %s run --bundle %s %s" % (
                  quote(src), quote(src), quote(penv.runtime), quote(penv.root), quote(off),
                  quote(bundle), cid))
    rc, out, err = in_private_mountns(script)
    assert rc == 0, (rc, out, err)
    fields = out.split(" - ")[0].split()[6:]
    tags = {f.split(":")[0] for f in fields}
    if want == "private":
        assert not tags & {"shared", "master"}, out
    else:
        assert want in tags, out
