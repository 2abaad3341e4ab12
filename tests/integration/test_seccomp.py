# SPDX-License-Identifier: Apache-2.0
"""linux.seccomp from inside the container: the static probes
tests/tools/syscall_probe.c (a fixed list of escape-relevant syscalls, each
made harmless by its arguments) and tests/tools/rawsys.c (any syscall by
number) print the errno each call returned, and the tests check them under
several profiles:

  - Docker's default profile (tests/unit/data/seccomp/docker-default.json):
    the dangerous calls answer EPERM where, without a filter, the kernel
    answers something else (EFAULT, EINVAL, ...: its own checks of the
    harmless arguments), clone3 answers ENOSYS, and so does a syscall the
    kernel has but the profile is too old to name;
  - defaultAction ERRNO with defaultErrnoRet, rules with errnoRet;
  - SCMP_ACT_KILL_PROCESS (the container exits 128+31);
  - argument filters (EQ, MASKED_EQ, several indexes: AND, one index
    repeated: OR);
  - /proc/self/status (Seccomp, Seccomp_filters, the five capability sets,
    NoNewPrivs) for several configurations;
  - SCMP_ACT_NOTIFY end to end: a listener at listenerPath gets the fd and
    the container process state, answers the notified calls, and the
    container sees the answers;
  - the compiled-program cache under <root>/.seccomp-cache: the second
    start compiles nothing, a stale or tampered entry is recompiled.
"""

import array
import errno
import fcntl
import json
import os
import select
import shutil
import socket
import stat
import struct
import threading
import time

import pytest

from conftest import cap_mask, make_spec, proc_status, run_cmd, write_spec

_HERE = os.path.dirname(os.path.abspath(__file__))
DOCKER_PROFILE = os.path.join(os.path.dirname(_HERE), "unit", "data", "seccomp",
                              "docker-default.json")

# x86_64 syscall numbers used with rawsys
NR = {"uname": 63, "getppid": 110, "personality": 135, "fchdir": 81,
      "socket": 41, "dup3": 292, "keyctl": 250}


def docker_profile(**changes):
    with open(DOCKER_PROFILE) as f:
        p = json.load(f)
    p.update(changes)
    return p


@pytest.fixture(autouse=True)
def _x86_64_only():
    if os.uname().machine != "x86_64":
        pytest.skip("syscall numbers and profiles here are x86_64's")


def probe_lines(text):
    """'NAME RESULT' lines -> {NAME: RESULT} (names may hold spaces? no:
    probe names have none; rawsys calls are NR,ARGS)."""
    out = {}
    for line in text.splitlines():
        if " " in line and "=" not in line.split(" ", 1)[0] and ":" not in line:
            name, res = line.rsplit(" ", 1)
            out[name] = res
    return out


def run_probe(env, seccomp=None, args=None, check=True, **changes):
    """Run args (default: syscall_probe, everything) in a container with
    this linux.seccomp (None: none); return (rc, {name: result}, stdout,
    stderr)."""
    spec = make_spec(args or ["syscall_probe"], **changes)
    if seccomp is not None:
        spec["linux"]["seccomp"] = seccomp
    rc, out, err = env.run(spec)
    if check:
        assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    return rc, probe_lines(out), out, err


# ---- Docker's default profile ------------------------------------------------------

# Denied by the profile: EPERM under it.
DOCKER_DENIED = [
    "mount", "umount2", "unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)", "setns",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "kexec_load", "init_module", "finit_module", "delete_module",
    "clock_settime", "settimeofday", "open_by_handle_at", "chroot", "acct",
    "pivot_root", "swapon", "reboot", "syslog",
    "socket(AF_VSOCK)",                   # socket is allowed unless arg0 == 40
    "personality(READ_IMPLIES_EXEC)",     # personality only with its 5 values
]
# Allowed by the profile: whatever the kernel says, the same as without it.
DOCKER_ALLOWED = [
    "process_vm_readv", "name_to_handle_at", "mknod(char)", "ptrace",
    "personality(query)", "socket(AF_NETLINK,NETLINK_ROUTE)", "ioctl(TIOCSTI)",
    "syscall(1000)",
]


@pytest.fixture
def baseline(env):
    """The probe without any filter: the kernel's own answers."""
    rc, res, out, err = run_probe(env)
    return res


def test_docker_profile_probe(env, baseline):
    rc, res, out, err = run_probe(env, docker_profile())
    for name in DOCKER_DENIED:
        assert res[name] == "EPERM", (name, res[name], baseline[name])
    # Not vacuous: most of them answer something else without the filter
    # (EFAULT, EINVAL, EBADF, ok, ...: the kernel got the call).
    unfiltered = [n for n in DOCKER_DENIED if baseline[n] != "EPERM"]
    assert len(unfiltered) >= 15, {n: baseline[n] for n in DOCKER_DENIED}
    for name in DOCKER_ALLOWED:
        assert res[name] == baseline[name], (name, res[name], baseline[name])
    # clone3: ENOSYS (the profile says errnoRet 38), so that libcs fall back
    # to clone, which the profile filters by flags.
    assert baseline["clone3"] == "ok"
    assert res["clone3"] == "ENOSYS" and res["clone3(CLONE_NEWUSER)"] == "ENOSYS", res
    # A number no kernel has: ENOSYS, not the default EPERM.
    assert res["syscall(1000)"] == "ENOSYS"
    assert res["syscall(470)"] == "ENOSYS"


def test_docker_profile_status(env):
    rc, res, out, err = run_probe(env, docker_profile(), args=["cat", "/proc/self/status"])
    st = proc_status(out)
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1", st
    st0 = proc_status(env.sh("cat /proc/self/status"))
    assert st0["Seccomp"] == "0" and st0["Seccomp_filters"] == "0", st0


# Syscalls the running kernel may have that this profile (Docker's, as of
# removexattrat) does not name: open_tree_attr, file_getattr, file_setattr.
NEWER = ["467,-1,0,0,0,0", "468,-1,0,0,0,0", "469,-1,0,0,0,0"]


def test_syscall_newer_than_profile_is_enosys(env):
    rc, base, out, err = run_probe(env, args=["rawsys"] + NEWER)
    known = [c for c in NEWER if base[c] != "ENOSYS"]
    if not known:
        pytest.skip("this kernel has no syscall newer than the profile: %s" % base)
    rc, res, out, err = run_probe(env, docker_profile(), args=["rawsys"] + NEWER)
    for c in NEWER:
        assert res[c] == "ENOSYS", (c, res[c], base[c])
    # An old syscall the profile does not allow: the default action, EPERM.
    rc, res, out, err = run_probe(env, docker_profile(),
                                  args=["rawsys", "%d,0" % NR["uname"], "246,0,0,0,0"])
    assert res["246,0,0,0,0"] == "EPERM", res  # kexec_load
    assert res["%d,0" % NR["uname"]] == "EFAULT", res  # allowed: the kernel's


# ---- defaultAction ERRNO / errnoRet --------------------------------------------------

def test_default_errno_ret(env, baseline):
    prof = docker_profile(defaultErrnoRet=errno.EACCES)
    rc, res, out, err = run_probe(env, prof)
    for name in DOCKER_DENIED:
        assert res[name] == "EACCES", (name, res[name])
    assert res["clone3"] == "ENOSYS"  # its own rule's errnoRet
    for name in DOCKER_ALLOWED:
        if name != "syscall(1000)":
            assert res[name] == baseline[name], name
    rc, res, out, err = run_probe(env, prof, args=["rawsys"] + NEWER)
    for c in NEWER:
        assert res[c] == "ENOSYS", (c, res)


def test_rule_errno_ret_and_default_eperm(env, baseline):
    prof = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {"names": ["keyctl", "add_key"], "action": "SCMP_ACT_ERRNO",
             "errnoRet": errno.EXDEV},
            {"names": ["bpf"], "action": "SCMP_ACT_ERRNO"},  # no errnoRet: EPERM
        ],
    }
    rc, res, out, err = run_probe(env, prof, args=["syscall_probe", "keyctl", "add_key",
                                                   "bpf", "mount", "clone3"])
    assert res["keyctl"] == "EXDEV" and res["add_key"] == "EXDEV", res
    assert res["bpf"] == "EPERM" and baseline["bpf"] != "EPERM", (res, baseline["bpf"])
    assert res["mount"] == baseline["mount"]  # allowed by default
    assert res["clone3"] == "ok"  # an allow-by-default profile leaves clone3 alone


def test_default_errno_with_errno_ret(env):
    """defaultAction ERRNO + defaultErrnoRet on a minimal allow-list."""
    prof = {
        "defaultAction": "SCMP_ACT_ERRNO", "defaultErrnoRet": errno.ENOTSUP,
        "syscalls": [{"names": ["execve", "brk", "arch_prctl", "set_tid_address",
                                "set_robust_list", "rseq", "prlimit64", "mmap",
                                "munmap", "mprotect", "readlink", "readlinkat",
                                "getrandom", "write", "exit_group", "exit", "fork",
                                "clone", "wait4", "pipe", "pipe2", "read", "close",
                                "uname", "rt_sigaction", "rt_sigprocmask",
                                "rt_sigreturn", "sigaltstack", "fstat", "newfstatat",
                                "lseek", "getpid", "gettid", "futex", "fcntl",
                                "ioctl"],
                      "action": "SCMP_ACT_ALLOW"}],
    }
    rc, res, out, err = run_probe(env, prof, args=[
        "rawsys", "%d,0" % NR["uname"], "%d" % NR["getppid"], "%d,0xffffffff" % NR["personality"]])
    assert res["%d,0" % NR["uname"]] == "EFAULT", res  # allowed
    assert res["%d" % NR["getppid"]] == "EOPNOTSUPP", res  # ENOTSUP == EOPNOTSUPP
    assert res["%d,0xffffffff" % NR["personality"]] == "EOPNOTSUPP", res


# ---- KILL_PROCESS --------------------------------------------------------------------

@pytest.mark.parametrize("action", ["SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL"])
@pytest.mark.parametrize("args", [["uname"], ["rawsys", "--nofork", "63,0"]])
def test_kill_action(env, action, args):
    prof = {"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["uname"], "action": action}]}
    rc, res, out, err = run_probe(env, prof, args=args, check=False)
    assert rc == 128 + 31, (rc, out, err)  # SIGSYS
    # The same container without the rule runs fine.
    rc, res, out, err = run_probe(env, {"defaultAction": "SCMP_ACT_ALLOW"}, args=args,
                                  check=False)
    assert rc == 0, (rc, out, err)


def test_kill_in_child_only_kills_the_child(env):
    prof = {"defaultAction": "SCMP_ACT_ALLOW",
            "syscalls": [{"names": ["uname"], "action": "SCMP_ACT_KILL_PROCESS"}]}
    rc, res, out, err = run_probe(env, prof, args=["rawsys", "63,0", "110"])
    assert res["63,0"] == "SIGSYS" and res["110"].startswith("ok="), res


# ---- argument filters ----------------------------------------------------------------

def test_args_filters(env):
    prof = {
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EXDEV,
             "args": [{"index": 0, "value": 0xffffffff, "op": "SCMP_CMP_EQ"}]},
            {"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EXDEV,
             "args": [{"index": 0, "value": 0xff, "valueTwo": 40,
                       "op": "SCMP_CMP_MASKED_EQ"}]},
            # two indexes: AND
            {"names": ["dup3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EXDEV,
             "args": [{"index": 0, "value": 1000, "op": "SCMP_CMP_EQ"},
                      {"index": 1, "value": 1001, "op": "SCMP_CMP_EQ"}]},
            # one index twice: OR (runc's meaning)
            {"names": ["fchdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EXDEV,
             "args": [{"index": 0, "value": 1005, "op": "SCMP_CMP_EQ"},
                      {"index": 0, "value": 1006, "op": "SCMP_CMP_EQ"}]},
            # GT / LT / NE
            {"names": ["getpriority"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.EXDEV,
             "args": [{"index": 1, "value": 5000, "op": "SCMP_CMP_GT"}]},
        ],
    }
    calls = {
        "135,0xffffffff": "EXDEV", "135,0": "ok=0",
        "41,40,1,0": "EXDEV", "41,0x128,1,0": "EXDEV", "41,1,1,0": "ok=",
        "292,1000,1001,0": "EXDEV", "292,1000,1002,0": "EBADF", "292,999,1001,0": "EBADF",
        "81,1005": "EXDEV", "81,1006": "EXDEV", "81,1007": "EBADF",
        "140,0,6000": "EXDEV", "140,0,4000": "ESRCH",
    }
    rc, res, out, err = run_probe(env, prof, args=["rawsys"] + list(calls))
    for c, want in calls.items():
        if want.endswith("="):
            assert res[c].startswith(want), (c, res[c])
        else:
            assert res[c] == want, (c, res[c])


# ---- /proc/self/status for several configurations ----------------------------------

CAP_SETS = ("bounding", "effective", "permitted", "inheritable", "ambient")


def expected_caps(caps, uid, nnp):
    """The five sets after execve of a file without file capabilities
    (security/commoncap.c): ambient needs permitted and inheritable; root
    gets P' = bounding | inheritable | ambient (capped to the old permitted
    under no_new_privs), E' = P'; any other uid P' = E' = ambient."""
    m = {k: cap_mask(caps.get(k)) for k in CAP_SETS}
    amb = m["ambient"] & m["permitted"] & m["inheritable"]
    if uid == 0:
        prm = m["bounding"] | m["inheritable"] | amb
        if nnp:
            prm &= m["permitted"]
        eff = prm
    else:
        prm = eff = amb
    return {"CapBnd": m["bounding"], "CapInh": m["inheritable"], "CapPrm": prm,
            "CapEff": eff, "CapAmb": amb}


MIXED = {
    "bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_SETUID",
                 "CAP_SETGID", "CAP_NET_RAW", "CAP_SETPCAP"],
    "effective": ["CAP_CHOWN", "CAP_KILL", "CAP_SETUID", "CAP_SETGID"],
    "permitted": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW",
                  "CAP_SETUID", "CAP_SETGID"],
    "inheritable": ["CAP_NET_BIND_SERVICE", "CAP_NET_RAW"],
    "ambient": ["CAP_NET_BIND_SERVICE", "CAP_NET_RAW", "CAP_KILL"],
}
ALLOW_ONE_RULE = {"defaultAction": "SCMP_ACT_ALLOW",
                  "syscalls": [{"names": ["bpf"], "action": "SCMP_ACT_ERRNO"}]}
STATUS_CASES = {
    # name: (seccomp, capabilities or None (the default spec's), uid, nnp, seccomp mode)
    "none-root": (None, None, 0, True, "0"),
    "docker-root-nnp": ("docker", None, 0, True, "2"),
    "docker-root-no-nnp": ("docker", None, 0, False, "2"),
    "docker-user-no-nnp": ("docker", MIXED, 1000, False, "2"),
    "docker-user-nnp": ("docker", MIXED, 1000, True, "2"),
    "allow-mixed-root": ("allow", MIXED, 0, False, "2"),
    "none-mixed-root-nnp": (None, MIXED, 0, True, "0"),
    "docker-no-caps": ("docker", {k: [] for k in CAP_SETS}, 0, True, "2"),
}


@pytest.mark.parametrize("case", list(STATUS_CASES))
def test_status_fields(env, case):
    sc, caps, uid, nnp, mode = STATUS_CASES[case]
    seccomp = {"docker": docker_profile(), "allow": ALLOW_ONE_RULE, None: None}[sc]
    spec = make_spec(["cat", "/proc/self/status"], process__noNewPrivileges=nnp,
                     process__user={"uid": uid, "gid": uid})
    if caps is not None:
        spec["process"]["capabilities"] = caps
    if seccomp is not None:
        spec["linux"]["seccomp"] = seccomp
    rc, out, err = env.run(spec)
    assert rc == 0, (rc, out, err)
    st = proc_status(out)
    assert st["Seccomp"] == mode, st
    assert st["Seccomp_filters"] == ("1" if seccomp else "0"), st
    assert st["NoNewPrivs"] == ("1" if nnp else "0"), st
    got = {k: "%016x" % int(st[k], 16) for k in ("CapBnd", "CapInh", "CapPrm", "CapEff",
                                                "CapAmb")}
    want = {k: "%016x" % v for k, v in
            expected_caps(spec["process"]["capabilities"], uid, nnp).items()}
    assert got == want


@pytest.mark.parametrize("nnp", [True, False])
def test_status_fields_exec(env, nnp):
    """An exec'd process gets the container's filter too (one filter: it
    is a fresh clone of the runtime, not a child of the init)."""
    spec = make_spec(["sleep", "1000"], process__noNewPrivileges=nnp)
    spec["linux"]["seccomp"] = docker_profile()
    cid = env.create(spec)
    env.rt("start", cid)
    rc, out, err = env.rt("exec", cid, "cat", "/proc/self/status")
    st = proc_status(out)
    assert st["Seccomp"] == "2" and st["Seccomp_filters"] == "1", st
    assert st["NoNewPrivs"] == ("1" if nnp else "0"), st
    rc, out, err = env.rt("exec", cid, "syscall_probe", "mount", "keyctl", "clone3")
    assert probe_lines(out) == dict(DOCKER_SMALL, keyctl="EPERM")


# ---- SCMP_ACT_NOTIFY end to end ------------------------------------------------------

SECCOMP_IOCTL_NOTIF_RECV = 0xc0502100  # _IOWR('!', 0, struct seccomp_notif), 80 bytes
SECCOMP_IOCTL_NOTIF_SEND = 0xc0182101  # _IOWR('!', 1, struct seccomp_notif_resp), 24
NOTIF = struct.Struct("=QIIiIQ6Q")     # id pid flags | nr arch ip args[6]
NOTIF_RESP = struct.Struct("=QqiI")    # id val error flags


class SeccompAgent:
    """A seccomp agent: a unix socket server at path that takes the
    listener fd and the container process state from the runtime, then
    answers each notification with answers[nr] = (val, error)."""

    def __init__(self, path, answers):
        self.path = path
        self.answers = answers
        self.state = None
        self.fds = []
        self.seen = []
        self.errors = []
        self._stop = threading.Event()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(1)
        self.sock.settimeout(30)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _receive(self):
        conn, _ = self.sock.accept()
        data = b""
        with conn:
            conn.settimeout(10)
            while True:
                fds = array.array("i")
                msg, anc, flags, addr = conn.recvmsg(65536, socket.CMSG_SPACE(16 * 4))
                for level, typ, cdata in anc:
                    if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                        fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
                self.fds.extend(fds)
                if not msg:
                    break
                data += msg
        self.state = json.loads(data.decode())

    def _serve(self, fd):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while not self._stop.is_set():
            events = poller.poll(100)
            if not events:
                continue
            ev = events[0][1]
            if not ev & select.POLLIN:
                return  # POLLHUP: every task of the filter is gone
            buf = bytearray(NOTIF.size)
            try:
                fcntl.ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, buf, True)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.EINTR):  # gone / raced
                    continue
                return  # the filter's tasks are all gone
            nid, pid, flags, nr, arch, ip, *args = NOTIF.unpack(buf)
            self.seen.append({"nr": nr, "pid": pid, "args": args})
            val, error = self.answers.get(nr, (0, -errno.ENOSYS))
            resp = bytearray(NOTIF_RESP.pack(nid, val, error, 0))
            try:
                fcntl.ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp, True)
            except OSError as e:
                if e.errno != errno.ENOENT:
                    self.errors.append(e)

    def _run(self):
        try:
            self._receive()
            if self.fds:
                self._serve(self.fds[0])
        except Exception as e:  # reported by the test
            self.errors.append(e)

    def close(self):
        self._stop.set()
        self._thread.join(timeout=10)
        self.sock.close()
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(self.path)
        except OSError:
            pass


def test_notify_end_to_end(env):
    sock = os.path.join(env.tmp, "agent.sock")
    agent = SeccompAgent(sock, {NR["getppid"]: (4242, 0),
                                NR["keyctl"]: (0, -errno.EBADE)})
    try:
        prof = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": sock,
                "listenerMetadata": "agentsbx-test-metadata",
                "syscalls": [{"names": ["getppid", "keyctl"], "action": "SCMP_ACT_NOTIFY"}]}
        spec = make_spec(["rawsys", "110", "250,0x7fffffff,0,0,0,0", "39"])
        spec["linux"]["seccomp"] = prof
        bundle = env.default_bundle()
        cid = env.create(spec)
        # The runtime sent the fd and the state before `create` returned.
        deadline = time.time() + 5
        while agent.state is None and not agent.errors and time.time() < deadline:
            time.sleep(0.02)
        assert agent.state is not None and agent.fds, agent.errors
        st = agent.state
        init_pid = env.state(cid)["pid"]
        assert st["ociVersion"], st
        assert st["fds"] == ["seccompFd"], st
        assert st["pid"] == init_pid, (st, init_pid)
        assert st["metadata"] == "agentsbx-test-metadata", st
        assert st["state"]["id"] == cid, st
        assert st["state"]["pid"] == init_pid, st
        assert st["state"]["status"] == "creating", st
        assert st["state"]["bundle"] == bundle, st
        env.rt("start", cid)
        deadline = time.time() + 10
        while env.status(cid) != "stopped" and time.time() < deadline:
            time.sleep(0.05)
        assert not agent.errors, agent.errors
    finally:
        agent.close()
    # What the container saw: the agent's answers.
    nrs = [s["nr"] for s in agent.seen]
    assert NR["getppid"] in nrs and NR["keyctl"] in nrs, agent.seen
    assert all(s["pid"] > 1 for s in agent.seen)  # host pids


def test_notify_answers_reach_the_container(env):
    sock = os.path.join(env.tmp, "agent.sock")
    agent = SeccompAgent(sock, {NR["getppid"]: (4242, 0),
                                NR["keyctl"]: (0, -errno.EBADE)})
    try:
        prof = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": sock,
                "syscalls": [{"names": ["getppid", "keyctl"], "action": "SCMP_ACT_NOTIFY"}]}
        spec = make_spec(["rawsys", "110", "250,0x7fffffff,0,0,0,0", "39"])
        spec["linux"]["seccomp"] = prof
        rc, out, err = env.run(spec)
    finally:
        agent.close()
    assert rc == 0, (rc, out, err)
    res = probe_lines(out)
    assert res["110"] == "ok=4242", res  # the agent's value
    assert res["250,0x7fffffff,0,0,0,0"] == "EBADE", res  # the agent's errno
    assert res["39"].startswith("ok="), res  # getpid: not notified
    assert "metadata" not in agent.state, agent.state


# ---- the compiled-program cache --------------------------------------------------------

def cache_dir(env):
    return os.path.join(env.root, ".seccomp-cache")


def entries(env):
    d = cache_dir(env)
    return sorted(e for e in os.listdir(d) if not e.startswith(".")) if os.path.isdir(d) else []


def run_logged(env, spec, extra_env=None):
    """Run with --debug --log; return (rc, out, err, log text)."""
    log = os.path.join(env.tmp, "log-%s" % os.urandom(3).hex())
    write_spec(env.default_bundle(), spec)
    cid = env.track_id(env.new_id())
    argv = env.argv("--debug", "--log", log, "run", "--bundle", env.default_bundle(), cid)
    kw = {}
    if extra_env:
        e = dict(os.environ)
        e.update(extra_env)
        kw["env"] = e
    rc, out, err = run_cmd(argv, timeout=60, **kw)
    with open(log) as f:
        text = f.read()
    return rc, out, err, text


def seccomp_lines(log):
    return [l for l in log.splitlines() if "seccomp:" in l]


# syscall_probe mount clone3 (a name matches NAME and NAME(...)) under Docker's profile
DOCKER_SMALL = {"mount": "EPERM", "clone3": "ENOSYS", "clone3(CLONE_NEWUSER)": "ENOSYS"}


def docker_spec():
    spec = make_spec(["syscall_probe", "mount", "clone3"])
    spec["linux"]["seccomp"] = docker_profile()
    return spec


def test_cache_second_start_does_not_compile(env, agentsbx_only):
    rc, out, err, log1 = run_logged(env, docker_spec())
    assert rc == 0, (rc, out, err)
    compiled = [l for l in seccomp_lines(log1) if "compiled" in l]
    assert compiled and "cached as" in compiled[0], seccomp_lines(log1)
    key = compiled[0].split()[-1]
    assert entries(env) == [key]
    st = os.stat(os.path.join(cache_dir(env), key))
    assert st.st_mode & 0o077 == 0 and st.st_uid == os.geteuid()
    for _ in range(2):
        rc, out, err, log2 = run_logged(env, docker_spec())
        assert rc == 0, (rc, out, err)
        assert probe_lines(out) == DOCKER_SMALL, out
        lines = seccomp_lines(log2)
        assert any("cache hit %s" % key in l for l in lines), lines
        assert not any("compiled" in l for l in lines), lines
    assert entries(env) == [key]


HEADER = struct.Struct("=8sII32s32s")  # magic format n_insns key digest


def _tamper(path, how):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    magic, fmt, n, key, digest = HEADER.unpack_from(data)
    if how == "format":  # written by another version of the cache code
        HEADER.pack_into(data, 0, magic, fmt + 1, n, key, digest)
    elif how == "magic":
        HEADER.pack_into(data, 0, b"NOTASBX!", fmt, n, key, digest)
    elif how == "key":  # another profile's entry planted under this name
        HEADER.pack_into(data, 0, magic, fmt, n, bytes(32), digest)
    elif how == "digest":  # one instruction flipped: SECCOMP_RET_ALLOW everywhere?
        data[HEADER.size + 8 * (n // 2) + 4] ^= 0xff
    elif how == "truncated":
        del data[-8:]
    elif how == "length":  # a header claiming fewer instructions
        HEADER.pack_into(data, 0, magic, fmt, n - 1, key, digest)
    with open(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("how", ["format", "magic", "key", "digest", "truncated",
                                 "length", "mode", "symlink"])
def test_cache_stale_or_tampered_entry_is_recompiled(env, agentsbx_only, how):
    rc, out, err, log1 = run_logged(env, docker_spec())
    assert rc == 0, (rc, out, err)
    key = [l for l in seccomp_lines(log1) if "compiled" in l][0].split()[-1]
    path = os.path.join(cache_dir(env), key)
    with open(path, "rb") as f:
        good = f.read()
    if how == "mode":
        os.chmod(path, 0o644)
    elif how == "symlink":
        other = os.path.join(env.tmp, "planted")
        shutil.copy2(path, other)
        os.unlink(path)
        os.symlink(other, path)
    else:
        _tamper(path, how)
    rc, out, err, log2 = run_logged(env, docker_spec())
    assert rc == 0, (rc, out, err)
    lines = seccomp_lines(log2)
    assert any("cache miss %s" % key in l for l in lines), lines
    assert any("compiled" in l for l in lines), lines
    assert not any("cache hit" in l for l in lines), lines
    # The filter in force is the real one, not the tampered program.
    assert probe_lines(out) == DOCKER_SMALL, out
    # Rewritten (a private regular file again): the next start hits, with
    # the good program.
    st = os.lstat(path)
    assert stat.S_ISREG(st.st_mode) and st.st_mode & 0o077 == 0, oct(st.st_mode)
    with open(path, "rb") as f:
        assert f.read() == good
    if how == "symlink":
        with open(os.path.join(env.tmp, "planted"), "rb") as f:
            assert f.read() == good  # the symlink's target was not written
    rc, out, err, log3 = run_logged(env, docker_spec())
    assert any("cache hit %s" % key in l for l in seccomp_lines(log3)), seccomp_lines(log3)


SHIM = r'''
#include <seccomp.h>
const struct scmp_version *seccomp_version(void)
{
	static const struct scmp_version v = { 9, 99, 999 };
	return &v;
}
'''


def test_cache_libseccomp_version_change_recompiles(env, agentsbx_only):
    """A changed libseccomp (simulated: a preloaded seccomp_version() that
    says 9.99.999) makes other cache keys: the old entry is not trusted,
    the profile is compiled again, and the old entry is used again by the
    old library."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler for the preload shim")
    src = os.path.join(env.tmp, "shim.c")
    so = os.path.join(env.tmp, "shim.so")
    with open(src, "w") as f:
        f.write(SHIM)
    rc, out, err = run_cmd([cc, "-shared", "-fPIC", "-o", so, src], timeout=60)
    if rc != 0:
        pytest.skip("cannot build the preload shim: %s" % err)
    rc, out, err, log1 = run_logged(env, docker_spec())
    assert rc == 0, (rc, out, err)
    old = [l for l in seccomp_lines(log1) if "compiled" in l][0].split()[-1]
    rc, out, err, log2 = run_logged(env, docker_spec(), {"LD_PRELOAD": so})
    assert rc == 0, (rc, out, err)
    lines = seccomp_lines(log2)
    compiled = [l for l in lines if "compiled" in l]
    assert compiled and not any("cache hit" in l for l in lines), lines
    new = compiled[0].split()[-1]
    assert new != old
    assert entries(env) == sorted([old, new])
    assert probe_lines(out) == DOCKER_SMALL, out
    rc, out, err, log3 = run_logged(env, docker_spec())
    assert any("cache hit %s" % old in l for l in seccomp_lines(log3)), seccomp_lines(log3)
