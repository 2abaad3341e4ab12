# SPDX-License-Identifier: Apache-2.0
"""
The CRI suite: pods driven through containerd's CRI plugin by `crictl`,
exactly as the kubelet drives them, against three runtime handlers:

  runc          Debian's runc: the baseline
  agentsbx      agentsbx under its built-in default policy (the floor)
  agentsbx-net  agentsbx with {"networkAllowed": true, "allowCidrs": [POD_CIDR]}

Everything runs inside what the suite makes and removes itself:
  - a network namespace (`ip netns add agentsbx-cri-TAG`), "the node": the
    private containerd, its shims and crictl run in it; the CNI bridge
    plugin makes the pod bridge there (POD_CIDR, gateway .1); the node's own
    services listen there, on NODE_ADDR (a test-made address on its lo) and
    on 169.254.169.254 (a fake metadata service);
  - a temp dir /tmp/agentsbx-cri-*: containerd's root, state (pod network
    namespaces under it: netns_mounts_under_state_dir), socket, config,
    the CNI config and IPAM data, pod logs, each handler's runtime --root;
  - cgroups under /agentsbx-cri-TAG (every pod's cgroup_parent).
No registry: the pause image (a static C pause) and a busybox image are
built here and imported with `ctr -n k8s.io images import`.

crictl is ../shared/tools/crictl/crictl (cri-tools v1.26.1), or $CRICTL.
The shared harness of tests/lib (procs: subreaper, spawn/run, leftover
checks; images: the busybox rootfs, OCI archives; engines: the binaries)
is reused.
"""

import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))

import engines  # noqa: E402  (starts the orphan reaper at import)
import images  # noqa: E402  (the busybox rootfs, OCI archives)
import procs as E  # noqa: E402  (spawn/run, leftover checks)
from procs import run, spawn  # noqa: E402

RUNTIME = engines.RUNTIME
RUNC = os.environ.get("CRI_RUNC", "/usr/sbin/runc")
CONTAINERD = engines.CONTAINERD
CTR = engines.CTR
CRICTL = os.environ.get("CRICTL") or os.path.join(
    os.path.dirname(REPO), "shared", "tools", "crictl", "crictl")
CNI_BIN = os.environ.get("CRI_CNI_BIN", "/usr/lib/cni")

POD_CIDR = "10.213.0.0/24"
POD_GW = "10.213.0.1"
NODE_ADDR = "10.213.99.1"   # the node's own address (outside POD_CIDR)
METADATA = "169.254.169.254"
NODE_PORT = 7002
METADATA_PORT = 80

PAUSE_IMAGE = "docker.io/library/agentsbx-cri-pause:1"
IMAGE = "docker.io/library/agentsbx-cri-busybox:1"

HANDLERS = ["runc", "agentsbx", "agentsbx-net"]
# The policies of the two agentsbx handlers: the built-in default, as an
# operator without a policy file gets it, and networking with the pod CIDR
# allowed over denyCidrs.
POLICY_DEFAULT = {}
POLICY_NET = {"networkAllowed": True, "allowCidrs": [POD_CIDR]}
# A third agentsbx handler, for one test only (not a column of the table):
# egress by name listed in the policy (issue 27).
POLICY_EGRESS = {"egress": {"allowDomains": ["allowed.test"]}}

# The README's config.toml for the CRI plugin, filled in by the suite (the
# private root/state/socket and the test's CNI dir are the suite's own).
CONTAINERD_TOML = engines.CONTAINERD_BASE_TOML.replace("%(disabled)s", "") + """
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "%(pause)s"
  # root here lacks CAP_SYS_RESOURCE: lowering oom_score_adj fails for
  # every runtime
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "%(cni_bin)s"
    conf_dir = "%(dir)s/cni"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "%(runc)s"
        Root = "%(dir)s/rt-runc"
        SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx.options]
        BinaryName = "%(agentsbx)s"
        Root = "%(dir)s/rt-agentsbx"
        SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx-net]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx-net.options]
        BinaryName = "%(agentsbx_net)s"
        Root = "%(dir)s/rt-agentsbx-net"
        SystemdCgroup = false

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx-egress]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.agentsbx-egress.options]
        BinaryName = "%(agentsbx_egress)s"
        Root = "%(dir)s/rt-agentsbx-egress"
        SystemdCgroup = false
"""

CNI_CONF = {
    "cniVersion": "0.4.0",
    "name": "agentsbx-cri",
    "plugins": [{
        "type": "bridge",
        "bridge": None,  # filled in: cbr-TAG
        "isGateway": True,
        "isDefaultGateway": True,
        "ipMasq": False,
        "hairpinMode": True,
        "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_CIDR}]],
                 "dataDir": None},
    }],
}

PAUSE_C = r"""
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) ; }
int main(void)
{
	signal(SIGINT, quit);
	signal(SIGTERM, quit);
	signal(SIGCHLD, reap);
	for (;;)
		pause();
}
"""

WRAPPER = """#!/bin/sh
exec %(runtime)s --policy %(policy)s "$@"
"""

# Directories containerd or CNI make outside the suite's temp dir, removed
# at the end when the suite made them (and they hold nothing else).
HOST_PATHS = ["/var/lib/cni", "/run/containerd", "/etc/cni/net.d"]


def oci_image(layer_tar, out, ref, config):
    """images.oci_archive with an image config of our own (the pause
    image's entrypoint)."""
    images.oci_archive(layer_tar, out, ref)
    if config is None:
        return
    # rewrite: read the archive back, replace the config blob, fix digests
    with tarfile.open(out) as t:
        files = {m.name: t.extractfile(m).read() for m in t.getmembers() if m.isfile()}
    index = json.loads(files["index.json"])
    mdig = index["manifests"][0]["digest"].split(":")[1]
    manifest = json.loads(files["blobs/sha256/" + mdig])
    old_cfg = json.loads(files["blobs/sha256/" + manifest["config"]["digest"].split(":")[1]])
    old_cfg["config"] = config
    cfg = json.dumps(old_cfg, sort_keys=True).encode()
    cdig = hashlib.sha256(cfg).hexdigest()
    manifest["config"]["digest"] = "sha256:" + cdig
    manifest["config"]["size"] = len(cfg)
    man = json.dumps(manifest, sort_keys=True).encode()
    ndig = hashlib.sha256(man).hexdigest()
    index["manifests"][0]["digest"] = "sha256:" + ndig
    index["manifests"][0]["size"] = len(man)
    layer = [k for k in files if k.startswith("blobs/") and k.split("/")[-1]
             == manifest["layers"][0]["digest"].split(":")[1]][0]
    with tarfile.open(out, "w") as t:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
        add("oci-layout", files["oci-layout"])
        add("index.json", json.dumps(index).encode())
        add(layer, files[layer])
        add("blobs/sha256/" + cdig, cfg)
        add("blobs/sha256/" + ndig, man)


class Cri:
    """The node: a network namespace, a private containerd with the CRI
    plugin, and crictl."""

    def __init__(self):
        self.tag = uuid.uuid4().hex[:8]
        self.tmp = tempfile.mkdtemp(prefix="agentsbx-cri-", dir="/tmp")
        os.chmod(self.tmp, 0o755)
        self.dir = self.tmp
        self.sock = os.path.join(self.dir, "containerd.sock")
        self.log = os.path.join(self.dir, "containerd.log")
        self.netns = "agentsbx-cri-" + self.tag
        self.bridge = "cbr-" + self.tag
        self.cgroup_parent = "/agentsbx-cri-" + self.tag
        self.proc = None
        self.listener = None
        self.netns_made = False
        self.problems = []
        self.preexisting = {p: os.path.lexists(p) for p in HOST_PATHS}
        self.pods = 0
        self.policies = {}

    # ---- setup -----------------------------------------------------------

    def nsenter(self):
        return ["nsenter", "--net=/run/netns/" + self.netns]

    def ip(self, *args, check=True):
        r = run(["ip", "-n", self.netns] + list(args), timeout=20)
        if check:
            r.ok()
        return r

    def make_netns(self):
        run(["ip", "netns", "add", self.netns]).ok()
        self.netns_made = True
        self.ip("link", "set", "lo", "up")
        for addr in (NODE_ADDR, METADATA):
            self.ip("addr", "add", addr + "/32", "dev", "lo")

    def start_listener(self):
        """The node's services: a banner on NODE_ADDR:7002 and a fake
        metadata service on 169.254.169.254:80 (tests/attacks/listener.py)."""
        self.token = uuid.uuid4().hex[:12]
        listener = os.path.join(REPO, "tests", "attacks", "listener.py")
        self.listener_out = os.path.join(self.dir, "listener.log")
        with open(self.listener_out, "wb") as f:
            self.listener = spawn(self.nsenter() + [
                sys.executable, listener, self.token,
                "banner:%s:%d:node" % (NODE_ADDR, NODE_PORT),
                "banner:%s:%d:metadata" % (METADATA, METADATA_PORT)],
                stdout=f, stderr=f)

    def write_policies(self):
        bindir = os.path.join(self.dir, "bin")
        os.makedirs(bindir)
        self.policies = {
            # the built-in default, as an operator without a policy file gets
            "agentsbx": POLICY_DEFAULT,
            "agentsbx-net": POLICY_NET,
            "agentsbx-egress": POLICY_EGRESS,
        }
        self.binaries = {"runc": RUNC}
        for name, pol in self.policies.items():
            pfile = os.path.join(self.dir, "policy-%s.json" % name)
            # The suite's own audit log, never /var/log/agentsbx (the
            # shim does not pass AGENTSBX_POLICY_LOG on).
            pol = dict(pol, auditLog=os.path.join(self.dir, "policy.log"))
            with open(pfile, "w") as f:
                json.dump(pol, f)
            path = os.path.join(bindir, name)
            with open(path, "w") as f:
                f.write(WRAPPER % {"runtime": RUNTIME, "policy": pfile})
            os.chmod(path, 0o755)
            self.binaries[name] = path

    def build_images(self):
        img = os.path.join(self.dir, "img")
        rootfs = os.path.join(img, "busybox")
        images.build_rootfs(rootfs)
        tar = os.path.join(img, "busybox.tar")
        run(["tar", "--numeric-owner", "-C", rootfs, "-cf", tar, "."]).ok()
        self.busybox_oci = os.path.join(img, "busybox-oci.tar")
        oci_image(tar, self.busybox_oci, IMAGE, None)
        prootfs = os.path.join(img, "pause")
        os.makedirs(prootfs)
        src = os.path.join(img, "pause.c")
        with open(src, "w") as f:
            f.write(PAUSE_C)
        run(["gcc", "-static", "-O2", "-o", os.path.join(prootfs, "pause"), src]).ok()
        ptar = os.path.join(img, "pause.tar")
        run(["tar", "--numeric-owner", "-C", prootfs, "-cf", ptar, "."]).ok()
        self.pause_oci = os.path.join(img, "pause-oci.tar")
        oci_image(ptar, self.pause_oci, PAUSE_IMAGE,
                  {"Entrypoint": ["/pause"], "User": "65535:65535"})

    def write_config(self):
        cni = os.path.join(self.dir, "cni")
        os.makedirs(cni)
        conf = json.loads(json.dumps(CNI_CONF))
        conf["plugins"][0]["bridge"] = self.bridge
        conf["plugins"][0]["ipam"]["dataDir"] = os.path.join(self.dir, "cni-ipam")
        with open(os.path.join(cni, "10-agentsbx-cri.conflist"), "w") as f:
            json.dump(conf, f, indent=2)
        for h in HANDLERS + ["agentsbx-egress"]:
            os.makedirs(os.path.join(self.dir, "rt-" + h), mode=0o700)
        self.config = os.path.join(self.dir, "config.toml")
        with open(self.config, "w") as f:
            f.write(CONTAINERD_TOML % {
                "dir": self.dir, "pause": PAUSE_IMAGE, "cni_bin": CNI_BIN,
                "runc": RUNC, "agentsbx": self.binaries["agentsbx"],
                "agentsbx_net": self.binaries["agentsbx-net"],
                "agentsbx_egress": self.binaries["agentsbx-egress"]})
        with open(os.path.join(self.dir, "crictl.yaml"), "w") as f:
            f.write("runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 60\n"
                    % (self.sock, self.sock))

    def log_tail(self, n=40):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def start(self):
        self.make_netns()
        self.write_policies()
        self.build_images()
        self.write_config()
        self.start_listener()
        with open(self.log, "wb") as logf:
            self.proc = spawn(self.nsenter() + [CONTAINERD, "--config", self.config],
                              stdout=logf, stderr=logf)
        end = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError("containerd exited with status %s:\n%s"
                                     % (self.proc.rc, self.log_tail()))
            if os.path.exists(self.sock) and self.crictl("version", timeout=20).rc == 0:
                break
            if time.monotonic() > end:
                raise AssertionError("containerd did not answer in 60s:\n%s" % self.log_tail())
            time.sleep(0.2)
        for tar in (self.pause_oci, self.busybox_oci):
            run([CTR, "--address", self.sock, "-n", "k8s.io", "images", "import", tar],
                timeout=120).ok()

    # ---- crictl ----------------------------------------------------------

    def crictl_argv(self, *args):
        return self.nsenter() + [CRICTL, "--config", os.path.join(self.dir, "crictl.yaml")] + \
            [str(a) for a in args]

    def crictl(self, *args, timeout=90, input=None):
        return run(self.crictl_argv(*args), timeout=timeout, input=input)

    def spawn_crictl(self, *args):
        return spawn(self.crictl_argv(*args))

    def in_node(self, argv, timeout=30):
        """Run argv in the node's network namespace."""
        return run(self.nsenter() + list(argv), timeout=timeout)

    # ---- pods and containers ---------------------------------------------

    def write_json(self, name, obj):
        path = os.path.join(self.dir, "specs", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(obj, f, indent=2)
        return path

    def pod_config(self, name, network=0, pid=1, ipc=0):
        """namespace modes: 0 POD, 1 CONTAINER, 2 NODE."""
        self.pods += 1
        n = "%s-%d" % (name, self.pods)
        logdir = os.path.join(self.dir, "logs", n)
        os.makedirs(logdir, exist_ok=True)
        return {
            "metadata": {"name": n, "namespace": "default", "uid": "uid-" + n,
                         "attempt": 0},
            # the kubelet sets none for hostNetwork (the node's uts)
            "hostname": n if network != 2 else "",
            "log_directory": logdir,
            "linux": {
                "cgroup_parent": "%s/%s" % (self.cgroup_parent, n),
                "security_context": {"namespace_options": {
                    "network": network, "pid": pid, "ipc": ipc}},
            },
        }

    def runp(self, handler, pod):
        path = self.write_json(pod["metadata"]["name"] + ".pod.json", pod)
        return self.crictl("runp", "--runtime", handler, path)

    def create(self, pod_id, pod, name, command, **extra):
        c = {"metadata": {"name": name}, "image": {"image": IMAGE},
             "command": command, "log_path": name + ".log", "linux": {}}
        for k, v in extra.items():
            if k == "resources":
                c["linux"]["resources"] = v
            elif k == "security_context":
                c["linux"]["security_context"] = v
            else:
                c[k] = v
        cpath = self.write_json("%s-%s.ctr.json" % (pod["metadata"]["name"], name), c)
        ppath = self.write_json(pod["metadata"]["name"] + ".pod.json", pod)
        return self.crictl("create", pod_id, cpath, ppath)

    def run_container(self, pod_id, pod, name, command, **extra):
        r = self.create(pod_id, pod, name, command, **extra).ok()
        cid = r.out.strip()
        self.crictl("start", cid).ok()
        return cid

    def inspect(self, cid):
        return json.loads(self.crictl("inspect", "-o", "json", cid).ok().out)

    def inspectp(self, pid):
        return json.loads(self.crictl("inspectp", "-o", "json", pid).ok().out)

    def pod_ip(self, pod_id):
        return self.inspectp(pod_id)["status"]["network"]["ip"]

    def state(self, cid):
        return self.inspect(cid)["status"]["state"]

    def wait_exited(self, cid, timeout=30):
        st = E.poll_until(lambda: self.state(cid) == "CONTAINER_EXITED", timeout=timeout)
        return self.inspect(cid)["status"]

    def logs(self, cid):
        r = self.crictl("logs", cid).ok()
        return r.out + r.err

    def remove_all(self):
        r = self.crictl("pods", "-q")
        ids = r.out.split()
        for p in ids:
            self.crictl("stopp", p)
        for p in ids:
            self.crictl("rmp", "-f", p)
        return ids

    # ---- what must be left after each test -------------------------------

    def leftovers(self):
        left = []
        for h in HANDLERS + ["agentsbx-egress"]:
            root = os.path.join(self.dir, "rt-" + h, "k8s.io")
            left += E.leftover_report("state under --root %s" % root, E.state_entries(root))
        left += E.leftover_report("container cgroups under %s" % self.cgroup_parent,
                                  self.container_cgroups())
        left += E.leftover_report("pod network namespaces", self.pod_netns())
        left += E.leftover_report("shims", E.pids_with_arg(self.sock, "containerd-shim"))
        left += E.leftover_report("mounts", [m for m in E.mounts_under(self.dir)
                                             if "/netns/" in m or "/shm" in m or "/rootfs" in m])
        return left

    def container_cgroups(self):
        """Cgroups of containers (pod cgroup parents are the kubelet's to
        remove: the suite removes them after each test)."""
        res = []
        for pod in E.cgroup_children(self.cgroup_parent):
            res += [os.path.join(pod, d) for d in os.listdir(pod)
                    if os.path.isdir(os.path.join(pod, d))]
        return res

    def remove_pod_cgroups(self):
        return E.rmdir_cgroup_tree(self.cgroup_parent)

    def pod_netns(self):
        d = os.path.join(self.dir, "state", "netns")
        try:
            return sorted(os.listdir(d))
        except FileNotFoundError:
            return []

    # ---- teardown --------------------------------------------------------

    def stop(self):
        problems = []
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.remove_all()
            except Exception as e:  # still stop everything below
                problems.append("removing pods: %s" % e)
        E.stop_process(self.proc, "containerd")
        if self.listener is not None:
            self.listener.kill()
            self.listener.wait(timeout=10, check_timeout=False)
        for pid in E.pids_with_arg(self.dir):
            problems.append("process left after containerd stopped: %d %s"
                            % (pid, E.proc_cmdline(pid)))
            E.kill_pids([pid])
        problems += E.leftover_report("mounts left after containerd stopped",
                                      E.umount_all_under(self.dir))
        problems += E.leftover_report("cgroups that could not be removed",
                                      E.rmdir_cgroup_tree(self.cgroup_parent))
        if self.netns_made:
            r = run(["ip", "netns", "pids", self.netns])
            if r.out.split():
                problems.append("processes left in %s: %s" % (self.netns, r.out.split()))
                E.kill_pids([int(p) for p in r.out.split()])
            run(["ip", "netns", "del", self.netns])
            if os.path.exists("/run/netns/" + self.netns):
                problems.append("network namespace %s could not be removed" % self.netns)
        for p in HOST_PATHS:
            if self.preexisting[p] or not os.path.lexists(p):
                continue
            if E.only_empty_dirs(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                problems.append("%s was made during the suite and is not empty" % p)
        if not E.KEEP and not E.mounts_under(self.dir):
            shutil.rmtree(self.dir, ignore_errors=True)
        return problems

