# SPDX-License-Identifier: Apache-2.0
"""
End-to-end suite: agentsbx driven by the real callers.  The helpers and
fixtures live here (conftest.py re-exports the fixtures), under a name of
their own so that tests/integration/conftest.py never shadows them.

    AGENTSBX=$PWD/agentsbx /usr/bin/python3 -m pytest -q -p no:cacheprovider -rsx tests/e2e

  - Docker (Debian's dockerd 20.10 + its own containerd + containerd-shim-runc-v2),
    `docker run --runtime agentsbx ...`: tests/e2e/test_docker.py
  - containerd's `ctr` with the io.containerd.runc.v2 shim and --runc-binary:
    tests/e2e/test_ctr.py
  - `podman --runtime <binary>` (podman 4.3 + conmon 2.1 from Debian):
    tests/e2e/test_podman.py

Needs root and the Debian packages docker.io, containerd, podman, conmon,
busybox-static (tests/e2e/README-snippets.md lists them).  Nothing is pulled
from a registry: one busybox-static rootfs is built per session and imported
into each engine (`docker import`, `ctr images import` of an OCI archive made
here, `podman import`).

Environment:
  AGENTSBX      the runtime under test (default: ./agentsbx of this checkout)
  E2E_DOCKERD, E2E_DOCKER, E2E_CONTAINERD, E2E_CTR, E2E_PODMAN
                the engine binaries (defaults: Debian's, by absolute path;
                /usr/local/bin/docker is a newer client, not used)
  E2E_TRACE=DIR every engine calls a logging wrapper instead of the runtime:
                DIR/invocations.log gets the argv of every call (with the
                caller's name and the exit status) and DIR/runtime-logs.log
                the lines each call added to its --log file.  That is how
                the invocation list in the README was made.
  E2E_KEEP=1    keep the session's temp dir (logs of dockerd/containerd).

agentsbx's sandbox policy: the compatibility tests (everything the issue
lists for Docker) run agentsbx with {"mode": "off"}, a plain OCI runtime,
as tests/integration does; the Docker tests named test_policy_* run it
under its built-in default floor (runtime "agentsbx-policy"), and so do the
ctr and podman tests: that is what a user of those engines gets.  See
setup_policy().  With a runtime that has no `policy` command (runc, as a
control run: AGENTSBX=/usr/sbin/runc) no --policy is passed and the
test_policy_* tests are skipped.

Isolation and cleanliness.  Every daemon is started by this process with
its own state under one temp dir (/tmp/agentsbx-e2e-*): dockerd with its own
--data-root, --exec-root, --pidfile, socket and no bridge/iptables (it
starts its own containerd under the exec-root); a second containerd for ctr;
podman with its own --root/--runroot/--tmpdir and a private containers.conf
and storage.conf.  Each engine's fixture checks after EVERY test that no
container state is left under the runtime's --root, no cgroup directory is
left for the test's containers, no mount is left under the temp dir, no new
namespace (nsfs) mount exists, and no shim/conmon of the test is still
running.  At the end everything started
here is stopped by PID, and directories the engines create outside the temp
dir (/run/docker, /run/containerd, /opt/containerd, /run/agentsbx,
/var/lib/containers, the cgroup parents) are removed if this session
created them.

PID 1 on the test machines never reaps orphans, and shims and conmon
daemonize.  So, as tests/integration does, this process makes itself a
child subreaper and a thread reaps the zombies re-parented to it (never a
child a Popen object is waiting for).  Start processes only through
spawn()/run() here.

Run this suite in a pytest process of its own (not together with
tests/integration, whose orphan reaper would take this one's children).

If dockerd cannot start at all, the Docker tests are skipped, and the
reason is printed in a banner at the end of the run.
"""

import ctypes
import errno
import fcntl
import glob
import hashlib
import io
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import tarfile
import tempfile
import termios
import threading
import time
import uuid

import pytest

# The policy's audit log (issue 17): this session's decisions go to a temp
# file of its own (removed at exit), never to /var/log/agentsbx.  dockerd,
# containerd and podman pass it on to the runtime they run.
if "AGENTSBX_POLICY_LOG" not in os.environ:
    import atexit as _atexit
    _policy_log_dir = tempfile.mkdtemp(prefix="agentsbx-policylog-")
    os.environ["AGENTSBX_POLICY_LOG"] = os.path.join(_policy_log_dir, "policy.log")
    _atexit.register(shutil.rmtree, _policy_log_dir, True)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

RUNTIME = os.path.abspath(os.environ.get("AGENTSBX") or os.path.join(REPO, "agentsbx"))
DOCKERD = os.environ.get("E2E_DOCKERD", "/usr/sbin/dockerd")
DOCKER = os.environ.get("E2E_DOCKER", "/usr/bin/docker")
CONTAINERD = os.environ.get("E2E_CONTAINERD", "/usr/bin/containerd")
CTR = os.environ.get("E2E_CTR", "/usr/bin/ctr")
PODMAN = os.environ.get("E2E_PODMAN", "/usr/bin/podman")
CONMON = os.environ.get("E2E_CONMON", "/usr/bin/conmon")
BUSYBOX = "/bin/busybox"
TRACE = os.environ.get("E2E_TRACE", "")
KEEP = os.environ.get("E2E_KEEP", "") not in ("", "0")

IMAGE = "agentsbx-e2e:latest"
DEFAULT_TIMEOUT = 60

# --------------------------------------------------------------------------
# Subreaper, spawning

PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")

_SPAWN_LOCK = threading.Lock()
_OWN_PIDS = set()
_MYPID = os.getpid()


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


threading.Thread(target=_reaper_loop, name="e2e-orphan-reaper", daemon=True).start()


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


def runtime_lacks(command):
    """True when the runtime under test has no such command (for the
    xfail marks of what is not implemented yet)."""
    try:
        return run([RUNTIME, command, "--help"], timeout=10).rc != 0
    except OSError:
        return True


def poll_until(fn, timeout=10.0, interval=0.1):
    """Call fn() until it returns something falsy-free (truthy); return the
    last value."""
    end = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
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

CGROUP_ROOT = "/sys/fs/cgroup"
# Directories an engine creates outside its configured state, removed at the
# end if this session created them.
HOST_PATHS = ["/run/docker", "/run/containerd", "/run/agentsbx",
              "/run/" + os.path.basename(RUNTIME),
              "/var/lib/containers", "/run/containers", "/run/libpod",
              "/etc/containerd", "/etc/cni/net.d",
              "/opt/containerd"]  # dockerd's containerd makes its opt dir


# conmon leaves its console socket behind when the runtime's create fails
CONMON_SOCKETS = "/tmp/conmon-term.*"


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


def _only_empty_dirs(path, allowed_files=()):
    for dirpath, _, files in os.walk(path):
        for f in files:
            if f not in allowed_files:
                return False
    return True


# --------------------------------------------------------------------------
# The rootfs and the images

ROOT_PASSWD = (
    "root:x:0:0:root:/root:/bin/sh\n"
    "user:x:1000:1000:user:/home/user:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
ROOT_GROUP = "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n"


def build_rootfs(dest):
    """A busybox-static rootfs: /bin/busybox and a symlink per applet,
    /etc/passwd with root and user 1000."""
    for d in ("bin", "etc", "proc", "sys", "dev", "tmp", "root", "home/user",
              "var/log", "run"):
        os.makedirs(os.path.join(dest, d), exist_ok=True)
    shutil.copy2(BUSYBOX, os.path.join(dest, "bin", "busybox"))
    applets = run([BUSYBOX, "--list"]).ok().out.split()
    for a in applets:
        if a != "busybox" and "/" not in a:
            os.symlink("busybox", os.path.join(dest, "bin", a))
    with open(os.path.join(dest, "etc", "passwd"), "w") as f:
        f.write(ROOT_PASSWD)
    with open(os.path.join(dest, "etc", "group"), "w") as f:
        f.write(ROOT_GROUP)
    os.chmod(os.path.join(dest, "tmp"), 0o1777)
    os.chown(os.path.join(dest, "home", "user"), 1000, 1000)


def oci_archive(layer_tar, out, ref):
    """An OCI image-layout tarball with one uncompressed layer, for
    `ctr images import` (made here, so the ctr tests need no docker)."""
    with open(layer_tar, "rb") as f:
        layer = f.read()
    ldig = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                   "Cmd": ["sh"]},
        "rootfs": {"type": "layers", "diff_ids": [ldig]},
    }, sort_keys=True).encode()
    cdig = "sha256:" + hashlib.sha256(config).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": cdig, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": ldig, "size": len(layer)}],
    }, sort_keys=True).encode()
    mdig = "sha256:" + hashlib.sha256(manifest).hexdigest()
    index = json.dumps({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": mdig, "size": len(manifest),
        "annotations": {"io.containerd.image.name": ref,
                        "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[1]}}]}).encode()
    with tarfile.open(out, "w") as t:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", index)
        for dig, data in ((ldig, layer), (cdig, config), (mdig, manifest)):
            add("blobs/sha256/" + dig.split(":")[1], data)


TRACE_WRAPPER = r"""#!/bin/bash
# E2E_TRACE wrapper: log the argv, run the real runtime, log what it added
# to its --log file.
T=%(trace)s
caller=$(tr '\0' ' ' < /proc/$PPID/cmdline 2>/dev/null | cut -c1-60)
log=""; prev=""
for a in "$@"; do
  case "$prev" in --log) log="$a";; esac
  case "$a" in --log=*) log="${a#--log=}";; esac
  prev="$a"
done
sz=0; [ -n "$log" ] && [ -f "$log" ] && sz=$(stat -c %%s "$log")
printf '%%s caller=[%%s] argv: %%s\n' "$(date +%%T.%%N)" "$caller" "$*" >> "$T/invocations.log"
%(runtime)s "$@"
rc=$?
printf '%%s   rc=%%d for: %%s\n' "$(date +%%T.%%N)" "$rc" "$*" >> "$T/invocations.log"
if [ -n "$log" ] && [ -f "$log" ]; then
  n=$(stat -c %%s "$log")
  if [ "$n" -gt "$sz" ]; then
    { echo "== rc=$rc: $*"; tail -c +$((sz+1)) "$log"; echo; } >> "$T/runtime-logs.log"
  fi
fi
exit $rc
"""


class Session:
    """Session-wide facts shared by the engine fixtures."""

    def __init__(self, tmp):
        self.tmp = tmp
        # names cgroup parents and the containerd namespace: [a-z0-9] only
        # (containerd forbids two separators in a row, mkdtemp uses "_")
        self.tag = uuid.uuid4().hex[:8]
        self.runtime = RUNTIME  # what the engines are told to run
        # agentsbx's sandbox policy (see setup_policy): None when the
        # runtime has none (runc, as a control run of this suite)
        self.policy_off = None      # {"mode": "off"}: a plain OCI runtime
        self.policy_default = None  # the built-in floor, enforced
        self.policy = None          # `policy show` of policy_default
        self.runtime_off = None     # wrappers adding --policy, for the
        self.runtime_default = None  # engines that cannot pass arguments
        self.rootfs = os.path.join(tmp, "rootfs")
        self.rootfs_tar = os.path.join(tmp, "rootfs.tar")
        self.oci_tar = os.path.join(tmp, "image-oci.tar")
        self.problems = []  # end-of-session leftovers
        self.preexisting = {p: os.path.lexists(p) for p in HOST_PATHS}
        self.tmp_sockets = set(glob.glob(CONMON_SOCKETS))


POLICY_WRAPPER = """#!/bin/sh
exec %(runtime)s --policy %(policy)s "$@"
"""


def setup_policy(s):
    """agentsbx enforces a sandbox policy unless told otherwise
    (--policy FILE, else /etc/agentsbx/policy.json, else its built-in
    floor).  The suite uses two policy files of its own:

      policy-off.json      {"mode": "off"}: agentsbx as a plain OCI runtime,
                           as runc; the compatibility tests use it, like
                           tests/integration does;
      policy-default.json  the built-in floor, enforced, with one change:
                           bindPrefixes also allow this session's temp dir,
                           where the engines keep the files they bind into
                           containers (their defaults, /var/lib/docker/...,
                           are allowed by the built-in list).

    dockerd passes them with daemon.json runtimeArgs; ctr and podman, which
    pass no runtime arguments, get a two-line wrapper that adds --policy."""
    if runtime_lacks("policy"):
        return
    bindir = os.path.join(s.tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    s.policy_off = os.path.join(s.tmp, "policy-off.json")
    with open(s.policy_off, "w") as f:
        f.write('{"mode": "off"}\n')
    empty = os.path.join(s.tmp, "policy-builtin.json")
    with open(empty, "w") as f:
        f.write("{}\n")
    builtin = json.loads(run([RUNTIME, "--policy", empty, "policy", "show"]).ok().out)
    s.policy_default = os.path.join(s.tmp, "policy-default.json")
    with open(s.policy_default, "w") as f:
        json.dump({"bindPrefixes": builtin["bindPrefixes"] + [s.tmp]}, f, indent=2)
    s.policy = json.loads(run([RUNTIME, "--policy", s.policy_default,
                               "policy", "show"]).ok().out)
    for name, pol in (("agentsbx-off", s.policy_off), ("agentsbx-default", s.policy_default)):
        path = os.path.join(bindir, name)
        with open(path, "w") as f:
            f.write(POLICY_WRAPPER % {"runtime": s.runtime, "policy": pol})
        os.chmod(path, 0o755)
        setattr(s, "runtime_" + name.split("-")[1], path)


_SKIP_BANNERS = []


def loud_skip(reason):
    _SKIP_BANNERS.append(reason)
    pytest.skip(reason)


def pytest_terminal_summary(terminalreporter):
    for reason in _SKIP_BANNERS:
        terminalreporter.write_sep("!", "E2E TESTS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(reason, red=True)


def prepare_session(s):
    """The trace wrapper, the policy files, the rootfs and its tarballs."""
    if TRACE:
        os.makedirs(TRACE, exist_ok=True)
        wrapper = os.path.join(s.tmp, "bin", "agentsbx")
        os.makedirs(os.path.dirname(wrapper), exist_ok=True)
        with open(wrapper, "w") as f:
            f.write(TRACE_WRAPPER % {"trace": os.path.abspath(TRACE), "runtime": RUNTIME})
        os.chmod(wrapper, 0o755)
        s.runtime = wrapper
    setup_policy(s)
    build_rootfs(s.rootfs)
    run(["tar", "--numeric-owner", "-C", s.rootfs, "-cf", s.rootfs_tar, "."]).ok()
    oci_archive(s.rootfs_tar, s.oci_tar, "docker.io/library/" + IMAGE)


@pytest.fixture(scope="session")
def session():
    if os.geteuid() != 0:
        pytest.skip("the e2e suite needs root")
    if not os.access(RUNTIME, os.X_OK):
        pytest.fail("AGENTSBX=%s is not an executable (run `make` first)" % RUNTIME)
    tmp = tempfile.mkdtemp(prefix="agentsbx-e2e-", dir="/tmp")
    os.chmod(tmp, 0o755)
    s = Session(tmp)
    try:
        prepare_session(s)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    yield s
    # Engines are stopped by their own (session) fixtures, which pytest
    # finalizes before this one.  Remove host directories this session made.
    for p in HOST_PATHS:
        if s.preexisting[p] or not os.path.lexists(p):
            continue
        if p in ("/run/agentsbx", "/run/" + os.path.basename(RUNTIME)):
            if state_entries(p):
                s.problems.append("container state left in %s: %s" % (p, state_entries(p)))
                continue
            shutil.rmtree(p, ignore_errors=True)
        elif p == "/var/lib/containers":
            shutil.rmtree(p, ignore_errors=True)  # podman's blob-info cache
        elif _only_empty_dirs(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            s.problems.append("%s was created during this session and is not empty" % p)
    for sock in set(glob.glob(CONMON_SOCKETS)) - s.tmp_sockets:
        os.unlink(sock)
    for pid in pids_with_arg(tmp):
        s.problems.append("process left running: %d %s" % (pid, proc_cmdline(pid)))
        kill_pids([pid])
    left = mounts_under(tmp)
    if left:
        s.problems.append("mounts left under %s: %s" % (tmp, left))
    if not KEEP and not left:
        shutil.rmtree(tmp, ignore_errors=True)
    assert not s.problems, "e2e session left things behind:\n  " + "\n  ".join(s.problems)


def wait_clean(fn, timeout=10.0, interval=0.1):
    """fn() returns a list of leftovers; poll until it is empty or the
    timeout passes; return the last list (empty when clean)."""
    end = time.monotonic() + timeout
    while True:
        left = fn()
        if not left or time.monotonic() > end:
            return left
        time.sleep(interval)


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
# Docker

def daemon_json(s, key):
    """The README snippet ("runtimes"), with two runtimes: "agentsbx" (the
    compatibility tests: policy off) and "agentsbx-policy" (the default
    floor enforced).  "deprecated-key-path" keeps dockerd 20.10 from writing
    /etc/docker/key.json."""
    runtimes = {"agentsbx": {"path": s.runtime}}
    if s.policy_off:
        runtimes["agentsbx"]["runtimeArgs"] = ["--policy", s.policy_off]
        runtimes["agentsbx-policy"] = {"path": s.runtime,
                                       "runtimeArgs": ["--policy", s.policy_default]}
    return json.dumps({"runtimes": runtimes, "deprecated-key-path": key}, indent=2) + "\n"


class Docker:
    """Our own dockerd; `d("run", ...)` runs the matching Debian client."""

    def __init__(self, s):
        self.s = s
        self.dir = os.path.join(s.tmp, "docker")
        self.sock = os.path.join(self.dir, "docker.sock")
        self.data = os.path.join(self.dir, "data")
        self.exec_root = os.path.join(self.dir, "exec")
        self.log = os.path.join(self.dir, "dockerd.log")
        self.config = os.path.join(self.dir, "daemon.json")
        # Absolute: a relative parent is placed under dockerd's own cgroup
        # (runc's rule), which on these machines is inside process_api.
        self.cgroup_parent = "/agentsbx-e2e-%s-docker" % s.tag
        # dockerd 20.10 gives every runtime the --root <exec-root>/runtime-runc
        # and containerd's namespace is "moby".
        self.state_root = os.path.join(self.exec_root, "runtime-runc", "moby")
        self.ctd_sock = os.path.join(self.exec_root, "containerd", "containerd.sock")
        self.env = dict(os.environ, DOCKER_HOST="unix://" + self.sock,
                        DOCKER_CONFIG=os.path.join(self.dir, "client"))
        self.env.pop("DOCKER_CONTEXT", None)
        self.proc = None
        self.cgroup_created = False

    def __call__(self, *args, timeout=DEFAULT_TIMEOUT, input=None):
        return run([DOCKER] + list(args), env=self.env, timeout=timeout, input=input)

    def spawn(self, *args):
        return spawn([DOCKER] + list(args), env=self.env)

    def argv(self, *args):
        return [DOCKER] + list(args)

    def run_rt(self, *args, timeout=DEFAULT_TIMEOUT, input=None):
        """docker run --runtime agentsbx ARGS"""
        return self("run", "--runtime", "agentsbx", *args, timeout=timeout, input=input)

    def inspect(self, cid, fmt):
        return self("inspect", "-f", fmt, cid).ok().out.strip()

    def log_tail(self, n=40):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def start(self):
        for d in (self.dir, self.data, self.exec_root):
            os.makedirs(d, exist_ok=True)
        with open(self.config, "w") as f:
            f.write(daemon_json(self.s, os.path.join(self.dir, "key.json")))
        argv = [DOCKERD, "--config-file", self.config,
                "--data-root", self.data, "--exec-root", self.exec_root,
                "--pidfile", os.path.join(self.dir, "docker.pid"),
                "--host", "unix://" + self.sock,
                "--bridge", "none", "--iptables=false", "--ip6tables=false",
                "--ip-forward=false", "--ip-masq=false", "--userland-proxy=false",
                "--cgroup-parent", self.cgroup_parent,
                "--exec-opt", "native.cgroupdriver=cgroupfs"]
        with open(self.log, "wb") as logf:
            self.proc = spawn(argv, stdout=logf, stderr=logf)
        end = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                return "dockerd exited with status %s:\n%s" % (self.proc.rc, self.log_tail())
            if os.path.exists(self.sock):
                r = self("version", "--format", "{{.Server.Version}}", timeout=20)
                if r.rc == 0:
                    return None
            if time.monotonic() > end:
                return "dockerd did not answer in 60s:\n%s" % self.log_tail()
            time.sleep(0.2)

    def leftovers(self):
        """Everything a removed container must not leave behind."""
        own_mounts = {self.data}
        return (leftover_report("container state under the runtime --root %s"
                                % self.state_root, state_entries(self.state_root)) +
                leftover_report("cgroups under %s" % self.cgroup_parent,
                                cgroup_children(self.cgroup_parent)) +
                leftover_report("mounts", [m for m in mounts_under(self.dir)
                                           if m not in own_mounts]) +
                leftover_report("shims", pids_with_arg(self.ctd_sock, "containerd-shim")))

    def remove_all(self):
        r = self("ps", "-aq", "--no-trunc")
        ids = r.out.split()
        if ids:
            self("rm", "-f", *ids, timeout=90)
        return ids

    def stop(self):
        problems = []
        if self.proc is not None and self.proc.poll() is None:
            self.remove_all()
            self("rmi", "-f", IMAGE)
        stop_process(self.proc, "dockerd")
        # dockerd stops its containerd; make sure, by PID, and the shims.
        for pid in pids_with_arg(self.dir):
            problems.append("process left after dockerd stopped: %d %s"
                            % (pid, proc_cmdline(pid)))
            kill_pids([pid])
        problems += leftover_report("mounts left after dockerd stopped",
                                    [m for m in umount_all_under(self.dir)])
        left = cgroup_children(self.cgroup_parent)
        problems += leftover_report("cgroups left after dockerd stopped", left)
        problems += leftover_report("cgroups that could not be removed",
                                    rmdir_cgroup_tree(self.cgroup_parent))
        return problems


@pytest.fixture(scope="session")
def docker_daemon(session):
    for b in (DOCKERD, DOCKER):
        if not os.access(b, os.X_OK):
            loud_skip("Docker e2e tests skipped: %s not found (apt-get install docker.io)" % b)
    d = Docker(session)
    try:
        why = d.start()
        if not why:
            # dockerd hands every runtime --root <exec-root>/runtime-runc/moby;
            # runc creates it with all parents on the first create.  Create
            # the parent as a first runc run would have left it;
            # test_first_container_fresh_root checks the runtime's own
            # handling of a missing parent.
            os.makedirs(os.path.dirname(d.state_root), mode=0o700, exist_ok=True)
            d("import", "--change", 'CMD ["sh"]', session.rootfs_tar, IMAGE, timeout=120).ok()
    except BaseException:
        session.problems += d.stop()
        raise
    if why:
        session.problems += d.stop()
        loud_skip("Docker e2e tests skipped: dockerd could not start.\n" + why)
    yield d
    session.problems += d.stop()


def new_netns(before):
    """Namespace mounts (nsfs) that were not there before."""
    return sorted(set(netns_mounts()) - set(before))


@pytest.fixture
def docker(docker_daemon):
    """The daemon, and after the test: every container removed, and
    nothing left behind by the runtime."""
    ns_before = netns_mounts()
    yield docker_daemon
    docker_daemon.remove_all()
    left = wait_clean(lambda: docker_daemon.leftovers() +
                      leftover_report("namespace mounts", new_netns(ns_before)), timeout=15)
    assert not left, ("left behind after the test:\n  " + "\n  ".join(left) +
                      "\n--- dockerd log tail:\n" + docker_daemon.log_tail())


# --------------------------------------------------------------------------
# containerd + ctr

CONTAINERD_TOML = """version = 2
root = "%(dir)s/root"
state = "%(dir)s/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]

[grpc]
  address = "%(dir)s/containerd.sock"

[ttrpc]
  address = "%(dir)s/containerd.sock.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "%(dir)s/opt"
"""


# The README snippet for containerd's CRI plugin (Kubernetes), with the
# runtime's path filled in.  ctr's --runc-binary/--runc-root set the same
# runc-v2 shim options (BinaryName, Root) that this runtime handler does.
CRI_SNIPPET = """version = 2

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx.options]
    BinaryName = "%(runtime)s"
"""


class Containerd:
    def __init__(self, s):
        self.s = s
        self.dir = os.path.join(s.tmp, "ctd")
        self.sock = os.path.join(self.dir, "containerd.sock")
        self.log = os.path.join(self.dir, "containerd.log")
        self.ns = "agentsbx-e2e-%s-ctr" % s.tag
        self.runc_root = os.path.join(self.dir, "runc-root")
        # the shim hands the runtime --root <--runc-root>/<namespace>
        self.state_root = os.path.join(self.runc_root, self.ns)
        self.image = "docker.io/library/" + IMAGE
        self.proc = None

    def __call__(self, *args, timeout=DEFAULT_TIMEOUT, input=None):
        return run(self.argv(*args), timeout=timeout, input=input)

    def argv(self, *args):
        return [CTR, "--address", self.sock, "--namespace", self.ns] + list(args)

    @property
    def binary(self):
        """What --runc-binary names: agentsbx under its default policy
        (through the --policy wrapper, see setup_policy)."""
        return self.s.runtime_default or self.s.runtime

    def run_argv(self, *args):
        """argv of `ctr run` with the runc-v2 shim and agentsbx, then ARGS
        ([flags...] IMAGE ID [COMMAND...])."""
        return self.argv("run", "--runtime", "io.containerd.runc.v2",
                         "--runc-binary", self.binary, "--runc-root", self.runc_root,
                         *args)

    def run_rt(self, *args, timeout=DEFAULT_TIMEOUT, input=None):
        """ctr run (agentsbx through the runc-v2 shim) ARGS"""
        return run(self.run_argv(*args), timeout=timeout, input=input)

    def spawn_run(self, *args):
        return spawn(self.run_argv(*args))

    def log_tail(self, n=40):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.runc_root, mode=0o700, exist_ok=True)
        cfg = os.path.join(self.dir, "config.toml")
        with open(cfg, "w") as f:
            f.write(CONTAINERD_TOML % {"dir": self.dir})
        # Started with SIGHUP ignored, as `nohup containerd &` would: the
        # shim and the runtime inherit that; the container must not
        # (test_ctr_signal_dispositions_reset).
        with open(self.log, "wb") as logf:
            self.proc = spawn(["sh", "-c", "trap '' HUP; exec \"$0\" \"$@\"",
                               CONTAINERD, "--config", cfg],
                              stdout=logf, stderr=logf)
        end = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                return "containerd exited with status %s:\n%s" % (self.proc.rc, self.log_tail())
            if os.path.exists(self.sock) and self("version", timeout=20).rc == 0:
                return None
            if time.monotonic() > end:
                return "containerd did not answer in 60s:\n%s" % self.log_tail()
            time.sleep(0.2)

    def leftovers(self):
        return (leftover_report("container state under the runtime --root %s"
                                % self.state_root, state_entries(self.state_root)) +
                leftover_report("cgroups under /%s" % self.ns, cgroup_children(self.ns)) +
                leftover_report("mounts", mounts_under(self.dir)) +
                leftover_report("shims", pids_with_arg(self.sock, "containerd-shim")))

    def remove_all(self):
        tasks = self("task", "ls", "-q").out.split()
        for t in tasks:
            self("task", "kill", "-a", "-s", "SIGKILL", t)
        for t in tasks:
            self("task", "rm", "-f", t)
        ctrs = self("container", "ls", "-q").out.split()
        if ctrs:
            self("container", "rm", *ctrs)
        return tasks + ctrs

    def stop(self):
        problems = []
        if self.proc is not None and self.proc.poll() is None:
            self.remove_all()
            self("images", "rm", self.image)
            self("namespaces", "rm", self.ns)
        stop_process(self.proc, "containerd")
        for pid in pids_with_arg(self.dir):
            problems.append("process left after containerd stopped: %d %s"
                            % (pid, proc_cmdline(pid)))
            kill_pids([pid])
        problems += leftover_report("mounts left after containerd stopped",
                                    umount_all_under(self.dir))
        problems += leftover_report("cgroups left after containerd stopped",
                                    cgroup_children(self.ns))
        problems += leftover_report("cgroups that could not be removed",
                                    rmdir_cgroup_tree(self.ns))
        return problems


@pytest.fixture(scope="session")
def containerd_daemon(session):
    for b in (CONTAINERD, CTR):
        if not os.access(b, os.X_OK):
            loud_skip("ctr e2e tests skipped: %s not found (apt-get install containerd)" % b)
    c = Containerd(session)
    try:
        why = c.start()
        if not why:
            c("images", "import", session.oci_tar, timeout=120).ok()
    except BaseException:
        session.problems += c.stop()
        raise
    if why:
        session.problems += c.stop()
        loud_skip("ctr e2e tests skipped: containerd could not start.\n" + why)
    yield c
    session.problems += c.stop()


@pytest.fixture
def ctr(containerd_daemon):
    ns_before = netns_mounts()
    yield containerd_daemon
    containerd_daemon.remove_all()
    left = wait_clean(lambda: containerd_daemon.leftovers() +
                      leftover_report("namespace mounts", new_netns(ns_before)), timeout=15)
    assert not left, ("left behind after the test:\n  " + "\n  ".join(left) +
                      "\n--- containerd log tail:\n" + containerd_daemon.log_tail())


# --------------------------------------------------------------------------
# podman + conmon

# The [engine.runtimes] entry is the README snippet; the rest isolates this
# podman from the host's configuration and state.
CONTAINERS_CONF = """[containers]
netns = "none"
log_driver = "k8s-file"
# podman raises RLIMIT_NOFILE/NPROC to 1048576 by default, which needs
# CAP_SYS_RESOURCE, which the test machines' root lacks (runc and crun fail
# the same way); ask for limits below the current ones instead.
default_ulimits = ["nofile=1024:4096", "nproc=1024:4096"]

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "%(dir)s/events.log"
tmp_dir = "%(dir)s/tmp"
volume_path = "%(dir)s/volumes"
conmon_path = ["%(conmon)s"]

[engine.runtimes]
agentsbx = ["%(runtime)s"]

[network]
network_config_dir = "%(dir)s/net"
"""

STORAGE_CONF = """[storage]
driver = "overlay"
graphroot = "%(dir)s/graph"
runroot = "%(dir)s/run"
"""

# podman as root passes the runtime no --root: agentsbx uses its default
# /run/agentsbx (runc, as a control run of this suite, /run/runc).
PODMAN_RUNTIME_ROOT = "/run/" + os.path.basename(RUNTIME)
PODMAN_CGROUP_PARENT = "libpod_parent"


class Podman:
    def __init__(self, s):
        self.s = s
        self.dir = os.path.join(s.tmp, "podman")
        self.image = "localhost/" + IMAGE
        self.env = dict(os.environ,
                        CONTAINERS_CONF=os.path.join(self.dir, "containers.conf"),
                        CONTAINERS_STORAGE_CONF=os.path.join(self.dir, "storage.conf"),
                        CONTAINERS_REGISTRIES_CONF=os.path.join(self.dir, "registries.conf"))
        self.state_root = PODMAN_RUNTIME_ROOT

    @property
    def binary(self):
        """agentsbx under its default policy (the --policy wrapper)."""
        return self.s.runtime_default or self.s.runtime

    def base(self, runtime=None):
        return [PODMAN, "--root", os.path.join(self.dir, "graph"),
                "--runroot", os.path.join(self.dir, "run"),
                "--tmpdir", os.path.join(self.dir, "tmp"),
                "--cgroup-manager", "cgroupfs", "--events-backend", "file",
                "--conmon", CONMON, "--runtime", runtime or self.binary]

    def argv(self, *args, runtime=None):
        return self.base(runtime) + list(args)

    def __call__(self, *args, timeout=DEFAULT_TIMEOUT, input=None, runtime=None):
        return run(self.argv(*args, runtime=runtime), env=self.env, timeout=timeout,
                   input=input)

    def spawn(self, *args):
        return spawn(self.argv(*args), env=self.env)

    def setup(self):
        for d in ("graph", "run", "tmp", "volumes", "net"):
            os.makedirs(os.path.join(self.dir, d), exist_ok=True)
        vals = {"dir": self.dir, "conmon": CONMON, "runtime": self.binary}
        with open(self.env["CONTAINERS_CONF"], "w") as f:
            f.write(CONTAINERS_CONF % vals)
        with open(self.env["CONTAINERS_STORAGE_CONF"], "w") as f:
            f.write(STORAGE_CONF % vals)
        with open(self.env["CONTAINERS_REGISTRIES_CONF"], "w") as f:
            f.write("unqualified-search-registries = []\n")
        r = self("import", "--change", "CMD=sh", self.s.rootfs_tar, self.image, timeout=120)
        return None if r.rc == 0 else "podman import failed: %r" % r

    def snapshot(self):
        return (set(state_entries(self.state_root)),
                set(cgroup_children(PODMAN_CGROUP_PARENT)))

    def leftovers(self, before):
        st, cg = before
        new_state = sorted(set(state_entries(self.state_root)) - st)
        new_cg = sorted(c for c in set(cgroup_children(PODMAN_CGROUP_PARENT)) - cg
                        if not c.endswith("/conmon"))
        return (leftover_report("container state under the runtime --root %s"
                                % self.state_root, new_state) +
                leftover_report("cgroups under %s" % PODMAN_CGROUP_PARENT, new_cg) +
                leftover_report("container mounts",
                                [m for m in mounts_under(self.dir)
                                 if "/merged" in m or "/userdata/" in m]) +
                leftover_report("conmon", pids_with_arg(self.dir, "conmon")))

    def remove_all(self):
        r = self("ps", "-aq", "--no-trunc")
        ids = r.out.split()
        if ids:
            self("rm", "-f", "-t", "0", *ids, timeout=90)
        return ids

    def stop(self, created_parent):
        problems = []
        self.remove_all()
        self("system", "reset", "--force", timeout=120)
        for pid in pids_with_arg(self.dir):
            problems.append("process left after podman: %d %s" % (pid, proc_cmdline(pid)))
            kill_pids([pid])
        problems += leftover_report("mounts left after podman system reset",
                                    umount_all_under(self.dir))
        if created_parent:
            problems += leftover_report("cgroups that could not be removed",
                                        rmdir_cgroup_tree(PODMAN_CGROUP_PARENT))
        return problems


@pytest.fixture(scope="session")
def podman_engine(session):
    for b in (PODMAN, CONMON):
        if not os.access(b, os.X_OK):
            loud_skip("podman e2e tests skipped: %s not found (apt-get install podman conmon)" % b)
    created_parent = not any(os.path.isdir(os.path.join(h, PODMAN_CGROUP_PARENT))
                             for h in cgroup_hierarchies())
    p = Podman(session)
    try:
        why = p.setup()
    except BaseException:
        session.problems += p.stop(created_parent)
        raise
    if why:
        session.problems += p.stop(created_parent)
        loud_skip("podman e2e tests skipped: " + why)
    yield p
    session.problems += p.stop(created_parent)


@pytest.fixture
def podman(podman_engine):
    before = podman_engine.snapshot()
    ns_before = netns_mounts()
    yield podman_engine
    podman_engine.remove_all()
    left = wait_clean(lambda: podman_engine.leftovers(before) +
                      leftover_report("namespace mounts", new_netns(ns_before)), timeout=15)
    assert not left, "left behind after the test:\n  " + "\n  ".join(left)


def unique(prefix="e2e"):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])
