# SPDX-License-Identifier: Apache-2.0
"""The floor's checker: a created container inspected from the host.

check_container(trial, phase) looks at a container the runtime accepted
(phase "created": before `start`, the init waiting; phase "started": the
container's own process running) and returns the violations it finds, each
{"kind": ..., "what": ...}.  It knows the spec the container was created
from, the policy in force (`agentsbx policy show`), and the host objects the
harness made (tenant directories, sockets, ...); it trusts nothing the
runtime says about the container but its pid.

check_host_after(trial, before) compares what the host looked like before
`create` with after `delete` (the mount tables, the harness's host objects,
the sockets it listens on, sysctls, the hostname, the processes the
runtime's commands started); it runs for refused specs too: a refusal must
leave nothing changed either.

Every check is independent of the runtime's code: the rules are the floor
as docs/policy.md states it, re-derived from the kernel's own view
(/proc/PID/mountinfo, status, ns/*, cgroup files, limits, stat).
"""

import ctypes
import fnmatch as _fnmatch
import os
import re
import stat
import sys

# --------------------------------------------------------------------------
# mountinfo


class Mount:
    __slots__ = ("id", "parent", "dev", "root", "mp", "opts", "optional", "fstype",
                 "source", "super", "line")

    def __repr__(self):
        return "<%s>" % self.line


_OCT = re.compile(r"\\([0-7]{3})")


def _unescape(s):
    return _OCT.sub(lambda m: chr(int(m.group(1), 8)), s)


def parse_mountinfo(text):
    out = []
    for line in text.splitlines():
        if " - " not in line:
            continue
        left, right = line.split(" - ", 1)
        lf, rf = left.split(), right.split()
        m = Mount()
        m.line = line
        m.id, m.parent = int(lf[0]), int(lf[1])
        maj, mi = lf[2].split(":")
        m.dev = (int(maj), int(mi))
        m.root = _unescape(lf[3])
        m.mp = _unescape(lf[4])
        m.opts = set(lf[5].split(","))
        m.optional = lf[6:]
        m.fstype = rf[0]
        m.source = _unescape(rf[1]) if len(rf) > 1 else ""
        m.super = rf[2].split(",") if len(rf) > 2 else []
        out.append(m)
    return out


def read_mountinfo(pid="self"):
    with open("/proc/%s/mountinfo" % pid) as f:
        return parse_mountinfo(f.read())


def peer_groups(mounts):
    return {o.split(":", 1)[1] for m in mounts for o in m.optional if o.startswith("shared:")}


def super_size(m):
    """A tmpfs's size in bytes from its super options (None: unlimited)."""
    for o in m.super:
        if o.startswith("size="):
            v = o[5:]
            mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(v[-1:].lower(), 1)
            return int(v.rstrip("kKmMgG") or 0) * mult
    return None


def path_under(path, prefix):
    path, prefix = os.path.normpath(path), os.path.normpath(prefix)
    return prefix == "/" or path == prefix or path.startswith(prefix + "/")


# --------------------------------------------------------------------------
# small readers


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


def status_of(pid):
    text = read("/proc/%d/status" % pid)
    if text is None:
        return None
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def ns_of(pid, kind):
    try:
        return os.readlink("/proc/%s/ns/%s" % (pid, kind))
    except OSError:
        return None


NS_KINDS = ("mnt", "pid", "net", "ipc", "uts", "cgroup")


def host_ns(kind):
    """The host's namespace: PID 1's where /proc lets us read it (on some
    machines PID 1's ns links are closed even to root), else the harness's
    own, which is the runtime's."""
    return ns_of(1, kind) or ns_of("self", kind)


def cgroups_of(pid):
    """{controller-or-'' : path} from /proc/PID/cgroup ('' is v2)."""
    text = read("/proc/%s/cgroup" % pid, "")
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for c in (parts[1].split(",") if parts[1] else [""]):
            out[c] = parts[2]
    return out


def cgroup_mounts(host_mounts):
    """{controller-or-'' : host mount point}."""
    out = {}
    for m in host_mounts:
        if m.fstype == "cgroup2":
            out.setdefault("", m.mp)
        elif m.fstype == "cgroup":
            for o in m.super:
                if o in ("rw", "ro") or "=" in o and not o.startswith("name="):
                    continue
                out.setdefault(o, m.mp)
    return out


def pids_in_pidns(pidns):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and ns_of(name, "pid") == pidns:
            out.append(int(name))
    return out


# Capability names in bit order: the integration suite's list (its
# conftest, which the floor's conftest and the harness load anyway).
_INTEGRATION = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "integration")
if _INTEGRATION not in sys.path:
    sys.path.append(_INTEGRATION)
from conftest import CAP_NAMES  # noqa: E402


def cap_mask(names):
    mask = 0
    for n in names or []:
        if n in CAP_NAMES:
            mask |= 1 << CAP_NAMES.index(n)
    return mask


def cap_names(mask):
    return [n for i, n in enumerate(CAP_NAMES) if mask >> i & 1] + \
        ["cap%d" % i for i in range(len(CAP_NAMES), 64) if mask >> i & 1]


# The device nodes and cgroup rules every container gets (docs/policy.md
# "paths, devices"; runc's default set).
DEFAULT_DEVICES = {(1, 3), (1, 5), (1, 7), (1, 8), (1, 9), (5, 0), (5, 1), (5, 2)}
DEFAULT_DEVICE_NAMES = {"null": (1, 3), "zero": (1, 5), "full": (1, 7), "random": (1, 8),
                        "urandom": (1, 9), "tty": (5, 0), "console": (5, 1), "ptmx": (5, 2)}


def device_rule_ok(rule):
    """A v1 devices.list line within the default rules."""
    parts = rule.split()
    if len(parts) != 3:
        return False
    t, mm, acc = parts
    if t == "a":
        return False
    maj, mi = mm.split(":")
    if set(acc) <= {"m"}:
        return True  # mknod only: opening stays denied
    if t == "c" and maj == "136":
        return True  # pts
    if t != "c" or "*" in (maj, mi):
        return False
    return (int(maj), int(mi)) in DEFAULT_DEVICES


# --------------------------------------------------------------------------
# hooks: the rules of docs/policy.md "Hooks are commands", re-derived

HOST_HOOK_KINDS = ("prestart", "createRuntime", "createContainer", "poststart", "poststop")
LOADER_VARS = ("LD_", "GCONV_PATH=", "GLIBC_TUNABLES=", "MALLOC_", "HOSTALIASES=",
               "LOCALDOMAIN=", "RES_OPTIONS=", "NLSPATH=")
DOCKER_TASK_DIR = "/containerd/daemon/io.containerd.runtime.v2.task/moby/"


def glob_match(pattern, s):
    """fnmatch(3) with flags 0: '*' matches '/' too; a backslash quotes."""
    if "\\" not in pattern:
        return _fnmatch.fnmatchcase(s, pattern)
    rx, i = "", 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            rx += re.escape(pattern[i + 1])
            i += 2
            continue
        rx += {"*": ".*", "?": "."}.get(c, re.escape(c))
        i += 1
    return re.fullmatch(rx, s, re.S) is not None


def file_id(path, follow=True):
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def hook_rule_matches(policy, trial, kind, hook, exe_id=None):
    """Whether the checker's own reading of the policy lets this hook run:
    returns the rule's description, or None."""
    if kind not in HOST_HOOK_KINDS:
        return None
    path = hook.get("path") or ""
    located = exe_id or (file_id(path) if path.startswith("/") else None)
    if located is None:
        return None
    env = hook.get("env") or []
    if any(str(e).startswith(LOADER_VARS) for e in env):
        return None
    args = [str(a) for a in hook.get("args") or []]
    for r in policy.get("hookRules") or []:
        if file_id(r["path"]) != located:
            continue
        if kind not in (r.get("kinds") or HOST_HOOK_KINDS):
            continue
        pats = r.get("args") or []
        if len(pats) != len(args):
            continue
        if not all(glob_match(p.replace("${id}", trial.cid), a) for p, a in zip(pats, args)):
            continue
        if not all(any(glob_match(g, e) for g in r.get("env") or []) for e in env):
            continue
        return "hookRules %s" % r["path"]
    # Docker's own hook
    if kind in ("prestart", "createRuntime") and not env and len(args) == 4 and \
            args[0] == "libnetwork-setkey" and args[1].startswith("-exec-root=/") and \
            args[2] == trial.cid and re.fullmatch(r"[0-9a-f]{12,64}", args[3]) and \
            any(file_id(d) == located for d in policy.get("dockerHook") or []):
        want = args[1][len("-exec-root="):] + DOCKER_TASK_DIR + trial.cid
        if os.path.realpath(want) == os.path.realpath(trial.bundle):
            return "dockerHook"
    return None


def spec_hooks(spec):
    for kind, lst in ((spec.get("hooks") or {}).items() if isinstance(spec.get("hooks"), dict)
                      else []):
        if isinstance(lst, list):
            for i, h in enumerate(lst):
                if isinstance(h, dict):
                    yield kind, i, h


# --------------------------------------------------------------------------
# the container


class Verdicts(list):
    def add(self, kind, what):
        self.append({"kind": kind, "what": what})


def _policy_enforces(policy):
    return policy.get("mode") == "enforce"


def spec_binds(trial):
    """[(resolved host source, realpath, options)] of the spec's binds."""
    out = []
    for m in trial.spec.get("mounts") or []:
        if not isinstance(m, dict):
            continue
        opts = [o for o in m.get("options") or [] if isinstance(o, str)]
        if m.get("type") != "bind" and "bind" not in opts and "rbind" not in opts:
            continue
        src = m.get("source")
        if not isinstance(src, str) or not src:
            continue
        if not src.startswith("/"):
            src = os.path.join(trial.bundle, src)
        out.append((os.path.normpath(src), os.path.realpath(src), opts))
    return out


def allowed_bind_roots(trial):
    """Host paths under which the policy lets a bind come from."""
    p = trial.policy
    roots = []
    for pre in p.get("bindPrefixes") or []:
        roots.append(os.path.normpath(pre))
        roots.append(os.path.realpath(pre))
    roots += [os.path.realpath(d) for d in trial.derived_binds]
    return roots


def volume_shape_ok(trial, path):
    for d in trial.policy.get("bindVolumeDirs") or []:
        for base in {os.path.normpath(d), os.path.realpath(d)}:
            if path_under(path, base):
                rel = os.path.relpath(path, base).split("/")
                if len(rel) >= 2 and rel[1] == "_data":
                    return True
    return False


def tenant_hit(trial, path):
    """A reason if path is, holds or is inside another tenant's engine
    directory or secret."""
    for t in trial.tenant_paths:
        if path_under(path, t):
            return "inside another tenant's %s" % t
        if path_under(t, path):
            return "holds another tenant's %s" % t
    return None


def map_to_host(m, host_mounts):
    """The host paths where the object of container mount m is (its device
    and root against the host's mount table)."""
    out = []
    root = m.root
    if root.endswith("//deleted"):
        return out
    for h in host_mounts:
        if h.dev != m.dev or h.root.endswith("//deleted"):
            continue
        hr = h.root.rstrip("/") or "/"
        if hr != "/" and root != hr and not root.startswith(hr + "/"):
            continue
        rel = root if hr == "/" else root[len(hr):]
        out.append(os.path.normpath(h.mp.rstrip("/") + "/" + rel.lstrip("/")))
    return out


def object_at(pid, mp):
    """(dev, ino, mode, mnt_id) of what is at mount point mp in the
    container (its topmost mount), or None."""
    path = "/proc/%d/root%s" % (pid, mp if mp != "/" else "")
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        mnt_id = None
        for line in (read("/proc/self/fdinfo/%d" % fd) or "").splitlines():
            if line.startswith("mnt_id:"):
                mnt_id = int(line.split()[1])
        return (st.st_dev, st.st_ino, st.st_mode, mnt_id, st.st_rdev)
    finally:
        os.close(fd)


def check_mounts(trial, pid, v, host_mounts, other_devs):
    p = trial.policy
    enforce = _policy_enforces(p)
    try:
        mounts = read_mountinfo(pid)
    except OSError as e:
        v.add("mount.unreadable", "mountinfo of %d: %s" % (pid, e))
        return []
    host_devs = {m.dev for m in host_mounts} | {m.dev for m in trial.host_mounts_pid1}
    host_peers = peer_groups(host_mounts) | peer_groups(trial.host_mounts_pid1)
    masked = set(p.get("maskedPaths") or []) | set(
        (trial.spec.get("linux") or {}).get("maskedPaths") or [])
    cgs = cgroups_of(pid)
    binds = spec_binds(trial)
    roots = allowed_bind_roots(trial)
    special = {os.path.realpath(s) for s in p.get("bindSpecialFiles") or []}
    mem_cap = p.get("limits", {}).get("memory") or 0
    tmpfs_caps = {t["path"]: t["size"] for t in p.get("tmpfs") or []}
    proc_devs = {m.dev for m in mounts if m.mp == "/proc" and m.fstype == "proc"}
    root_m = [m for m in mounts if m.mp == "/"]
    # the writable layer's overlay is a filesystem of the container's own:
    # a bind of a part of it (a readonlyPaths entry) is its own
    own_root_dev = root_m[0].dev if root_m and root_m[0].fstype == "overlay" else None
    for m in mounts:
        where = "%s (%s %s root %s)" % (m.mp, m.fstype, m.source, m.root)
        for o in m.optional:
            if o.startswith("shared:") and o.split(":", 1)[1] in host_peers:
                v.add("mount.propagation", "%s is in the host's peer group %s: a mount "
                      "made below it on either side appears on the other" % (where, o))
        if "idmapped" in m.opts and enforce and not p.get("idmappedMounts"):
            v.add("mount.idmapped", where)
        in_pseudo = path_under(m.mp, "/proc") and m.mp != "/proc" or \
            path_under(m.mp, "/sys") and m.mp != "/sys"
        if m.mp == "/" and m is root_m[0]:
            # the root the container pivoted into; a mount the spec puts
            # over "/" later is judged as any other mount
            check_root(trial, pid, m, v, host_mounts, other_devs)
            continue
        if m.fstype in ("cgroup", "cgroup2"):
            ctrl = ""
            if m.fstype == "cgroup":
                ctrl = next((o for o in m.super if o not in ("rw", "ro") and "=" not in o),
                            next((o for o in m.super if o.startswith("name=")), ""))
            own = cgs.get(ctrl)
            if enforce and "ro" not in m.opts:
                v.add("mount.cgroup-rw", where)
            if own is not None and not path_under(m.root, own) and enforce:
                v.add("mount.cgroup-foreign", "%s: not the container's own cgroup %s"
                      % (where, own))
            continue
        obj = object_at(pid, m.mp)
        top = obj is not None and obj[3] == m.id
        is_null = top and stat.S_ISCHR(obj[2]) and (os.major(obj[4]), os.minor(obj[4])) == (1, 3)
        if m.mp in masked and (is_null or (m.fstype == "tmpfs" and "ro" in m.opts and
                                           m.dev not in host_devs)):
            continue  # a mask
        if m.dev in proc_devs and m.fstype == "proc" and m.mp != "/proc":
            # a readonlyPaths bind of the container's own procfs
            if not path_under(m.mp, "/proc") or m.root != m.mp[len("/proc"):]:
                v.add("mount.proc-moved", where)
            elif enforce and "ro" not in m.opts:
                v.add("mount.readonly", "%s: a bind of /proc%s, not read-only" % (where, m.root))
            continue
        if m.dev in other_devs:
            v.add("mount.other-container", "%s: a filesystem of %s" % (where, other_devs[m.dev]))
            continue
        if own_root_dev is not None and m.dev == own_root_dev:
            if enforce and m.mp in (p.get("readonlyPaths") or []) and "ro" not in m.opts:
                v.add("mount.readonly", "%s is writable in the container" % m.mp)
            continue
        if m.dev not in host_devs:
            # a filesystem of its own
            if m.fstype == "proc":
                if m.mp != "/proc" and enforce:
                    v.add("mount.fs-type", "%s: procfs outside /proc" % where)
            elif m.fstype == "sysfs":
                if enforce and m.mp != "/sys":
                    v.add("mount.sysfs-moved", "%s: a sysfs outside /sys, where the policy's "
                          "/sys masks (/sys/firmware, ...) are not applied" % where)
                elif enforce and "ro" not in m.opts:
                    v.add("mount.sysfs", "%s: sysfs not read-only" % where)
            elif m.fstype == "tmpfs":
                size = super_size(m)
                cap = tmpfs_caps.get(m.mp, mem_cap)
                # the read-only tmpfs that holds the cgroup hierarchies,
                # wherever below /sys/fs/cgroup the spec's cgroup mount is
                holder = path_under(m.mp, "/sys/fs/cgroup") and "ro" in m.opts
                if enforce and in_pseudo and not holder and not (m.mp in masked and
                                                                 "ro" in m.opts):
                    v.add("mount.under-pseudo", "%s: a tmpfs under /proc or /sys" % where)
                if enforce and cap and (size is None or size == 0 or size > cap):
                    v.add("mount.tmpfs-size", "%s: size %s above the cap %d" % (where, size, cap))
            elif m.fstype in ("devpts", "mqueue"):
                if enforce and in_pseudo:
                    v.add("mount.under-pseudo", where)
            else:
                if enforce:
                    v.add("mount.fs-type", "%s: a %s filesystem not on the policy's list" %
                          (where, m.fstype))
            continue
        # a bind of a host object
        check_bind(trial, pid, m, obj if top else None, v, host_mounts, binds, roots,
                   special, where, in_pseudo)
    # the floor is the policy's lists: the spec's own masked and read-only
    # paths are its business (OCI conformance, not the floor)
    check_masks(trial, pid, mounts, set(p.get("maskedPaths") or []),
                set(p.get("readonlyPaths") or []), v)
    return mounts


def check_bind(trial, pid, m, obj, v, host_mounts, binds, roots, special, where, in_pseudo):
    p = trial.policy
    enforce = _policy_enforces(p)
    if m.root.endswith("//deleted"):
        v.add("mount.bind-deleted", "%s: a deleted file" % where)
        return
    paths = map_to_host(m, host_mounts)
    # the candidate that is the very object, where we can tell
    if obj is not None:
        same = [x for x in paths if file_id(x, follow=False) == (obj[0], obj[1])]
        paths = same or paths
    if not paths:
        v.add("mount.bind-unknown", "%s: its object is nowhere in the runtime's mount "
              "namespace (another namespace's file, or a deleted one)" % where)
        return
    host = paths[0]
    mode = obj[2] if obj is not None else None
    if mode is None:
        try:
            mode = os.lstat(host).st_mode
        except OSError:
            mode = None
    rdev = None
    if obj is not None:
        rdev = (os.major(obj[4]), os.minor(obj[4]))
    # the runtime's own device binds (rootless): a default node at its place
    if mode is not None and stat.S_ISCHR(mode) and rdev in DEFAULT_DEVICES and \
            m.mp == "/dev/" + next((n for n, d in DEFAULT_DEVICE_NAMES.items() if d == rdev), "?"):
        return
    if enforce and in_pseudo:
        v.add("mount.under-pseudo", "%s: a bind under /proc or /sys" % where)
    if not enforce:
        return
    image = trial_root_path(trial)
    if image != "/" and path_under(host, image):
        # a part of the image bound over itself (readonlyPaths, the
        # runtime's own): the image stays read-only
        if "ro" not in m.opts and trial.policy.get("readonlyRoot", True):
            v.add("root.writable", "%s: a part of the image bound writable" % where)
        return
    hit = tenant_hit(trial, host)
    if hit:
        v.add("mount.bind-tenant", "%s: host path %s, %s" % (where, host, hit))
    if host in trial.engine_parents:
        v.add("mount.bind-tenant", "%s: host path %s, an engine directory of every tenant"
              % (where, host))
    asked = [b for b in binds if path_under(host, b[1]) or path_under(host, b[0])]
    if not asked:
        v.add("mount.bind-unasked", "%s: host path %s is no bind source of this spec"
              % (where, host))
    under = any(path_under(host, r) for r in roots) or volume_shape_ok(trial, host)
    if not under:
        v.add("mount.bind-unjudged", "%s: host path %s is under no bindPrefixes entry "
              "nor this container's engine directories" % (where, host))
    if mode is not None and (stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode) or
                             stat.S_ISCHR(mode) or stat.S_ISBLK(mode)):
        if os.path.realpath(host) not in special:
            what = ("a unix socket" if stat.S_ISSOCK(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device node")
            v.add("mount.bind-special", "%s: host path %s is %s not named in bindSpecialFiles"
                  % (where, host, what))
    if mode is not None and stat.S_ISDIR(mode) and "ro" not in m.opts and \
            not p.get("writableBinds"):
        fst = [h.fstype for h in host_mounts if h.dev == m.dev]
        if not fst or fst[0] != "tmpfs":
            v.add("mount.bind-writable", "%s: a writable bind of host directory %s (%s)"
                  % (where, host, fst[0] if fst else "?"))


def trial_root_path(trial):
    """root.path as the host resolves it."""
    rootpath = (trial.spec.get("root") or {}).get("path") if isinstance(
        trial.spec.get("root"), dict) else None
    if not isinstance(rootpath, str):
        rootpath = "rootfs"
    want = rootpath if rootpath.startswith("/") else os.path.join(trial.bundle, rootpath)
    return os.path.realpath(want)


def check_root(trial, pid, m, v, host_mounts, other_devs):
    p = trial.policy
    enforce = _policy_enforces(p)
    rootpath = (trial.spec.get("root") or {}).get("path") if isinstance(
        trial.spec.get("root"), dict) else None
    if not isinstance(rootpath, str):
        rootpath = "rootfs"
    want_real = trial_root_path(trial)
    where = "/ (%s %s root %s)" % (m.fstype, m.source, m.root)
    if enforce:
        ok = path_under(want_real, os.path.realpath(trial.bundle)) or any(
            path_under(want_real, os.path.realpath(r)) for r in p.get("rootfsPrefixes") or []) \
            or any(path_under(want_real, os.path.realpath(r)) for r in trial.derived_rootfs)
        if not ok:
            v.add("root.host-dir", "root.path %s is %s: neither in the bundle nor under "
                  "rootfsPrefixes" % (rootpath, want_real))
        if tenant_hit(trial, want_real):
            v.add("root.tenant", "root.path %s: %s" % (want_real, tenant_hit(trial, want_real)))
    st = None
    try:
        st = os.stat("/proc/%d/root" % pid)
    except OSError:
        pass
    if m.fstype == "overlay":
        # the writable layer: its lower must be this very image
        token = read("/proc/%d/root/.floor-token" % pid)
        want_token = read(os.path.join(want_real, ".floor-token"))
        if trial.objects.under_harness(want_real) and token != want_token:
            v.add("root.not-image", "%s: the overlay's content is not root.path %s" %
                  (where, want_real))
        if m.dev in other_devs:
            v.add("root.other-container", "%s: %s" % (where, other_devs[m.dev]))
        return
    if st is None:
        return
    wst = None
    try:
        wst = os.stat(want_real)
    except OSError:
        pass
    if wst is None or (st.st_dev, st.st_ino) != (wst.st_dev, wst.st_ino):
        host = map_to_host(m, host_mounts)
        v.add("root.not-image", "%s: the root is %s, not root.path %s" %
              (where, host[0] if host else "an object of no host path", want_real))
    if enforce and p.get("readonlyRoot", True) and "ro" not in m.opts:
        ann = trial.spec.get("annotations") or {}
        relaxed = ann.get("agentsbx.rootfs") == "writable" and \
            "writableRoot" in (p.get("relaxable") or [])
        if not relaxed:
            v.add("root.writable", "%s: the image itself is writable" % where)


def check_masks(trial, pid, mounts, masked, readonly, v):
    if not _policy_enforces(trial.policy):
        return
    by_mp = {}
    for m in mounts:
        by_mp.setdefault(m.mp, []).append(m)
    base = "/proc/%d/root" % pid
    for path in sorted(masked):
        if not isinstance(path, str) or not path.startswith("/"):
            continue
        try:
            st = os.lstat(base + path)
        except OSError:
            continue
        if stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3):
            continue
        if stat.S_ISDIR(st.st_mode) and path in by_mp and \
                "ro" in by_mp[path][-1].opts and by_mp[path][-1].fstype == "tmpfs":
            try:
                if not os.listdir(base + path):
                    continue
            except OSError:
                continue
        v.add("mount.mask", "%s is not masked in the container" % path)
    for path in sorted(readonly):
        if not isinstance(path, str) or not path.startswith("/"):
            continue
        try:
            os.lstat(base + path)
        except OSError:
            continue
        cover = [m for m in mounts if path_under(path, m.mp)]
        if cover and "ro" not in max(cover, key=lambda m: len(m.mp)).opts:
            v.add("mount.readonly", "%s is writable in the container" % path)


def check_creds(trial, pid, v):
    p = trial.policy
    if not _policy_enforces(p):
        return
    st = status_of(pid)
    if st is None:
        return
    who = "pid %d (%s)" % (pid, st.get("Name", "?"))
    uids = [int(x) for x in st.get("Uid", "").split()]
    gids = [int(x) for x in st.get("Gid", "").split()]
    groups = [int(x) for x in st.get("Groups", "").split()]
    if p.get("uid") is not None:
        if 0 in uids:
            v.add("cred.uid", "%s runs with host uid 0: %s" % (who, uids))
        if 0 in gids:
            v.add("cred.gid", "%s runs with host gid 0: %s" % (who, gids))
        if 0 in groups:
            v.add("cred.groups", "%s has supplementary group 0: %s" % (who, groups))
    allowed = cap_mask(p.get("capabilities"))
    for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        val = int(st.get(k, "0"), 16)
        if val & ~allowed:
            v.add("cred.caps", "%s %s: %s beyond the policy's %s" % (
                who, k, ",".join(cap_names(val & ~allowed)), p.get("capabilities")))
    if p.get("noNewPrivileges", True) and st.get("NoNewPrivs") != "1":
        v.add("cred.nnp", "%s NoNewPrivs %s" % (who, st.get("NoNewPrivs")))
    if p.get("strictSeccomp", True) and st.get("Seccomp") != "2":
        v.add("cred.seccomp", "%s Seccomp mode %s" % (who, st.get("Seccomp")))
    check_limits(trial, pid, who, v)
    check_sched(trial, pid, who, v)


RLIM_INF = 2 ** 64 - 1


def read_limits(pid):
    text = read("/proc/%d/limits" % pid, "")
    out = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"(.+?)\s{2,}(\S+)\s+(\S+)", line)
        if m:
            def num(x):
                return RLIM_INF if x == "unlimited" else int(x)
            try:
                out[m.group(1).strip()] = (num(m.group(2)), num(m.group(3)))
            except ValueError:
                pass
    return out


def check_limits(trial, pid, who, v):
    lim = trial.policy.get("limits") or {}
    got = read_limits(pid)
    for name, key in (("Max file size", "rlimitFsize"), ("Max open files", "rlimitNofile"),
                      ("Max cpu time", "rlimitCpu")):
        cap = lim.get(key) or 0
        if cap and name in got and max(got[name]) > cap:
            v.add("rlimit", "%s %s %s above the cap %s = %d" % (who, name, got[name], key, cap))
    if not trial.policy.get("realtimeScheduling") and \
            got.get("Max realtime priority", (0, 0)) != (0, 0):
        v.add("rlimit", "%s RLIMIT_RTPRIO %s" % (who, got["Max realtime priority"]))


_libc = ctypes.CDLL(None, use_errno=True)
SYS_ioprio_get = 252  # x86_64


def check_sched(trial, pid, who, v):
    if trial.policy.get("realtimeScheduling"):
        return
    text = read("/proc/%d/stat" % pid)
    if text:
        f = text[text.rfind(")") + 2:].split()
        prio, policy = int(f[37]), int(f[38])  # fields 40 and 41
        if policy not in (0, 3, 5) or prio:
            v.add("sched", "%s scheduling policy %d priority %d" % (who, policy, prio))
    r = _libc.syscall(SYS_ioprio_get, 1, pid)
    if r >= 0 and (r >> 13) == 1:
        v.add("sched", "%s I/O priority class RT" % who)


def check_namespaces(trial, pid, v):
    host = {k: host_ns(k) for k in NS_KINDS}
    mine = {k: ns_of("self", k) for k in NS_KINDS}
    got = {k: ns_of(pid, k) for k in NS_KINDS + ("user",)}
    enforce = _policy_enforces(trial.policy)
    for k in NS_KINDS:
        if got[k] is None:
            continue
        if enforce and (got[k] == host[k] or got[k] == mine[k]):
            v.add("ns.host", "the container's %s namespace is the host's (%s)" % (k, got[k]))
        for cid, opid in trial.tenants.items():
            if got[k] == ns_of(opid, k):
                v.add("ns.tenant", "the container's %s namespace is tenant %s's" % (k, cid))
        for hpid in trial.objects.host_pids():
            if got[k] == ns_of(hpid, k) and got[k] != host[k]:
                v.add("ns.host", "the container's %s namespace is host process %d's" % (k, hpid))
    for cid, opid in trial.tenants.items():
        o = ns_of(opid, "user")
        if got["user"] and got["user"] == o and o != host_ns("user"):
            v.add("ns.tenant", "the container's user namespace is tenant %s's" % cid)
    # no interface but lo in a namespace the runtime made (no path)
    nets = [n for n in (trial.spec.get("linux") or {}).get("namespaces") or []
            if isinstance(n, dict) and n.get("type") == "network"]
    if enforce and not trial.policy.get("networkAllowed") and nets and not nets[0].get("path") \
            and got["net"] != host["net"]:
        dev = read("/proc/%d/net/dev" % pid, "")
        ifs = [l.split(":")[0].strip() for l in dev.splitlines()[2:] if ":" in l]
        extra = [i for i in ifs if i != "lo"]
        if extra:
            v.add("net.interfaces", "interfaces beside lo in the container's own network "
                  "namespace: %s" % extra)


def check_cgroups(trial, pid, v, phase):
    p = trial.policy
    if not _policy_enforces(p):
        return
    lim = p.get("limits") or {}
    cgs = cgroups_of(pid)
    mnts = cgroup_mounts(trial.host_mounts_pid1)
    mine = cgroups_of("self")
    others = {"the harness": mine, "PID 1": cgroups_of(1)}
    for cid, opid in trial.tenants.items():
        others["tenant " + cid] = cgroups_of(opid)
    for hpid in trial.objects.host_pids():
        others["host process %d" % hpid] = cgroups_of(hpid)
    pidns = ns_of(pid, "pid")
    members = set(pids_in_pidns(pidns)) if pidns else set()
    found = {}  # (kind, text) -> hierarchies
    for ctrl, path in cgs.items():
        if ctrl.startswith("name=") and ctrl != "name=systemd":
            continue
        if path == "/":
            found.setdefault(("cgroup.root", "the container is in the root cgroup"),
                             []).append(ctrl or "v2")
            continue
        for who, theirs in others.items():
            t = theirs.get(ctrl)
            if t and path_under(t, path):
                found.setdefault(("cgroup.shared", "the container's cgroup %s holds %s's %s"
                                  % (path, who, t)), []).append(ctrl or "v2")
            elif t and t != "/" and path_under(path, t) and not who.startswith("PID 1"):
                found.setdefault(("cgroup.nested", "the container's cgroup %s is inside %s's "
                                  "%s: charged to its limits" % (path, who, t)),
                                 []).append(ctrl or "v2")
        base = mnts.get(ctrl)
        if not base or ctrl not in ("memory", "pids", "cpu", "devices", ""):
            continue
        procs = read(os.path.join(base, path.lstrip("/"), "cgroup.procs"))
        if procs is not None and members:
            strangers = [int(x) for x in procs.split() if int(x) not in members]
            if strangers:
                found.setdefault(("cgroup.shared", "the container's cgroup %s holds processes "
                                  "not in the container: %s" % (path, strangers[:5])),
                                 []).append(ctrl or "v2")
    for (kind, text), ctrls in sorted(found.items()):
        v.add(kind, "%s (%s)" % (text, ",".join(sorted(ctrls))))
    res = (trial.spec.get("linux") or {}).get("resources") or {}
    if not isinstance(res, dict):
        res = {}

    def asked(d, k):
        x = (res.get(d) or {}).get(k) if isinstance(res.get(d), dict) else None
        return x if isinstance(x, int) and not isinstance(x, bool) and x > 0 else None

    def cgfile(ctrl, name):
        base = mnts.get(ctrl)
        if not base or ctrl not in cgs:
            return None
        return read(os.path.join(base, cgs[ctrl].lstrip("/"), name))

    def num(x):
        x = (x or "").strip()
        if x in ("", "max", "-1"):
            return None
        try:
            return int(x)
        except ValueError:
            return None

    # memory
    mem_cap = lim.get("memory") or 0
    want = min(x for x in (mem_cap, asked("memory", "limit")) if x) if (
        mem_cap or asked("memory", "limit")) else None
    got = None
    if "memory" in cgs:
        got = num(cgfile("memory", "memory.limit_in_bytes"))
        if got is not None and got >= 2 ** 62:
            got = None
        sw = cgfile("memory", "memory.memsw.limit_in_bytes")
        if sw is not None and got is not None and (num(sw) is None or num(sw) > got):
            v.add("cgroup.swap", "memory.memsw.limit_in_bytes %s above the memory limit %d"
                  % (sw.strip(), got))
        tcp = cgfile("memory", "memory.kmem.tcp.limit_in_bytes")
        if tcp is not None and mem_cap and (num(tcp) is None or num(tcp) >= 2 ** 62 or
                                            num(tcp) > mem_cap):
            v.add("cgroup.memory", "memory.kmem.tcp.limit_in_bytes %s above the cap" %
                  tcp.strip())
    elif "" in cgs and cgfile("", "memory.max") is not None:
        got = num(cgfile("", "memory.max"))
        sw = cgfile("", "memory.swap.max")
        if sw is not None and num(sw) not in (0,):
            v.add("cgroup.swap", "memory.swap.max %s" % sw.strip())
    if mem_cap and ("memory" in cgs or cgfile("", "memory.max") is not None):
        if got is None or got > mem_cap:
            v.add("cgroup.memory", "memory limit %s above the cap %d" % (got, mem_cap))
        elif want and got > want and got - want >= 4096:
            v.add("cgroup.lowering", "memory limit %d, the spec asked %d (below the cap)"
                  % (got, want))
    # pids
    pcap = lim.get("pids") or 0
    pg = None
    have = False
    if "pids" in cgs:
        have, pg = True, num(cgfile("pids", "pids.max"))
    elif "" in cgs and cgfile("", "pids.max") is not None:
        have, pg = True, num(cgfile("", "pids.max"))
    if pcap and have:
        if pg is None or pg > pcap:
            v.add("cgroup.pids", "pids limit %s above the cap %d" % (pg, pcap))
        elif asked("pids", "limit") and pg > asked("pids", "limit"):
            v.add("cgroup.lowering", "pids limit %d, the spec asked %d" % (pg, asked("pids", "limit")))
    # cpu
    q, per = lim.get("cpuQuota") or 0, lim.get("cpuPeriod") or 0
    cq = cp = None
    have = False
    if "cpu" in cgs:
        have = True
        cq, cp = num(cgfile("cpu", "cpu.cfs_quota_us")), num(cgfile("cpu", "cpu.cfs_period_us"))
    elif "" in cgs and cgfile("", "cpu.max") is not None:
        have = True
        parts = (cgfile("", "cpu.max") or "").split()
        if len(parts) == 2:
            cq, cp = num(parts[0]), num(parts[1])
    if q and per and have:
        if cq is None or not cp or cq / cp > q / per + 1e-9:
            v.add("cgroup.cpu", "cpu quota %s/%s above the cap %d/%d" % (cq, cp, q, per))
        else:
            aq, ap = asked("cpu", "quota"), asked("cpu", "period")
            if aq and aq / (ap or per) < q / per and cq / cp > aq / (ap or per) + 1e-6:
                v.add("cgroup.lowering", "cpu quota %d/%d, the spec asked %d/%d"
                      % (cq, cp, aq, ap or per))
    # devices (v1)
    if p.get("defaultDevicesOnly", True) and "devices" in cgs:
        lst = cgfile("devices", "devices.list")
        if lst is not None:
            bad = [r for r in lst.splitlines() if r.strip() and not device_rule_ok(r)]
            if bad:
                v.add("cgroup.devices", "device rules beyond the default nodes: %s" % bad[:6])


def check_devices(trial, pid, v):
    if not _policy_enforces(trial.policy) or not trial.policy.get("defaultDevicesOnly", True):
        return
    base = "/proc/%d/root/dev" % pid
    try:
        names = ["/dev/" + n for n in os.listdir(base)]
    except OSError:
        names = []
    # and wherever the spec put one (a linux.devices path outside /dev)
    for d in (trial.spec.get("linux") or {}).get("devices") or []:
        if isinstance(d, dict) and isinstance(d.get("path"), str) and \
                d["path"].startswith("/") and not path_under(d["path"], "/dev"):
            names.append(os.path.normpath(d["path"]))
    for n in names:
        path = "/proc/%d/root%s" % (pid, n)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISBLK(st.st_mode):
            v.add("dev.node", "%s is a block device %d:%d" % (
                n, os.major(st.st_rdev), os.minor(st.st_rdev)))
        elif stat.S_ISCHR(st.st_mode):
            d = (os.major(st.st_rdev), os.minor(st.st_rdev))
            if d not in DEFAULT_DEVICES and d[0] != 136 or not path_under(n, "/dev"):
                v.add("dev.node", "%s is a device %d:%d beyond the default nodes"
                      % (n, d[0], d[1]))


def container_pids(pid):
    """The container's own processes: in its pid and mount namespaces (a
    pid namespace it joined holds another container's processes too)."""
    ns, mnt = ns_of(pid, "pid"), ns_of(pid, "mnt")
    return [p for p in pids_in_pidns(ns) if ns_of(p, "mnt") == mnt] if ns else []


def check_container(trial, phase, other_devs=None):
    """Violations of the floor in the container whose init is trial.pid."""
    v = Verdicts()
    pid = trial.pid
    alive = _alive(pid)
    if not alive:
        return v
    host_mounts = read_mountinfo("self")
    trial.host_mounts_pid1 = read_mountinfo(1)
    check_mounts(trial, pid, v, host_mounts, other_devs or {})
    check_namespaces(trial, pid, v)
    check_cgroups(trial, pid, v, phase)
    check_devices(trial, pid, v)
    if phase == "started":
        for p in container_pids(pid) or [pid]:
            check_creds(trial, p, v)
    if _alive(pid) != alive:
        # it died (or its pid was reused) while we looked: what was read
        # may be a zombie's, which has no mounts nor cgroups any more
        return Verdicts()
    return v


def _alive(pid):
    """(pid, starttime) of a live (not zombie) process, else None."""
    text = read("/proc/%d/stat" % pid) if pid else None
    if not text:
        return None
    f = text[text.rfind(")") + 2:].split()
    # field 3 state; field 9 flags, PF_EXITING (0x4): an exiting task is
    # already out of its cgroups and namespaces before it is a zombie
    if f[0] in ("Z", "X") or int(f[6]) & 0x4:
        return None
    return (pid, f[19])


# --------------------------------------------------------------------------
# identity (issue 26: a host uid and gid of each container's own, from the
# policy's identities; FLOOR_CHECK_IDENTITY=0 turns these off for a runtime
# from before that change)


def ids_of(pid):
    st = status_of(pid)
    if not st:
        return None
    return ({int(x) for x in st.get("Uid", "").split()},
            {int(x) for x in st.get("Gid", "").split()} |
            {int(x) for x in st.get("Groups", "").split()})


def check_identity(containers, others=None, host_mntns=None):
    """containers: {cid: init pid} of containers under enforce; others:
    {cid: init pid} of the other live containers (any policy).  No
    container of the first shares a host uid or gid with another container,
    nor with a host process outside every container."""
    v = Verdicts()
    others = dict(others or {})
    host_mntns = host_mntns or host_ns("mnt")
    every = dict(others)
    every.update(containers)
    ns_to_cid = {}
    for cid, pid in every.items():
        ns = ns_of(pid, "pid")
        if ns:
            ns_to_cid[ns] = cid
    ids = {cid: (set(), set()) for cid in every}
    hosts = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        got = ids_of(pid)
        if got is None:
            continue
        cid = ns_to_cid.get(ns_of(pid, "pid"))
        if cid is not None:
            ids[cid][0].update(got[0])
            ids[cid][1].update(got[1])
        elif ns_of(pid, "mnt") == host_mntns and read("/proc/%d/cmdline" % pid):
            hosts.append((pid, got))
    done = set()
    for a in sorted(containers):
        for b in sorted(every):
            if a == b or (b, a) in done:
                continue
            done.add((a, b))
            u = ids[a][0] & ids[b][0]
            g = ids[a][1] & ids[b][1]
            if u or g:
                v.add("identity.shared", "containers %s and %s share host uid %s gid %s"
                      % (a, b, sorted(u), sorted(g)))
        shared = {}
        for pid, (hu, hg) in hosts:
            key = (tuple(sorted(ids[a][0] & hu)), tuple(sorted(ids[a][1] & hg)))
            if key != ((), ()):
                shared.setdefault(key, []).append(pid)
        for (u, g), pids in sorted(shared.items()):
            v.add("identity.host", "container %s shares host uid %s gid %s with %d host "
                  "process(es) outside every container, e.g. %d (%s)" % (
                      a, list(u), list(g), len(pids), pids[0],
                      (read("/proc/%d/comm" % pids[0]) or "").strip()))
    return v


def check_identity_range(trial, state_root):
    """Under the policy's identities (a range of host uids): every process
    of a container with no user namespace of its own runs as a uid and gid
    of that range, with no supplementary group outside it, and as the uid
    the runtime recorded in the container's state directory."""
    v = Verdicts()
    ids = trial.policy.get("identities")
    pid = trial.pid
    if not _policy_enforces(trial.policy) or not isinstance(ids, dict) or not _alive(pid):
        return v
    first, count = int(ids.get("first", 0)), int(ids.get("count", 0))
    if ns_of(pid, "user") != host_ns("user"):
        return v  # the mapping of its own user namespace says
    rec = read(os.path.join(state_root, trial.cid, "identity"))
    for p in container_pids(pid) or [pid]:
        st = status_of(p)
        if not st:
            continue
        uids = {int(x) for x in st.get("Uid", "").split()}
        gids = {int(x) for x in st.get("Gid", "").split()}
        groups = {int(x) for x in st.get("Groups", "").split()}
        out = sorted(x for x in uids | gids | groups if not first <= x < first + count)
        if out:
            v.add("identity.range", "pid %d runs with ids %s outside identities %d + %d"
                  % (p, out, first, count))
        if rec is not None and rec.strip() and uids != {int(rec.strip())}:
            v.add("identity.record", "pid %d runs as uid %s, the state records %s"
                  % (p, sorted(uids), rec.strip()))
    if rec is None:
        v.add("identity.record", "no identity recorded in the state directory of %s" % trial.cid)
    if not _alive(pid):
        return Verdicts()
    return v
