# SPDX-License-Identifier: Apache-2.0
"""
Integration suite for agentsbx (and, to prove the suite itself right, runc).

    AGENTSBX=/path/to/runtime TOOLS=build/tests/tools \
        /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/integration

The runtime under test is taken from $AGENTSBX and nothing else.  $TOOLS is
the directory of the static probes built from tests/tools/*.c (`make
tools`); it defaults to build/tests/tools of this checkout.

Every test gets, from the `env` fixture (and the thin `rt`, `bundle`,
`new_id` fixtures over it):
  - a fresh temp dir holding a state root (passed as `--root` to every
    runtime command) and a bundle whose rootfs is a private copy of a
    busybox-static rootfs built once per session;
  - `rt(*args)`, which runs `$AGENTSBX --root ROOT ARGS...` with a timeout and
    returns (rc, stdout, stderr);
  - unique container ids;
  - a teardown that kills and force-deletes every container the test made,
    then ASSERTS that nothing is left: no entry in the state root, no mount
    mentioning the test's temp dir, no process rooted in (or with its cwd in)
    a bundle of the test, no live process among the container pids the test
    saw, and no cgroup directory named after one of the test's ids.

Reaping orphans (the subreaper design)
--------------------------------------
PID 1 on the test machines never reaps.  `create` (and `run -d`) leave the
container init behind when the runtime exits; the kernel re-parents it to
the nearest living ancestor that is a child subreaper, else to PID 1, where
it would stay a zombie forever once killed (and pin its pid).

So the pytest process makes itself a child subreaper at import time
(prctl(PR_SET_CHILD_SUBREAPER, 1)).  Every runtime command is a direct child
of pytest, so every container init it leaves behind is re-parented to
pytest, which stays alive for the whole session -- exactly the position of
containerd's shim.  `state` thus sees a created/running container as alive
(it is a live child of pytest) until it is killed.

Reaping must not steal the exit status of the children that subprocess.Popen
is waiting for (a child reaped behind Popen's back reports returncode 0).
Hence:
  - every child is started by `spawn()` below, which holds `_SPAWN_LOCK`
    across Popen() and the registration of the pid in `_OWN_PIDS`, and
    unregisters it after Popen has waited for it;
  - `reap_orphans()` holds the same lock, scans /proc for zombies whose
    parent is this process and whose pid is NOT in `_OWN_PIDS`, and reaps
    exactly those pids with waitpid(pid, WNOHANG).  It never calls
    waitpid(-1), so it cannot take a Popen child's status (only the
    session's very last finalizer does, when no Popen is waiting any more);
  - a daemon thread calls reap_orphans() every 20 ms, so a killed container
    init is reaped promptly (its cgroup is not pinned by a zombie), and the
    teardown calls it synchronously before it checks for leftovers.
Tests must therefore start processes only through `spawn()`/`run_cmd()`
(or the `rt` helpers), never through subprocess directly.

tests/tools/subreaper.c is the same idea as a standalone program, for
running a runtime by hand on these machines.

Specs
-----
default_spec() is `runc spec` of runc 1.1.5 (kept verbatim below, so the
suite never needs runc) with terminal false; make_spec(args, **changes)
changes it (a double underscore in a keyword is a dot: root__readonly=False)
and write_spec(bundle, spec) writes it.  Behaviour only agentsbx has (or
that runc 1.1.5 gets wrong) is in tests taking the `agentsbx_only` fixture,
skipped unless `$AGENTSBX --version` says "agentsbx".
"""

import ctypes
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

# The policy's audit log (issue 17): this session's decisions go to a temp
# file of its own (removed at exit), never to /var/log/agentsbx.
if "AGENTSBX_POLICY_LOG" not in os.environ:
    import atexit as _atexit
    import shutil as _shutil
    import tempfile as _tempfile
    _policy_log_dir = _tempfile.mkdtemp(prefix="agentsbx-policylog-")
    os.environ["AGENTSBX_POLICY_LOG"] = os.path.join(_policy_log_dir, "policy.log")
    _atexit.register(_shutil.rmtree, _policy_log_dir, True)


# --------------------------------------------------------------------------
# The runtime, the probes

RUNTIME = os.environ.get("AGENTSBX", "")
_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))
TOOLS = os.environ.get("TOOLS") or os.path.join(_REPO, "build", "tests", "tools")
BUSYBOX = shutil.which("busybox", path="/bin:/usr/bin:/sbin:/usr/sbin") or "/bin/busybox"

DEFAULT_TIMEOUT = 30

# --------------------------------------------------------------------------
# Subreaper and process spawning (see the module docstring)

PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)
if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")

_SPAWN_LOCK = threading.Lock()
_OWN_PIDS = set()
_MYPID = os.getpid()


def _stat_fields(pid):
    """(state, ppid, starttime) from /proc/PID/stat, or None if gone."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    # rest[0] is field 3 (state), rest[1] field 4 (ppid), rest[19] field 22
    return rest[0], int(rest[1]), int(rest[19])


def reap_orphans():
    """Reap zombies re-parented to us that no Popen object owns."""
    reaped = []
    with _SPAWN_LOCK:
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if pid in _OWN_PIDS:
                continue
            st = _stat_fields(pid)
            if st is None or st[1] != _MYPID or st[0] != "Z":
                continue
            try:
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    reaped.append(pid)
            except ChildProcessError:
                pass
    return reaped


def _reaper_loop():
    while True:
        time.sleep(0.02)
        try:
            reap_orphans()
        except Exception:  # never let the reaper thread die
            pass


threading.Thread(target=_reaper_loop, name="orphan-reaper", daemon=True).start()


class Proc:
    """A child started by spawn(); its output goes to temp files, not pipes
    (a detached container inherits the runtime's stdout/stderr and would
    keep a pipe open forever)."""

    def __init__(self, argv, input=None, env=None, pass_fds=(), cwd=None,
                 stdout=None):
        self.argv = [str(a) for a in argv]
        self._out = stdout if stdout is not None else tempfile.TemporaryFile()
        self._own_out = stdout is None
        self._err = tempfile.TemporaryFile()
        self._in = tempfile.TemporaryFile()
        if input is not None:
            self._in.write(input.encode() if isinstance(input, str) else input)
            self._in.seek(0)
        with _SPAWN_LOCK:
            self.popen = subprocess.Popen(
                self.argv, stdin=self._in, stdout=self._out, stderr=self._err,
                env=env, pass_fds=tuple(pass_fds), cwd=cwd, close_fds=True)
            _OWN_PIDS.add(self.popen.pid)
        self.pid = self.popen.pid

    def wait(self, timeout=DEFAULT_TIMEOUT):
        """Wait; return (rc, stdout, stderr).  On timeout, kill the child
        and fail the test."""
        try:
            rc = self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            self._forget()
            out, err = self._read()
            raise AssertionError("timed out after %ss: %s\nstdout: %s\nstderr: %s"
                                 % (timeout, " ".join(self.argv), out, err))
        self._forget()
        out, err = self._read()
        return rc, out, err

    def _forget(self):
        with _SPAWN_LOCK:
            _OWN_PIDS.discard(self.popen.pid)

    def _read(self):
        def rd(f, own):
            if not own:
                return ""
            f.seek(0)
            data = f.read().decode("utf-8", "replace")
            f.close()
            return data
        out = rd(self._out, self._own_out)
        err = rd(self._err, True)
        self._in.close()
        return out, err


def spawn(argv, **kw):
    return Proc(argv, **kw)


def run_cmd(argv, input=None, timeout=DEFAULT_TIMEOUT, check=False, **kw):
    """Run any command as a tracked child; return (rc, stdout, stderr)."""
    rc, out, err = Proc(argv, input=input, **kw).wait(timeout)
    if check:
        assert rc == 0, "%s -> rc %d\nstdout: %s\nstderr: %s" % (
            " ".join(map(str, argv)), rc, out, err)
    return rc, out, err


# --------------------------------------------------------------------------
# The default spec: `runc spec` of runc 1.1.5 (Debian 12), verbatim, so that
# the suite does not need runc to test agentsbx.

RUNC_SPEC = r'''
{
  "ociVersion": "1.0.2-dev",
  "process": {
    "terminal": true,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "TERM=xterm"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "ambient": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "runc",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
     "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666",
                 "mode=0620", "gid=5"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
     "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
     "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
     "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}
  ],
  "linux": {
    "resources": {"devices": [{"allow": false, "access": "rwm"}]},
    "namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                   {"type": "uts"}, {"type": "mount"}],
    "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                    "/proc/latency_stats", "/proc/timer_list",
                    "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
                    "/proc/scsi"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                      "/proc/sysrq-trigger"]
  }
}
'''


def default_spec():
    """runc's default spec, made non-interactive (terminal false)."""
    spec = json.loads(RUNC_SPEC)
    spec["process"]["terminal"] = False
    return spec


def set_path(obj, dotted, value):
    """set_path(spec, "process.user.uid", 1000); creates missing dicts."""
    keys = dotted.split(".")
    for k in keys[:-1]:
        obj = obj.setdefault(k, {})
    obj[keys[-1]] = value


def make_spec(args=None, **changes):
    """default_spec() with process.args = args, and each keyword a change:
    a double underscore is a dot, e.g. make_spec(["id"],
    process__user__uid=1000, root__readonly=False, hostname="h")."""
    spec = default_spec()
    if args is not None:
        spec["process"]["args"] = list(args)
    for key, value in changes.items():
        set_path(spec, key.replace("__", "."), value)
    return spec


def write_spec(bundle, spec):
    path = os.path.join(str(bundle), "config.json")
    with open(path, "w") as f:
        if isinstance(spec, (bytes, str)):
            f.write(spec if isinstance(spec, str) else spec.decode())
        else:
            json.dump(spec, f, indent=2)
    return path


def add_mount(spec, destination, type, source, options=None):
    m = {"destination": destination, "type": type, "source": source}
    if options is not None:
        m["options"] = list(options)
    spec.setdefault("mounts", []).append(m)
    return spec


def namespaces(spec):
    return [n["type"] for n in spec["linux"]["namespaces"]]


def drop_namespace(spec, nstype):
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                   if n["type"] != nstype]
    return spec


# --------------------------------------------------------------------------
# Capabilities: names -> bit masks as /proc/PID/status prints them

CAP_NAMES = [
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
    "CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
    "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
    "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
    "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
    "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
    "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
    "CAP_CHECKPOINT_RESTORE",
]


def cap_mask(names):
    mask = 0
    for n in names or []:
        mask |= 1 << CAP_NAMES.index(n)
    return mask


def proc_status(text):
    """Parse /proc/self/status text into a dict."""
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def kv_lines(text):
    """Parse procinfo's key=value lines."""
    out = {}
    for line in text.splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


# --------------------------------------------------------------------------
# The session rootfs

@pytest.fixture(scope="session")
def runtime():
    if not RUNTIME:
        pytest.exit("set AGENTSBX to the runtime binary under test", returncode=4)
    if not os.access(RUNTIME, os.X_OK):
        pytest.exit("AGENTSBX=%s is not an executable" % RUNTIME, returncode=4)
    return RUNTIME


@pytest.fixture(scope="session")
def runtime_version(runtime):
    rc, out, err = run_cmd([runtime, "--version"], timeout=10)
    return out + err


def is_agentsbx(version_text):
    return "agentsbx" in version_text


@pytest.fixture(scope="session")
def oci_policy_args(runtime_version, tmp_path_factory):
    """These are the OCI runtime tests: agentsbx runs them with its policy
    off ("a plain OCI runtime, as runc"); the policy has tests of its own,
    which make their Env with the policy they test."""
    if not is_agentsbx(runtime_version):
        return ()
    path = tmp_path_factory.mktemp("policy") / "off.json"
    path.write_text('{"mode": "off"}\n')
    return ("--policy", str(path))


@pytest.fixture
def agentsbx_only(runtime_version):
    """Skip unless $AGENTSBX is agentsbx (runc does this differently)."""
    if not is_agentsbx(runtime_version):
        pytest.skip("agentsbx-only behaviour (runtime is not agentsbx)")


@pytest.fixture(scope="session", autouse=True)
def _reap_at_session_end():
    """At the very end no Popen is waiting any more: reap every child left
    (e.g. a leaked process force_clean() killed), so that none is handed to
    PID 1 as a zombie when pytest exits."""
    yield
    deadline = time.time() + 2
    with _SPAWN_LOCK:
        while time.time() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break  # no child left at all
            if pid == 0:
                time.sleep(0.02)


@pytest.fixture(scope="session")
def session_dir():
    d = tempfile.mkdtemp(prefix="agentsbx-it-session-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


USER_UID = 1000
USER_GID = 1000


@pytest.fixture(scope="session")
def base_rootfs(session_dir):
    """A busybox-static rootfs, built once: /bin/busybox and a symlink per
    applet, /etc/passwd and /etc/group (root, and user 1000), the empty
    mount-point dirs, and the TOOLS probes in /usr/local/bin."""
    root = os.path.join(session_dir, "rootfs")
    for d in ("bin", "etc", "tmp", "proc", "sys", "dev", "root", "home/user",
              "usr/local/bin", "var", "run", "mnt"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    shutil.copy2(BUSYBOX, os.path.join(root, "bin", "busybox"))
    rc, out, err = run_cmd([BUSYBOX, "--list"], check=True)
    for applet in out.split():
        if applet == "busybox":
            continue
        link = os.path.join(root, "bin", applet)
        if not os.path.lexists(link):
            os.symlink("busybox", link)
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\n"
                "user:x:%d:%d:user:/home/user:/bin/sh\n"
                "nobody:x:65534:65534:nobody:/:/bin/false\n" % (USER_UID, USER_GID))
    with open(os.path.join(root, "etc", "group"), "w") as f:
        f.write("root:x:0:\ntty:x:5:\nuser:x:%d:\nnogroup:x:65534:\n" % USER_GID)
    os.chown(os.path.join(root, "home", "user"), USER_UID, USER_GID)
    if not os.path.isdir(TOOLS):
        pytest.exit("TOOLS=%s: no such directory (run `make tools`)" % TOOLS,
                    returncode=4)
    for name in os.listdir(TOOLS):
        src = os.path.join(TOOLS, name)
        if os.path.isfile(src) and os.access(src, os.X_OK):
            shutil.copy2(src, os.path.join(root, "usr", "local", "bin", name))
    for tool in ("procinfo", "subreaper"):
        assert os.path.exists(os.path.join(root, "usr/local/bin", tool)), \
            "probe %s missing from TOOLS=%s (run `make tools`)" % (tool, TOOLS)
    return root


# --------------------------------------------------------------------------
# Per-test environment

_ID_SAFE = re.compile(r"[^a-z0-9]+")


class Env:
    def __init__(self, runtime, base_rootfs, request, policy_args=()):
        self.runtime = runtime
        self.base_rootfs = base_rootfs
        self.tmp = tempfile.mkdtemp(prefix="agentsbx-it-")
        os.chmod(self.tmp, 0o755)
        self.policy_args = list(policy_args)
        self.root = os.path.join(self.tmp, "state")
        os.mkdir(self.root, 0o700)
        self.ids = []
        self.bundles = []
        self.pids = {}  # pid -> starttime, for every container pid seen
        name = _ID_SAFE.sub("-", request.node.name.lower()).strip("-")
        self._prefix = "it-" + name[:24].strip("-")

    # ---- ids and bundles -------------------------------------------------
    def new_id(self):
        cid = "%s-%s" % (self._prefix, uuid.uuid4().hex[:8])
        self.ids.append(cid)
        return cid

    def track_id(self, cid):
        if cid not in self.ids:
            self.ids.append(cid)
        return cid

    def make_bundle(self, name="bundle", spec=None, rootfs=True):
        b = os.path.join(self.tmp, name)
        os.mkdir(b)
        os.chmod(b, 0o755)
        if rootfs:
            # A private copy, so that no test sees another's writes.
            r = run_cmd(["cp", "-a", self.base_rootfs, os.path.join(b, "rootfs")])
            assert r[0] == 0, r
        if spec is not None:
            write_spec(b, spec)
        self.bundles.append(b)
        return b

    def hostdir(self, name):
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        os.chmod(d, 0o777)
        return d

    # ---- the runtime ----------------------------------------------------
    def argv(self, *args):
        return [self.runtime, "--root", self.root] + self.policy_args + \
            [str(a) for a in args]

    def rt(self, *args, input=None, check=True, timeout=DEFAULT_TIMEOUT, **kw):
        rc, out, err = run_cmd(self.argv(*args), input=input, timeout=timeout, **kw)
        if check:
            assert rc == 0, "runtime %s -> rc %d\nstdout: %s\nstderr: %s" % (
                " ".join(map(str, args)), rc, out, err)
        return rc, out, err

    def rt_spawn(self, *args, **kw):
        return spawn(self.argv(*args), **kw)

    def state(self, cid, check=True):
        rc, out, err = self.rt("state", cid, check=check)
        if rc != 0:
            return None
        st = json.loads(out)
        pid = st.get("pid") or 0
        if pid > 0 and pid not in self.pids:
            f = _stat_fields(pid)
            if f is not None:
                self.pids[pid] = f[2]
        return st

    def status(self, cid):
        st = self.state(cid, check=False)
        return st["status"] if st else None

    def wait_status(self, cid, want, timeout=10):
        deadline = time.time() + timeout
        while True:
            got = self.status(cid)
            if got == want or time.time() > deadline:
                break
            time.sleep(0.05)
        assert got == want, "container %s: status %r, want %r" % (cid, got, want)

    def create(self, spec=None, bundle=None, cid=None, extra=()):
        """Write spec (if given) to bundle (default: the test's bundle),
        create; return the id."""
        bundle = bundle or self.default_bundle()
        if spec is not None:
            write_spec(bundle, spec)
        cid = self.track_id(cid or self.new_id())
        self.rt("create", "--bundle", bundle, *extra, cid)
        return cid

    def run(self, spec=None, bundle=None, cid=None, extra=(), check=False,
            timeout=DEFAULT_TIMEOUT, **kw):
        """`run` a container in the foreground; return (rc, out, err)."""
        bundle = bundle or self.default_bundle()
        if spec is not None:
            write_spec(bundle, spec)
        cid = self.track_id(cid or self.new_id())
        return self.rt("run", "--bundle", bundle, *extra, cid, check=check,
                       timeout=timeout, **kw)

    def sh(self, script, check=True, **changes):
        """Run `sh -c SCRIPT` in a fresh container of the default spec (with
        changes); assert rc 0 if check; return stdout."""
        rc, out, err = self.run(make_spec(["sh", "-c", script], **changes))
        if check:
            assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
        return out

    def default_bundle(self):
        if not self.bundles:
            self.make_bundle()
        return self.bundles[0]

    # ---- teardown ---------------------------------------------------------
    def cleanup(self):
        """Kill and delete everything; return a list of what was left."""
        ids = list(self.ids)
        try:
            ids += [e for e in os.listdir(self.root) if e not in ids]
        except OSError:
            pass
        for cid in ids:
            run_cmd(self.argv("kill", cid, "9"), timeout=15)
            run_cmd(self.argv("delete", "--force", cid), timeout=15)
        # Container inits are our orphans: reap, and wait until they are gone.
        deadline = time.time() + 5
        while True:
            reap_orphans()
            alive = [p for p, start in self.pids.items()
                     if (_stat_fields(p) or (None, None, None))[2] == start]
            if not alive or time.time() > deadline:
                break
            time.sleep(0.02)
        return self.leftovers(ids, alive)

    def leftovers(self, ids, alive_pids):
        left = []
        try:
            # .seccomp-cache is the runtime's compiled-filter cache, kept
            # on purpose across containers; container ids never start with
            # a dot.
            entries = [e for e in os.listdir(self.root) if e != ".seccomp-cache"]
        except OSError:
            entries = []
        if entries:
            left.append("state root %s not empty: %s" % (self.root, entries))
        with open("/proc/self/mountinfo") as f:
            mounts = [l.rstrip() for l in f if self.tmp in l]
        if mounts:
            left.append("mounts left: %s" % mounts)
        if alive_pids:
            left.append("container pids still alive: %s" % alive_pids)
        rooted = self.processes_in_bundles()
        if rooted:
            left.append("processes rooted in a bundle: %s" % rooted)
        cgs = find_cgroups(ids)
        if cgs:
            left.append("cgroups left: %s" % cgs)
        held = self.identities_held()
        if held:
            left.append("identities still held: %s" % held)
        return left

    def identities_held(self):
        """Holders in the host-wide registry of identities (runtime/policy/
        identity.c) naming a state directory of this test's."""
        reg, found = "/run/agentsbx/.identities", []
        try:
            uids = [u for u in os.listdir(reg) if not u.startswith(".")]
        except OSError:
            return found
        for uid in uids:
            try:
                for h in os.listdir(os.path.join(reg, uid)):
                    with open(os.path.join(reg, uid, h)) as f:
                        if f.read().startswith(self.tmp):
                            found.append((uid, h))
            except OSError:
                pass
        return found

    def processes_in_bundles(self):
        """Processes whose root or cwd is a bundle's rootfs or under the
        test's temp dir (by path, and by inode: after pivot_root the path of
        a container's root is not readable from the host)."""
        inodes = set()
        for b in self.bundles:
            for p in (b, os.path.join(b, "rootfs")):
                try:
                    s = os.stat(p)
                    inodes.add((s.st_dev, s.st_ino))
                except OSError:
                    pass
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == _MYPID:
                continue
            for what in ("root", "cwd"):
                link = "/proc/%s/%s" % (name, what)
                try:
                    target = os.readlink(link)
                    s = os.stat(link)
                except OSError:
                    continue
                if target.startswith(self.tmp) or (s.st_dev, s.st_ino) in inodes:
                    found.append((int(name), what, target))
        return found

    def force_clean(self):
        """After a leak was reported: undo what the test left, by pid and by
        path, so that the next tests start clean."""
        victims = [pid for pid, _, _ in self.processes_in_bundles()]
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.time() + 5
        while any(pid_alive(p) for p in victims) and time.time() < deadline:
            reap_orphans()
            time.sleep(0.02)
        reap_orphans()
        with open("/proc/self/mountinfo") as f:
            points = [l.split()[4] for l in f if self.tmp in l]
        for mp in sorted(points, key=len, reverse=True):
            run_cmd(["umount", "-l", mp], timeout=10)
        dirs = []
        for cg in find_cgroups(self.ids):
            dirs += [d for d, _, _ in os.walk(cg)]
        for d in sorted(set(dirs), key=len, reverse=True):  # children first
            try:
                os.rmdir(d)
            except OSError:
                pass


def find_cgroups(ids, maxdepth=4):
    """Directories under /sys/fs/cgroup/* (up to maxdepth below it) named
    after one of ids, or containing one of them in their name."""
    ids = [i for i in ids if i]
    found = []

    def walk(d, depth):
        try:
            it = list(os.scandir(d))
        except OSError:
            return
        for e in it:
            if not e.is_dir(follow_symlinks=False):
                continue
            if any(i in e.name for i in ids):
                found.append(e.path)
            if depth < maxdepth:
                walk(e.path, depth + 1)

    if ids:
        walk("/sys/fs/cgroup", 0)
    return found


@pytest.fixture
def penv(runtime, base_rootfs, request):
    """An Env with no --policy: the built-in default policy (enforce) is in
    force; a test passes a policy file of its own where it needs one."""
    if os.path.exists("/etc/agentsbx/policy.json"):
        pytest.skip("/etc/agentsbx/policy.json exists on this machine")
    e = Env(runtime, base_rootfs, request, ())
    yield e
    left = e.cleanup()
    if left:
        e.force_clean()
    subprocess.run(["rm", "-rf", e.tmp])
    assert not left, "the test left things behind:\n  " + "\n  ".join(left)


def policy_file(env, content):
    """A policy file in env's temp dir: content is JSON text or a dict."""
    path = os.path.join(env.tmp, "policy-%s.json" % uuid.uuid4().hex[:6])
    with open(path, "w") as f:
        f.write(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.fixture
def env(runtime, base_rootfs, request, oci_policy_args):
    e = Env(runtime, base_rootfs, request, oci_policy_args)
    yield e
    left = e.cleanup()
    if left:
        e.force_clean()
    shutil.rmtree(e.tmp, ignore_errors=True)
    assert not left, "the test left things behind:\n  " + "\n  ".join(left)


@pytest.fixture
def rt(env):
    return env.rt


@pytest.fixture
def bundle(env):
    return env.default_bundle()


@pytest.fixture
def new_id(env):
    return env.new_id


def wait_for(pred, timeout=10, interval=0.05, what="condition"):
    deadline = time.time() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(interval)


def pid_alive(pid):
    st = _stat_fields(pid)
    return st is not None and st[0] not in ("Z", "X")


def proc_exe(pid):
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError as e:
        return "?" + errno.errorcode.get(e.errno, str(e.errno))


def proc_cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


# --------------------------------------------------------------------------
# `slow`: left out of `make check` (a contributor's few minutes), run by
# `make integration` and `make test`.  Every "weak" variant of a real/weak
# test is slow: it builds build-weak-NAME on first use (a whole build, 10-30 s)
# and proves the test itself can see the attack; the "real" variant, which
# checks the defence, stays in `make check`.  Tests that are long by design
# (thousands of execs, a 30-s lock wait, 250 kills) carry the mark themselves.

def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: left out of `make check` (weak builds, long-by-design tests)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("build") == "weak":
            item.add_marker(pytest.mark.slow)
