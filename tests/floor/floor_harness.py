# SPDX-License-Identifier: Apache-2.0
"""The floor oracle's harness: the host objects a hostile spec points at,
and one trial (create, check, start, check, delete, check the host).

It runs inside the integration suite's process discipline: it imports
tests/integration/conftest.py (the pytest process, or floor_fuzz.py's, is
the child subreaper with the reaper thread; every command goes through
run_cmd/spawn; the Env class gives each trial its state root and the
teardown that lists what was left).

Host objects (HostObjects, one set per session, under one temp dir T):

  T/allowed/            in bindPrefixes of the harness policies:
      dir/ file         a directory and a file
      named.sock        a listening unix socket named in bindSpecialFiles
      other.sock        a listening unix socket named nowhere
      listener.sock     the one seccompListeners entry (it accepts, reads,
                        closes what it was sent)
      fifo  null        a FIFO, a character device node (1:3)
      link-out          a symlink to T/tenant (outside the prefix)
      link-in           a symlink to dir/
      shared/sub/inner  a directory on a mount made shared (peer group of
                        the host's mount namespace)
      tmpfs/            a tmpfs (a writable bind of it is allowed)
  T/tenant/             another tenant's engine directories, each with a
                        secret: docker/containers/<id>/config.v2.json,
                        kubelet/pods/<uid>/.../token,
                        containerd/io.containerd.runtime.v2.task/k8s.io/<id>/config.json
  T/home/               a user's home: a copy of the image and id_rsa (0600)
  T/hostfile            a root-only file with a secret
  T/sock/outside.sock   a listening socket under no prefix
  T/hookbin/floorhook   a copy of busybox: the binary of the harness's hookRules
  T/hookbin/link        a symlink to it; T/hookbin/notrule another copy
  T/ev/                 canaries: every hook the mutator writes that runs a
                        shell touches T/ev/<name>, so a hook that ran is seen
                        even when it exited before /proc could be read
  a host service        floorhook sleep (its /proc/PID/exe opens to the rule
                        binary), in cgroup /floor-<run>/svc
  a tenant container    another --root (T/tenant-state), policy off (so
                        nothing covers its /tmp), cgroup /floor-<run>/tenant;
                        its image has a shell at T/hookbin/floorhook and a
                        secret at /secret
  a second tenant       another --root (T/tenant2-state), the built-in
                        policy, cgroup /floor-<run>/tenant2 (the identity
                        check's other container under enforce)
  T/sharedfs/           a tmpfs made shared, where some trials' bundles go
                        (containerd's under a shared /run)

The real engine directories (/var/lib/docker/containers, /run/containerd,
...) count as other tenants' where they exist.
"""

import json
import os
import shutil
import socket
import stat
import sys
import tempfile
import threading
import time
import types
import uuid

FLOOR_DIR = os.path.dirname(os.path.abspath(__file__))
INTEGRATION_DIR = os.path.join(os.path.dirname(FLOOR_DIR), "integration")
if INTEGRATION_DIR not in sys.path:
    sys.path.insert(0, INTEGRATION_DIR)

import conftest as ct  # noqa: E402  (the integration suite's helpers)

import floor_checker as fc  # noqa: E402
from floor_procwatch import ProcWatch  # noqa: E402

REAL_ENGINE_DIRS = ["/var/lib/docker/containers", "/var/lib/docker/volumes",
                    "/var/lib/kubelet/pods", "/run/containerd", "/var/lib/containerd",
                    "/var/lib/containers", "/run/containers", "/run/docker",
                    "/var/run/docker.sock", "/run/docker.sock"]
DOCKER_TASK = "containerd/daemon/io.containerd.runtime.v2.task/moby"
SECRET = "FLOOR-SECRET-"  # every secret the harness plants starts so


def _write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class Sock:
    """A listening unix socket that counts who connects to it."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o660)
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.connections = 0
        self.data = b""
        self._stop = False
        self._t = threading.Thread(target=self._loop, daemon=True, name="sock")
        self._t.start()

    def _loop(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            self.connections += 1
            conn.settimeout(1)
            try:
                msg, anc, _, _ = conn.recvmsg(65536, socket.CMSG_SPACE(64 * 4))
                self.data = (self.data + msg)[-4096:]
                for level, typ, d in anc:
                    if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                        for i in range(0, len(d) - len(d) % 4, 4):
                            os.close(int.from_bytes(d[i:i + 4], sys.byteorder))
            except OSError:
                pass
            conn.close()

    def close(self):
        self._stop = True
        self.sock.close()
        self._t.join(2)
        try:
            os.unlink(self.path)
        except OSError:
            pass


def cgroup_roots():
    """{controller: host mount point} of the hierarchies a container joins."""
    out = {}
    for m in fc.read_mountinfo("self"):
        if m.fstype == "cgroup":
            out[m.mp] = m.mp
        elif m.fstype == "cgroup2":
            out[m.mp] = m.mp
    return sorted(out)


class HostObjects:
    def __init__(self, runtime, base_rootfs, run_id=None):
        self.runtime = runtime
        self.base_rootfs = base_rootfs
        self.run = run_id or uuid.uuid4().hex[:8]
        self.cg = "/floor-" + self.run
        self.tmp = tempfile.mkdtemp(prefix="agentsbx-floor-")
        os.chmod(self.tmp, 0o755)
        self.socks = {}
        self.procs = []
        self.mounts = []
        self.tenant_cid = None
        self.tenant_pid = None
        self.tenant_root = os.path.join(self.tmp, "tenant-state")
        self.tenants = {}  # cid -> (pid, --root)
        self.policies = {}
        self.shows = {}
        self.secrets = []
        self.runtime_ids = set()

    # ---- paths ---------------------------------------------------------
    def p(self, *parts):
        return os.path.join(self.tmp, *parts)

    def under_harness(self, path):
        return fc.path_under(path, self.tmp)

    def tenant_paths(self):
        out = [self.p("tenant"), self.p("hostfile"), self.p("home", "id_rsa"),
               self.tenant_bundle, self.tenant_root, self.p("tenant2-state"),
               self.p("tenant2-bundle")]
        out += [d for d in REAL_ENGINE_DIRS if os.path.lexists(d)]
        return out

    def restore(self):
        """Put back the host objects a weak build's trial may have changed
        (a hook that overwrote the host file)."""
        _write(self.p("hostfile"), self.secrets[0] + "\n", 0o600)

    def base_for(self, parent):
        """A copy of the image on the same filesystem as parent, to hard
        link from (the shared tmpfs is a filesystem of its own)."""
        if fc.path_under(parent, self.p("sharedfs")):
            return self.p("sharedfs", "base")
        return self.base_rootfs

    def host_pids(self):
        return [pr.pid for pr in self.procs if ct.pid_alive(pr.pid)]

    # ---- making them ----------------------------------------------------
    def start(self):
        try:
            self._make()
        except BaseException:
            self.close()
            raise
        return self

    def _make(self):
        T = self.p
        for d in ("allowed/dir/sub", "allowed/ro-dir", "allowed/shared/sub/inner",
                  "allowed/tmpfs", "sock", "hookbin", "trials", "sharedfs"):
            os.makedirs(T(d), exist_ok=True)
        os.chmod(T("trials"), 0o755)
        _write(T("allowed/file"), "allowed file\n")
        _write(T("allowed/dir/file"), "allowed dir's file\n")
        os.mkfifo(T("allowed/fifo"))
        os.mknod(T("allowed/null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.symlink(T("tenant"), T("allowed/link-out"))
        os.symlink(T("allowed/dir"), T("allowed/link-in"))
        ev = T("ev")
        os.mkdir(ev)
        os.chmod(ev, 0o1777)
        # secrets
        s = SECRET + uuid.uuid4().hex
        self.secrets.append(s)
        other = uuid.uuid4().hex * 2
        self.other_docker_id = other
        _write(T("tenant/docker/containers", other, "config.v2.json"),
               '{"Config":{"Env":["API_KEY=%s"]}}\n' % s)
        _write(T("tenant/kubelet/pods/0f0f0f0f-1111-2222-3333-444444444444/volumes/"
                 "kubernetes.io~secret/token/token"), s + "\n")
        _write(T("tenant/containerd/io.containerd.runtime.v2.task/k8s.io", other[:64],
                 "config.json"), '{"process":{"env":["API_KEY=%s"]}}\n' % s)
        _write(T("hostfile"), s + "\n", 0o600)
        run = ct.run_cmd(["cp", "-a", self.base_rootfs, T("home")])
        assert run[0] == 0, run
        _write(T("home/id_rsa"), "-----BEGIN PRIVATE KEY----- %s\n" % s, 0o600)
        os.chown(T("home/id_rsa"), ct.USER_UID, ct.USER_GID)
        # hook binaries
        bb = os.path.realpath(ct.BUSYBOX)
        shutil.copy2(bb, T("hookbin/floorhook"))
        shutil.copy2(bb, T("hookbin/notrule"))
        os.symlink(T("hookbin/floorhook"), T("hookbin/link"))
        # sockets
        for name in ("allowed/named.sock", "allowed/other.sock", "allowed/listener.sock",
                     "sock/outside.sock"):
            self.socks[T(name)] = Sock(T(name))
        # a shared mount (a host peer group), a tmpfs, a shared tmpfs for
        # bundles (containerd's under a shared /run)
        self._mount(["mount", "--bind", T("allowed/shared"), T("allowed/shared")])
        self._mount(["mount", "--make-shared", T("allowed/shared")], record=False)
        self._mount(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0777", "floor-tmpfs",
                     T("allowed/tmpfs")])
        self._mount(["mount", "-t", "tmpfs", "-o", "size=256m,mode=0755", "floor-sharedfs",
                     T("sharedfs")])
        self._mount(["mount", "--make-shared", T("sharedfs")], record=False)
        ct.run_cmd(["cp", "-a", self.base_rootfs, T("sharedfs", "base")], check=True)
        # the host service, in a cgroup of its own
        # argv[0] names the applet: a link "sleep" to the rule binary
        os.symlink("floorhook", T("hookbin/sleep"))
        svc = ct.spawn([T("hookbin/sleep"), "1000000"])
        self.procs.append(svc)
        ct.wait_for(lambda: fc.file_id("/proc/%d/exe" % svc.pid) == fc.file_id(
            T("hookbin/floorhook")), what="the host service")
        self._cg_make("svc", svc.pid)
        self._cg_make("docker", None)  # dockerd's parent, there before its containers
        # the tenant container
        self._tenant()
        self.runtime_ids.add(fc.file_id(self.runtime))
        # the harness policies
        # One rule per canary a hook may touch (a glob ending in "*" would
        # let any command through: "touch x; anything"), for this
        # container's id; and prestart's for any id.
        rules = [{"path": T("hookbin/floorhook"), "kinds": [k],
                  "args": ["sh", "-c", "touch %s/${id}.%s.%d" % (ev, k, i)],
                  "env": ["FLOOR_OK=*"]}
                 for k in fc.HOST_HOOK_KINDS for i in range(3)]
        rules.append({"path": T("hookbin/floorhook"), "kinds": ["prestart"],
                      "args": ["sh", "-c", "touch %s/?*.prestart.[0-2]" % ev]})
        ext = {"bindPrefixes": [T("allowed")],
               "bindSpecialFiles": [T("allowed/named.sock")],
               "hookRules": rules,
               "seccompListeners": [T("allowed/listener.sock")]}
        for name, extra in (("harness", {}), ("clamp", {"onRequestAboveFloor": "clamp"})):
            path = T("policy-%s.json" % name)
            d = {"extend": ext}
            d.update(extra)
            _write(path, json.dumps(d, indent=1))
            self.policies[name] = ["--policy", path]
        self.policies["builtin"] = []

    def _mount(self, argv, record=True):
        rc, out, err = ct.run_cmd(argv)
        assert rc == 0, (argv, err)
        if record:
            self.mounts.append(argv[-1])

    def _cg_make(self, name, pid):
        for root in cgroup_roots():
            d = os.path.join(root, self.cg.lstrip("/"), name)
            try:
                os.makedirs(d, exist_ok=True)
                if pid:
                    with open(os.path.join(d, "cgroup.procs"), "w") as f:
                        f.write(str(pid))
            except OSError:
                pass

    def _tenant(self):
        T = self.p
        os.mkdir(self.tenant_root, 0o700)
        b = T("tenant-bundle")
        self.tenant_bundle = b
        os.mkdir(b)
        rc = ct.run_cmd(["cp", "-a", self.base_rootfs, os.path.join(b, "rootfs")])
        assert rc[0] == 0, rc
        planted = os.path.join(b, "rootfs") + T("hookbin/floorhook")
        os.makedirs(os.path.dirname(planted), exist_ok=True)
        shutil.copy2(os.path.realpath(ct.BUSYBOX), planted)
        _write(os.path.join(b, "rootfs", "secret"), self.secrets[0] + "\n")
        spec = ct.make_spec(["sleep", "1000000"])
        spec["linux"]["cgroupsPath"] = self.cg + "/tenant"
        ct.write_spec(b, spec)
        off = T("policy-off.json")
        _write(off, '{"mode": "off"}\n')
        self.tenant_cid = "floor-tenant-" + self.run
        argv = [self.runtime, "--root", self.tenant_root, "--policy", off]
        ct.run_cmd(argv + ["create", "--bundle", b, self.tenant_cid], check=True)
        ct.run_cmd(argv + ["start", self.tenant_cid], check=True)
        st = json.loads(ct.run_cmd(argv + ["state", self.tenant_cid], check=True)[1])
        self.tenant_pid = st["pid"]
        self.tenants[self.tenant_cid] = (self.tenant_pid, self.tenant_root)
        # a second tenant under the built-in policy (enforce), as a trial
        # is: the identity check's other container
        root2, b2 = T("tenant2-state"), T("tenant2-bundle")
        os.mkdir(root2, 0o700)
        os.mkdir(b2)
        ct.run_cmd(["cp", "-a", self.base_rootfs, os.path.join(b2, "rootfs")], check=True)
        ct.write_spec(b2, ct.make_spec(["sleep", "1000000"],
                                       linux__cgroupsPath=self.cg + "/tenant2"))
        cid2 = "floor-tenant2-" + self.run
        argv = [self.runtime, "--root", root2]
        ct.run_cmd(argv + ["create", "--bundle", b2, cid2], check=True)
        ct.run_cmd(argv + ["start", cid2], check=True)
        st = json.loads(ct.run_cmd(argv + ["state", cid2], check=True)[1])
        self.tenants[cid2] = (st["pid"], root2)

    def policy_show(self, name, runtime=None):
        key = (name, runtime or self.runtime)
        if key not in self.shows:
            rc, out, err = ct.run_cmd([runtime or self.runtime] + self.policies[name] +
                                      ["policy", "show"], check=True)
            self.shows[key] = json.loads(out)
        return self.shows[key]

    # ---- the host's state, before and after a trial ---------------------
    def watched(self):
        """The harness's host objects a spec must never change (the
        allowed tree, where the policy lets binds come from, and the
        canaries are not here)."""
        out = {}
        for top in ("tenant", "home", "hostfile", "sock", "hookbin"):
            base = self.p(top)
            for dirpath, dirs, files in os.walk(base) if os.path.isdir(base) else [
                    (os.path.dirname(base), [], [os.path.basename(base)])]:
                for n in dirs + files:
                    path = os.path.join(dirpath, n)
                    try:
                        st = os.lstat(path)
                    except OSError:
                        continue
                    out[path] = (st.st_mode, st.st_uid, st.st_gid, st.st_size,
                                 0 if stat.S_ISDIR(st.st_mode) else st.st_mtime_ns)
                out[dirpath] = out.get(dirpath) or ("dir", sorted(dirs + files))
        return out

    def mounts_now(self):
        return {"mounts1": set(_mount_keys(fc.read_mountinfo(1))),
                "mountsself": set(_mount_keys(fc.read_mountinfo("self")))}

    def snapshot(self):
        return {
            "mounts1": set(_mount_keys(fc.read_mountinfo(1))),
            "mountsself": set(_mount_keys(fc.read_mountinfo("self"))),
            "watched": self.watched(),
            "socks": {p: s.connections for p, s in self.socks.items()},
            "hostname": os.uname().nodename,
            "domainname": fc.read("/proc/sys/kernel/domainname", "").strip(),
            "host_pids": self.host_pids(),
            "tenants_alive": [c for c, (p, _) in self.tenants.items() if ct.pid_alive(p)],
            "ev": set(os.listdir(self.p("ev"))),
        }

    # ---- teardown --------------------------------------------------------
    def close(self):
        left = []
        for cid, (pid, root) in self.tenants.items():
            ct.run_cmd([self.runtime, "--root", root, "delete", "--force", cid], timeout=30)
            deadline = time.time() + 5
            while ct.pid_alive(pid) and time.time() < deadline:
                ct.reap_orphans()
                time.sleep(0.02)
        for pr in self.procs:
            try:
                pr.popen.kill()
            except OSError:
                pass
            pr.wait(10)
        for s in self.socks.values():
            s.close()
        with open("/proc/self/mountinfo") as f:
            points = [l.split()[4] for l in f if self.tmp in l]
        for mp in sorted(points, key=len, reverse=True):
            ct.run_cmd(["umount", "-l", mp], timeout=10)
        for root in cgroup_roots():
            d = os.path.join(root, self.cg.lstrip("/"))
            for dirpath, _, _ in sorted(os.walk(d), key=lambda x: -len(x[0])) if \
                    os.path.isdir(d) else []:
                try:
                    os.rmdir(dirpath)
                except OSError as e:
                    left.append("cgroup %s: %s" % (dirpath, e))
        with open("/proc/self/mountinfo") as f:
            still = [l.split()[4] for l in f if self.tmp in l]
        if still:
            left.append("mounts left: %s" % still)
        ct.run_cmd(["rm", "-rf", self.tmp], timeout=60)
        if os.path.exists(self.tmp):
            left.append("could not remove %s" % self.tmp)
        return left


KEPT_CGROUPS = ("svc", "tenant", "tenant2", "docker")


def _mount_keys(mounts):
    return [(m.mp, m.dev, m.root, m.fstype) for m in mounts]


# --------------------------------------------------------------------------
# placeholders: specs are written (and kept as regressions) with these


def substitute(obj, table):
    if isinstance(obj, str):
        for k, v in table.items():
            if k in obj:
                obj = obj.replace(k, str(v))
        return obj
    if isinstance(obj, list):
        return [substitute(x, table) for x in obj]
    if isinstance(obj, dict):
        return {k: substitute(v, table) for k, v in obj.items()}
    return obj


class FakeRequest:
    def __init__(self, name):
        self.node = types.SimpleNamespace(name=name)


class Trial:
    """What the checker knows of one container."""

    def __init__(self, **kw):
        self.pid = None
        self.tenants = {}
        self.derived_binds = []
        self.derived_rootfs = []
        self.tenant_paths = []
        self.engine_parents = []
        self.host_mounts_pid1 = []
        self.__dict__.update(kw)


def _docker_layout(trialdir, cid, other):
    """dockerd 20.10's places for container cid: the bundle under the exec
    root with the shim's work link, the data-root's containers/<id>
    (hostname, hosts, resolv.conf), a sibling's directory (with a secret),
    a named volume, and the image layer as overlay2/<hex>/merged."""
    e, d = os.path.join(trialdir, "exec"), os.path.join(trialdir, "data")
    bundle = os.path.join(e, DOCKER_TASK, cid)
    os.makedirs(bundle)
    work = os.path.join(d, DOCKER_TASK, cid)
    os.makedirs(work)
    os.symlink(work, os.path.join(bundle, "work"))
    for n in ("hostname", "hosts", "resolv.conf"):
        _write(os.path.join(d, "containers", cid, n), "%s\n" % n)
    os.makedirs(os.path.join(d, "containers", cid, "mounts", "shm"))
    _write(os.path.join(d, "containers", other, "config.v2.json"),
           '{"Config":{"Env":["API_KEY=%s"]}}\n' % (SECRET + "docker-" + other[:8]))
    _write(os.path.join(d, "volumes", "v1", "_data", "file"), "volume file\n")
    _write(os.path.join(d, "volumes", "metadata.db"), "volumes db\n")
    layer = os.path.join(d, "overlay2", "ab" * 32, "merged")
    return e, d, bundle, layer


def new_cid(docker=False):
    if docker:
        return uuid.uuid4().hex + uuid.uuid4().hex
    return "fl-" + uuid.uuid4().hex[:12]


class TrialRunner:
    """Runs trials against one HostObjects."""

    def __init__(self, objects, runtime=None, identity=None):
        self.o = objects
        self.runtime = runtime or objects.runtime
        self.identity = os.environ.get("FLOOR_CHECK_IDENTITY", "1") != "0" if identity is None \
            else identity
        self.strict_mounts = os.environ.get("FLOOR_STRICT_HOST_MOUNTS") == "1"

    def run(self, case, runtime=None, timeout=60):
        """case: {"spec": spec with placeholders, "policy": builtin|harness|
        clamp, "docker": bool, "shared": bool, "pod": bool}.  Returns a
        result dict: accepted, started, violations, rc, stderr."""
        runtime = runtime or self.runtime
        o = self.o
        docker = bool(case.get("docker"))
        cid = new_cid(docker)
        parent = o.p("sharedfs") if case.get("shared") else o.p("trials")
        tdir = tempfile.mkdtemp(prefix="t-", dir=parent)
        os.chmod(tdir, 0o755)
        env = ct.Env.__new__(ct.Env)
        env.runtime, env.base_rootfs = runtime, o.base_rootfs
        env.tmp = tdir
        env.policy_args = list(o.policies[case.get("policy", "harness")])
        env.root = os.path.join(tdir, "state")
        os.mkdir(env.root, 0o700)
        env.ids, env.bundles, env.pids = [cid], [], {}
        env._prefix = "fl"
        derived_binds, derived_rootfs, tenant_extra, parents = [], [], [], []
        t2 = [c for c in o.tenants if c != o.tenant_cid]
        table = {"@T@": o.tmp, "@TREL@": o.tmp.lstrip("/"),
                 "@TENANT2_CID@": t2[0] if t2 else "", "@EV@": o.p("ev"), "@CID@": cid,
                 "@TENANT_PID@": o.tenant_pid, "@TENANT_CID@": o.tenant_cid,
                 "@HOST_PID@": o.procs[0].pid, "@SELF_PID@": os.getpid(), "@RUN@": o.cg,
                 "@OTHER_DOCKER_ID@": o.other_docker_id}
        trial_mounts = []
        if docker:
            e, d, bundle, layer = _docker_layout(tdir, cid, o.other_docker_id)
            os.makedirs(os.path.dirname(layer))
            shm = os.path.join(d, "containers", cid, "mounts", "shm")
            ct.run_cmd(["mount", "-t", "tmpfs", "-o", "size=64m,mode=1777", "shm", shm],
                       check=True)
            trial_mounts.append(shm)
            rootfs = layer
            table.update({"@EXEC@": e, "@DATA@": d})
            derived_binds = [os.path.join(d, "containers", cid),
                             os.path.join(d, "volumes", "v1", "_data")]
            derived_rootfs = [layer]
            tenant_extra = [os.path.join(d, "containers", o.other_docker_id),
                            os.path.join(d, "volumes", "metadata.db")]
            parents = [d, os.path.join(d, "containers"), os.path.join(d, "volumes"),
                       os.path.join(d, "volumes", "v1"), e]
        else:
            bundle = os.path.join(tdir, "bundle")
            os.mkdir(bundle)
            rootfs = os.path.join(bundle, "rootfs")
        os.chmod(bundle, 0o755)
        table["@BUNDLE@"] = bundle
        rc = ct.run_cmd(["cp", "-al", o.base_for(parent), rootfs])
        assert rc[0] == 0, rc[2][-500:]
        token = uuid.uuid4().hex
        _write(os.path.join(rootfs, ".floor-token"), token)
        _write(os.path.join(bundle, ".floor-token"), "bundle-" + token)
        env.bundles.append(bundle)
        sib = None
        if case.get("pod"):
            sib = self._sibling(env, runtime, tdir)
            table["@SIB_PID@"] = sib[1]
        else:
            table["@SIB_PID@"] = o.tenant_pid
        spec = substitute(case["spec"], table)
        ct.write_spec(bundle, spec)
        policy = o.policy_show(case.get("policy", "harness"), runtime)
        trial = Trial(cid=cid, bundle=os.path.realpath(bundle), spec=spec, policy=policy,
                      objects=o, tenants={c: p for c, (p, _) in o.tenants.items()},
                      derived_binds=derived_binds, derived_rootfs=derived_rootfs,
                      tenant_paths=o.tenant_paths() + tenant_extra, engine_parents=parents)
        res = {"cid": cid, "accepted": False, "started": False, "violations": fc.Verdicts(),
               "rc": None, "stderr": ""}
        v = res["violations"]
        before = o.snapshot()
        sysctls = host_sysctls(spec)
        other_devs = self._other_devs()
        names = _canary_names(spec)
        outputs = []
        try:
            self._trial(env, runtime, trial, res, other_devs, outputs, timeout, before,
                        names, sysctls)
        finally:
            # whatever happened (an interrupt included), nothing is left
            if sib:
                ct.run_cmd(env.argv("delete", "--force", sib[0]), timeout=30)
            for mp in trial_mounts:
                ct.run_cmd(["umount", "-l", mp], timeout=30)
            left = env.cleanup()
            left += self._cgroups_left(cid)
            if left:
                v.add("leftover", "; ".join(left))
                env.force_clean()
            self._cgroups_clean()
            ct.run_cmd(["rm", "-rf", tdir], timeout=60)
            for n in os.listdir(o.p("ev")):
                if n not in before["ev"]:
                    try:
                        os.unlink(o.p("ev", n))
                    except OSError:
                        pass
        return self._finish(res, v)

    def _trial(self, env, runtime, trial, res, other_devs, outputs, timeout, before, names,
               sysctls):
        """create .. delete under the process watch, then the host's checks."""
        v, cid = res["violations"], trial.cid
        watch = ProcWatch().start()
        try:
            self._lifecycle(env, runtime, trial, res, other_devs, outputs, timeout, before)
        finally:
            # delete (poststop hooks) under the watch; a refused create
            # must have left nothing to delete
            try:
                if not res["accepted"] and ct.run_cmd(env.argv("state", cid))[0] == 0:
                    v.add("leftover", "create was refused but left a container behind")
                rc, out, err = ct.run_cmd(env.argv("delete", "--force", cid), timeout=timeout)
                outputs.append(out + err)
                if res["accepted"] and rc != 0:
                    v.add("runtime.delete", "delete --force: rc %d %s" % (rc, err[-300:]))
            except AssertionError as e:
                v.add("runtime.timeout", "delete: %s" % str(e)[:300])
            watch.stop()
        self._host_checks(trial, before, watch, names, outputs, v, res, runtime)
        for path, value in sysctls.items():
            now = fc.read(path)
            if now != value:
                v.add("host.sysctl", "the host's %s changed: %r -> %r" % (path, value, now))
                _restore(path, value)

    def _finish(self, res, v):
        seen = set()
        v[:] = [x for x in v if (x["kind"], x["what"]) not in seen and
                not seen.add((x["kind"], x["what"]))]
        res["pending"] = fc.Verdicts()
        if not self.identity:
            res["pending"] = fc.Verdicts(x for x in v if identity_pending(x))
            res["violations"] = fc.Verdicts(x for x in v if not identity_pending(x))
        return res

    def _sibling(self, env, runtime, tdir):
        """A pod's first container in the trial's own --root (its
        namespaces may be joined)."""
        b = os.path.join(tdir, "sibling")
        os.mkdir(b)
        ct.run_cmd(["cp", "-al", self.o.base_for(tdir), os.path.join(b, "rootfs")], check=True)
        ct.write_spec(b, ct.make_spec(["sleep", "1000000"]))
        env.bundles.append(b)
        sid = "fs-" + uuid.uuid4().hex[:12]
        env.ids.append(sid)
        argv = [runtime, "--root", env.root]
        ct.run_cmd(argv + ["create", "--bundle", b, sid], check=True, timeout=60)
        ct.run_cmd(argv + ["start", sid], check=True, timeout=60)
        pid = json.loads(ct.run_cmd(argv + ["state", sid], check=True)[1])["pid"]
        env.pids[pid] = ct._stat_fields(pid)[2]
        return sid, pid

    def _other_devs(self):
        """Devices of the tenant's own filesystems (not the host's)."""
        out = {}
        host = {m.dev for m in fc.read_mountinfo("self")} | {m.dev for m in fc.read_mountinfo(1)}
        for cid, (pid, _) in self.o.tenants.items():
            try:
                for m in fc.read_mountinfo(pid):
                    if m.dev not in host and m.fstype not in ("cgroup", "cgroup2"):
                        out[m.dev] = "tenant %s's %s at %s" % (cid, m.fstype, m.mp)
            except OSError:
                pass
        return out

    def _lifecycle(self, env, runtime, trial, res, other_devs, outputs, timeout, before):
        v = res["violations"]
        cid, bundle = trial.cid, env.bundles[0]
        try:
            rc, out, err = ct.run_cmd(env.argv("create", "--bundle", bundle, cid),
                                      timeout=timeout, cwd=bundle)
        except AssertionError as e:
            v.add("runtime.timeout", "create: %s" % str(e)[:300])
            return
        outputs.append(out + err)
        res["rc"], res["stderr"] = rc, err[-2000:]
        if rc < 0 or rc >= 128 or "Sanitizer" in err:
            v.add("runtime.crash", "create rc %d: %s" % (rc, err[-500:]))
        if rc != 0:
            return
        res["accepted"] = True
        st = env.state(cid, check=False)
        if not st or not st.get("pid"):
            v.add("runtime.state", "create returned 0 but state says %s" % st)
            return
        trial.pid = st["pid"]
        v.extend(fc.check_container(trial, "created", other_devs))
        self.mount_diff(before, self.o.mounts_now(), v, "after create")
        try:
            rc, out, err = ct.run_cmd(env.argv("start", cid), timeout=timeout)
        except AssertionError as e:
            v.add("runtime.timeout", "start: %s" % str(e)[:300])
            return
        outputs.append(out + err)
        if rc != 0:
            res["start_err"] = err[-500:]
            return
        res["started"] = True
        self._wait_exec(trial)
        v.extend(fc.check_container(trial, "started", other_devs))
        self.mount_diff(before, self.o.mounts_now(), v, "after start")
        if self.identity:
            v.extend(fc.check_identity({cid: trial.pid}, trial.tenants))
            v.extend(fc.check_identity_range(trial, env.root))

    def _wait_exec(self, trial):
        """Until the init is the container's process (not the runtime)."""
        args = (trial.spec.get("process") or {}).get("args") or []
        deadline = time.time() + 3
        while time.time() < deadline:
            if not ct.pid_alive(trial.pid):
                return
            exe = fc.file_id("/proc/%d/exe" % trial.pid)
            st = fc.status_of(trial.pid) or {}
            if exe not in self.o.runtime_ids and exe != fc.file_id(self.runtime) and \
                    st.get("Seccomp") is not None and args and \
                    fc.read("/proc/%d/comm" % trial.pid, "").strip() != "agentsbx":
                return
            time.sleep(0.01)

    def _host_checks(self, trial, before, watch, names, outputs, v, res, runtime):
        o = self.o
        after = o.snapshot()
        # the mount tables, after delete (after create and start:
        # mount_diff() in _lifecycle)
        self.mount_diff(before, after, v, "after delete")
        # host objects
        b, a = before["watched"], after["watched"]
        for path in sorted(set(b) | set(a)):
            if b.get(path) != a.get(path):
                v.add("host.object", "%s changed: %s -> %s" % (path, b.get(path), a.get(path)))
        allowed_socks = {os.path.realpath(x) for x in trial.policy.get("seccompListeners") or []}
        for path, n in after["socks"].items():
            if n != before["socks"].get(path) and os.path.realpath(path) not in allowed_socks:
                v.add("host.socket", "%s was connected to (%d times)" % (
                    path, n - before["socks"].get(path, 0)))
        for k in ("hostname", "domainname"):
            if before[k] != after[k]:
                v.add("host.uts", "the host's %s changed: %r -> %r" % (k, before[k], after[k]))
                _restore("/proc/sys/kernel/" + k, before[k] + "\n")
        for pid in before["host_pids"]:
            if pid not in after["host_pids"]:
                v.add("host.process", "host process %d died" % pid)
        for c in before["tenants_alive"]:
            if c not in after["tenants_alive"]:
                v.add("host.process", "the tenant container %s died" % c)
        # sysctls named by the spec, on the host
        # (read before: the spec is written before the snapshot)
        # secrets in what the runtime printed
        for text in outputs:
            for s in o.secrets:
                if s in text:
                    v.add("secret.leak", "the runtime printed a host secret: ...%s..." %
                          text[max(0, text.find(s) - 80):text.find(s) + 40])
        # hooks: canaries
        new = sorted(after["ev"] - before["ev"])
        res["canaries"] = new
        for n in new:
            hook = names.get(n)
            if hook is None:
                v.add("proc.canary", "%s/%s appeared: written by no hook of this spec "
                      "that could" % (o.p("ev"), n))
                continue
            kind, i, h = hook
            if not fc.hook_rule_matches(trial.policy, trial, kind, h):
                v.add("proc.hook", "hooks.%s[%d] ran (its canary %s) but its command "
                      "matches no rule: %s" % (kind, i, n, json.dumps(h)[:300]))
        # every exec by the runtime's commands
        check_execs(self, trial, watch, v, runtime)
        res["execs"] = [(e["exe"], e["argv"], e.get("uids"), e["mntns"]) for e in watch.execs]

    def mount_diff(self, before, now, v, when):
        """Host mounts that appeared or vanished under the harness's tree
        (any, with FLOOR_STRICT_HOST_MOUNTS=1: other suites running beside
        this one mount and unmount elsewhere)."""
        seen = set()
        for key in ("mounts1", "mountsself"):
            for what, diff in (("appeared on", now[key] - before[key]),
                               ("vanished from", before[key] - now[key])):
                for mp, dev, root, fstype in sorted(diff, key=str):
                    ours = fc.path_under(mp, self.o.tmp) or self.strict_mounts
                    if ours and (mp, what) not in seen:
                        seen.add((mp, what))
                        v.add("host.mounts", "%s: a %s mount at %s %s the host's mount "
                              "table (%s)" % (when, fstype, mp, what,
                                              "/proc/1" if key == "mounts1" else "the runtime's"))

    def _cgroups_left(self, cid):
        """Cgroups under the harness's parent named after this container
        (the parents a cgroupsPath made the runtime create are left by
        design, as runc leaves them: cleaned, not counted)."""
        out = []
        for root in cgroup_roots():
            d = os.path.join(root, self.o.cg.lstrip("/"))
            for dirpath, dirs, _ in os.walk(d) if os.path.isdir(d) else []:
                for n in dirs:
                    if cid in n:
                        out.append("cgroup %s left" % os.path.join(dirpath, n))
        return out

    def _cgroups_clean(self):
        for root in cgroup_roots():
            d = os.path.join(root, self.o.cg.lstrip("/"))
            if not os.path.isdir(d):
                continue
            keep = {d} | {os.path.join(d, k) for k in KEPT_CGROUPS}
            for dirpath, _, _ in sorted(os.walk(d), key=lambda x: -len(x[0])):
                if dirpath not in keep:
                    try:
                        os.rmdir(dirpath)
                    except OSError:
                        pass


# Issue 26's "Identity" (a host uid and gid of each container's own, no
# group 0 whatever the uid): counted as violations unless
# FLOOR_CHECK_IDENTITY=0 (for a runtime from before that change), when they
# are reported as pending.
PENDING_KINDS = ("cred.gid", "cred.groups")


def identity_pending(v):
    return v["kind"] in PENDING_KINDS or v["kind"].startswith("identity.")


def host_sysctls(spec):
    """{host /proc/sys path: its value} for every sysctl the spec names."""
    out = {}
    sc = (spec.get("linux") or {}).get("sysctl") if isinstance(spec.get("linux"), dict) else None
    for k in (sc or {}) if isinstance(sc, dict) else []:
        path = os.path.normpath("/proc/sys/" + str(k).replace(".", "/"))
        if fc.path_under(path, "/proc/sys") and os.path.isfile(path):
            val = fc.read(path)
            if val is not None:
                out[path] = val
    return out


def _restore(path, value):
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError:
        pass


def _canary_names(spec):
    """{canary file name: (kind, index, hook)} for every hook of the spec
    whose argv names a file under the canary directory."""
    out = {}
    for kind, i, h in fc.spec_hooks(spec):
        for a in h.get("args") or []:
            if not isinstance(a, str):
                continue
            for word in a.replace(";", " ").replace("&", " ").replace(">", " ").split():
                if "/ev/" in word:
                    out[os.path.basename(word)] = (kind, i, h)
    return out


def check_execs(runner, trial, watch, v, runtime):
    """Every exec by the runtime's commands: the runtime itself, the
    container's own process, or a hook that matches a rule (and what that
    hook's own command runs); nothing else runs on the host."""
    o = runner.o
    host_mnt = fc.host_ns("mnt")
    runtime_ids = o.runtime_ids | {fc.file_id(runner.runtime), fc.file_id(runtime)}
    hooks = list(fc.spec_hooks(trial.spec))
    args = [str(a) for a in (trial.spec.get("process") or {}).get("args") or []]
    ruled = set()  # pids of hooks that matched a rule

    def in_ruled(pid):
        seen = set()
        while pid and pid not in seen:
            if pid in ruled:
                return True
            seen.add(pid)
            pid = watch.parents.get(pid)
        return False

    for e in watch.execs:
        if e["exe_id"] in runtime_ids:
            continue
        if in_ruled(e["pid"]):
            continue  # what an allowed hook's command runs
        if e["gone"]:
            continue  # the canaries tell
        matches = [(k, i, h) for k, i, h in hooks
                   if [str(a) for a in h.get("args") or []] == e["argv"] or
                   (not h.get("args") and e["argv"] and e["argv"][0] == h.get("path"))]
        if matches:
            if not any(fc.hook_rule_matches(trial.policy, trial, k, h, exe_id=e["exe_id"])
                       for k, i, h in matches):
                v.add("proc.hook", "a hook ran as %s that matches no rule: exe %s argv %s "
                      "env %s" % (e.get("uids"), e["exe"], e["argv"], (e["env"] or [])[:5]))
            elif e["env"] and any(x.startswith(fc.LOADER_VARS) for x in e["env"]):
                v.add("proc.hook", "a hook ran with a loader variable: %s" %
                      [x for x in e["env"] if x.startswith(fc.LOADER_VARS)])
            else:
                ruled.add(e["pid"])
            continue
        if e["mntns"] != host_mnt and e["argv"] == args:
            continue  # the container's process (its credentials: check_creds)
        if e["mntns"] != host_mnt and trial.pid and e["pid"] == trial.pid:
            continue
        v.add("proc.exec", "the runtime's commands started %s (argv %s, uids %s, %s "
              "mount namespace): neither the runtime, the container's process nor a hook"
              % (e["exe"], e["argv"], e.get("uids"),
                 "the host's" if e["mntns"] == host_mnt else "another"))
