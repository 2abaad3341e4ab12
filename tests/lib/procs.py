# SPDX-License-Identifier: Apache-2.0
"""
Processes and host state for the suites that drive the real engines
(tests/e2e, tests/attacks) and build images (tests/sandbox too): spawning
children with an orphan reaper, pty sessions, and the host bookkeeping the
leftover checks read (cgroups, mounts, namespaces, processes).

PID 1 on the test machines never reaps orphans, and shims and conmon
daemonize.  So, as tests/integration does, a suite that starts engines
calls start_reaper() (tests/lib/engines.py does, at import): the pytest
process becomes a child subreaper and a thread reaps the zombies
re-parented to it (never a child a Popen object is waiting for).  Start
processes only through spawn()/run() here.  Without start_reaper()
(tests/sandbox) nothing changes in the process: run() is a plain Popen.

Run such a suite in a pytest process of its own (not together with
tests/integration, whose orphan reaper would take this one's children).
"""

import ctypes
import errno
import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import tempfile
import termios
import threading
import time

import pytest

DEFAULT_TIMEOUT = 60
KEEP = os.environ.get("E2E_KEEP", "") not in ("", "0")

# --------------------------------------------------------------------------
# Subreaper, spawning

PR_SET_CHILD_SUBREAPER = 36

_SPAWN_LOCK = threading.Lock()
_OWN_PIDS = set()
_MYPID = os.getpid()
_REAPER = []


def proc_stat(pid):
    """(state, ppid) of pid, or None."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    return rest[0], int(rest[1])


def proc_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def reap_orphans():
    with _SPAWN_LOCK:
        for pid in all_pids():
            if pid in _OWN_PIDS:
                continue
            st = proc_stat(pid)
            if st is None or st[1] != _MYPID or st[0] != "Z":
                continue
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _reaper_loop():
    while True:
        time.sleep(0.05)
        try:
            reap_orphans()
        except Exception:
            pass


def start_reaper():
    """Make this process a child subreaper and start the thread that reaps
    its adopted orphans (once per process)."""
    with _SPAWN_LOCK:
        if _REAPER:
            return
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        t = threading.Thread(target=_reaper_loop, name="e2e-orphan-reaper", daemon=True)
        _REAPER.append(t)
    t.start()


class Proc:
    """A child process.  Output goes to temp files (a daemonizing child
    would keep a pipe open forever), unless stdin/stdout/stderr fds are
    given (the pty sessions)."""

    def __init__(self, argv, env=None, input=None, cwd=None, stdin=None,
                 stdout=None, stderr=None, preexec_fn=None):
        self.argv = [str(a) for a in argv]
        self._files = stdout is None
        if self._files:
            self._out = tempfile.TemporaryFile()
            self._err = tempfile.TemporaryFile()
            stdout, stderr = self._out, self._err
        if stdin is None:
            self._in = tempfile.TemporaryFile()
            if input is not None:
                self._in.write(input.encode() if isinstance(input, str) else input)
                self._in.seek(0)
            stdin = self._in
        with _SPAWN_LOCK:
            self.popen = subprocess.Popen(
                self.argv, stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                cwd=cwd, close_fds=True, preexec_fn=preexec_fn)
            _OWN_PIDS.add(self.popen.pid)
        self.pid = self.popen.pid
        self.rc = None

    def poll(self):
        rc = self.popen.poll()
        if rc is not None:
            self._done(rc)
        return rc

    def _done(self, rc):
        self.rc = rc
        with _SPAWN_LOCK:
            _OWN_PIDS.discard(self.pid)

    def wait(self, timeout=DEFAULT_TIMEOUT, check_timeout=True):
        """Wait and return (rc, stdout, stderr); on timeout kill the child
        and fail."""
        try:
            rc = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            self._done(-9)
            out, err = self.output()
            if check_timeout:
                raise AssertionError("timed out after %ss: %s\nstdout: %s\nstderr: %s"
                                     % (timeout, " ".join(self.argv), out[-3000:], err[-3000:]))
            return None, out, err
        self._done(rc)
        out, err = self.output()
        return rc, out, err

    def output(self):
        if not self._files:
            return "", ""
        res = []
        for f in (self._out, self._err):
            f.seek(0)
            res.append(f.read().decode("utf-8", "replace"))
        return res[0], res[1]

    def kill(self, sig=signal.SIGKILL):
        if self.rc is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass


def spawn(argv, **kw):
    return Proc(argv, **kw)


class OwnedPopen(subprocess.Popen):
    """A subprocess.Popen that the orphan reaper leaves alone: for code
    under test that starts its processes itself (the agentsbx Python
    package, tests/python, gets it as its Popen).  Its pid is in _OWN_PIDS
    from the fork until its exit status is collected; SPAWNED keeps every
    pid it had (the leftover checks look for what they made)."""

    SPAWNED = set()

    def __init__(self, *args, **kw):
        with _SPAWN_LOCK:
            super().__init__(*args, **kw)
            _OWN_PIDS.add(self.pid)
            OwnedPopen.SPAWNED.add(self.pid)

    def _released(self, rc):
        if rc is not None:
            with _SPAWN_LOCK:
                _OWN_PIDS.discard(self.pid)
        return rc

    def poll(self):
        return self._released(super().poll())

    def wait(self, timeout=None):
        return self._released(super().wait(timeout))


class Result:
    def __init__(self, argv, rc, out, err):
        self.argv, self.rc, self.out, self.err = argv, rc, out, err

    def __repr__(self):
        return "<%s rc=%s\n--- stdout:\n%s\n--- stderr:\n%s>" % (
            " ".join(self.argv), self.rc, self.out[-4000:], self.err[-4000:])

    __str__ = __repr__

    def ok(self):
        assert self.rc == 0, "command failed: %r" % self
        return self


def run(argv, timeout=DEFAULT_TIMEOUT, **kw):
    p = spawn(argv, **kw)
    rc, out, err = p.wait(timeout=timeout)
    return Result(p.argv, rc, out, err)


def poll_until(fn, timeout=10.0, interval=0.1):
    """Call fn() until it returns something falsy-free (truthy); return the
    last value."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(interval)


def wait_clean(fn, timeout=10.0, interval=0.1):
    """fn() returns a list of leftovers; poll until it is empty or the
    timeout passes; return the last list (empty when clean)."""
    end = time.monotonic() + timeout
    while True:
        left = fn()
        if not left or time.monotonic() > end:
            return left
        time.sleep(interval)


# --------------------------------------------------------------------------
# Pseudo-terminal sessions (docker run -it, docker exec -it, ...)

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")


class PtySession:
    """Runs argv with a pty as its stdin/stdout/stderr and controlling
    terminal (through `setsid -w -c`, so that a resize of the pty sends
    SIGWINCH to it, as a terminal emulator does)."""

    def __init__(self, argv, rows=24, cols=80, env=None):
        self.master, slave = os.openpty()
        self.set_size(rows, cols, fd=slave)
        self.proc = spawn(["setsid", "-w", "-c"] + list(argv), env=env,
                          stdin=slave, stdout=slave, stderr=slave)
        os.close(slave)
        self.raw = b""
        self.pos = 0  # expect() consumes self.text up to here
        self.eof = False

    @staticmethod
    def _winsize(rows, cols):
        return struct.pack("HHHH", rows, cols, 0, 0)

    def set_size(self, rows, cols, fd=None):
        fcntl.ioctl(self.master if fd is None else fd, termios.TIOCSWINSZ,
                    self._winsize(rows, cols))

    @property
    def text(self):
        return ANSI_RE.sub("", self.raw.decode("utf-8", "replace"))

    def _read(self, timeout):
        if self.eof:
            time.sleep(min(timeout, 0.05))
            return
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            data = b""
        if not data:
            self.eof = True
            return
        self.raw += data

    def expect(self, pattern, timeout=20):
        """Wait for regex `pattern` in the output after the last match;
        return the match."""
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        while True:
            m = rx.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > end or (self.eof and self.proc.poll() is not None):
                raise AssertionError("pty: %r not seen in %ss; output so far:\n%r"
                                     % (pattern, timeout, self.text[-3000:]))
            self._read(0.1)

    def send(self, s):
        os.write(self.master, s.encode() if isinstance(s, str) else s)

    def expect_stty_size(self, rows, cols, timeout=15):
        """Type `stty size` until it prints "rows cols".  The engines set
        the container's terminal size after the process has started
        (docker 20.10 resizes after `start`; runc shows the same race), so
        the first answer may still be the size 0x0 ("stty: standard
        input")."""
        end = time.monotonic() + timeout
        seen = []
        while time.monotonic() < end:
            self.send("stty size\r")
            m = self.expect(r"stty size\n(.*)\n", timeout=10)
            seen.append(m.group(1))
            if m.group(1).strip() == "%d %d" % (rows, cols):
                return
            time.sleep(0.2)
        raise AssertionError("stty size never said %d %d: %r" % (rows, cols, seen))

    def wait(self, timeout=30):
        end = time.monotonic() + timeout
        while self.proc.poll() is None:
            if time.monotonic() > end:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("pty: %s did not exit in %ss; output:\n%r"
                                     % (" ".join(self.proc.argv), timeout, self.text[-3000:]))
            self._read(0.1)
        # drain what is left
        for _ in range(20):
            if self.eof:
                break
            self._read(0.05)
        return self.proc.rc

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        try:
            os.close(self.master)
        except OSError:
            pass


# --------------------------------------------------------------------------
# Host bookkeeping: what existed before the session, what is left after

def cgroup_hierarchies():
    """Mount points of every cgroup hierarchy (v1 controllers, name=systemd,
    the unified one)."""
    res = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            fstype = parts[parts.index("-") + 1]
            if fstype in ("cgroup", "cgroup2"):
                res.append(parts[4])
    return sorted(set(res))


def cgroup_children(rel):
    """Sub-directories of the cgroup `rel` (e.g. "agentsbx-e2e-x") in every
    hierarchy."""
    res = []
    for h in cgroup_hierarchies():
        p = os.path.join(h, rel.strip("/"))
        if os.path.isdir(p):
            res += [os.path.join(p, d) for d in os.listdir(p)
                    if os.path.isdir(os.path.join(p, d))]
    return res


def rmdir_cgroup_tree(rel):
    """rmdir the (empty) cgroup `rel` and its sub-cgroups in every
    hierarchy, deepest first; return what could not be removed."""
    left = []
    for h in cgroup_hierarchies():
        top = os.path.join(h, rel.strip("/"))
        if not os.path.isdir(top):
            continue
        for dirpath, dirnames, _ in sorted(os.walk(top), key=lambda t: -len(t[0])):
            for _ in range(50):
                try:
                    os.rmdir(dirpath)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                left.append(dirpath)
    return left


def mounts_under(prefix):
    res = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].replace("\\040", " ")
            if mp == prefix or mp.startswith(prefix.rstrip("/") + "/"):
                res.append(mp)
    return res


def netns_mounts():
    res = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            fstype = parts[parts.index("-") + 1]
            if fstype == "nsfs":
                res.append(parts[4])
    return res


def pids_with_arg(substr, comm_prefix=None):
    """Live (non-zombie) processes whose argv mentions substr."""
    res = []
    for pid in all_pids():
        if pid == _MYPID:
            continue
        st = proc_stat(pid)
        if st is None or st[0] == "Z":
            continue
        argv = proc_cmdline(pid)
        if not argv or not any(substr in a for a in argv):
            continue
        if comm_prefix and not os.path.basename(argv[0]).startswith(comm_prefix):
            continue
        res.append(pid)
    return res


def state_entries(root):
    """Container state directories under a runtime --root (the seccomp
    cache is the runtime's own, not a container's)."""
    try:
        return sorted(e for e in os.listdir(root) if e != ".seccomp-cache")
    except FileNotFoundError:
        return []


def kill_pids(pids, sig=signal.SIGKILL):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def only_empty_dirs(path, allowed_files=()):
    for dirpath, _, files in os.walk(path):
        for f in files:
            if f not in allowed_files:
                return False
    return True


def stop_process(proc, name, timeout=30):
    """SIGTERM a daemon we started, then SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    proc.kill(signal.SIGTERM)
    rc, _, _ = proc.wait(timeout=timeout, check_timeout=False)
    if rc is None:
        proc.kill(signal.SIGKILL)
        proc.wait(timeout=10, check_timeout=False)


def umount_all_under(prefix):
    """Unmount (deepest first) whatever is left mounted under prefix;
    return the list of mount points found."""
    left = mounts_under(prefix)
    for mp in sorted(left, key=len, reverse=True):
        run(["umount", mp])
    return left


def leftover_report(name, items):
    return ["%s: %s" % (name, items)] if items else []


# --------------------------------------------------------------------------
# Skips nobody can miss

_SKIP_BANNERS = []


def loud_skip(reason):
    _SKIP_BANNERS.append(reason)
    pytest.skip(reason)


def pytest_terminal_summary(terminalreporter):
    for reason in _SKIP_BANNERS:
        terminalreporter.write_sep("!", "E2E TESTS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(reason, red=True)
