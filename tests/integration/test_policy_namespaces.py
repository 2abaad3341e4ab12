# SPDX-License-Identifier: Apache-2.0
"""Joined namespaces judged by what they are (issue 12, rows 3, 4 and 17).

Every linux.namespaces[].path is opened once by the runtime, checked to be
a namespace file of its type, compared (device and inode of the opened fd)
with the runtime's own and PID 1's, and that very fd is joined.  Under the
default `enforce` policy the host's pid, ipc, uts, mount, cgroup, user and
time namespaces are refused, and a mount namespace may only be another
container's (under the same --root).  In every mode, net.* sysctls and the
hostname are refused when the network / uts namespace joined is the host's.

Nothing here joins the real host's mount namespace or writes the real
host's hostname or sysctls: where the runtime's own namespace is the
target, the runtime runs inside a throwaway one (unshare), which is then
"the host" for it.  The host processes used are the test's own `sleep`s.

The escape rows run against $AGENTSBX ("real") and against
`make weak-ns-host` ("weak", the judging of namespaces turned off), where
the attack must work.
"""

import ctypes
import os
import uuid

import pytest

from conftest import policy_file, make_spec, run_cmd, spawn, wait_for
from escape_helpers import BUILDS, pick_runtime, quote, rt_as, run_as

pytestmark = pytest.mark.usefixtures("agentsbx_only")


def join(spec, nstype, path):
    """Set linux.namespaces[nstype].path (adding the entry if missing)."""
    for n in spec["linux"]["namespaces"]:
        if n["type"] == nstype:
            n["path"] = path
            return spec
    spec["linux"]["namespaces"].append({"type": nstype, "path": path})
    return spec


class HostProcess:
    """A harmless process of the test's own in the host's namespaces (or,
    with unshare_flags, in new ones made by util-linux unshare --fork):
    `pid` is the sleep itself.  Killed (only it) by stop()."""

    def __init__(self, unshare_flags=()):
        if unshare_flags:
            self.proc = spawn(["unshare", "--fork"] + list(unshare_flags) +
                              ["sleep", "300"])
            self.pid = wait_for(self._child, what="unshare's sleep")
        else:
            self.proc = spawn(["sleep", "300"])
            self.pid = self.proc.pid

    def _child(self):
        try:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                kids = f.read().split()
        except OSError:
            return None
        return int(kids[0]) if kids else None

    def ns(self, name):
        return "/proc/%d/ns/%s" % (self.pid, name)

    def stop(self):
        if self.pid != self.proc.pid:
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass
        self.proc.popen.kill()
        self.proc.wait()


@pytest.fixture
def host_sleep():
    p = HostProcess()
    yield p
    p.stop()


def refused_as_host(err, nstype, path):
    return ("linux.namespaces[%s].path %s is the host's %s namespace" %
            (nstype, path, nstype)) in err and "refused by the policy" in err


# ---- row 3: the host's pid and ipc namespaces ---------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_join_host_pid_namespace(penv, host_sleep, build):
    """The container asks for the pid namespace of a host process (the
    test's sleep): with it, it sees (and could signal) every host process."""
    runtime = pick_runtime(build, "ns-host")
    path = host_sleep.ns("pid")
    spec = make_spec(["sh", "-c", "test -d /proc/%d && echo SAW-HOST-PID; "
                      "ls /proc | grep -c '^[0-9]'" % host_sleep.pid])
    join(spec, "pid", path)
    rc, out, err = run_as(penv, runtime, spec=spec)
    if build == "real":
        assert rc != 0, "joined the host's pid namespace:\n%s" % out
        assert refused_as_host(err, "pid", path), err
        assert "SAW-HOST-PID" not in out
    else:
        assert rc == 0, err
        assert "SAW-HOST-PID" in out, out
        assert int(out.split()[-1]) > 2  # more than sh and ls: the host's


@pytest.mark.parametrize("build", BUILDS)
def test_join_host_ipc_namespace(penv, host_sleep, build):
    """A SysV message queue made on the host is visible (and removable)
    from a container in the host's ipc namespace."""
    runtime = pick_runtime(build, "ns-host")
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
    qid = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    assert qid >= 0, os.strerror(ctypes.get_errno())
    try:
        path = host_sleep.ns("ipc")
        spec = make_spec(["cat", "/proc/sysvipc/msg"])
        join(spec, "ipc", path)
        rc, out, err = run_as(penv, runtime, spec=spec)
    finally:
        libc.msgctl(qid, IPC_RMID, None)
    seen = any(l.split()[1:2] == [str(qid)] for l in out.splitlines())
    if build == "real":
        assert rc != 0, "joined the host's ipc namespace:\n%s" % out
        assert refused_as_host(err, "ipc", path), err
        assert not seen
    else:
        assert rc == 0, err
        assert seen, out


@pytest.mark.parametrize("nstype,file", [("uts", "uts"), ("cgroup", "cgroup"),
                                         ("time", "time"), ("user", "user")])
def test_join_other_host_namespaces_refused(penv, host_sleep, nstype, file):
    """The host's uts (no hostname asked: nothing is written), cgroup, time
    and user namespaces: each refused, naming it."""
    if not os.path.exists(host_sleep.ns(file)):
        pytest.skip("no %s namespaces on this kernel" % nstype)
    path = host_sleep.ns(file)
    spec = make_spec(["true"])
    spec.pop("hostname", None)
    join(spec, nstype, path)
    rc, out, err = penv.run(spec)
    assert rc != 0, "joined the host's %s namespace" % nstype
    assert refused_as_host(err, nstype, path), err


def test_join_host_mount_namespace_refused(penv):
    """The runtime's own mount namespace (here a throwaway one: the runtime
    runs in `unshare --mount`, so that even a runtime that let it through
    would only pivot_root that one)."""
    bundle = penv.make_bundle("b", spec=join(make_spec(["true"]), "mount",
                                             "/proc/self/ns/mnt"))
    cid = penv.new_id()
    rc, out, err = run_cmd(["unshare", "--mount", "--propagation", "private"] +
                           penv.argv("run", "--bundle", bundle, cid), timeout=60)
    assert rc != 0
    assert refused_as_host(err, "mount", "/proc/self/ns/mnt"), err


def test_not_a_namespace_file_refused(penv):
    """A path that is not an nsfs file of the asked type is refused, naming
    it, in every mode (the policy off here)."""
    off = policy_file(penv, {"mode": "off"})
    hostfile = os.path.join(penv.hostdir("h"), "notns")
    with open(hostfile, "w") as f:
        f.write("x")
    for path, what in ((hostfile, "not a namespace file"),
                       ("/proc/self/ns/ipc", "not a network namespace")):
        spec = join(make_spec(["true"]), "network", path)
        bundle = penv.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
        rc, out, err = rt_as(penv, penv.runtime, "--policy", off, "run",
                             "--bundle", bundle, penv.new_id())
        assert rc != 0
        assert what in err, err


# ---- row 4: a mount (and uts) namespace that is not a container's ----------------

def _hostname_of(pid):
    rc, out, err = run_cmd(["nsenter", "--uts", "--target", str(pid), "hostname"])
    assert rc == 0, err
    return out.strip()


@pytest.mark.parametrize("build", BUILDS)
def test_join_foreign_mount_and_uts_namespace(penv, build):
    """A stand-in for the host's: `unshare --mount --uts --fork sleep`.
    Joined, the container's pivot_root replaces the root of every process
    in that mount namespace, and its hostname lands there."""
    runtime = pick_runtime(build, "ns-host")
    victim = HostProcess(["--mount", "--uts", "--propagation", "private"])
    try:
        before = _hostname_of(victim.pid)
        spec = make_spec(["true"], hostname="asbx-pwned")
        join(spec, "mount", victim.ns("mnt"))
        join(spec, "uts", victim.ns("uts"))
        bundle = penv.make_bundle("b")
        marker = "ASBX-ROOT-%s" % uuid.uuid4().hex[:6]
        open(os.path.join(bundle, "rootfs", marker), "w").close()
        rc, out, err = run_as(penv, runtime, spec=spec, bundle=bundle)
        moved = os.path.exists("/proc/%d/root/%s" % (victim.pid, marker))
        after = _hostname_of(victim.pid)
    finally:
        victim.stop()
    if build == "real":
        assert rc != 0, "joined a foreign mount namespace"
        # Both joins are refused; the judge names the first it meets (uts
        # is judged with the other non-mount namespaces, before mount).
        assert (("linux.namespaces[mount].path %s is not the mount namespace of a "
                 "running container" % victim.ns("mnt")) in err
                or ("linux.namespaces[uts].path %s is neither the uts namespace of a "
                    "running container" % victim.ns("uts")) in err), err
        assert not moved
        assert after == before
    else:
        assert rc == 0, err
        assert moved, "the joined namespace's root was not replaced"
        assert after == "asbx-pwned"


def test_join_foreign_mount_namespace_alone_refused(penv):
    """The mount namespace of a process that is no container (not the
    runtime's own), joined alone: refused, naming it."""
    victim = HostProcess(["--mount", "--propagation", "private"])
    try:
        spec = join(make_spec(["true"]), "mount", victim.ns("mnt"))
        bundle = penv.make_bundle("b")
        rc, out, err = run_as(penv, penv.runtime, spec=spec, bundle=bundle)
    finally:
        victim.stop()
    assert rc != 0, "joined a foreign mount namespace"
    assert ("linux.namespaces[mount].path %s is not the mount namespace of a "
            "running container" % victim.ns("mnt")) in err, err


def test_join_other_containers_mount_namespace_allowed(penv):
    """Another container's mount namespace, under the same --root, may be
    joined.  The joiner's rootfs must exist at its path in that namespace:
    container A's image holds a copy at the same absolute path (and the
    policy mounts no tmpfs over /tmp, where that path is).  A pod-like
    pair: B joins A's pid namespace as well."""
    penv.policy_args = ["--policy", policy_file(penv, {"tmpfs": []})]
    bundle_b = penv.make_bundle("b")
    rootfs_b = os.path.join(bundle_b, "rootfs")
    with open(os.path.join(rootfs_b, "whoami"), "w") as f:
        f.write("container-B")
    bundle_a = penv.make_bundle("a")
    inner = os.path.join(bundle_a, "rootfs", rootfs_b.lstrip("/"))
    os.makedirs(os.path.dirname(inner))
    assert run_cmd(["cp", "-a", rootfs_b, inner])[0] == 0
    cid_a = penv.create(make_spec(["sleep", "300"]), bundle=bundle_a)
    penv.rt("start", cid_a)
    pid_a = penv.state(cid_a)["pid"]
    spec = join(make_spec(["cat", "/whoami"]), "mount", "/proc/%d/ns/mnt" % pid_a)
    # A's pid namespace too: the runtime works on fds through /proc/self/fd,
    # and the /proc of A's mount namespace is that of A's pid namespace.
    join(spec, "pid", "/proc/%d/ns/pid" % pid_a)
    rc, out, err = penv.run(spec, bundle=bundle_b)
    assert rc == 0, err
    assert out == "container-B"


# ---- row 17: sysctls and hostname into the host's namespaces, every mode ------------

def _in_throwaway(flag, penv, bundle, then):
    """Run the runtime (policy off) inside `unshare FLAG`, whose namespace
    is then the runtime's own ("the host's" for it), and `then` after it
    in the same namespace.  (rc of the runtime, its stderr, then's output)."""
    off = policy_file(penv, {"mode": "off"})
    cid = penv.new_id()
    errf = os.path.join(penv.tmp, "rt-err-" + cid)
    argv = [penv.runtime, "--root", penv.root, "--policy", off, "run",
            "--bundle", bundle, cid]
    script = "%s 2>%s; echo rc=$?; %s" % (" ".join(quote(a) for a in argv),
                                          quote(errf), then)
    rc, out, err = run_cmd(["unshare", flag, "/bin/sh", "-c", script], timeout=60)
    assert rc == 0, (out, err)
    with open(errf) as f:
        rt_err = f.read()
    lines = out.splitlines()
    rt_rc = int([l for l in lines if l.startswith("rc=")][0][3:])
    return rt_rc, rt_err, lines[-1].strip()


def test_net_sysctl_in_joined_host_netns_refused(penv):
    spec = make_spec(["true"])
    join(spec, "network", "/proc/self/ns/net")
    spec["linux"]["sysctl"] = {"net.ipv4.ip_default_ttl": "33"}
    bundle = penv.make_bundle("b", spec=spec)
    rc, err, ttl = _in_throwaway("--net", penv, bundle,
                                 "cat /proc/sys/net/ipv4/ip_default_ttl")
    assert ttl != "33", "the sysctl was written into the runtime's own netns"
    assert rc != 0
    assert ("linux.sysctl[net.ipv4.ip_default_ttl]: linux.namespaces[network].path "
            "/proc/self/ns/net is the host's network namespace") in err, err


def test_hostname_in_joined_host_uts_refused(penv):
    spec = make_spec(["true"], hostname="asbx-pwned")
    join(spec, "uts", "/proc/self/ns/uts")
    bundle = penv.make_bundle("b", spec=spec)
    rc, err, name = _in_throwaway("--uts", penv, bundle, "hostname")
    assert name != "asbx-pwned", "the hostname was set in the runtime's own uts ns"
    assert rc != 0
    assert "hostname: linux.namespaces[uts].path /proc/self/ns/uts is the host's" in err, err


def test_net_sysctl_in_joined_other_netns_allowed(penv):
    """A joined namespace that is not the host's still takes its sysctls
    (policy off; a netns of the test's own)."""
    victim = HostProcess(["--net"])
    try:
        spec = make_spec(["cat", "/proc/sys/net/ipv4/ip_default_ttl"])
        join(spec, "network", victim.ns("net"))
        spec["linux"]["sysctl"] = {"net.ipv4.ip_default_ttl": "33"}
        off = policy_file(penv, {"mode": "off"})
        bundle = penv.make_bundle("b", spec=spec)
        rc, out, err = rt_as(penv, penv.runtime, "--policy", off, "run",
                             "--bundle", bundle, penv.new_id())
    finally:
        victim.stop()
    assert rc == 0, err
    assert out.strip() == "33"


def test_ipc_sysctl_in_joined_host_ipcns_refused(penv):
    spec = make_spec(["true"])
    join(spec, "ipc", "/proc/self/ns/ipc")
    spec["linux"]["sysctl"] = {"kernel.msgmax": "4242"}
    bundle = penv.make_bundle("b", spec=spec)
    rc, err, val = _in_throwaway("--ipc", penv, bundle, "cat /proc/sys/kernel/msgmax")
    assert val != "4242", "the sysctl was written into the runtime's own ipc ns"
    assert rc != 0
    assert ("linux.sysctl[kernel.msgmax]: linux.namespaces[ipc].path "
            "/proc/self/ns/ipc is the host's ipc namespace") in err, err
