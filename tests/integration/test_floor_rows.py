# SPDX-License-Identifier: Apache-2.0
"""Issue 26: the floor's rows on direct hostile bundles, under the built-in
enforce policy.  Each escape row runs against the real build and against
the `make weak-NAME` build with that one defence off, where the attack
must succeed (so the test cannot pass vacuously).

  row 5/9  no default bind prefix spans tenants (weak: engine-parents)
  row 6    a socket as a bind source                (weak: bind-special)
  row 7    a tmpfs under a bind reaching the host   (weak: bind-propagation)
  row 8    root.path a host directory               (weak: rootfs-anywhere)
  row 10   linux.seccomp.listenerPath any socket    (weak: seccomp-listener)
"""

import json
import os
import socket
import threading
import uuid

import pytest

from conftest import add_mount, make_spec, policy_file, run_cmd
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")


def run(penv, spec, runtime=None, extra=(), bundle=None):
    bundle = bundle or penv.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    cid = penv.new_id()
    return run_cmd([runtime or penv.runtime, "--root", penv.root] + list(extra) +
                   ["run", "--bundle", bundle, cid], timeout=60)


# ---- rows 5 and 9: engine directories are this tenant's own ------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_parent_engine_directory_is_no_bind_source(penv, build):
    """/run/containerd holds every task's bundle (config.json, its env with
    API keys); it was a default prefix, and on a tmpfs a writable bind of
    it passed too.  Now no default prefix holds another tenant's files."""
    if not os.path.isdir("/run/containerd"):
        pytest.skip("no /run/containerd on this host")
    runtime = pick_runtime(build, "engine-parents")
    for opts in (["rbind", "ro"], ["rbind", "rw"]):
        spec = make_spec(["test", "-d", "/p"])
        add_mount(spec, "/p", "bind", "/run/containerd", opts)
        rc, out, err = run(penv, spec, runtime=runtime)
        if build == "weak":
            # a writable one passes only where it is on a tmpfs (row 9)
            assert rc == 0 or "rw" in opts, "weak build: the parent directory was refused: %s" % err
            continue
        assert rc != 0, "bound every task's directory (%s): %s" % (opts, out)
        assert "/run/containerd" in err and "bindPrefixes" in err, err


def docker_layout(penv, cid):
    """A bundle where dockerd 20.10 puts it, E/containerd/daemon/
    io.containerd.runtime.v2.task/moby/ID, with the shim's work link to
    D/containerd/daemon/.../ID; D/containers/ID/hostname, a sibling
    container's dir and a volume."""
    e, d = os.path.join(penv.tmp, "exec"), os.path.join(penv.tmp, "data")
    task = "containerd/daemon/io.containerd.runtime.v2.task/moby"
    os.makedirs(os.path.join(e, task))
    os.makedirs(os.path.join(d, task, cid))
    bundle = penv.make_bundle(os.path.join("exec", task, cid))
    os.symlink(os.path.join(d, task, cid), os.path.join(bundle, "work"))
    for sub in (os.path.join("containers", cid), os.path.join("containers", "f" * 64),
                os.path.join("volumes", "v1", "_data")):
        os.makedirs(os.path.join(d, sub))
        with open(os.path.join(d, sub, "file"), "w") as f:
            f.write("secret of %s\n" % sub)
    return bundle, d


@pytest.mark.parametrize("source,allowed", [
    ("containers/{id}", True),
    ("volumes/v1/_data", True),
    ("containers/" + "f" * 64, False),
    ("containers", False),
    ("volumes", False),
    ("volumes/v1", False),
])
def test_docker_dirs_are_derived_for_this_container_only(penv, source, allowed):
    cid = penv.track_id(uuid.uuid4().hex + uuid.uuid4().hex)
    bundle, d = docker_layout(penv, cid)
    spec = make_spec(["cat", "/p/file"])
    add_mount(spec, "/p", "bind", os.path.join(d, source.format(id=cid)), ["rbind", "ro"])
    with open(os.path.join(bundle, "config.json"), "w") as f:
        json.dump(spec, f)
    rc, out, err = penv.rt("run", "--bundle", bundle, cid, check=False)
    if allowed:
        assert rc == 0 or "No such file" in err, err
    else:
        assert rc != 0 and "secret" not in out, (source, out)
        assert "bindPrefixes" in err, err


# ---- row 6: a socket (FIFO, device) is no bind source ----------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_socket_bind_source_refused(penv, build):
    runtime = pick_runtime(build, "bind-special")
    d = penv.hostdir("sock")
    path = os.path.join(d, "api.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    try:
        pol = policy_file(penv, {"extend": {"bindPrefixes": [d]}})
        spec = make_spec(["test", "-S", "/api.sock"])
        add_mount(spec, "/api.sock", "bind", path, ["bind", "ro"])
        rc, out, err = run(penv, spec, runtime=runtime, extra=["--policy", pol])
        if build == "weak":
            assert rc == 0, "weak build: the socket was refused: %s" % err
            return
        assert rc != 0
        assert "a unix socket" in err and "bindSpecialFiles" in err, err
        # named by the operator: allowed
        pol = policy_file(penv, {"extend": {"bindPrefixes": [d]}, "bindSpecialFiles": [path]})
        rc, out, err = run(penv, spec, extra=["--policy", pol])
        assert rc == 0, err
    finally:
        s.close()


def test_fifo_bind_source_refused(penv):
    d = penv.hostdir("fifo")
    path = os.path.join(d, "f")
    os.mkfifo(path)
    pol = policy_file(penv, {"extend": {"bindPrefixes": [d]}})
    spec = make_spec(["true"])
    add_mount(spec, "/f", "bind", path, ["bind", "ro"])
    rc, _, err = run(penv, spec, extra=["--policy", pol])
    assert rc != 0 and "a FIFO" in err, err


# ---- row 7: nothing a container mounts reaches the host ------------------------------

def host_mounts_under(path):
    with open("/proc/self/mountinfo") as f:
        return [l.split()[4] for l in f if l.split()[4].startswith(path)]


@pytest.mark.parametrize("prop", ["slave", "private"])
@pytest.mark.parametrize("build", BUILDS)
def test_tmpfs_below_a_bind_never_reaches_the_host(penv, build, prop):
    runtime = pick_runtime(build, "bind-propagation")
    shared = penv.hostdir("shared")
    os.makedirs(os.path.join(shared, "sub", "inner"))
    run_cmd(["mount", "--bind", shared, shared], check=True)
    try:
        run_cmd(["mount", "--make-shared", shared], check=True)
        pol = policy_file(penv, {"extend": {"bindPrefixes": [shared]}})
        spec = make_spec(["true"], linux__rootfsPropagation=prop)
        add_mount(spec, "/m", "bind", os.path.join(shared, "sub"), ["rbind", "ro"])
        add_mount(spec, "/m/inner", "tmpfs", "tmpfs", ["size=1m"])
        bundle = penv.make_bundle("b", spec=spec)
        cid = penv.new_id()
        rc, _, err = run_cmd([runtime, "--root", penv.root, "--policy", pol, "create",
                              "--bundle", bundle, cid], timeout=60)
        leaked = host_mounts_under(os.path.join(shared, "sub", "inner"))
        run_cmd([runtime, "--root", penv.root, "delete", "--force", cid])
        after = host_mounts_under(os.path.join(shared, "sub", "inner"))
        for m in reversed(after):
            run_cmd(["umount", "-l", m])
        assert rc == 0, err
        if build == "weak" and prop == "slave":
            # a slave of the host's group sends nothing back: the
            # non-recursive private/shared case is the one that leaks
            return
        if build == "weak":
            assert leaked, "weak build: the tmpfs did not reach the host"
            return
        assert not leaked, "the container's tmpfs appeared on the host: %s" % leaked
        assert not after
    finally:
        run_cmd(["umount", "-l", shared])


# ---- row 8: root.path is an image, not a host directory ------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_root_path_host_directory_refused(penv, build):
    """A user's home as the rootfs (the container would read its 0600
    files and the runtime would make mount points in it)."""
    runtime = pick_runtime(build, "rootfs-anywhere")
    home = os.path.join(penv.tmp, "home-of-someone")
    run_cmd(["cp", "-a", penv.base_rootfs, home], check=True)
    with open(os.path.join(home, "id_rsa"), "w") as f:
        f.write("PRIVATE KEY\n")
    os.chmod(os.path.join(home, "id_rsa"), 0o600)
    before = sorted(os.listdir(home))
    spec = make_spec(["cat", "/id_rsa"], root__path=home)
    rc, out, err = run(penv, spec, runtime=runtime)
    if build == "weak":
        assert rc == 0 or "Permission denied" in err, "weak build: refused: %s" % err
        return
    assert rc != 0 and "PRIVATE KEY" not in out
    assert "rootfsPrefixes" in err and home in err, err
    assert sorted(os.listdir(home)) == before, "the runtime made mount points in it"
    pol = policy_file(penv, {"rootfsPrefixes": [home]})
    rc, out, err = run(penv, make_spec(["true"], root__path=home), extra=["--policy", pol])
    assert rc == 0, err


def test_root_path_symlink_out_of_the_bundle_refused(penv):
    bundle = penv.make_bundle("b", rootfs=False)
    os.symlink("/etc", os.path.join(bundle, "rootfs"))
    with open(os.path.join(bundle, "config.json"), "w") as f:
        json.dump(make_spec(["true"]), f)
    rc, _, err = penv.rt("run", "--bundle", bundle, penv.new_id(), check=False)
    assert rc != 0 and "root.path /etc is a host directory" in err, err


# ---- row 10: the seccomp agent is the operator's ---------------------------------------

def notify_spec(listener):
    spec = make_spec(["true"])
    spec["linux"]["seccomp"] = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "listenerPath": listener,
        "listenerMetadata": "author-chosen",
        "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}],
    }
    return spec


@pytest.mark.parametrize("build", BUILDS)
def test_seccomp_listener_path_must_be_named_by_the_operator(penv, build):
    runtime = pick_runtime(build, "seccomp-listener")
    d = penv.hostdir("agent")
    path = os.path.join(d, "root-only.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(1)
    try:
        bundle = penv.make_bundle("b", spec=notify_spec(path))
        cid = penv.new_id()
        res = {}
        t = threading.Thread(target=lambda: res.update(r=run_cmd(
            [runtime, "--root", penv.root, "create", "--bundle", bundle, cid], timeout=60)))
        t.start()
        got = None
        s.settimeout(5 if build == "weak" else 2)
        try:
            conn, _ = s.accept()
            got = conn.recv(65536)
            conn.close()
        except socket.timeout:
            pass
        t.join(70)
        rc, _, err = res["r"]
        run_cmd([runtime, "--root", penv.root, "delete", "--force", cid])
        if build == "weak":
            assert got and b"author-chosen" in got, "weak build: nothing connected: %s" % err
            return
        assert got is None, "the runtime connected to the author's socket as root"
        assert rc != 0 and "seccompListeners" in err, err
    finally:
        s.close()


# ---- found by the oracle (tests/floor): a mount over / --------------------------------

def test_no_mount_over_the_root(penv):
    """A bind of an allowed directory on / stacked it read-write over the
    image, where the process and every exec landed: refused, whatever the
    source."""
    d = penv.hostdir("over-root")
    pol = policy_file(penv, {"extend": {"bindPrefixes": [d]}})
    for typ, src, opts in (("bind", d, ["rbind", "rw"]), ("tmpfs", "tmpfs", ["size=1m"])):
        spec = make_spec(["true"])
        add_mount(spec, "/", typ, src, opts)
        rc, _, err = run(penv, spec, extra=["--policy", pol])
        assert rc != 0 and "would replace the container's root" in err, err


@pytest.mark.parametrize("nstype,file", [("ipc", "ipc"), ("pid", "pid"), ("uts", "uts")])
def test_another_tenants_namespace_is_not_joined(penv, nstype, file):
    """Found by the oracle: the pid, ipc or uts namespace of a container
    under another --root (another engine's tenant) could be joined; only
    the network and mount ones were held to 'a container under this
    --root, or an empty one'.  Now every joined namespace is."""
    other_root = os.path.join(penv.tmp, "other-root")
    os.makedirs(other_root, 0o700)
    off = policy_file(penv, {"mode": "off"})
    other = penv.make_bundle("other", spec=make_spec(["sleep", "60"]))
    ocid = penv.new_id()
    run_cmd([penv.runtime, "--root", other_root, "--policy", off, "create", "--bundle", other,
             ocid], check=True, timeout=60)
    try:
        pid = json.loads(run_cmd([penv.runtime, "--root", other_root, "state", ocid],
                                 check=True)[1])["pid"]
        spec = make_spec(["true"])
        for n in spec["linux"]["namespaces"]:
            if n["type"] == nstype:
                n["path"] = "/proc/%d/ns/%s" % (pid, file)
        if nstype == "pid":
            spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                           if n["type"] != "pid"] + \
                [{"type": "pid", "path": "/proc/%d/ns/pid" % pid}]
        rc, _, err = run(penv, spec)
        assert rc != 0, "joined another tenant's %s namespace" % nstype
        assert "neither the %s namespace of a running container under --root" % nstype in err, err
        # the same container under this --root: a pod's sibling, allowed
        bundle = penv.make_bundle("sib-" + nstype, spec=make_spec(["sleep", "60"]))
        sib = penv.track_id(penv.new_id())
        run_cmd([penv.runtime, "--root", penv.root, "create", "--bundle", bundle, sib],
                check=True, timeout=60)
        spid = penv.state(sib)["pid"]
        for n in spec["linux"]["namespaces"]:
            if n["type"] == nstype:
                n["path"] = "/proc/%d/ns/%s" % (spid, file)
        rc, _, err = run(penv, spec)
        assert rc == 0, err
    finally:
        run_cmd([penv.runtime, "--root", other_root, "delete", "--force", ocid])


@pytest.mark.parametrize("typ,dest", [("sysfs", "/data"), ("cgroup", "/data"),
                                      ("cgroup2", "/mnt/cg")])
def test_sysfs_and_cgroupfs_only_in_their_place(penv, typ, dest):
    """Found by the oracle: sysfs on /data had none of the /sys masks
    (/sys/firmware, /sys/kernel/security ...); procfs was already held to
    /proc for that reason.  sysfs only at /sys, cgroupfs under
    /sys/fs/cgroup."""
    spec = make_spec(["true"])
    add_mount(spec, dest, typ, typ, ["ro", "nosuid", "nodev", "noexec"])
    rc, _, err = run(penv, spec)
    assert rc != 0 and "is allowed by the policy" in err and dest in err, err


def test_no_cgroup_inside_another_tenants(penv):
    """Found by the oracle: linux.cgroupsPath could name a cgroup inside
    another container's (charged to its memory and pids limits, able to
    have it OOM-killed); only a cgroup that itself held processes was
    refused.  Now an ancestor holding processes is refused too."""
    other = penv.make_bundle("victim", spec=make_spec(["sleep", "60"]))
    vid = penv.track_id(penv.new_id())
    penv.rt("create", "--bundle", other, vid)
    with open("/proc/%d/cgroup" % penv.state(vid)["pid"]) as f:
        vpath = [l.split(":", 2)[2].strip() for l in f
                 if "memory" in l.split(":", 2)[1].split(",") or l.startswith("0::")][0]
    spec = make_spec(["true"])
    spec["linux"]["cgroupsPath"] = vpath + "/inside"
    rc, _, err = run(penv, spec)
    assert rc != 0 and "holds processes itself" in err, err
