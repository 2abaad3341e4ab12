# SPDX-License-Identifier: Apache-2.0
"""What the process sees from inside the container: process attributes
(capabilities, no_new_privs, user, umask, rlimits, cwd, env, oom score),
namespaces, hostname, sysctl, and the filesystem (root, masked and
read-only paths, devices, mounts)."""

import ctypes
import os
import shutil
import stat

import pytest

from conftest import (USER_GID, USER_UID, add_mount, cap_mask, drop_namespace,
                      kv_lines, make_spec, proc_status)


def run_ok(env, spec, **kw):
    rc, out, err = env.run(spec, **kw)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    return out


def mountinfo(text):
    """Parse mountinfo text into dicts keyed by mount point (last wins)."""
    mounts = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 10:
            continue
        sep = f.index("-")
        mounts[f[4]] = {"root": f[3], "opts": set(f[5].split(",")),
                        "fstype": f[sep + 1], "source": f[sep + 2],
                        "super": set(f[sep + 3].split(","))}
    return mounts


def inside_mounts(env, **changes):
    return mountinfo(env.sh("cat /proc/self/mountinfo", **changes))


# ---- capabilities -------------------------------------------------------------

CAP_SETS = ("bounding", "effective", "permitted", "inheritable", "ambient")


def expected_caps(caps, uid, nnp):
    """The five sets /proc/self/status shows after the runtime set `caps`
    (before execve) and exec'ed a file without file capabilities.

    Kernel rules (security/commoncap.c): ambient can only hold what is in
    both permitted and inheritable; for uid 0 the exec'ed program gets
    P' = bounding | inheritable | ambient and E' = P' ("root is
    privileged"), capped to the old permitted set under no_new_privs; for
    any other uid P' = E' = ambient."""
    m = {k: cap_mask(caps.get(k)) for k in CAP_SETS}
    amb = m["ambient"] & m["permitted"] & m["inheritable"]
    if uid == 0:
        prm = m["bounding"] | m["inheritable"] | amb
        if nnp:
            prm &= m["permitted"]
        eff = prm
    else:
        prm = eff = amb
    return {"CapBnd": m["bounding"], "CapInh": m["inheritable"],
            "CapPrm": prm, "CapEff": eff, "CapAmb": amb}


SAME = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL",
        "CAP_NET_BIND_SERVICE", "CAP_SETUID", "CAP_SETGID", "CAP_AUDIT_WRITE"]
MIXED = {
    "bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETUID",
                 "CAP_AUDIT_WRITE", "CAP_NET_RAW"],
    "effective": ["CAP_CHOWN", "CAP_KILL"],
    "permitted": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW"],
    "inheritable": ["CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW"],
    "ambient": ["CAP_NET_BIND_SERVICE", "CAP_NET_RAW"],
}
CAP_CASES = {
    # name: (capabilities or None for runc's default, uid, noNewPrivileges)
    "default": (None, 0, True),
    "same-sets": ({k: SAME for k in CAP_SETS}, 0, True),
    "mixed-root-nnp": (MIXED, 0, True),
    "mixed-root": (MIXED, 0, False),
    "mixed-user": (MIXED, USER_UID, True),
    "mixed-user-no-nnp": (MIXED, USER_UID, False),
    "none": ({k: [] for k in CAP_SETS}, 0, True),
}


@pytest.mark.parametrize("case", list(CAP_CASES))
def test_capabilities(env, case):
    caps, uid, nnp = CAP_CASES[case]
    spec = make_spec(["cat", "/proc/self/status"],
                     process__noNewPrivileges=nnp,
                     process__user={"uid": uid, "gid": uid})
    if caps is not None:
        spec["process"]["capabilities"] = caps
    caps = spec["process"]["capabilities"]
    status = proc_status(run_ok(env, spec))
    got = {k: int(status[k], 16) for k in ("CapBnd", "CapInh", "CapPrm",
                                           "CapEff", "CapAmb")}
    want = expected_caps(caps, uid, nnp)
    assert {k: "%016x" % v for k, v in got.items()} == \
        {k: "%016x" % v for k, v in want.items()}


def test_capabilities_same_sets_are_exact(env):
    spec = make_spec(["cat", "/proc/self/status"])
    spec["process"]["capabilities"] = {k: SAME for k in CAP_SETS}
    status = proc_status(run_ok(env, spec))
    for k in ("CapBnd", "CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(status[k], 16) == cap_mask(SAME), k


@pytest.mark.parametrize("nnp", [True, False])
def test_no_new_privileges(env, nnp):
    status = proc_status(run_ok(env, make_spec(
        ["cat", "/proc/self/status"], process__noNewPrivileges=nnp)))
    assert status["NoNewPrivs"] == ("1" if nnp else "0")


# ---- user, groups, umask ----------------------------------------------------------

def test_user_uid_gid_additional_gids(env):
    hostdir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "procinfo uid gid groups; id -u; id -g; id -G; "
                      "touch /h/file"],
                     process__user={"uid": USER_UID, "gid": USER_GID,
                                    "additionalGids": [10, 20]})
    add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    out = run_ok(env, spec)
    kv = kv_lines(out)
    assert kv["uid"] == "%d,%d,%d" % ((USER_UID,) * 3)
    assert kv["gid"] == "%d,%d,%d" % ((USER_GID,) * 3)
    assert sorted(int(g) for g in kv["groups"].split(",")) == [10, 20]
    lines = [l for l in out.splitlines() if "=" not in l]
    assert lines[0] == str(USER_UID)
    assert lines[1] == str(USER_GID)
    assert set(lines[2].split()) == {str(USER_GID), "10", "20"}
    st = os.stat(os.path.join(hostdir, "file"))
    assert (st.st_uid, st.st_gid) == (USER_UID, USER_GID)


def test_root_has_no_supplementary_groups(env):
    kv = kv_lines(env.sh("procinfo uid gid groups"))
    assert kv["uid"] == "0,0,0" and kv["gid"] == "0,0,0"
    assert kv["groups"] == ""


def test_umask(env):
    hostdir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "procinfo umask; umask; touch /h/f; mkdir /h/d"],
                     process__user={"uid": 0, "gid": 0, "umask": 0o027})
    add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    out = run_ok(env, spec)
    assert kv_lines(out)["umask"] == "0027"
    assert "0027" in out.splitlines()[1]
    assert stat.S_IMODE(os.stat(os.path.join(hostdir, "f")).st_mode) == 0o640
    assert stat.S_IMODE(os.stat(os.path.join(hostdir, "d")).st_mode) == 0o750


def test_default_umask_is_0022(env):
    assert kv_lines(env.sh("procinfo umask"))["umask"] == "0022"


# ---- rlimits, cwd, env, oom -----------------------------------------------------

def test_rlimits(env):
    rlimits = [
        {"type": "RLIMIT_NOFILE", "soft": 512, "hard": 2048},
        {"type": "RLIMIT_CORE", "soft": 0, "hard": 1 << 20},
        {"type": "RLIMIT_NPROC", "soft": 3000, "hard": 4000},
        {"type": "RLIMIT_MSGQUEUE", "soft": 100000, "hard": 200000},
        {"type": "RLIMIT_STACK", "soft": 4 << 20, "hard": 16 << 20},
        {"type": "RLIMIT_CPU", "soft": 3600, "hard": 7200},
    ]
    spec = make_spec(["sh", "-c", "ulimit -n; ulimit -Hn; procinfo rlimit"],
                     process__rlimits=rlimits)
    out = run_ok(env, spec)
    lines = out.splitlines()
    assert lines[0] == "512"
    assert lines[1] == "2048"
    kv = kv_lines(out)
    for r in rlimits:
        key = "rlimit." + r["type"][len("RLIMIT_"):]
        assert kv[key] == "%d,%d" % (r["soft"], r["hard"]), key


def test_default_spec_nofile(env):
    assert env.sh("ulimit -n").strip() == "1024"


def test_cwd(env):
    spec = make_spec(["sh", "-c", "pwd; procinfo cwd"], process__cwd="/tmp")
    out = run_ok(env, spec)
    assert out.splitlines()[0] == "/tmp"
    assert kv_lines(out)["cwd"] == "/tmp"


def test_cwd_is_created_when_missing(env):
    # runc creates a missing cwd (before the root is made read-only)
    spec = make_spec(["pwd"], process__cwd="/does/not/exist")
    assert run_ok(env, spec) == "/does/not/exist\n"


def test_env(env):
    spec = make_spec(["env"], process__env=[
        "PATH=/bin:/usr/bin", "FOO=bar baz", "EMPTY=", "HOME=/custom",
        "MULTI=a=b=c"])
    runtime_env = dict(os.environ, LEAKME="from-the-caller")
    rc, out, err = env.run(spec, env=runtime_env)
    assert rc == 0, err
    lines = out.splitlines()
    for var in ("PATH=/bin:/usr/bin", "FOO=bar baz", "EMPTY=", "HOME=/custom",
                "MULTI=a=b=c"):
        assert var in lines
    assert not any(l.startswith("LEAKME=") for l in lines)


def test_env_home_from_passwd_when_unset(env):
    # runc sets HOME from the user's /etc/passwd entry when env has none
    spec = make_spec(["env"], process__env=["PATH=/bin"],
                     process__user={"uid": USER_UID, "gid": USER_GID})
    assert "HOME=/home/user" in run_ok(env, spec).splitlines()


def test_args_path_lookup_uses_container_path(env):
    spec = make_spec(["procinfo", "pid"])  # /usr/local/bin, via spec PATH
    assert run_ok(env, spec) == "pid=1\n"


# (lowering the score needs CAP_SYS_RESOURCE, which the test hosts lack)
@pytest.mark.parametrize("score", [500, 1000, 0])
def test_oom_score_adj(env, score):
    spec = make_spec(["cat", "/proc/self/oom_score_adj"],
                     process__oomScoreAdj=score)
    assert run_ok(env, spec).strip() == str(score)


# ---- namespaces ------------------------------------------------------------------

NS_FILES = {"pid": "pid", "network": "net", "ipc": "ipc", "uts": "uts",
            "mount": "mnt", "cgroup": "cgroup", "user": "user"}


def ns_ids(env, spec=None, bundle=None):
    """{"pid": "pid:[4026...]", ...} as seen inside a container of spec."""
    script = "for n in %s; do echo $n=$(readlink /proc/self/ns/$n); done" % \
        " ".join(NS_FILES.values())
    if spec is None:
        spec = make_spec(["sh", "-c", script])
    else:
        spec["process"]["args"] = ["sh", "-c", script]
    return kv_lines(run_ok(env, spec, bundle=bundle))


def host_ns(name):
    return os.readlink("/proc/self/ns/" + name)


def test_default_namespaces(env):
    ids = ns_ids(env)
    for ns in ("pid", "net", "ipc", "uts", "mnt"):
        assert ids[ns] != host_ns(ns), ns
    for ns in ("cgroup", "user"):
        assert ids[ns] == host_ns(ns), ns


@pytest.mark.parametrize("nstype", ["network", "ipc", "uts", "pid"])
def test_namespace_not_requested_is_shared(env, nstype):
    spec = drop_namespace(make_spec(["true"]), nstype)
    if nstype == "uts":
        del spec["hostname"]  # a hostname needs a private uts namespace
    ids = ns_ids(env, spec=spec)
    assert ids[NS_FILES[nstype]] == host_ns(NS_FILES[nstype])


def test_cgroup_namespace(env):
    spec = make_spec(["true"])
    spec["linux"]["namespaces"].append({"type": "cgroup"})
    ids = ns_ids(env, spec=spec)
    assert ids["cgroup"] != host_ns("cgroup")


def test_join_namespaces_by_path(env):
    c1 = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", c1)
    pid1 = env.state(c1)["pid"]
    spec = make_spec(["true"])
    for n in spec["linux"]["namespaces"]:
        if n["type"] in ("network", "ipc", "uts"):
            n["path"] = "/proc/%d/ns/%s" % (pid1, NS_FILES[n["type"]])
    b2 = env.make_bundle("bundle2")
    script_ids = ns_ids(env, spec=spec, bundle=b2)
    for ns in ("net", "ipc", "uts"):
        assert script_ids[ns] == os.readlink("/proc/%d/ns/%s" % (pid1, ns)), ns
    assert script_ids["pid"] != os.readlink("/proc/%d/ns/pid" % pid1)


def test_pid_namespace(env):
    out = env.sh("echo $$; procinfo ppid; ps -o pid,comm; true")
    lines = out.splitlines()
    assert lines[0] == "1"
    assert lines[1] == "ppid=1"  # procinfo's parent is sh, pid 1
    procs = [l.split() for l in lines[3:] if l.strip()]
    assert [p[0] for p in procs][0] == "1"
    assert len(procs) == 2, procs  # sh and ps, nothing of the host
    assert {p[1] for p in procs} == {"sh", "ps"}


def test_network_namespace_has_only_lo(env):
    out = env.sh("ls /sys/class/net; echo --; cat /proc/net/dev; echo --; "
                 "cat /sys/class/net/lo/flags")
    net, dev, flags = out.split("--\n")
    assert net.split() == ["lo"]
    ifaces = [l.split(":")[0].strip() for l in dev.splitlines()[2:] if l.strip()]
    assert ifaces == ["lo"]
    assert int(flags.strip(), 16) & 1, "lo should be up"


def test_ipc_namespace_is_private(env):
    # A SysV message queue made on the host must not be visible inside.
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0
    qid = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    assert qid >= 0, os.strerror(ctypes.get_errno())
    try:
        with open("/proc/sysvipc/msg") as f:
            assert len(f.read().splitlines()) > 1  # the host sees it
        out = env.sh("cat /proc/sysvipc/msg")
        assert len(out.splitlines()) == 1, out  # the header line only
    finally:
        libc.msgctl(qid, IPC_RMID, None)


def test_hostname(env):
    before = os.uname().nodename
    out = env.sh("hostname; cat /proc/sys/kernel/hostname",
                 hostname="itest-host")
    assert out.splitlines() == ["itest-host", "itest-host"]
    assert os.uname().nodename == before


def test_domainname(env, agentsbx_only):
    # runc 1.1.5 ignores "domainname" (it came with runc 1.2)
    out = env.sh("cat /proc/sys/kernel/domainname", domainname="itest.example")
    assert out.strip() == "itest.example"


def test_sysctl(env):
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        host_forward = f.read().strip()
    out = env.sh("cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shm_rmid_forced "
                 "/proc/sys/kernel/msgmax",
                 linux__sysctl={"net.ipv4.ip_forward": "1",
                                "kernel.shm_rmid_forced": "1",
                                "kernel.msgmax": "12345"})
    assert out.split() == ["1", "1", "12345"]
    with open("/proc/sys/net/ipv4/ip_forward") as f:
        assert f.read().strip() == host_forward


# ---- root, masked and read-only paths ----------------------------------------

def test_root_readonly(env):
    out = env.sh("cat /proc/self/mountinfo; touch /newfile 2>&1; echo rc=$?")
    mounts = mountinfo(out)
    assert "ro" in mounts["/"]["opts"]
    assert "Read-only file system" in out
    assert "rc=1" in out


def test_root_writable(env):
    out = env.sh("cat /proc/self/mountinfo; echo data > /newfile; echo rc=$?",
                 root__readonly=False)
    assert "rw" in mountinfo(out)["/"]["opts"]
    assert "rc=0" in out
    with open(os.path.join(env.default_bundle(), "rootfs", "newfile")) as f:
        assert f.read() == "data\n"


def test_masked_paths(env):
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    with open(os.path.join(rootfs, "etc", "secret"), "w") as f:
        f.write("TOPSECRET\n")
    os.makedirs(os.path.join(rootfs, "secretdir"))
    with open(os.path.join(rootfs, "secretdir", "file"), "w") as f:
        f.write("TOPSECRET\n")
    spec = make_spec(["true"])
    masked = spec["linux"]["maskedPaths"] + ["/etc/secret", "/secretdir"]
    spec["linux"]["maskedPaths"] = masked
    script = ("for p in %s; do if [ -d $p ]; then echo \"$p=dir:$(ls -A $p | wc -l)\"; "
              "elif [ -e $p ]; then echo \"$p=file:$(cat $p 2>/dev/null | wc -c)\"; "
              "else echo \"$p=absent\"; fi; done" % " ".join(masked))
    spec["process"]["args"] = ["sh", "-c", script]
    got = kv_lines(run_ok(env, spec))
    for p in masked:
        assert got[p] in ("absent", "dir:0", "file:0"), (p, got[p])
    # those that exist on this host (and ours) must be there, but empty
    for p in masked:
        if p in ("/etc/secret", "/secretdir") or os.path.exists(p):
            assert got[p] != "absent", p
    assert got["/etc/secret"] == "file:0"
    assert got["/secretdir"] == "dir:0"


def test_masked_file_is_not_writable(env):
    spec = make_spec(["sh", "-c", "echo x > /etc/secret 2>&1; cat /etc/secret"],
                     root__readonly=False)
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    with open(os.path.join(rootfs, "etc", "secret"), "w") as f:
        f.write("TOPSECRET\n")
    spec["linux"]["maskedPaths"].append("/etc/secret")
    run_ok(env, spec)
    with open(os.path.join(rootfs, "etc", "secret")) as f:
        assert f.read() == "TOPSECRET\n"


def test_readonly_paths(env):
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    os.makedirs(os.path.join(rootfs, "data"))
    spec = make_spec(["sh", "-c",
                      "cat /proc/self/mountinfo; "
                      "echo x > /proc/sys/kernel/domainname; echo rc1=$?; "
                      "touch /data/x; echo rc2=$?; touch /tmp/x; echo rc3=$?"],
                     root__readonly=False)
    spec["linux"]["readonlyPaths"].append("/data")
    rc, out, err = env.run(spec)
    assert rc == 0, err
    kv = kv_lines(out)
    assert kv["rc1"] != "0" and kv["rc2"] != "0"
    assert kv["rc3"] == "0"
    assert err.count("Read-only file system") == 2, err
    mounts = mountinfo(out)
    assert "ro" in mounts["/proc/sys"]["opts"]
    assert "ro" in mounts["/data"]["opts"]
    if os.path.exists("/proc/sysrq-trigger"):
        assert "ro" in mounts["/proc/sysrq-trigger"]["opts"]


# ---- devices ---------------------------------------------------------------------

def stat_devices(env, paths, **changes):
    script = "for p in %s; do echo \"$p=$(stat -c '%%F|%%t|%%T|%%a|%%u|%%g' $p)\"; done" \
        % " ".join(paths)
    return kv_lines(env.sh(script, **changes))


def test_default_devices(env):
    want = {"/dev/null": (1, 3), "/dev/zero": (1, 5), "/dev/full": (1, 7),
            "/dev/random": (1, 8), "/dev/urandom": (1, 9), "/dev/tty": (5, 0)}
    got = stat_devices(env, list(want))
    for path, (major, minor) in want.items():
        ftype, ma, mi, mode, uid, gid = got[path].split("|")
        assert ftype == "character special file", path
        assert (int(ma, 16), int(mi, 16)) == (major, minor), path
        assert mode == "666", path


def test_default_device_links_and_mounts(env):
    out = env.sh("for l in /dev/fd /dev/stdin /dev/stdout /dev/stderr; do "
                 "echo $l=$(readlink $l); done; "
                 "echo ptmx=$(readlink /dev/ptmx || stat -c %t:%T /dev/ptmx); "
                 "test -c /dev/pts/ptmx && echo ptsptmx=ok; "
                 "test -d /dev/shm && echo shm=ok; cat /proc/self/mountinfo")
    kv = kv_lines(out)
    assert kv["/dev/fd"] == "/proc/self/fd"
    assert kv["/dev/stdin"] == "/proc/self/fd/0"
    assert kv["/dev/stdout"] == "/proc/self/fd/1"
    assert kv["/dev/stderr"] == "/proc/self/fd/2"
    assert kv["ptmx"] in ("pts/ptmx", "/dev/pts/ptmx", "5:2")
    assert kv["ptsptmx"] == "ok" and kv["shm"] == "ok"
    mounts = mountinfo(out)
    assert mounts["/dev/pts"]["fstype"] == "devpts"
    assert mounts["/dev/shm"]["fstype"] == "tmpfs"
    assert mounts["/dev"]["fstype"] == "tmpfs"
    assert mounts["/proc"]["fstype"] == "proc"
    assert mounts["/sys"]["fstype"] == "sysfs"


def test_default_devices_usable_with_deny_all(env):
    # The spec's device cgroup denies everything; the default devices must
    # still work.
    out = env.sh("echo x > /dev/null && echo null=ok; "
                 "echo zero=$(head -c 5 /dev/zero | wc -c); "
                 "echo urandom=$(head -c 5 /dev/urandom | wc -c); "
                 "echo random=$(head -c 5 /dev/random | wc -c); "
                 "echo x 2>&1 > /dev/full | grep -q 'No space' && echo full=ok; "
                 "true")
    kv = kv_lines(out)
    assert kv == {"null": "ok", "zero": "5", "urandom": "5", "random": "5",
                  "full": "ok"}, out


def test_linux_devices(env):
    devices = [
        {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229,
         "fileMode": 0o666, "uid": 0, "gid": 0},
        {"path": "/dev/loop-control", "type": "c", "major": 10, "minor": 237,
         "fileMode": 0o600, "uid": 0, "gid": 0},
        {"path": "/dev/myblk", "type": "b", "major": 7, "minor": 0,
         "fileMode": 0o640, "uid": USER_UID, "gid": USER_GID},
        {"path": "/dev/sub/dir/mynull", "type": "c", "major": 1, "minor": 3,
         "fileMode": 0o620, "uid": 0, "gid": 5},
    ]
    got = stat_devices(env, [d["path"] for d in devices], linux__devices=devices)
    for d in devices:
        ftype, ma, mi, mode, uid, gid = got[d["path"]].split("|")
        assert ftype == ("character special file" if d["type"] == "c"
                         else "block special file"), d["path"]
        assert (int(ma, 16), int(mi, 16)) == (d["major"], d["minor"]), d["path"]
        assert int(mode, 8) == d["fileMode"], d["path"]
        assert (int(uid), int(gid)) == (d["uid"], d["gid"]), d["path"]


def test_linux_devices_cgroup_allows_listed_device(env):
    devices = [{"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3,
                "fileMode": 0o666}]
    spec = make_spec(["sh", "-c", "echo x > /dev/mynull && echo ok"],
                     linux__devices=devices)
    spec["linux"]["resources"]["devices"].append(
        {"allow": True, "type": "c", "major": 1, "minor": 3, "access": "rwm"})
    assert run_ok(env, spec) == "ok\n"


# ---- mounts ---------------------------------------------------------------------

def test_tmpfs_mount_created_on_readonly_root(env):
    spec = make_spec(["sh", "-c", "cat /proc/self/mountinfo; "
                      "echo data > /mnt/scratch/deep/f && echo write=ok; "
                      "echo mode=$(stat -c %a /mnt/scratch/deep)"])
    add_mount(spec, "/mnt/scratch/deep", "tmpfs", "tmpfs",
              ["nosuid", "nodev", "noexec", "size=1m", "mode=1777"])
    out = run_ok(env, spec)
    m = mountinfo(out)["/mnt/scratch/deep"]
    assert m["fstype"] == "tmpfs"
    assert {"nosuid", "nodev", "noexec", "rw"} <= m["opts"]
    assert "size=1024k" in m["super"]
    kv = kv_lines(out)
    assert kv["write"] == "ok" and kv["mode"] == "1777"


def test_bind_mount_rw(env):
    hostdir = env.hostdir("shared")
    with open(os.path.join(hostdir, "hello"), "w") as f:
        f.write("from-host\n")
    spec = make_spec(["sh", "-c", "cat /data/hello; echo from-container > /data/out; "
                      "cat /proc/self/mountinfo"])
    add_mount(spec, "/data", "bind", hostdir, ["rbind", "rw"])
    out = run_ok(env, spec)
    assert out.splitlines()[0] == "from-host"
    assert "rw" in mountinfo(out)["/data"]["opts"]
    with open(os.path.join(hostdir, "out")) as f:
        assert f.read() == "from-container\n"


def test_bind_mount_ro(env):
    hostdir = env.hostdir("shared")
    with open(os.path.join(hostdir, "hello"), "w") as f:
        f.write("from-host\n")
    spec = make_spec(["sh", "-c", "cat /data/hello; echo x > /data/out; echo rc=$?; "
                      "cat /proc/self/mountinfo"])
    add_mount(spec, "/data", "bind", hostdir, ["bind", "ro"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out.splitlines()[0] == "from-host"
    assert kv_lines(out)["rc"] != "0"
    assert "Read-only file system" in err
    assert "ro" in mountinfo(out)["/data"]["opts"]
    assert not os.path.exists(os.path.join(hostdir, "out"))
    # the host's own view of the directory stays writable
    with open(os.path.join(hostdir, "host-write"), "w") as f:
        f.write("ok")


def test_bind_mount_file_onto_missing_path(env):
    hostdir = env.hostdir("files")
    src = os.path.join(hostdir, "app.conf")
    with open(src, "w") as f:
        f.write("key=value\n")
    spec = make_spec(["cat", "/etc/app/app.conf"])
    add_mount(spec, "/etc/app/app.conf", "bind", src, ["bind", "ro"])
    assert run_ok(env, spec) == "key=value\n"


def test_mount_options_nosuid_noexec_nodev(env):
    hostdir = env.hostdir("bin")
    rootfs = os.path.join(env.default_bundle(), "rootfs")
    shutil.copy2(os.path.join(rootfs, "usr", "local", "bin", "procinfo"),
                 os.path.join(hostdir, "prog"))
    spec = make_spec(["sh", "-c", "cat /proc/self/mountinfo; "
                      "/noexec/prog pid; echo noexec=$?; /exec/prog pid; echo exec=$?"])
    add_mount(spec, "/noexec", "bind", hostdir, ["bind", "nosuid", "noexec", "nodev"])
    add_mount(spec, "/exec", "bind", hostdir, ["bind"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    m = mountinfo(out)
    assert {"nosuid", "noexec", "nodev"} <= m["/noexec"]["opts"]
    assert not ({"noexec"} & m["/exec"]["opts"])
    kv = kv_lines(out)
    assert kv["noexec"] == "126", out
    assert "Permission denied" in err
    assert kv["exec"] == "0"


def test_mounts_in_order(env):
    # a later mount on top of an earlier one must win
    h1 = env.hostdir("one")
    h2 = env.hostdir("two")
    for d in (h1, h2):
        with open(os.path.join(d, "who"), "w") as f:
            f.write(os.path.basename(d) + "\n")
    spec = make_spec(["cat", "/m/who", "/m/sub/who"])
    add_mount(spec, "/m", "bind", h1, ["rbind", "ro"])
    os.makedirs(os.path.join(h1, "sub"))
    add_mount(spec, "/m/sub", "bind", h2, ["rbind", "ro"])
    assert run_ok(env, spec) == "one\ntwo\n"
