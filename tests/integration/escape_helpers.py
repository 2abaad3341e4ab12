# SPDX-License-Identifier: Apache-2.0
"""Helpers for test_escapes.py, test_seccomp.py and test_caps.py.

Weakened builds
---------------
`make weak-NAME` builds build-weak-NAME/agentsbx from this checkout with the
one defence NAME turned off (lib/weaken.h).  weak_runtime(NAME) builds it
once per session (make is incremental anyway) and returns its path.  The
escape tests run each attack twice, against $AGENTSBX ("real") and against
the weak build ("weak"): the attack must fail against the first and succeed
against the second, so that no test can pass because its attack never
worked in the first place.

Both runtimes share the test's state root: the state format is the same,
and the teardown (which uses $AGENTSBX) can delete whatever either made.
"""

import array
import os
import shutil
import socket
import stat
import threading
import time

import pytest

from conftest import RUNTIME, run_cmd, spawn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_WEAK = {}
_WEAK_LOCK = threading.Lock()


def weak_runtime(name):
    """Path of build-weak-NAME/agentsbx, built on first use in the session."""
    with _WEAK_LOCK:
        if name not in _WEAK:
            rc, out, err = run_cmd(["make", "-C", REPO, "weak-" + name],
                                   timeout=600)
            path = os.path.join(REPO, "build-weak-" + name, "agentsbx")
            if rc != 0 or not os.access(path, os.X_OK):
                _WEAK[name] = AssertionError(
                    "make weak-%s failed (rc %d):\n%s\n%s" % (name, rc, out[-3000:],
                                                            err[-3000:]))
            else:
                _WEAK[name] = path
        got = _WEAK[name]
    if isinstance(got, Exception):
        raise got
    return got


def pick_runtime(build, weak_name):
    """"real" -> $AGENTSBX; "weak" -> the build without weak_name."""
    if build == "real":
        return RUNTIME
    return weak_runtime(weak_name)


BUILDS = ["real", "weak"]


def argv_as(env, runtime, *args):
    """env.argv() with another runtime binary: the test's state root and
    policy arguments (the policy is off for these OCI-level tests: the
    defences under test are the runtime's own, below any policy)."""
    return [runtime, "--root", env.root] + list(getattr(env, "policy_args", [])) + \
        [str(a) for a in args]


def rt_as(env, runtime, *args, check=False, timeout=30, **kw):
    """Run `runtime --root <the test's root> ARGS`; (rc, out, err)."""
    argv = argv_as(env, runtime, *args)
    rc, out, err = run_cmd(argv, timeout=timeout, **kw)
    if check:
        assert rc == 0, "%s %s -> rc %d\nstdout: %s\nstderr: %s" % (
            runtime, " ".join(map(str, args)), rc, out, err)
    return rc, out, err


def run_as(env, runtime, spec=None, bundle=None, extra=(), **kw):
    """`run` (foreground) a container with the given runtime."""
    from conftest import write_spec
    bundle = bundle or env.default_bundle()
    if spec is not None:
        write_spec(bundle, spec)
    cid = env.new_id()
    return rt_as(env, runtime, "run", "--bundle", bundle, *extra, cid, **kw)


def copy_runtime(env, runtime, name="agentsbx"):
    """A private, disposable copy of a runtime binary (in the test's temp
    dir): what the CVE-2019-5736 tests run, so that even a successful
    attack on "the runtime binary" cannot touch a real one."""
    d = os.path.join(env.tmp, "rt-" + os.urandom(4).hex())
    os.mkdir(d)
    os.chmod(d, 0o755)
    dst = os.path.join(d, name)
    shutil.copy2(runtime, dst)
    os.chmod(dst, 0o755)
    return dst


def file_digest(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def wait_file_contains(path, text, timeout=30, interval=0.05):
    """Wait until path exists and contains text; return its content (or
    whatever it holds at the deadline)."""
    deadline = time.time() + timeout
    data = ""
    while True:
        try:
            with open(path, errors="replace") as f:
                data = f.read()
        except OSError:
            data = ""
        if text in data or time.time() > deadline:
            return data
        time.sleep(interval)


def copy_dynamic_deps(binary, rootfs):
    """Copy the ELF interpreter and shared libraries of binary into rootfs
    (same paths): what a hostile image needs to make the host's runtime
    binary runnable inside the container."""
    rc, out, err = run_cmd(["ldd", binary], timeout=30)
    paths = []
    for line in out.splitlines():
        for tok in line.split():
            if tok.startswith("/"):
                paths.append(tok)
    for p in paths:
        dst = os.path.join(rootfs, p.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.realpath(p), dst)
    return paths


# --------------------------------------------------------------------------
# Console socket: receives the pty master a `create` with terminal true sends

class ConsoleSocket:
    def __init__(self, directory):
        self.path = os.path.join(directory, "console-%s.sock" % os.urandom(3).hex())
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)
        self.sock.settimeout(20)
        self.masters = []
        self.errors = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        try:
            conn, _ = self.sock.accept()
        except OSError as e:
            self.errors.append(e)
            return
        with conn:
            conn.settimeout(20)
            try:
                fds = array.array("i")
                msg, anc, flags, addr = conn.recvmsg(
                    16, socket.CMSG_SPACE(4 * fds.itemsize))
                for level, typ, data in anc:
                    if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                        fds.frombytes(data[:len(data) - len(data) % fds.itemsize])
                self.masters.extend(fds)
            except OSError as e:
                self.errors.append(e)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass
        self._thread.join(timeout=5)
        for fd in self.masters:
            try:
                os.close(fd)
            except OSError:
                pass
        self.masters = []
        try:
            os.unlink(self.path)
        except OSError:
            pass


# --------------------------------------------------------------------------
# Mount info of a process, from the host

def mountinfo_of(pid):
    """[(mount point, root, fstype, source)] of /proc/PID/mountinfo."""
    out = []
    with open("/proc/%d/mountinfo" % pid) as f:
        for line in f:
            left, right = line.split(" - ", 1)
            lf, rf = left.split(), right.split()
            out.append((lf[4], lf[3], rf[0], rf[1]))
    return out


def is_char_dev(path, major, minor):
    st = os.stat(path)
    return stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == major and \
        os.minor(st.st_rdev) == minor


def unshare_available():
    return shutil.which("unshare") is not None


def in_private_mountns(script, timeout=60):
    """Run `sh -c script` in a new, private mount namespace (util-linux
    unshare): host mounts made there (a file bound over /dev/null or a
    /proc/sys file, to model a runtime whose view was tampered with) vanish
    with it.  Returns (rc, out, err)."""
    if not unshare_available():
        pytest.skip("no unshare(1)")
    return run_cmd(["unshare", "--mount", "--propagation", "private",
                    "/bin/sh", "-c", script], timeout=timeout)


def quote(s):
    return "'" + str(s).replace("'", "'\\''") + "'"


def spawn_rt(env, runtime, *args, **kw):
    return spawn(argv_as(env, runtime, *args), **kw)
