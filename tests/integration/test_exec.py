# SPDX-License-Identifier: Apache-2.0
"""`exec`: a new process in a running container -- output and exit status,
the flags (-u, -e, --cwd, --additional-gids, --cap, --no-new-privs,
--preserve-fds, --process, --detach, --pid-file), what the process joins
(pid, net, mount ns, cgroup, seccomp filter, rlimits), signals, `ps`, and
the CVE-2019-5736 shape (nothing in the container can get at the runtime's
executable through /proc/PID/exe)."""

import json
import os
import shutil
import signal
import time

import pytest

from conftest import (_MYPID, USER_GID, USER_UID, _stat_fields, add_mount, cap_mask,
                      is_agentsbx, kv_lines, make_spec, pid_alive, proc_status, run_cmd,
                      wait_for)

DEFAULT_CAPS = ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
NS_KINDS = ["pid", "net", "mnt", "ipc", "uts", "cgroup", "user"]


def start_container(env, spec=None, hostdir=None, bundle=None, **changes):
    """create + start a container whose init sleeps; return its id.  With
    hostdir, that host directory is bind-mounted at /h."""
    if spec is None:
        spec = make_spec(["sleep", "1000"], **changes)
    if hostdir is not None:
        add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    cid = env.create(spec, bundle=bundle)
    env.rt("start", cid)
    env.wait_status(cid, "running")
    return cid


def exec_in(env, cid, argv, flags=(), check=True, **kw):
    """`exec FLAGS... CID ARGV...`; return (rc, out, err)."""
    rc, out, err = env.rt("exec", *flags, cid, *argv, check=False, **kw)
    if check:
        assert rc == 0, "exec %s %s -> rc %d\nstdout: %s\nstderr: %s" % (
            " ".join(flags), " ".join(argv), rc, out, err)
    return rc, out, err


def sh_in(env, cid, script, flags=(), **kw):
    return exec_in(env, cid, ["sh", "-c", script], flags, **kw)[1]


def init_pid(env, cid):
    return env.state(cid)["pid"]


def ns_of(pid, kind):
    try:
        return os.readlink("/proc/%d/ns/%s" % (pid, kind))
    except FileNotFoundError:
        return None


def read_pid_file(path):
    with open(path) as f:
        text = f.read()
    assert text.strip().isdigit(), "pid file %s: %r" % (path, text)
    return int(text)


def exec_detached(env, cid, argv, flags=()):
    """exec -d --pid-file: return the host pid of the process."""
    pidfile = os.path.join(env.tmp, "exec-%d.pid" % time.monotonic_ns())
    exec_in(env, cid, argv, ["--detach", "--pid-file", pidfile] + list(flags))
    pid = read_pid_file(pidfile)
    f = _stat_fields(pid)
    if f is not None:
        env.pids[pid] = f[2]  # the teardown checks it is gone
    return pid


def ps_json(env, cid):
    rc, out, err = env.rt("ps", "--format", "json", cid)
    return sorted(json.loads(out))


# ---- output, status, errors ------------------------------------------------------

def test_exec_output_and_exit_status(env):
    cid = start_container(env)
    rc, out, err = exec_in(env, cid, ["sh", "-c", "echo out; echo err >&2; exit 5"],
                           check=False)
    assert rc == 5, err
    assert out == "out\n"
    assert "err\n" in err
    rc, out, err = exec_in(env, cid, ["echo", "a b", "c"])
    assert out == "a b c\n"
    assert env.status(cid) == "running"


def test_exec_stdin(env):
    cid = start_container(env)
    rc, out, err = exec_in(env, cid, ["cat"], input="from-stdin\n")
    assert out == "from-stdin\n"


def test_exec_missing_program(env):
    cid = start_container(env)
    rc, out, err = exec_in(env, cid, ["/no/such/program"], check=False)
    assert rc != 0
    assert "/no/such/program" in err, err
    assert ps_json(env, cid) == [init_pid(env, cid)]


def test_exec_into_created_container_fails(env, agentsbx_only):
    # (runc 1.1.5 runs it, before the container's own process)
    cid = env.create(make_spec(["sleep", "1000"]))
    rc, out, err = exec_in(env, cid, ["sh", "-c", "echo ran"], check=False)
    assert rc != 0
    assert "ran" not in out
    assert "created" in err, err
    assert env.status(cid) == "created"
    assert ps_json(env, cid) == [init_pid(env, cid)]


def test_exec_into_stopped_container_fails(env):
    cid = env.create(make_spec(["true"]))
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    rc, out, err = exec_in(env, cid, ["sh", "-c", "echo ran"], check=False)
    assert rc != 0
    assert "ran" not in out
    assert "stopped" in err, err


def test_exec_into_missing_container_fails(env):
    rc, out, err = exec_in(env, env.new_id(), ["true"], check=False)
    assert rc != 0
    assert "does not exist" in err, err


def test_exec_into_paused_container_fails(env):
    cid = start_container(env)
    env.rt("pause", cid)
    try:
        rc, out, err = exec_in(env, cid, ["sh", "-c", "echo ran"], check=False,
                               timeout=10)
        assert rc != 0
        assert "paused" in err, err
    finally:
        env.rt("resume", cid)


# ---- the flags -------------------------------------------------------------------

def test_exec_user(env):
    cid = start_container(env)
    out = sh_in(env, cid, "procinfo uid gid groups; id -u; id -g",
                ["-u", "%d:%d" % (USER_UID, USER_GID)])
    kv = kv_lines(out)
    assert kv["uid"] == "%d,%d,%d" % ((USER_UID,) * 3)
    assert kv["gid"] == "%d,%d,%d" % ((USER_GID,) * 3)
    assert kv["groups"] == ""
    lines = [l for l in out.splitlines() if "=" not in l]
    assert lines == [str(USER_UID), str(USER_GID)]


def test_exec_user_uid_only(env):
    cid = start_container(env)
    kv = kv_lines(sh_in(env, cid, "procinfo uid gid", ["--user", str(USER_UID)]))
    assert kv["uid"] == "%d,%d,%d" % ((USER_UID,) * 3)
    assert kv["gid"] == "0,0,0"


def test_exec_additional_gids(env):
    # runc's form: the flag once per group
    cid = start_container(env)
    kv = kv_lines(sh_in(env, cid, "procinfo uid gid groups",
                        ["-u", "%d:%d" % (USER_UID, USER_GID),
                         "--additional-gids", "5", "--additional-gids", "20"]))
    assert kv["uid"] == "%d,%d,%d" % ((USER_UID,) * 3)
    assert sorted(int(g) for g in kv["groups"].split(",")) == [5, 20], kv


def test_exec_additional_gids_comma_list(env, agentsbx_only):
    cid = start_container(env)
    kv = kv_lines(sh_in(env, cid, "procinfo uid gid groups",
                        ["-u", "%d:%d" % (USER_UID, USER_GID),
                         "--additional-gids", "5,20"]))
    assert sorted(int(g) for g in kv["groups"].split(",")) == [5, 20], kv


def test_exec_env(env):
    cid = start_container(env)
    out = sh_in(env, cid, "env", ["-e", "FOO=bar", "-e", "TERM=dumb",
                                  "-e", "WITH_SPACE=a b"])
    lines = out.splitlines()
    assert "FOO=bar" in lines
    assert "WITH_SPACE=a b" in lines
    assert "TERM=dumb" in lines and "TERM=xterm" not in lines
    # the container's process env is kept
    assert any(l.startswith("PATH=/usr/local/sbin") for l in lines)
    assert "X=long-form" in sh_in(env, cid, "env", ["--env", "X=long-form"]).splitlines()


def test_exec_cwd(env):
    cid = start_container(env)
    out = sh_in(env, cid, "pwd; procinfo cwd", ["--cwd", "/tmp"])
    assert out.splitlines()[0] == "/tmp"
    assert kv_lines(out)["cwd"] == "/tmp"
    # default: the container's process cwd
    assert sh_in(env, cid, "pwd").strip() == "/"


def test_exec_cap(env):
    cid = start_container(env)
    st = proc_status(sh_in(env, cid, "cat /proc/self/status", ["--cap", "CAP_NET_RAW"]))
    want = cap_mask(DEFAULT_CAPS + ["CAP_NET_RAW"])
    assert int(st["CapEff"], 16) == want, st["CapEff"]
    assert int(st["CapBnd"], 16) == want, st["CapBnd"]
    assert int(st["CapPrm"], 16) == want, st["CapPrm"]
    # without the flag: the container's own set
    st = proc_status(sh_in(env, cid, "cat /proc/self/status"))
    assert int(st["CapEff"], 16) == cap_mask(DEFAULT_CAPS)
    assert int(st["CapBnd"], 16) == cap_mask(DEFAULT_CAPS)


def test_exec_cap_several(env):
    cid = start_container(env)
    st = proc_status(sh_in(env, cid, "cat /proc/self/status",
                           ["--cap", "CAP_NET_RAW", "--cap", "CAP_SYS_CHROOT"]))
    assert int(st["CapEff"], 16) == cap_mask(DEFAULT_CAPS + ["CAP_NET_RAW",
                                                             "CAP_SYS_CHROOT"])


def test_exec_no_new_privs(env):
    cid = start_container(env, process__noNewPrivileges=False)
    assert proc_status(sh_in(env, cid, "cat /proc/self/status"))["NoNewPrivs"] == "0"
    st = proc_status(sh_in(env, cid, "cat /proc/self/status", ["--no-new-privs"]))
    assert st["NoNewPrivs"] == "1"


def test_exec_inherits_no_new_privs_of_the_process(env):
    cid = start_container(env)  # the default spec has noNewPrivileges: true
    assert proc_status(sh_in(env, cid, "cat /proc/self/status"))["NoNewPrivs"] == "1"


def test_exec_preserve_fds(env):
    cid = start_container(env)
    a = os.path.join(env.tmp, "fd-a")
    b = os.path.join(env.tmp, "fd-b")
    with open(a, "w") as f:
        f.write("content-a\n")
    with open(b, "w") as f:
        f.write("content-b\n")
    script = ("procinfo fd; for n in 3 4 5; do [ -e /proc/self/fd/$n ] && "
              "echo c$n=$(cat <&$n); done; true")
    # the host's /bin/sh opens fds 3, 4 and 9, then execs the runtime
    rc, out, err = run_cmd(["/bin/sh", "-c", 'exec 3<"%s" 4<"%s" 9<"%s"; exec "$@"'
                            % (a, b, a), "sh"] +
                           env.argv("exec", "--preserve-fds", "2", cid,
                                    "sh", "-c", script))
    assert rc == 0, err
    kv = kv_lines(out)
    assert sorted(k for k in kv if k.startswith("fd.")) == \
        ["fd.0", "fd.1", "fd.2", "fd.3", "fd.4"], out
    assert kv["c3"] == "content-a" and kv["c4"] == "content-b"
    # without the flag, none of them
    rc, out, err = run_cmd(["/bin/sh", "-c", 'exec 3<"%s" 4<"%s"; exec "$@"' % (a, b),
                            "sh"] + env.argv("exec", cid, "procinfo", "fd"))
    assert rc == 0, err
    assert sorted(k for k in kv_lines(out) if k.startswith("fd.")) == \
        ["fd.0", "fd.1", "fd.2"], out


def test_exec_rlimits_of_the_process(env):
    rlimits = [{"type": "RLIMIT_NOFILE", "soft": 700, "hard": 900},
               {"type": "RLIMIT_CORE", "soft": 0, "hard": 4096}]
    cid = start_container(env, process__rlimits=rlimits)
    kv = kv_lines(sh_in(env, cid, "procinfo rlimit"))
    assert kv["rlimit.NOFILE"] == "700,900"
    assert kv["rlimit.CORE"] == "0,4096"


# ---- --process FILE, --detach, --pid-file ---------------------------------------------

def containerd_process(args, **changes):
    """A process JSON as containerd's shim writes it for `runc exec
    --process`."""
    p = {
        "terminal": False,
        "user": {"uid": USER_UID, "gid": USER_GID, "additionalGids": [5]},
        "args": list(args),
        "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "HOSTNAME=box", "FROM_PROCESS_JSON=1"],
        "cwd": "/tmp",
        "capabilities": {"bounding": ["CAP_KILL", "CAP_CHOWN"],
                         "effective": ["CAP_KILL"],
                         "permitted": ["CAP_KILL"]},
        "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 512, "soft": 256}],
        "noNewPrivileges": True,
    }
    p.update(changes)
    return p


def write_process(env, proc, name="process.json"):
    path = os.path.join(env.tmp, name)
    with open(path, "w") as f:
        json.dump(proc, f)
    return path


PROCESS_SCRIPT = ("procinfo uid gid groups cwd rlimit.NOFILE nonewprivs; env; "
                  "grep -E '^Cap(Eff|Bnd|Prm)' /proc/self/status")


def check_process_output(out):
    kv = kv_lines(out)
    assert kv["uid"] == "%d,%d,%d" % ((USER_UID,) * 3), out
    assert kv["gid"] == "%d,%d,%d" % ((USER_GID,) * 3), out
    assert kv["groups"] == "5", out
    assert kv["cwd"] == "/tmp", out
    assert kv["rlimit.NOFILE"] == "256,512", out
    assert kv["nonewprivs"] == "1", out
    assert kv["FROM_PROCESS_JSON"] == "1", out
    assert "TERM" not in kv, "the container's env leaked into --process: %s" % out
    st = proc_status(out)
    assert int(st["CapBnd"], 16) == cap_mask(["CAP_KILL", "CAP_CHOWN"]), out
    # a non-root user execs sh: no ambient set, so no capability survives
    assert int(st["CapEff"], 16) == 0, out


def test_exec_process_file(env):
    cid = start_container(env)
    path = write_process(env, containerd_process(["sh", "-c", PROCESS_SCRIPT + "; exit 3"]))
    rc, out, err = env.rt("exec", "--process", path, cid, check=False)
    assert rc == 3, err
    check_process_output(out)


def test_exec_process_file_detach_pid_file(env):
    hostdir = env.hostdir("h")
    cid = start_container(env, hostdir=hostdir)
    script = ("{ " + PROCESS_SCRIPT + "; } > /h/out; touch /h/started; "
              "while [ ! -e /h/go ]; do sleep 0.05; done; exit 0")
    path = write_process(env, containerd_process(["sh", "-c", script]))
    pidfile = os.path.join(env.tmp, "exec.pid")
    t0 = time.monotonic()
    env.rt("exec", "--process", path, "--detach", "--pid-file", pidfile, cid,
           timeout=10)
    assert time.monotonic() - t0 < 5, "exec --detach waited for the process"
    pid = read_pid_file(pidfile)
    env.pids[pid] = _stat_fields(pid)[2]
    wait_for(lambda: os.path.exists(os.path.join(hostdir, "started")),
             what="the exec'd process to start")
    # a live process, in the container, re-parented to our subreaper (as
    # containerd's shim expects) now that the runtime has exited
    assert pid_alive(pid)
    assert ns_of(pid, "pid") == ns_of(init_pid(env, cid), "pid")
    assert _stat_fields(pid)[1] == _MYPID
    assert pid in ps_json(env, cid)
    with open(os.path.join(hostdir, "out")) as f:
        check_process_output(f.read())
    open(os.path.join(hostdir, "go"), "w").close()
    wait_for(lambda: not pid_alive(pid), what="the exec'd process to exit")
    wait_for(lambda: _stat_fields(pid) is None, what="the exec'd process to be reaped")
    assert ps_json(env, cid) == [init_pid(env, cid)]
    assert env.status(cid) == "running"


def test_exec_process_file_flags_apply_on_top(env, agentsbx_only):
    # (runc 1.1.5 ignores --cwd and --env when --process is given)
    cid = start_container(env)
    path = write_process(env, containerd_process(["sh", "-c", "pwd; env"]))
    rc, out, err = env.rt("exec", "--process", path, "--cwd", "/", "-e", "EXTRA=1",
                          cid, check=False)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "/"
    assert "EXTRA=1" in lines and "FROM_PROCESS_JSON=1" in lines


def test_exec_process_file_invalid(env):
    cid = start_container(env)
    path = os.path.join(env.tmp, "bad.json")
    with open(path, "w") as f:
        f.write('{"args": ["true"], "cwd": "relative"}')
    rc, out, err = env.rt("exec", "--process", path, cid, check=False)
    assert rc != 0
    assert "cwd" in err.lower(), err
    rc, out, err = env.rt("exec", "--process", os.path.join(env.tmp, "missing.json"),
                          cid, check=False)
    assert rc != 0 and "missing.json" in err, err
    assert ps_json(env, cid) == [init_pid(env, cid)]


def test_exec_detach_returns_at_once(env):
    cid = start_container(env)
    t0 = time.monotonic()
    pid = exec_detached(env, cid, ["sleep", "1000"])
    assert time.monotonic() - t0 < 5
    assert pid_alive(pid)
    assert sorted(ps_json(env, cid)) == sorted([init_pid(env, cid), pid])


# ---- what the process joins -----------------------------------------------------------

def test_exec_joins_the_containers_namespaces(env):
    cid = start_container(env, spec=make_spec(["sleep", "1000"], hostname="exec-box"))
    init = init_pid(env, cid)
    pid = exec_detached(env, cid, ["sleep", "1000"])
    for kind in NS_KINDS:
        assert ns_of(pid, kind) == ns_of(init, kind), kind
    for kind in ("pid", "net", "mnt", "ipc", "uts"):
        assert ns_of(pid, kind) != ns_of(os.getpid(), kind), kind


def test_exec_pid_namespace(env):
    cid = start_container(env)
    out = sh_in(env, cid, "echo self=$$; ps -o pid,args")
    lines = out.splitlines()
    assert lines[0] != "self=1"
    procs = {int(l.split()[0]): l.split(None, 1)[1] for l in lines[2:]}
    assert procs.get(1, "").startswith("sleep 1000"), out
    # the init, this shell, its ps: nothing of the host's
    assert len(procs) <= 3, out


def test_exec_network_namespace_only_lo(env):
    cid = start_container(env)
    out = sh_in(env, cid, "cat /proc/net/dev")
    ifaces = sorted(l.split(":")[0].strip() for l in out.splitlines()[2:])
    assert ifaces == ["lo"], out


def test_exec_mount_namespace_sees_container_files(env):
    bundle = env.make_bundle()
    with open(os.path.join(bundle, "rootfs", "marker-in-rootfs"), "w") as f:
        f.write("rootfs-marker\n")
    cid = start_container(env, bundle=bundle)
    out = sh_in(env, cid, "cat /marker-in-rootfs; hostname; "
                "grep -c ' / ' /proc/self/mountinfo")
    assert out.splitlines()[0] == "rootfs-marker"
    assert out.splitlines()[1] == "runc"  # the default spec's hostname
    st = os.stat(os.path.join(bundle, "rootfs"))
    out = sh_in(env, cid, "stat -c %d:%i /")
    assert out.strip() == "%d:%d" % (st.st_dev, st.st_ino)


def cgroup_lines(pid):
    with open("/proc/%d/cgroup" % pid) as f:
        return sorted(l.strip() for l in f if l.strip())


def cgroup_procs_files(pid):
    """The cgroup.procs files on the host of every hierarchy pid is in."""
    files = []
    for line in cgroup_lines(pid):
        hid, ctrls, path = line.split(":", 2)
        if hid == "0":
            base = "/sys/fs/cgroup/unified"
            if not os.path.isdir(base) or not os.path.exists(os.path.join(base, "cgroup.procs")):
                base = "/sys/fs/cgroup"
        else:
            name = ctrls.split(",")[0]
            if name.startswith("name="):
                name = name[len("name="):]
            base = os.path.join("/sys/fs/cgroup", name)
        f = os.path.join(base, path.lstrip("/"), "cgroup.procs")
        if os.path.exists(f):
            files.append(f)
    return files


def test_exec_joins_the_containers_cgroup(env):
    cid = start_container(env)
    init = init_pid(env, cid)
    pid = exec_detached(env, cid, ["sleep", "1000"])
    assert cgroup_lines(pid) == cgroup_lines(init)
    files = cgroup_procs_files(init)
    assert files, cgroup_lines(init)
    for f in files:
        with open(f) as fh:
            pids = [int(x) for x in fh.read().split()]
        assert pid in pids and init in pids, (f, pids)
    # and the foreground exec too, seen from inside
    inside = sh_in(env, cid, "cat /proc/self/cgroup")
    outside = "\n".join(cgroup_lines(init))
    assert sorted(inside.split()) == sorted(outside.split())


@pytest.fixture
def seccomp_cache(env):
    """The runtime keeps compiled seccomp programs in STATEROOT/.seccomp-cache
    (runtime/seccomp/cache.c), by design: not a container's leftover.
    Removed before the teardown looks for leftovers."""
    yield os.path.join(env.root, ".seccomp-cache")
    shutil.rmtree(os.path.join(env.root, ".seccomp-cache"), ignore_errors=True)


SECCOMP_DENY_MKDIR = {
    "defaultAction": "SCMP_ACT_ALLOW",
    "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO",
                  "errnoRet": 1}],
}


@pytest.mark.parametrize("nnp", [True, False])
def test_exec_gets_the_containers_seccomp_filter(env, seccomp_cache, nnp):
    spec = make_spec(["sleep", "1000"], root__readonly=False,
                     process__noNewPrivileges=nnp)
    spec["linux"]["seccomp"] = SECCOMP_DENY_MKDIR
    cid = start_container(env, spec=spec)
    out = sh_in(env, cid, "grep -E '^Seccomp' /proc/self/status; "
                "mkdir /tmp/d 2>&1 && echo mkdir=ok || echo mkdir=failed; "
                "touch /tmp/f && echo touch=ok")
    st = proc_status(out)
    assert st["Seccomp"] == "2", out
    assert "mkdir=failed" in out and "Operation not permitted" in out, out
    assert "touch=ok" in out
    # also with --process, and with the flags that change credentials
    path = write_process(env, containerd_process(
        ["sh", "-c", "grep ^Seccomp: /proc/self/status; mkdir /tmp/e || echo denied"]))
    rc, out, err = env.rt("exec", "--process", path, cid, check=False)
    assert rc == 0, err
    assert proc_status(out)["Seccomp"] == "2" and "denied" in out, out


def test_exec_without_seccomp_in_config(env):
    cid = start_container(env, root__readonly=False)
    out = sh_in(env, cid, "grep ^Seccomp: /proc/self/status; mkdir /tmp/d && echo ok")
    assert proc_status(out)["Seccomp"] == "0"
    assert "ok" in out


# ---- signals --------------------------------------------------------------------

def test_exec_killed_by_signal_exits_128_plus_n(env):
    cid = start_container(env)
    rc, out, err = exec_in(env, cid, ["sh", "-c", "kill -TERM $$"], check=False)
    assert rc == 143, (rc, err)
    rc, out, err = exec_in(env, cid, ["sh", "-c", "kill -KILL $$"], check=False)
    assert rc == 137, (rc, err)
    assert env.status(cid) == "running"


def test_exec_forwards_signals(env):
    hostdir = env.hostdir("h")
    cid = start_container(env, hostdir=hostdir)
    p = env.rt_spawn("exec", cid, "sh", "-c",
                     "trap 'echo got-term; exit 42' TERM; touch /h/ready; "
                     "while :; do sleep 0.05; done")
    wait_for(lambda: os.path.exists(os.path.join(hostdir, "ready")),
             what="the exec'd shell")
    os.kill(p.pid, signal.SIGTERM)
    rc, out, err = p.wait(timeout=10)
    assert rc == 42, (rc, out, err)
    assert "got-term" in out


def test_exec_process_dies_with_the_container(env):
    cid = start_container(env)
    pid = exec_detached(env, cid, ["sleep", "1000"])
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")
    wait_for(lambda: not pid_alive(pid), what="the exec'd process to die")


# ---- ps ----------------------------------------------------------------------

def test_ps_lists_exactly_the_container_pids(env):
    cid = start_container(env)
    init = init_pid(env, cid)
    assert ps_json(env, cid) == [init]
    a = exec_detached(env, cid, ["sleep", "1000"])
    b = exec_detached(env, cid, ["sleep", "1001"])
    assert ps_json(env, cid) == sorted([init, a, b])
    rc, out, err = env.rt("ps", cid)
    lines = out.splitlines()
    header = lines[0].split()
    assert "PID" in header, out
    col = header.index("PID")
    pids = sorted(int(l.split()[col]) for l in lines[1:])
    assert pids == sorted([init, a, b]), out
    assert any("sleep 1001" in l for l in lines[1:]), out


def test_ps_of_created_and_stopped(env):
    cid = env.create(make_spec(["true"]))
    assert ps_json(env, cid) == [init_pid(env, cid)]
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    rc, out, err = env.rt("ps", "--format", "json", cid, check=False)
    assert rc != 0 or json.loads(out) in ([], None), (rc, out, err)


# ---- CVE-2019-5736: nothing inside reaches the runtime's executable --------------------

def probe_exes(env, cid, flags=()):
    """open_exe for every pid visible in the container; {pid: fields}."""
    out = sh_in(env, cid, "open_exe", flags)
    res = {}
    for line in out.splitlines():
        kv = dict(f.split("=", 1) for f in line.split())
        res[int(kv["pid"])] = kv
    return res


def assert_no_writable_exe(res):
    for pid, kv in res.items():
        assert kv["wronly"] != "OK", "pid %d: /proc/%d/exe opened for writing: %s" % (
            pid, pid, kv)
        assert kv["reopen"] != "OK", "pid %d: /proc/%d/exe re-opened for writing: %s" % (
            pid, pid, kv)


def test_exe_not_writable_with_long_running_exec(env):
    cid = start_container(env)
    exec_detached(env, cid, ["sleep", "1000"])
    res = probe_exes(env, cid)
    assert len(res) >= 2, res  # init and the detached sleep (not open_exe itself)
    assert_no_writable_exe(res)


def test_exec_has_no_window_the_image_can_hold_open(env, agentsbx_only):
    # The image cannot hold an exec in the window between entering the
    # container and execve, where the process is still a copy of the
    # runtime: the HOME lookup, once made from the container's /etc/passwd
    # there (a FIFO held it open, and this test probed /proc/PID/exe in that
    # window), reads a regular file only, with O_NONBLOCK.  A FIFO fails the
    # exec at once; no runtime-phase process stays in the container.  (The
    # window that remains, between setns and execve, is raced by
    # tests/integration/test_policy_exec_race.py.)
    bundle = env.make_bundle()
    cid = start_container(env, bundle=bundle, root__readonly=False)
    init = init_pid(env, cid)
    passwd = os.path.join(bundle, "rootfs", "etc", "passwd")
    os.unlink(passwd)
    os.mkfifo(passwd, 0o644)
    path = write_process(env, containerd_process(
        ["sleep", "1000"], user={"uid": 0, "gid": 0},
        env=["PATH=/bin:/usr/bin"], capabilities={}, rlimits=[]))
    rc, out, err = env.rt("exec", "--process", path, "--detach", cid, check=False,
                          timeout=15)
    assert rc != 0, "exec succeeded with a FIFO for /etc/passwd"
    assert "/etc/passwd is not a regular file" in err, err
    assert ps_json(env, cid) == [init]


def ns_pid(pid):
    """pid as its own (innermost) pid namespace sees it."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    raise AssertionError("no NSpid for %d" % pid)


def proc_exe_is_busybox(pid):
    try:
        return os.path.basename(os.readlink("/proc/%d/exe" % pid)) == "busybox"
    except OSError:
        return False


def test_exec_program_is_dumpable_after_execve(env):
    # After execve the kernel resets dumpable for the new image: the exec'd
    # program itself is an ordinary process of the container.
    cid = start_container(env)
    assert kv_lines(sh_in(env, cid, "procinfo dumpable"))["dumpable"] == "1"


def test_exe_of_created_init_is_out_of_reach(env, runtime_version):
    # A created container's init is still a copy of the runtime, waiting
    # for `start`.  A second container that shares its pid namespace sees
    # it as pid 1: it must not get hold of its /proc/1/exe (for agentsbx:
    # the runtime's binary on the host; runc 1.1.5's is a sealed memfd).
    # (Besides the init being non-dumpable, the kernel's capability rule
    # protects it too: its permitted set is not a subset of the prober's.)
    cid = env.create(make_spec(["sleep", "1000"]))
    init = init_pid(env, cid)
    spec = make_spec(["open_exe"])
    for n in spec["linux"]["namespaces"]:
        if n["type"] == "pid":
            n["path"] = "/proc/%d/ns/pid" % init
    rc, out, err = env.run(spec, bundle=env.make_bundle("bundle2"))
    assert rc == 0, err
    res = {}
    for line in out.splitlines():
        kv = dict(f.split("=", 1) for f in line.split())
        res[int(kv["pid"])] = kv
    assert 1 in res, "the created init is not visible: %s" % out
    assert_no_writable_exe(res)
    assert res[1]["link"] != os.path.realpath(env.runtime), out
    if is_agentsbx(runtime_version):
        assert res[1]["path"] != "OK", "/proc/1/exe of the created init can be opened: %s" % out
        assert res[1]["link"].startswith("!"), "/proc/1/exe of the created init: %s" % out
    assert env.status(cid) == "created"
