# SPDX-License-Identifier: Apache-2.0
"""Conformance (issue 15): plain OCI bundles behave as runc and crun run them.

  - The spec's own seccomp profile must not break the init: with
    noNewPrivileges false the filter is loaded before the credentials are
    dropped, and a profile written for runc (here Docker's default of 2019,
    tests/integration/data/seccomp-docker-2019.json: today's
    tests/unit/data/seccomp/docker-default.json without the calls Linux got
    since 5.3 and Docker's profile since 19.03 -- no openat2, close_range,
    faccessat2, clone3, execveat, pidfd_*, rseq, landlock_*, ...; default
    action ERRNO (EPERM) as then, or ENOSYS as newer profiles answer) lists
    neither openat2 (the cwd) nor close_range (the fds) nor execveat (the
    trampoline: it falls back to /proc/self/fd/N).  cwd, user,
    additionalGids, rlimits and --preserve-fds must all come out right, for
    the init and for `exec`.
"""

import json
import os
import time

import pytest

from conftest import USER_GID, USER_UID, kv_lines, make_spec, run_cmd, write_spec

_HERE = os.path.dirname(os.path.abspath(__file__))
PROFILE_2019 = os.path.join(_HERE, "data", "seccomp-docker-2019.json")


@pytest.fixture(autouse=True)
def _x86_64_only():
    if os.uname().machine != "x86_64":
        pytest.skip("the profile's architectures are x86_64's")


def profile_2019(errno_ret=None):
    with open(PROFILE_2019) as f:
        p = json.load(f)
    names = {n for s in p["syscalls"] for n in s["names"]}
    for newer in ("openat2", "close_range", "faccessat2", "clone3", "execveat",
                  "pidfd_open", "pidfd_getfd", "pidfd_send_signal"):
        assert newer not in names, newer
    if errno_ret is not None:
        p["defaultErrnoRet"] = errno_ret
    return p


CHECK = "procinfo uid gid groups cwd rlimit.NOFILE fd nonewprivs; " \
        "[ -e /proc/self/fd/3 ] && echo c3=$(cat <&3); true"


def old_profile_spec(args, errno_ret):
    spec = make_spec(args)
    spec["linux"]["seccomp"] = profile_2019(errno_ret)
    p = spec["process"]
    p["noNewPrivileges"] = False
    p["cwd"] = "/home/user"
    p["user"] = {"uid": USER_UID, "gid": USER_GID, "additionalGids": [5, 65534]}
    p["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 321, "hard": 654}]
    return spec


def check_process(out, fds):
    kv = kv_lines(out)
    assert kv.get("uid") == "%d,%d,%d" % ((USER_UID,) * 3), out
    assert kv.get("gid") == "%d,%d,%d" % ((USER_GID,) * 3), out
    assert sorted(kv.get("groups", "").split(",")) == ["5", "65534"], out
    assert kv.get("cwd") == "/home/user", out
    assert kv.get("rlimit.NOFILE") == "321,654", out
    assert kv.get("nonewprivs") == "0", out
    assert sorted(k for k in kv if k.startswith("fd.")) == fds, out


@pytest.mark.parametrize("errno_ret", [None, 38], ids=["eperm", "enosys"])
def test_runc_era_profile_init(env, errno_ret):
    write_spec(env.default_bundle(),
               old_profile_spec(["sh", "-c", CHECK], errno_ret))
    a = os.path.join(env.tmp, "fd-a")
    with open(a, "w") as f:
        f.write("content-a\n")
    cid = env.track_id(env.new_id())
    rc, out, err = run_cmd(["/bin/sh", "-c", 'exec 3<"%s" 7<"%s"; exec "$@"' % (a, a), "sh"] +
                           env.argv("run", "--bundle", env.default_bundle(),
                                    "--preserve-fds", "1", cid))
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    check_process(out, ["fd.0", "fd.1", "fd.2", "fd.3"])
    assert kv_lines(out).get("c3") == "content-a", out


@pytest.mark.parametrize("errno_ret", [None, 38], ids=["eperm", "enosys"])
def test_runc_era_profile_exec(env, errno_ret):
    spec = old_profile_spec(["sleep", "1000"], errno_ret)
    cid = env.create(spec)
    env.rt("start", cid)
    env.wait_status(cid, "running")
    a = os.path.join(env.tmp, "fd-a")
    with open(a, "w") as f:
        f.write("content-a\n")
    proc = dict(spec["process"], args=["sh", "-c", CHECK])
    pfile = os.path.join(env.tmp, "process.json")
    with open(pfile, "w") as f:
        json.dump(proc, f)
    rc, out, err = run_cmd(["/bin/sh", "-c", 'exec 3<"%s" 7<"%s"; exec "$@"' % (a, a), "sh"] +
                           env.argv("exec", "--process", pfile, "--preserve-fds", "1", cid))
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    check_process(out, ["fd.0", "fd.1", "fd.2", "fd.3"])
    assert kv_lines(out).get("c3") == "content-a", out



# ---- kernel.domainname ----------------------------------------------------------

def test_sysctl_domainname_with_uts_namespace(env):
    out = env.sh("cat /proc/sys/kernel/domainname",
                 linux__sysctl={"kernel.domainname": "sysctl.example"})
    assert out == "sysctl.example\n"


def test_sysctl_domainname_alongside_the_field(env):
    # runc writes the sysctls after hostname/domainname: the sysctl wins.
    out = env.sh("cat /proc/sys/kernel/domainname; hostname",
                 linux__sysctl={"kernel.domainname": "sysctl.example"},
                 domainname="field.example", hostname="h15")
    assert out == "sysctl.example\nh15\n"


def test_sysctl_domainname_needs_a_uts_namespace(env):
    spec = make_spec(["true"], linux__sysctl={"kernel.domainname": "x.example"})
    del spec["hostname"]
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                   if n["type"] != "uts"]
    rc, out, err = env.run(spec)
    assert rc != 0
    assert "kernel.domainname" in err and "uts" in err, err


# ---- linux.memoryPolicy ---------------------------------------------------------

def numa_policy(out):
    """The policy field of the numa_maps line of the stack."""
    for line in out.splitlines():
        if "stack" in line:
            return line.split()[1]
    raise AssertionError("no [stack] line in numa_maps:\n" + out)


@pytest.fixture
def numa():
    if not os.path.exists("/proc/self/numa_maps"):
        pytest.skip("no NUMA in this kernel (/proc/self/numa_maps)")


@pytest.mark.parametrize("policy,want", [
    ({"mode": "MPOL_INTERLEAVE", "nodes": "0"}, "interleave:0"),
    ({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_STATIC_NODES"]}, "bind=static:0"),
    ({"mode": "MPOL_PREFERRED", "nodes": "0-0"}, "prefer:0"),
    ({"mode": "MPOL_LOCAL"}, "local"),
    ({"mode": "MPOL_DEFAULT"}, "default"),
], ids=["interleave", "bind-static", "preferred", "local", "default"])
def test_memory_policy_applied(env, numa, policy, want):
    out = env.sh("cat /proc/self/numa_maps", linux__memoryPolicy=policy)
    assert numa_policy(out) == want, out


def test_memory_policy_exec(env, numa):
    spec = make_spec(["sleep", "1000"],
                     linux__memoryPolicy={"mode": "MPOL_INTERLEAVE", "nodes": "0"})
    cid = env.create(spec)
    env.rt("start", cid)
    rc, out, err = env.rt("exec", cid, "cat", "/proc/self/numa_maps")
    assert numa_policy(out) == "interleave:0", out


def test_memory_policy_node_not_on_host(env, numa):
    with open("/sys/devices/system/node/online") as f:
        online = f.read().strip()
    missing = 1000
    assert str(missing) not in online
    rc, out, err = env.run(make_spec(["true"], linux__memoryPolicy={
        "mode": "MPOL_BIND", "nodes": "0,%d" % missing}))
    assert rc != 0
    assert "node %d" % missing in err, err


@pytest.mark.parametrize("policy,words", [
    ({"mode": "MPOL_NOPE"}, "unknown mode"),
    ({"mode": "MPOL_BIND"}, "at least one node"),
    ({"mode": "MPOL_LOCAL", "nodes": "0"}, "takes no nodes"),
    ({"mode": "MPOL_BIND", "nodes": "0-x"}, "not a list of node numbers"),
    ({"mode": "MPOL_BIND", "nodes": "0", "flags": ["MPOL_F_NOPE"]}, "unknown flag"),
    ({"mode": "MPOL_BIND", "nodes": "0",
      "flags": ["MPOL_F_STATIC_NODES", "MPOL_F_RELATIVE_NODES"]}, "together"),
], ids=["mode", "bind-no-nodes", "local-nodes", "syntax", "flag", "static-relative"])
def test_memory_policy_refused(env, policy, words):
    rc, out, err = env.run(make_spec(["true"], linux__memoryPolicy=policy))
    assert rc != 0
    assert "linux.memoryPolicy" in err and words in err, err


# ---- no mount namespace: the host's, chrooted --------------------------------------

def host_ns_spec(args, keep=()):
    spec = make_spec(args, root__readonly=False)
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                   if n["type"] in keep]
    for key in ("hostname", "domainname"):
        spec.pop(key, None)
    spec["mounts"] = []
    spec["linux"].pop("maskedPaths", None)
    spec["linux"].pop("readonlyPaths", None)
    return spec


@pytest.mark.parametrize("keep", [(), ("pid", "ipc", "uts", "network")],
                         ids=["no-namespaces", "no-mount-namespace"])
def test_no_mount_namespace_runs_in_the_hosts(env, keep):
    cid = env.create(host_ns_spec(["sleep", "1000"], keep))
    pid = env.state(cid)["pid"]
    assert os.readlink("/proc/%d/ns/mnt" % pid) == os.readlink("/proc/self/ns/mnt")
    if not keep:
        assert os.readlink("/proc/%d/ns/pid" % pid) == os.readlink("/proc/self/ns/pid")
        assert os.readlink("/proc/%d/ns/net" % pid) == os.readlink("/proc/self/ns/net")
    # chrooted into the rootfs
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    assert os.stat("/proc/%d/root" % pid).st_ino == os.stat(rootfs).st_ino
    env.rt("start", cid)
    env.wait_status(cid, "running")
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")


def test_no_mount_namespace_exec_runs_in_the_containers_root(env):
    cid = env.create(host_ns_spec(["sleep", "1000"]))
    env.rt("start", cid)
    env.wait_status(cid, "running")
    rc, out, err = env.rt("exec", cid, "sh", "-c", "ls /")
    assert sorted(out.split()) == sorted(os.listdir(
        os.path.join(env.default_bundle(), "rootfs"))), out


def test_no_mount_namespace_output(env):
    rc, out, err = env.run(host_ns_spec(["sh", "-c", "ls /; id -u"]))
    assert rc == 0, err
    assert "bin\n" in out and out.endswith("0\n"), out


def test_no_mount_namespace_refuses_mounts(env):
    spec = host_ns_spec(["true"])
    spec["mounts"] = [{"destination": "/proc", "type": "proc", "source": "proc"}]
    rc, out, err = env.run(spec)
    assert rc != 0
    assert "mounts" in err and "mount namespace" in err, err
    with open("/proc/self/mountinfo") as f:
        assert env.tmp not in f.read()


# ---- a mount destination that is a dangling symlink ---------------------------------

@pytest.mark.parametrize("link,made", [
    ("/data/real", "data/real"),           # absolute: from the container's root
    ("real", "srv/real"),                  # relative to the link's directory
    ("../../../../outside", "outside"),    # ".." stops at the container's root
    ("/a/../b/./c", "b/c"),
], ids=["absolute", "relative", "dotdot-capped", "dots"])
def test_mount_on_dangling_symlink(env, link, made):
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    os.makedirs(os.path.join(rootfs, "srv"), exist_ok=True)
    os.symlink(link, os.path.join(rootfs, "srv", "link"))
    spec = make_spec(["sh", "-c", "echo hi > /srv/link/f; cat /%s/f; "
                      "grep -c ' /%s ' /proc/self/mountinfo" % (made, made)])
    spec["mounts"].append({"destination": "/srv/link", "type": "tmpfs",
                           "source": "tmpfs", "options": ["size=1m"]})
    rc, out, err = env.run(spec)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    assert out == "hi\n1\n", out
    # created inside the rootfs, never beside it
    assert os.path.isdir(os.path.join(rootfs, made))
    assert not os.path.exists(os.path.join(os.path.dirname(rootfs), "outside"))


def test_bind_file_on_dangling_symlink(env):
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    os.symlink("/etc/made.conf", os.path.join(rootfs, "etc", "link.conf"))
    src = os.path.join(env.tmp, "src.conf")
    with open(src, "w") as f:
        f.write("from-host\n")
    spec = make_spec(["cat", "/etc/made.conf"])
    spec["mounts"].append({"destination": "/etc/link.conf", "type": "bind",
                           "source": src, "options": ["bind", "ro"]})
    rc, out, err = env.run(spec)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    assert out == "from-host\n"


# ---- mountinfo order: the binds after the root ---------------------------------------

def test_mountinfo_lists_binds_after_the_root(env):
    """runtime-tools' `mounts` case reads /proc/self/mountinfo in order and
    expects each mount after the one it sits on, as runc does.  Since 6.8
    the kernel lists a namespace's mounts by unique mount id, so a bind
    tree cloned before the root was mounted used to come first."""
    srcs = []
    for name in ("m1", "m2"):
        d = env.hostdir(name)
        with open(os.path.join(d, "f"), "w") as f:
            f.write(name)
        srcs.append(d)
    spec = make_spec(["cat", "/proc/self/mountinfo"])
    for i, src in enumerate(srcs):
        spec["mounts"].append({"destination": "/mnt/b%d" % i, "type": "bind",
                               "source": src, "options": ["rbind", "ro"]})
    rc, out, err = env.run(spec)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    points = [line.split()[4] for line in out.splitlines()]
    assert "/" in points, out
    # the spec's own mounts (/proc, /dev, ...) come before the binds it lists after them
    before = max(points.index(m["destination"]) for m in spec["mounts"][:-2])
    for i in range(len(srcs)):
        assert points.index("/mnt/b%d" % i) > before > points.index("/"), out
    assert points.index("/mnt/b0") < points.index("/mnt/b1"), out


# ---- realtime scheduling on a cgroup v1 host -------------------------------------------

def _v1_rt_host():
    return os.path.exists("/sys/fs/cgroup/cpu/cpu.rt_runtime_us")


@pytest.fixture
def rt_budget_restored():
    """The runtime gives its own /agentsbx parent the budget; put back what
    it had (0 on a fresh host) once the test's containers are gone."""
    f = "/sys/fs/cgroup/cpu/agentsbx/cpu.rt_runtime_us"
    try:
        with open(f) as fh:
            before = fh.read().strip()
    except OSError:
        before = None
    yield
    deadline = time.time() + 5
    while before is not None:
        try:
            with open(f, "w") as fh:
                fh.write(before)
            break
        except OSError:
            # a child cgroup still holds part of it (going away, or
            # another test's container): try again for a while
            if time.time() > deadline:
                break
            time.sleep(0.1)


@pytest.mark.parametrize("policy,cpu", [
    ("SCHED_FIFO", {"realtimeRuntime": 10000, "realtimePeriod": 1000000}),
    ("SCHED_RR", {"realtimeRuntime": 5000}),
], ids=["fifo-runtime-period", "rr-runtime"])
def test_realtime_on_v1(rt_budget_restored, env, policy, cpu):
    if not _v1_rt_host():
        pytest.skip("no cgroup v1 cpu hierarchy with RT group scheduling")
    spec = make_spec(["sh", "-c", "procinfo sched; cat /proc/self/cgroup"],
                     process__scheduler={"policy": policy, "priority": 1},
                     linux__resources__cpu=cpu)
    rc, out, err = env.run(spec)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    assert kv_lines(out).get("sched.policy") == policy, out


# ---- process.execCPUAffinity (exec), features --------------------------------------------

def test_exec_cpu_affinity_final(env):
    if os.cpu_count() < 2:
        pytest.skip("one CPU")
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    proc = dict(make_spec(["grep", "Cpus_allowed_list", "/proc/self/status"])["process"],
                execCPUAffinity={"initial": "0", "final": "1"})
    pfile = os.path.join(env.tmp, "process.json")
    with open(pfile, "w") as f:
        json.dump(proc, f)
    rc, out, err = env.rt("exec", "--process", pfile, cid)
    assert out.split() == ["Cpus_allowed_list:", "1"], out


def test_features_memory_policy(env):
    rc, out, err = env.rt("features")
    mp = json.loads(out)["linux"]["memoryPolicy"]
    assert "MPOL_BIND" in mp["modes"] and "MPOL_WEIGHTED_INTERLEAVE" in mp["modes"]
    assert sorted(mp["flags"]) == ["MPOL_F_NUMA_BALANCING", "MPOL_F_RELATIVE_NODES",
                                   "MPOL_F_STATIC_NODES"]


def test_exec_scheduler_and_io_priority(env):
    # runc's setns init sets both for an exec'd process too
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    proc = dict(make_spec(["procinfo", "sched", "nice", "ioprio"])["process"],
                scheduler={"policy": "SCHED_BATCH", "nice": 7},
                ioPriority={"class": "IOPRIO_CLASS_BE", "priority": 6})
    pfile = os.path.join(env.tmp, "process.json")
    with open(pfile, "w") as f:
        json.dump(proc, f)
    rc, out, err = env.rt("exec", "--process", pfile, cid)
    kv = kv_lines(out)
    assert kv.get("sched.policy") == "SCHED_BATCH", out
    assert kv.get("nice") == "7", out
    assert kv.get("ioprio.class") == "2" and kv.get("ioprio.level") == "6", out
