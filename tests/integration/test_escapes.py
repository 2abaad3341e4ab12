# SPDX-License-Identifier: Apache-2.0
"""Escape regressions: one test per known runtime escape (the CVE table of
the hardening issue), each setting up the attack -- a hostile bundle or
rootfs, or a racing process inside the container -- and showing that it
fails against agentsbx.

Every attack is also run against a weakened build of agentsbx with exactly
the one defence it targets turned off (lib/weaken.h, `make weak-NAME`,
built once per session by escape_helpers.weak_runtime), where it must
SUCCEED: a test whose attack does not work even without the defence would
pass vacuously.  The parameter `build` is "real" ($AGENTSBX) or "weak".

A few tests are marked real-only: attacks with no weak switch of their own
(the defence they probe is not the one a switch turns off), kept because
they are escapes of the same family.  When one of them fails, agentsbx is
vulnerable; see the assertion message.

Nothing here touches a real host file: every "host" target is a disposable
path in the test's temp dir, the CVE-2019-5736 tests run a private copy of
the runtime binary, host mounts are only made inside a throwaway private
mount namespace (unshare), and the TIOCSTI text goes into a pty nobody
reads.
"""

import json
import os
import re
import select
import time

import pytest

from conftest import add_mount, kv_lines, make_spec, spawn, write_spec
from escape_helpers import (BUILDS, ConsoleSocket, argv_as, copy_dynamic_deps,
                            copy_runtime, file_digest, in_private_mountns,
                            mountinfo_of, pick_runtime, quote, rt_as, run_as,
                            wait_file_contains)


def _state_pid(env, runtime, cid):
    rc, out, err = rt_as(env, runtime, "state", cid, check=True)
    pid = json.loads(out)["pid"]
    env.state(cid, check=False)  # record the pid for the teardown
    return pid


def _no_dev_tmpfs(spec):
    """The image's own /dev (no tmpfs over it), so that what the rootfs
    holds in dev/ is what the runtime meets."""
    spec["mounts"] = [m for m in spec["mounts"]
                      if m["destination"] not in ("/dev", "/dev/shm", "/dev/mqueue")]
    return spec


# =============================================================================
# CVE-2019-5736: the container rewrites the runtime binary through
# /proc/PID/exe of a runtime process that is visible inside it.
#
# `exec` clones the runtime into the container's pid namespace; until that
# clone execve()s, /proc/<clone>/exe is the runtime binary on the host.  The
# defence: the clone is made non-dumpable (PR_SET_DUMPABLE 0) before it
# enters, so /proc/PID/exe (a ptrace-mode check) is refused to the
# container, root or not (default caps: no CAP_SYS_PTRACE).  Weak switch:
# "dumpable".  exe_racer polls the newest pids of the container and tries
# readlink + open(O_RDONLY) of their exe, and, once it holds the binary,
# open(/proc/self/fd/N, O_WRONLY) (the step that lets the exploit overwrite
# it; never written to).

def _racer_container(env, runtime, racer_args, extra_mounts=()):
    """Start (run -d, with `runtime`) a container whose init is exe_racer,
    logging to <hostdir>/racer.log; return (cid, log path)."""
    out = env.hostdir("racer-out-" + os.urandom(2).hex())
    log = os.path.join(out, "racer.log")
    spec = make_spec(["sh", "-c", "exec exe_racer %s > /out/racer.log 2>&1"
                      % " ".join(quote(a) for a in racer_args)])
    add_mount(spec, "/out", "bind", out, ["rbind", "rw"])
    for m in extra_mounts:
        add_mount(spec, *m)
    bundle = env.make_bundle("racer-" + os.urandom(2).hex())
    write_spec(bundle, spec)
    cid = env.new_id()
    rt_as(env, runtime, "run", "-d", "--bundle", bundle, cid, check=True)
    _state_pid(env, runtime, cid)
    deadline = time.time() + 10
    while not os.path.exists(log) and time.time() < deadline:
        time.sleep(0.02)
    return cid, log


def _racer_result(log, timeout):
    text = wait_file_contains(log, "result=", timeout=timeout)
    m = re.search(r"result=(\w+) seen=(\d+) denied=(\d+)", text)
    assert m, "exe_racer gave no result:\n" + text
    return m.group(1), int(m.group(2)), int(m.group(3)), text


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2019_5736_exec_clone_exe(env, agentsbx_only, build):
    runtime = copy_runtime(env, pick_runtime(build, "dumpable"))
    digest = file_digest(runtime)
    cid, log = _racer_container(env, runtime, ["--exe", runtime, "--timeout", "30",
                                               "--writable"])
    execs = 0
    for execs in range(1, 301 if build == "weak" else 121):
        with open(log) as f:
            data = f.read()
        if "opened" in data or "result=" in data:
            break
        rc, out, err = rt_as(env, runtime, "exec", cid, "true")
        if rc != 0:
            break  # the racer is done: the container stopped
    rt_as(env, runtime, "kill", cid, "TERM")
    result, seen, denied, text = _racer_result(log, timeout=40)
    assert file_digest(runtime) == digest  # the racer never writes
    if build == "real":
        assert "opened" not in text and "writable=1" not in text, (
            "CVE-2019-5736: the container opened the runtime binary through "
            "/proc/PID/exe of an exec clone after %d execs:\n%s" % (execs, text))
        # Not vacuous: the racer did catch exec clones in the act, and was
        # refused (EACCES: not dumpable).
        assert seen > 0 and denied > 0, (
            "the racer never saw an exec clone in %d execs:\n%s" % (execs, text))
        assert re.search(r"denied .*comm=agentsbx .*errno=(EACCES|EPERM)", text), text
    else:
        assert result == "opened" and "elf=1" in text, (
            "weak build (dumpable): the attack did not work in %d execs, so the "
            "test proves nothing:\n%s" % (execs, text))
        assert "exe=%s" % runtime in text, text


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2019_5736_shebang_proc_self_exe(env, agentsbx_only, build):
    """The original exploit: the container replaces the binary that the
    caller `exec`s with "#!/proc/self/exe".  The kernel resolves the
    interpreter in the exec'ing process, i.e. the runtime's clone: the
    HOST's runtime binary then runs inside the container, and PR_SET_DUMPABLE
    does not survive that execve.  The image carries the runtime's shared
    libraries (copied from the host, as a Debian-based image would have
    them) so that the host binary can start.  The attack must not give the
    container a handle on the runtime binary (runc copies itself into a
    sealed memfd for this reason)."""
    runtime = copy_runtime(env, pick_runtime(build, "dumpable"))
    digest = file_digest(runtime)
    out = env.hostdir("racer-out")
    log = os.path.join(out, "racer.log")
    bundle = env.make_bundle("racer")
    rootfs = os.path.join(bundle, "rootfs")
    copy_dynamic_deps(runtime, rootfs)
    with open(os.path.join(rootfs, "bin", "evilsh"), "w") as f:
        f.write("#!/proc/self/exe\n")
    os.chmod(os.path.join(rootfs, "bin", "evilsh"), 0o755)
    spec = make_spec(["sh", "-c", "exec exe_racer --exe %s --timeout 20 --writable "
                      "> /out/racer.log 2>&1" % quote(runtime)])
    add_mount(spec, "/out", "bind", out, ["rbind", "rw"])
    write_spec(bundle, spec)
    cid = env.new_id()
    rt_as(env, runtime, "run", "-d", "--bundle", bundle, cid, check=True)
    _state_pid(env, runtime, cid)
    execs = []
    for _ in range(10):
        # The caller runs what it believes is a shell in the container.
        execs.append(rt_as(env, runtime, "exec", cid, "/bin/evilsh"))
        with open(log) as f:
            if "opened" in f.read():
                break
    rt_as(env, runtime, "kill", cid, "TERM")
    result, seen, denied, text = _racer_result(log, timeout=30)
    assert file_digest(runtime) == digest  # the racer never writes
    ran_host_binary = any("unknown command" in e for _, _, e in execs)
    if build == "real":
        assert "opened" not in text and "writable=1" not in text, (
            "CVE-2019-5736 (#!/proc/self/exe): the host's runtime binary ran "
            "inside the container (exec said: %r) and the container got a "
            "handle on it (writable=1: it could rewrite the runtime):\n%s"
            % (execs[-1][2].strip(), text))
    else:
        assert ran_host_binary and result == "opened", (execs, text)


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2019_5736_shared_pidns_init_exe(env, agentsbx_only, build):
    """A container B that shares its pid namespace with a container A being
    started (a pod) sees A's init, a clone of the runtime, until it
    execve()s.  Once the init has dropped to the container's capabilities
    (then B's permitted set covers the init's, the commoncap ptrace check
    passes), only non-dumpability keeps /proc/<init>/exe closed to B."""
    runtime = copy_runtime(env, pick_runtime(build, "dumpable"))
    digest = file_digest(runtime)
    # --stay: the racer is the pid namespace's init; it must outlive A's runs.
    cid_b, log = _racer_container(env, runtime, ["--exe", runtime, "--timeout", "30",
                                                 "--stay", "--writable"])
    pid_b = _state_pid(env, runtime, cid_b)
    spec = make_spec(["true"])
    spec["linux"]["namespaces"] = [
        {"type": "pid", "path": "/proc/%d/ns/pid" % pid_b} if n["type"] == "pid" else n
        for n in spec["linux"]["namespaces"]]
    bundle_a = env.make_bundle("a")
    write_spec(bundle_a, spec)
    runs = 0
    for runs in range(1, 81):
        with open(log) as f:
            data = f.read()
        if "opened" in data or "result=" in data:
            break
        rc, out, err = rt_as(env, runtime, "run", "--bundle", bundle_a, env.new_id())
        assert rc == 0, (rc, out, err)
    rt_as(env, runtime, "kill", cid_b, "TERM")
    result, seen, denied, text = _racer_result(log, timeout=40)
    assert file_digest(runtime) == digest
    if build == "real":
        assert "opened" not in text, (
            "CVE-2019-5736 via a shared pid namespace: container B opened the "
            "runtime binary through /proc/<A's init>/exe while A started (run "
            "%d; writable=1: it could then rewrite it); the init is never made "
            "non-dumpable:\n%s" % (runs, text))
        assert seen > 0, text
    else:
        assert result == "opened", (runs, text)


# =============================================================================
# CVE-2019-16884, CVE-2019-19921, CVE-2023-27561: /proc (or /sys) of the
# rootfs is a symlink, so the procfs mount lands somewhere else (where the
# runtime's later writes to /proc are swallowed or redirected).  Defence:
# the proc/sysfs target is opened with no symlink on the way and must be a
# real directory.  Weak switch: "proc-target".

@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("fs", ["proc", "sys"])
def test_cve_2019_16884_proc_sys_symlink(env, agentsbx_only, build, fs):
    runtime = pick_runtime(build, "proc-target")
    bundle = env.make_bundle()
    rootfs = os.path.join(bundle, "rootfs")
    os.rmdir(os.path.join(rootfs, fs))
    os.makedirs(os.path.join(rootfs, "tmp", "elsewhere"))
    os.symlink("/tmp/elsewhere", os.path.join(rootfs, fs))
    fstype = {"proc": "proc", "sys": "sysfs"}[fs]
    spec = make_spec(["sh", "-c", "stat -f -c %T /tmp/elsewhere; cat /proc/self/mountinfo"])
    # (the cgroup mount below /sys refuses any symlink on its own)
    spec["mounts"] = [m for m in spec["mounts"] if m["type"] != "cgroup"]
    rc, out, err = run_as(env, runtime, spec, bundle=bundle)
    # The hostile rootfs is as it was (the symlink was not replaced).
    assert os.readlink(os.path.join(rootfs, fs)) == "/tmp/elsewhere"
    if build == "real":
        assert rc != 0, "the %s mount followed /%s -> /tmp/elsewhere:\n%s" % (fstype, fs, out)
        assert "/%s" % fs in err and ("symbolic link" in err or "ELOOP" in err), err
        assert os.listdir(os.path.join(rootfs, "tmp", "elsewhere")) == []
    else:
        assert rc == 0, (rc, out, err)
        assert out.splitlines()[0] == fstype, out
        assert re.search(r"^\S+ \S+ \S+ / /tmp/elsewhere ", out, re.M), out


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2019_19921_proc_symlink_out_of_rootfs(env, agentsbx_only, build):
    """/proc -> a host directory by an absolute and by a ../ path: refused
    by agentsbx; even the weak build cannot reach the host (the path is
    still resolved in the rootfs: it mounts where the dangling link points
    inside it, as runc and crun create such a target), and the host
    directory stays empty."""
    runtime = pick_runtime(build, "proc-target")
    host = env.hostdir("hostdir")
    for target in (host, "../../../../../../../../.." + host):
        bundle = env.make_bundle("b-" + os.urandom(3).hex())
        rootfs = os.path.join(bundle, "rootfs")
        os.rmdir(os.path.join(rootfs, "proc"))
        os.symlink(target, os.path.join(rootfs, "proc"))
        rc, out, err = run_as(env, runtime, make_spec(["true"]), bundle=bundle)
        assert os.listdir(host) == [], (target, os.listdir(host))
        if build == "real":
            assert rc != 0, (target, out, err)
            assert "/proc" in err, err


def test_volume_over_proc_refused(env, agentsbx_only):
    """CVE-2019-16884's other shape: a volume mounted over /proc after the
    procfs.  Refused in every policy mode, as runc's checkProcMount does:
    only a procfs may be mounted at /proc.  (agentsbx also writes sysctls
    through its own procfs handle, not the container's /proc.)"""
    vol = env.hostdir("vol")
    spec = make_spec(["sh", "-c", "stat -f -c %T /proc; cat /ns/sys/kernel/msgmnb"],
                     linux__sysctl={"kernel.msgmnb": "23456"})
    add_mount(spec, "/proc", "bind", vol, ["rbind", "rw"])
    add_mount(spec, "/ns", "proc", "proc")
    rc, out, err = env.run(spec)
    assert rc != 0 and out == "", (rc, out, err)
    assert "on /proc: only a procfs may be mounted there" in err, err
    assert os.listdir(vol) == []


# =============================================================================
# CVE-2021-30465, CVE-2024-45310: a mount destination traverses a symlink
# (or "..") of the rootfs that points to a host path, so the mount or the
# mkdir/creat of its target lands on the host.  Defence: every target is
# resolved with openat2(RESOLVE_IN_ROOT).  Weak switch: "resolve-in-root".

def _mirror(rootfs, host_path):
    """The host path as seen inside the rootfs (where an in-root resolution
    of the absolute symlink ends)."""
    return os.path.join(rootfs, host_path.lstrip("/"))


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("shape", ["symlink", "dotdot"])
def test_cve_2021_30465_file_mount_target_created_on_host(env, agentsbx_only, build,
                                                         shape):
    runtime = pick_runtime(build, "resolve-in-root")
    host = env.hostdir("hostdir")  # the "host" directory the attack aims at
    src = os.path.join(env.tmp, "src.txt")
    with open(src, "w") as f:
        f.write("from-the-bundle\n")
    bundle = env.make_bundle()
    rootfs = os.path.join(bundle, "rootfs")
    os.makedirs(_mirror(rootfs, host))  # where the real runtime must land
    if shape == "symlink":
        os.symlink(host, os.path.join(rootfs, "evil"))
        dest = "/evil/newfile"
    else:
        dest = "/../../../../../../../../.." + host + "/newfile"
    spec = make_spec(["sh", "-c", "cat %s" % quote(host + "/newfile")])
    add_mount(spec, dest, "bind", src, ["bind", "ro"])
    rc, out, err = run_as(env, runtime, spec, bundle=bundle)
    if build == "real":
        assert os.listdir(host) == [], "mount target created on the host: %s" % os.listdir(host)
        assert rc == 0, (rc, out, err)
        assert out == "from-the-bundle\n", out  # mounted inside the rootfs
        assert os.path.isfile(os.path.join(_mirror(rootfs, host), "newfile"))
    else:
        assert os.listdir(host) == ["newfile"], (
            "weak build: the attack did not reach the host dir (rc %d, %s)" % (rc, err))
        assert out != "from-the-bundle\n"


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2021_30465_dir_mount_lands_outside_rootfs(env, agentsbx_only, build):
    """tmpfs on /evil/x, /evil -> a host dir holding x: agentsbx mounts it
    inside the rootfs (the container sees it); the weak build mounts it on
    the host's directory (in the container's mount namespace, outside the
    new root: the container does not see its tmpfs at all)."""
    runtime = pick_runtime(build, "resolve-in-root")
    host = env.hostdir("hostdir")
    os.mkdir(os.path.join(host, "x"))
    with open(os.path.join(host, "x", "host-file"), "w") as f:
        f.write("host\n")
    bundle = env.make_bundle()
    rootfs = os.path.join(bundle, "rootfs")
    os.makedirs(os.path.join(_mirror(rootfs, host), "x"))
    os.symlink(host, os.path.join(rootfs, "evil"))
    spec = make_spec(["sh", "-c", "grep ' %s/x ' /proc/self/mountinfo; ls -a %s/x"
                      % (host, quote(host))])
    add_mount(spec, "/evil/x", "tmpfs", "tmpfs", ["size=64k"])
    write_spec(bundle, spec)
    cid = env.new_id()
    rc, out, err = rt_as(env, runtime, "run", "--bundle", bundle, cid)
    assert sorted(os.listdir(host)) == ["x"] and os.listdir(os.path.join(host, "x")) == ["host-file"]
    if build == "real":
        assert rc == 0, (rc, out, err)
        assert " tmpfs " in out, "the tmpfs is not inside the container:\n" + out
    else:
        assert "tmpfs" not in out, (
            "weak build: the tmpfs landed inside the rootfs, attack not shown:\n" + out)


# =============================================================================
# CVE-2024-21626: process.cwd "/proc/self/fd/N", N a host directory fd the
# runtime leaked into the process (runc: a cgroup dir fd), makes the cwd a
# host directory.  Defence: the cwd is resolved in the container's root
# with no magic links.  Weak switch: "cwd-in-root" (plain chdir()).  In an
# `exec` clone of the weak build, fds 3 and 4 are the state root and the
# container's state directory on the host (the real build closes them before
# it joins the container: runtime/lifecycle/exec.c drop_host_fds).

@pytest.mark.parametrize("build", BUILDS)
def test_cve_2024_21626_exec_cwd_leaked_fd(env, agentsbx_only, build):
    runtime = pick_runtime(build, "cwd-in-root")
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    escaped, results = [], {}
    for n in range(3, 11):
        rc, out, err = rt_as(env, runtime, "exec", "--cwd", "/proc/self/fd/%d" % n, cid,
                             "sh", "-c", "readlink /proc/self/cwd; ls -a ../../..")
        results[n] = (rc, out, err.strip())
        if rc == 0:
            cwd = out.splitlines()[0]
            if cwd.startswith(env.tmp) or not cwd.startswith("/"):
                escaped.append((n, cwd))
    if build == "real":
        assert not escaped, "CVE-2024-21626: exec cwd is a host directory: %s" % escaped
        for n, (rc, out, err) in results.items():
            assert rc != 0, (n, out)  # refused: a magic link, not a dir in the root
            assert "process.cwd" in err, (n, err)
    else:
        assert escaped, "weak build: no fd gave a host cwd: %s" % results
        assert any(cwd.startswith(env.root) for _, cwd in escaped), escaped


@pytest.mark.parametrize("cwd", ["/proc/self/fd/%d" % n for n in range(3, 8)]
                         + ["/proc/1/cwd", "/proc/self/root/.."])
def test_cve_2024_21626_run_cwd_magic_link_refused(env, agentsbx_only, cwd):
    rc, out, err = env.run(make_spec(["sh", "-c", "readlink /proc/self/cwd"],
                                     process__cwd=cwd))
    if rc == 0:
        assert not out.startswith(env.tmp) and out.startswith("/"), out
    else:
        assert "cwd" in err, err


# =============================================================================
# CVE-2025-31133: /dev/null swapped for a symlink to a host file, so that
# masking a path with "/dev/null" binds that file read-write.  The masked
# file used is /proc/keys (in runc's default maskedPaths; /proc/kcore is
# not built into every kernel, this one's included).
#
# agentsbx never looks at the rootfs's /dev/null for masks: it opens the
# host's (its own) /dev/null, O_NOFOLLOW, and checks it is the char device
# 1:3.  So the planted symlink is moot for the real AND the weak build
# (first test).  The weak switch "devnull-check" drops the 1:3 check: the
# second test swaps the runtime's own /dev/null (in a private mount
# namespace around the runtime, i.e. the attacker managed to tamper with the
# runtime's view) for a disposable host file.

MASKED = "/proc/keys"


def _need_proc_file(path):
    if not os.path.exists(path):
        pytest.skip("%s is not in this kernel" % path)


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2025_31133_rootfs_dev_null_symlink_is_moot(env, agentsbx_only, build):
    _need_proc_file(MASKED)
    runtime = pick_runtime(build, "devnull-check")
    victim = os.path.join(env.tmp, "host-victim")
    with open(victim, "w") as f:
        f.write("host secret\n")
    bundle = env.make_bundle()
    rootfs = os.path.join(bundle, "rootfs")
    os.symlink(victim, os.path.join(rootfs, "dev", "null"))
    spec = _no_dev_tmpfs(make_spec(
        ["sh", "-c", "stat -c '%%F %%t:%%T' %s /dev/null; cat %s; echo pwned > %s; "
                     "echo rc=$?" % (MASKED, MASKED, MASKED)]))
    rc, out, err = run_as(env, runtime, spec, bundle=bundle)
    assert rc == 0, (rc, out, err)
    lines = out.splitlines()
    assert lines[0] == "character special file 1:3", out
    assert lines[1] == "character special file 1:3", out
    assert "host secret" not in out
    with open(victim) as f:
        assert f.read() == "host secret\n"


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2025_31133_swapped_runtime_dev_null(env, agentsbx_only, build):
    _need_proc_file(MASKED)
    runtime = pick_runtime(build, "devnull-check")
    fake = os.path.join(env.tmp, "fake-null")
    with open(fake, "w") as f:
        f.write("host file\n")
    bundle = env.make_bundle()
    write_spec(bundle, make_spec(["sh", "-c", "cat %s; echo pwned > %s" % (MASKED, MASKED)]))
    cid = env.new_id()
    script = "mount --bind %s /dev/null && exec %s" % (
        quote(fake), " ".join(quote(a) for a in argv_as(env, runtime, "run", "--bundle",
                                                         bundle, cid)))
    rc, out, err = in_private_mountns(script)
    with open(fake) as f:
        content = f.read()
    if build == "real":
        assert rc != 0, "masked with a host file: %s %s" % (out, content)
        assert "/dev/null is not the null device" in err, err
        assert content == "host file\n"
    else:
        assert rc == 0, (rc, out, err)
        assert out == "host file\n", out  # the container read the host file...
        assert content == "pwned\n", content  # ...and wrote it


# =============================================================================
# CVE-2025-52565: /dev/console (or /dev/pts/N) in the rootfs is a symlink,
# so the bind of the console pty lands on the symlink's target.  agentsbx
# gets the pty peer with TIOCGPTPEER (no /dev/pts/N lookup at all) and
# binds it onto /dev/console created in the root, no magic links.  Weak
# switch: "console-nofollow" (plain open(), following everything).

def _console_create(env, runtime, bundle):
    cs = ConsoleSocket(env.tmp)
    try:
        cid = env.new_id()
        rc, out, err = rt_as(env, runtime, "create", "--bundle", bundle,
                             "--console-socket", cs.path, cid)
        mounts = []
        if rc == 0:
            pid = _state_pid(env, runtime, cid)
            mounts = mountinfo_of(pid)
        return rc, err, mounts
    finally:
        cs.close()


def _console_bundle(env, target, victim_text="victim\n"):
    bundle = env.make_bundle("b-" + os.urandom(3).hex())
    rootfs = os.path.join(bundle, "rootfs")
    with open(os.path.join(rootfs, "victim"), "w") as f:
        f.write(victim_text)
    con = os.path.join(rootfs, "dev", "console")
    if os.path.lexists(con):
        os.unlink(con)
    os.symlink(target, con)
    spec = _no_dev_tmpfs(make_spec(["sleep", "1000"], process__terminal=True))
    write_spec(bundle, spec)
    return bundle


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2025_52565_console_magic_link(env, agentsbx_only, build):
    runtime = pick_runtime(build, "console-nofollow")
    bundle = _console_bundle(env, "/proc/self/root/victim")
    rc, err, mounts = _console_create(env, runtime, bundle)
    on_victim = [m for m in mounts if m[0] == "/victim"]
    if build == "real":
        assert not on_victim, "the console pty was bound on /victim: %s" % on_victim
        assert rc != 0, mounts
        assert "/dev/console" in err, err
    else:
        assert rc == 0, err
        assert on_victim and on_victim[0][2] == "devpts", mounts


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("target", ["/victim", "../victim", "/proc/keys"])
def test_cve_2025_52565_console_symlink(env, agentsbx_only, build, target):
    """A plain symlink /dev/console -> TARGET: agentsbx must not bind the
    pty over TARGET (it may refuse, or bind onto a /dev/console file of its
    own).  The weak build follows it."""
    runtime = pick_runtime(build, "console-nofollow")
    if target.startswith("/proc/"):
        _need_proc_file(target)
    bundle = _console_bundle(env, target)
    rc, err, mounts = _console_create(env, runtime, bundle)
    where = os.path.normpath(os.path.join("/dev", target))
    redirected = [m for m in mounts if m[0] == where and m[2] == "devpts"]
    if build == "real":
        assert not redirected, (
            "CVE-2025-52565: the /dev/console symlink redirected the pty bind "
            "onto %s: %s" % (where, redirected))
        if rc == 0:
            console = [m for m in mounts if m[0] == "/dev/console"]
            assert console and console[0][2] == "devpts", mounts
        else:
            assert "/dev/console" in err, err
    else:
        assert rc == 0, err
        assert redirected, mounts


# =============================================================================
# CVE-2025-52881: a (shared-mount) race redirects the runtime's writes to
# /proc (sysctls, LSM labels) to another file.  agentsbx writes sysctls
# through its own procfs handle, O_NOFOLLOW, and checks with fstatfs that
# the opened file is on procfs.  Weak switch: "proc-fstatfs".  The redirect
# is modelled by a decoy directory bound over /proc/sys/kernel in a private
# mount namespace around the runtime (what the race achieves).  (A bind
# over the file /proc/sys/kernel/msgmnb itself would not do: the ipc
# sysctls of the container's new ipc namespace are other dentries.)

@pytest.mark.parametrize("key", ["net/ipv4/ip_forward", "net..ipv4.ip_forward",
                                 ".net.ipv4.ip_forward", "net.ipv4.ip_forward.",
                                 "kernel.core_pattern", "kernel.hostname",
                                 "vm.overcommit_memory", "fs.mqueue/../../kernel/core_pattern",
                                 "kernel.msgmnb/../core_pattern"])
def test_sysctl_bad_keys_refused(env, agentsbx_only, key):
    with open("/proc/sys/kernel/core_pattern") as f:
        core = f.read()
    rc, out, err = env.run(make_spec(["true"], linux__sysctl={key: "1"}))
    assert rc != 0, "sysctl %r accepted" % key
    assert "sysctl" in err, err
    with open("/proc/sys/kernel/core_pattern") as f:
        assert f.read() == core


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2025_52881_sysctl_write_redirected(env, agentsbx_only, build):
    runtime = pick_runtime(build, "proc-fstatfs")
    decoy_dir = env.hostdir("decoy")
    decoy = os.path.join(decoy_dir, "msgmnb")
    with open(decoy, "w") as f:
        f.write("untouched\n")
    bundle = env.make_bundle()
    write_spec(bundle, make_spec(["cat", "/proc/sys/kernel/msgmnb"],
                                 linux__sysctl={"kernel.msgmnb": "23456"}))
    cid = env.new_id()
    script = "mount --bind %s /proc/sys/kernel && exec %s" % (
        quote(decoy_dir), " ".join(quote(a) for a in argv_as(env, runtime, "run", "--bundle",
                                                          bundle, cid)))
    rc, out, err = in_private_mountns(script)
    with open(decoy) as f:
        content = f.read()
    if build == "real":
        assert rc != 0, "sysctl write went to a non-procfs file: %r" % content
        assert "not on procfs" in err, err
        assert content == "untouched\n"
    else:
        assert rc == 0, (rc, out, err)
        assert content.startswith("23456"), content  # the write was redirected...
        assert out.strip() != "23456", out  # ...and never reached the container


# =============================================================================
# CVE-2023-25809: a cgroup mount that is not "ro", in a container without a
# cgroup namespace, exposes the host's cgroupfs (here: the container's own
# cgroup dirs, bound in) read-write.  agentsbx forces it read-only.  Weak
# switch: "cgroup-ro".  The write is harmless: pids.max of the container's
# own cgroup.

@pytest.mark.parametrize("build", BUILDS)
def test_cve_2023_25809_cgroup_mount_forced_readonly(env, agentsbx_only, build):
    runtime = pick_runtime(build, "cgroup-ro")
    spec = make_spec(["sleep", "1000"])
    for m in spec["mounts"]:
        if m["destination"] == "/sys/fs/cgroup":
            m["options"] = [o for o in m["options"] if o != "ro"]
    assert "cgroup" not in [n["type"] for n in spec["linux"]["namespaces"]]
    bundle = env.make_bundle()
    write_spec(bundle, spec)
    cid = env.new_id()
    rt_as(env, runtime, "run", "-d", "--bundle", bundle, cid, check=True)
    pid = _state_pid(env, runtime, cid)
    with open("/proc/%d/cgroup" % pid) as f:
        cg = {l.split(":")[1]: l.strip().split(":", 2)[2] for l in f}
    ctl = "pids" if "pids" in cg and os.path.isdir("/sys/fs/cgroup/pids") else ""
    knob_inside = "/sys/fs/cgroup/pids/pids.max" if ctl else "/sys/fs/cgroup/pids.max"
    host_knob = ("/sys/fs/cgroup/pids%s/pids.max" % cg["pids"] if ctl
                 else "/sys/fs/cgroup%s/pids.max" % cg[""])
    with open(host_knob) as f:
        before = f.read().strip()
    rc, out, err = rt_as(env, runtime, "exec", cid, "sh", "-c",
                         "echo 4242 > %s && echo written; grep ' /sys/fs/cgroup' "
                         "/proc/self/mountinfo" % knob_inside)
    with open(host_knob) as f:
        after = f.read().strip()
    if build == "real":
        assert "written" not in out and after == before, (
            "CVE-2023-25809: the container wrote %s: %s" % (host_knob, after))
        assert "Read-only file system" in err, err
    else:
        assert "written" in out and after == "4242", (rc, out, err)


# =============================================================================
# CVE-2017-5226: a container process without a terminal shares the
# caller's terminal; if it is in the caller's session, ioctl(TIOCSTI)
# pushes keystrokes that the caller's shell then runs.  agentsbx puts the
# container process in a session of its own (setsid).  Weak switch:
# "setsid".  The "caller's terminal" is a pty the test made, the runtime
# is started in a new session that has it as controlling terminal (setsid
# -c), and the pushed text is a harmless marker that nothing executes.

def _legacy_tiocsti():
    try:
        with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
            return f.read().strip() == "1"
    except OSError:
        return True  # older kernels: TIOCSTI always allowed


def _drain(fd, timeout=1.0):
    data = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            if data:
                break
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


@pytest.mark.parametrize("build", BUILDS)
def test_cve_2017_5226_tiocsti(env, agentsbx_only, build):
    runtime = pick_runtime(build, "setsid")
    marker = "AGENTSBX-TIOCSTI-%s" % os.urandom(3).hex()
    out_dir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "tiocsti 0 %s > /h/out 2>&1" % marker])
    add_mount(spec, "/h", "bind", out_dir, ["rbind", "rw"])
    bundle = env.make_bundle()
    write_spec(bundle, spec)
    master, slave = os.openpty()
    try:
        tty_path = os.ttyname(slave)
        cid = env.new_id()
        # A new session whose controlling terminal is the pty, as an
        # interactive shell would be; the runtime inherits it on fd 0.
        p = spawn(["sh", "-c", 'exec setsid -c "$@" < "$0"', tty_path]
                  + argv_as(env, runtime, "run", "--bundle", bundle, cid))
        rc, out, err = p.wait(timeout=30)
        echoed = _drain(master)
    finally:
        os.close(slave)
        os.close(master)
    assert rc == 0, (rc, out, err)
    with open(os.path.join(out_dir, "out")) as f:
        kv = kv_lines(f.read())
    assert kv["isatty"] == "1", kv  # the container's stdin is the caller's tty
    if build == "real":
        assert kv["tiocsti"] != "OK" and marker.encode() not in echoed, (
            "CVE-2017-5226: the container pushed input into the caller's tty: %s %r"
            % (kv, echoed))
        assert kv["tiocsti"] == "EPERM", kv
        assert kv["ctty"] == "0" and kv["sid"] == "1", kv  # a session of its own
    else:
        assert kv["ctty"] == "1", kv  # the caller's session and terminal...
        if not _legacy_tiocsti():
            # dev.tty.legacy_tiocsti = 0: the kernel refuses TIOCSTI to
            # anyone without CAP_SYS_ADMIN, session or not; the session
            # difference above is all there is to show.
            assert kv["tiocsti"] == "EIO", kv
            return
        assert kv["tiocsti"] == "OK", kv  # ...so the keystrokes went in
        assert marker.encode() in echoed, echoed
