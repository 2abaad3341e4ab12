# SPDX-License-Identifier: Apache-2.0
"""A structure-aware mutator of config.json.

case(seed, index) is reproducible: the same (seed, index) always gives the
same case, a dict {"spec", "policy", "docker", "shared", "pod", "template",
"mutations"}.  The spec holds placeholders the harness fills in
(floor_harness.substitute): @T@ (the harness's host objects), @EV@ (the
canary directory), @CID@, @BUNDLE@, @TENANT_PID@, @TENANT_CID@,
@HOST_PID@ (a host process running the hook-rule binary), @SELF_PID@ (the
harness), @SIB_PID@ (a pod sibling's init, else the tenant's), @RUN@ (the
harness's cgroup parent), @DATA@/@EXEC@ (Docker's data and exec roots, for
Docker-shaped cases), @OTHER_DOCKER_ID@.  Kept so, a case is a regression
that replays on any machine.

A spec starts from one of the shapes engines write (runc's `spec`,
dockerd 20.10's, podman's, containerd CRI's, and a minimal one) and gets one
to six mutations: mounts (sources of every kind: the harness's objects,
/proc/<pid>/root/..., sockets, FIFOs, devices, engine directories, the
bundle, relative paths; options and propagation), hooks of every kind with
argv and env, namespaces (removed, joined by path: the host's, the
tenant's, a pod sibling's; user namespaces with mappings), process.user,
capabilities, rlimits, scheduler and I/O priority, devices, resources and
unified keys, sysctls, cgroupsPath (only under the harness's own cgroup
parent: never a path of the machine's), rootfsPropagation, masked and
read-only paths, seccomp (listenerPath included), root.path and readonly,
annotations (agentsbx.* too), hostname, and Docker's run flags as Docker
writes them.

What a mutation never does, whatever the runtime would allow: name a cgroup
outside @RUN@, start a real daemon, change a sysctl to a value that harms
the machine (the global ones it tries are restored by the harness).
"""

import copy
import json
import os
import random

from floor_checker import CAP_NAMES

FLOOR_DIR = os.path.dirname(os.path.abspath(__file__))
SECCOMP_DOCKER = os.path.join(os.path.dirname(FLOOR_DIR), "integration", "data",
                              "seccomp-docker-2019.json")

ALL_CAPS = list(CAP_NAMES)
DOCKER_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
               "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
               "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
PODMAN_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
               "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
               "CAP_SETUID", "CAP_SYS_CHROOT"]
ARGS = ["sleep", "60"]
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# ---- pools -------------------------------------------------------------------

ALLOWED_SOURCES = [
    "@T@/allowed/dir", "@T@/allowed/file", "@T@/allowed/named.sock", "@T@/allowed/other.sock",
    "@T@/allowed/listener.sock", "@T@/allowed/fifo", "@T@/allowed/null", "@T@/allowed/link-out",
    "@T@/allowed/link-in", "@T@/allowed/shared", "@T@/allowed/shared/sub", "@T@/allowed/tmpfs",
    "@T@/allowed/ro-dir", "@T@/allowed", "@T@/allowed/../tenant", "@T@/allowed/dir/../../hostfile",
    "@T@/allowed/./dir", "@T@/allowed//dir/", "@T@/allowed/nonexistent", "@T@/allowed/dir/sub",
    "@T@/allowed/link-out/docker/containers",
]
HARNESS_SOURCES = [
    "@T@", "@T@/tenant", "@T@/tenant/docker/containers", "@T@/tenant/kubelet/pods",
    "@T@/tenant/containerd/io.containerd.runtime.v2.task", "@T@/hostfile", "@T@/home",
    "@T@/home/id_rsa", "@T@/sock/outside.sock", "@T@/hookbin", "@T@/ev", "@T@/tenant-bundle",
    "@T@/tenant-state", "@T@/trials", "@BUNDLE@/../state", "@BUNDLE@", "@BUNDLE@/rootfs",
]
PROC_SOURCES = [
    "/proc/@TENANT_PID@/root", "/proc/@TENANT_PID@/root/secret", "/proc/@TENANT_PID@/root/etc",
    "/proc/@TENANT_PID@/cwd", "/proc/@TENANT_PID@/root/tmp", "/proc/@TENANT_PID@/root/proc",
    "/proc/@HOST_PID@/root@T@/allowed/dir", "/proc/self/root@T@/allowed/dir",
    "/proc/@SELF_PID@/cwd", "/proc/@HOST_PID@/exe", "/proc/@SIB_PID@/root/etc",
    "/proc/@SIB_PID@/root", "/proc/1/root", "/proc/@TENANT_PID@/ns/net",
    "/proc/@HOST_PID@/fd/1", "/proc/thread-self/root@T@/allowed/file",
    "/proc/@TENANT_PID@/root@T@/allowed/dir",
]
HOST_SOURCES = [
    "/", "/etc", "/etc/shadow", "/root", "/var/lib/docker/containers", "/var/lib/docker/volumes",
    "/var/lib/kubelet/pods", "/run/containerd", "/run/containerd/containerd.sock",
    "/var/run/docker.sock", "/run/agentsbx", "/dev/null", "/dev/vda", "/dev/kmsg", "/dev/mem",
    "/dev/shm", "/proc", "/proc/sys", "/sys", "/sys/fs/cgroup", "/sys/kernel/security", "/tmp",
    "/usr/bin/docker-init", "/usr/bin/tini-static", "/usr/libexec/docker", "/var/log", "/boot",
    "/run/containerd/io.containerd.runtime.v2.task",
]
RELATIVE_SOURCES = ["rootfs", "rootfs/etc", ".", "..", "../..", "rootfs/../../..", "work",
                    "./config.json", "state", "rootfs/tmp", "../state", "nonexistent",
                    "@TREL@/tenant", "@TREL@/allowed/dir", "etc"]
DOCKER_SOURCES = [
    "@DATA@/containers/@CID@/hostname", "@DATA@/containers/@CID@",
    "@DATA@/containers/@OTHER_DOCKER_ID@", "@DATA@/containers", "@DATA@/volumes",
    "@DATA@/volumes/v1", "@DATA@/volumes/v1/_data", "@DATA@/volumes/metadata.db", "@DATA@",
    "@EXEC@", "@DATA@/containers/@CID@/../@OTHER_DOCKER_ID@",
    "@DATA@/containers/@CID@/mounts/shm",
]
DESTS = ["/m", "/m/inner", "/data", "/etc/hostname", "/etc", "/tmp", "/tmp/x", "/dev/x",
         "/dev/shm", "/dev", "/proc", "/proc/sys", "/proc/sys/kernel/core_pattern",
         "/proc/1", "/proc/self/fd", "/sys", "/sys/fs/cgroup", "/sys/fs/cgroup/x",
         "/sys/kernel/security", "/", "", "relative", "../../escape", "/m/../../escape",
         "/usr/local/bin/docker-init", "/run/secrets", "/var/run/docker.sock", "/a/b/c/d",
         "/proc/keys", "/dev/pts", "/dev/mqueue", "/home/user"]
OPTIONS = ["bind", "rbind", "ro", "rw", "rro", "nosuid", "nodev", "noexec", "suid", "dev",
           "exec", "private", "rprivate", "shared", "rshared", "slave", "rslave",
           "unbindable", "runbindable", "idmap", "ridmap", "remount", "strictatime",
           "nosymfollow", "mode=0777", "size=1g", "size=0", "size=50%", "nr_blocks=1000000",
           "uid=0", "gid=0", "newinstance", "ptmxmode=0666", "max=100000", "hidepid=2",
           "lowerdir=/etc", "upperdir=@T@/allowed/dir", "workdir=@T@/allowed/ro-dir",
           "defaults", "relatime", "tmpcopyup", "copy-symlink", "x-bogus"]
FSTYPES = ["tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "overlay",
           "ramfs", "ext4", "bpf", "debugfs", "securityfs", "tracefs", "fuse", "nfs", "none",
           "", "bogusfs", "configfs", "binfmt_misc", "hugetlbfs", "devtmpfs", "autofs"]
FS_SOURCES = {"ext4": ["/dev/vda", "@T@/allowed/null"], "overlay": ["overlay"],
              "devtmpfs": ["devtmpfs", "udev"], "nfs": ["127.0.0.1:/export"],
              "fuse": ["/dev/fuse"]}

HOOK_KINDS = ["prestart", "createRuntime", "createContainer", "startContainer", "poststart",
              "poststop", "bogusKind"]
HOOK_PATHS = [
    "@T@/hookbin/floorhook", "@T@/hookbin/floorhook", "@T@/hookbin/floorhook",
    "@T@/hookbin/link", "/proc/@HOST_PID@/exe", "/proc/@TENANT_PID@/root@T@/hookbin/floorhook",
    "@T@/hookbin/notrule", "/bin/sh", "/bin/busybox", "/proc/self/exe",
    "@BUNDLE@/rootfs/bin/busybox", "rootfs/bin/sh", "@T@/allowed/fifo", "@T@/allowed/dir",
    "/nonexistent", "", "/proc/@TENANT_PID@/exe", "/proc/@SIB_PID@/exe",
    "/proc/@HOST_PID@/root@T@/hookbin/floorhook", "/usr/sbin/dockerd",
    "/proc/@HOST_PID@/cwd/../..@T@/hookbin/floorhook", "@T@/allowed/../hookbin/floorhook",
]
HOOK_ENVS = [[], [], ["FLOOR_OK=1"], ["LD_PRELOAD=/nonexistent-floor.so"],
             ["LD_LIBRARY_PATH=@T@/allowed"], ["GCONV_PATH=@T@/allowed"], [PATH_ENV],
             ["FLOOR_OK=1", "BASH_ENV=@T@/hostfile"], ["MALLOC_CHECK_=3"],
             ["GLIBC_TUNABLES=glibc.malloc.check=3"], ["FLOOR_OK=x", "LD_AUDIT=/x.so"]]

NS_TYPES = ["pid", "network", "ipc", "uts", "mount", "cgroup", "user", "time"]
NS_PROC = {"pid": "pid", "network": "net", "ipc": "ipc", "uts": "uts", "mount": "mnt",
           "cgroup": "cgroup", "user": "user", "time": "time"}
NS_PIDS = ["1", "self", "@TENANT_PID@", "@HOST_PID@", "@SELF_PID@", "@SIB_PID@",
           "@SIB_PID@", "thread-self"]

UIDS = [0, 0, 1, 5, 42, 1000, 65534, 65535, 4294967294, 100000]
GIDS = [0, 0, 5, 42, 1000, 65534, 999, 4294967294]

RLIMITS = ["RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CPU", "RLIMIT_RTPRIO", "RLIMIT_NPROC",
           "RLIMIT_MEMLOCK", "RLIMIT_CORE", "RLIMIT_STACK", "RLIMIT_AS", "RLIMIT_NICE",
           "RLIMIT_RTTIME", "RLIMIT_MSGQUEUE", "RLIMIT_SIGPENDING", "RLIMIT_BOGUS"]
RLIMIT_VALUES = [0, 1, 99, 1024, 1048576, 33554432, 1 << 40, 2 ** 64 - 1, 2 ** 63 - 1]

SYSCTLS = {
    "net.ipv4.ip_forward": ["1", "0"], "net.core.somaxconn": ["4096"],
    "kernel.shmmax": ["68719476736"], "fs.mqueue.msg_max": ["100"],
    "kernel.domainname": ["floor.example"], "kernel.hostname": ["floor-host"],
    "vm.swappiness": ["13"], "kernel.sysrq": ["0", "1"], "kernel.msgmax": ["65536"],
    "net.ipv4.conf.all.forwarding": ["1"], "kernel/shmmni": ["1024"],
    "net.ipv4.ping_group_range": ["0 2147483647"], "kernel.sem": ["250 32000 32 128"],
    "../../../proc/sysrq-trigger": ["h"], "net.ipv4.ip_unprivileged_port_start": ["0"],
}

ANNOTATIONS = [
    ("agentsbx.network", "allow"), ("agentsbx.rootfs", "writable"), ("agentsbx.bogus", "1"),
    ("agentsbx.policy", "off"), ("agentsbx.mode", "off"), ("io.container.manager", "libpod"),
    ("io.kubernetes.cri.container-type", "sandbox"),
    ("io.kubernetes.cri.container-type", "container"),
    ("io.kubernetes.cri.sandbox-id", "@TENANT_CID@"),
    ("io.kubernetes.cri-o.ContainerType", "sandbox"), ("run.oci.keep_original_groups", "1"),
    ("org.opencontainers.image.ref.name", "x" * 4000), ("io.agentsbx.caller", "root"),
    ("io.kubernetes.cri.sandbox-name", "pod-1"),
    ("io.kubernetes.pod.uid", "0f0f0f0f-1111-2222-3333-444444444444"),
]


# ---- templates ---------------------------------------------------------------------

def runc_template():
    here = os.path.join(os.path.dirname(FLOOR_DIR), "integration")
    import sys
    if here not in sys.path:
        sys.path.insert(0, here)
    import conftest
    return conftest.make_spec(list(ARGS))


def docker_template():
    with open(SECCOMP_DOCKER) as f:
        seccomp = json.load(f)
    devs = [{"allow": False, "access": "rwm"}]
    for t, ma, mi in (("c", 1, 5), ("c", 1, 3), ("c", 1, 9), ("c", 1, 8), ("c", 5, 0),
                      ("c", 5, 1), ("c", None, None), ("b", None, None), ("c", 136, None),
                      ("c", 5, 2), ("c", 10, 200)):
        d = {"allow": True, "type": t, "access": "rwm" if ma is not None else "m"}
        if ma is not None:
            d["major"] = ma
        if mi is not None:
            d["minor"] = mi
        devs.append(d)
    caps = {k: list(DOCKER_CAPS) for k in ("bounding", "effective", "permitted")}
    return {
        "ociVersion": "1.0.2-dev",
        "process": {"user": {"uid": 0, "gid": 0}, "args": list(ARGS),
                    "env": [PATH_ENV, "HOSTNAME=@CID@"], "cwd": "/", "capabilities": caps,
                    "oomScoreAdj": 0},
        "root": {"path": "@DATA@/overlay2/" + "ab" * 32 + "/merged"},
        "hostname": "docker-floor",
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
             "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                         "gid=5"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs",
             "options": ["nosuid", "noexec", "nodev", "ro"]},
            {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
             "options": ["ro", "nosuid", "noexec", "nodev"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/dev/shm", "type": "bind",
             "source": "@DATA@/containers/@CID@/mounts/shm",
             "options": ["rbind", "nosuid", "noexec", "nodev"]},
            {"destination": "/etc/resolv.conf", "type": "bind",
             "source": "@DATA@/containers/@CID@/resolv.conf", "options": ["rbind", "rprivate"]},
            {"destination": "/etc/hostname", "type": "bind",
             "source": "@DATA@/containers/@CID@/hostname", "options": ["rbind", "rprivate"]},
            {"destination": "/etc/hosts", "type": "bind",
             "source": "@DATA@/containers/@CID@/hosts", "options": ["rbind", "rprivate"]},
        ],
        "linux": {
            "resources": {"devices": devs, "memory": {"disableOOMKiller": False},
                          "cpu": {"shares": 0}, "pids": {"limit": 0},
                          "blockIO": {"weight": 0}},
            "cgroupsPath": "@RUN@/docker/@CID@",
            "namespaces": [{"type": t} for t in ("mount", "network", "uts", "pid", "ipc",
                                                  "cgroup")],
            "seccomp": seccomp,
            "maskedPaths": ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
                            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                            "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
            "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                              "/proc/sysrq-trigger"],
        },
    }


def podman_template():
    s = runc_template()
    s["process"]["capabilities"] = {k: list(PODMAN_CAPS) for k in
                                    ("bounding", "effective", "permitted")}
    with open(SECCOMP_DOCKER) as f:
        s["linux"]["seccomp"] = json.load(f)
    s["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "hard": 1048576, "soft": 1048576},
                               {"type": "RLIMIT_NPROC", "hard": 32768, "soft": 32768}]
    s["annotations"] = {"io.container.manager": "libpod", "io.kubernetes.cri-o.TTY": "false",
                        "io.podman.annotations.privileged": "FALSE"}
    return s


def cri_template():
    s = runc_template()
    s["process"]["capabilities"] = {k: list(DOCKER_CAPS) for k in
                                    ("bounding", "effective", "permitted")}
    s["linux"].pop("seccomp", None)
    s["annotations"] = {"io.kubernetes.cri.container-type": "container",
                        "io.kubernetes.cri.container-name": "web",
                        "io.kubernetes.cri.sandbox-name": "pod-1",
                        "io.kubernetes.cri.sandbox-namespace": "default",
                        "io.kubernetes.cri.sandbox-id": "@TENANT_CID@"}
    return s


def minimal_template():
    return {"ociVersion": "1.0.2", "process": {"args": list(ARGS), "cwd": "/",
                                               "user": {"uid": 0, "gid": 0}},
            "root": {"path": "rootfs"},
            "linux": {"namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts",
                                                            "mount")]}}


TEMPLATES = [("runc", runc_template, 40), ("docker", docker_template, 20),
             ("podman", podman_template, 10), ("cri", cri_template, 10),
             ("minimal", minimal_template, 20)]


# ---- the mutator -------------------------------------------------------------------

class Mutator:
    def __init__(self, rng, docker=False):
        self.r = rng
        self.docker = docker

    def pick(self, seq):
        return seq[self.r.randrange(len(seq))]

    def chance(self, p):
        return self.r.random() < p

    # -- helpers on the spec
    @staticmethod
    def linux(s):
        if not isinstance(s.get("linux"), dict):
            s["linux"] = {}
        return s["linux"]

    @staticmethod
    def process(s):
        if not isinstance(s.get("process"), dict):
            s["process"] = {"args": list(ARGS), "cwd": "/"}
        return s["process"]

    def source(self):
        pools = [ALLOWED_SOURCES] * 5 + [HARNESS_SOURCES, PROC_SOURCES, HOST_SOURCES,
                                         RELATIVE_SOURCES]
        if self.docker:
            pools += [DOCKER_SOURCES] * 3
        return self.pick(self.pick(pools))

    def options(self, base=(), ro=0.85):
        """Mostly what engines write (so that the spec is accepted and the
        checker has a container to look at), sometimes anything."""
        opts = list(base)
        if self.chance(ro):
            opts.append("ro")
        if self.chance(0.4):
            opts.append(self.pick(["private", "rprivate", "slave", "rslave", "shared", "rshared",
                                   "nosuid", "nodev", "noexec", "rro", "unbindable"]))
        if self.chance(0.15):
            for _ in range(self.r.randrange(1, 3)):
                opts.append(self.pick(OPTIONS))
        self.r.shuffle(opts)
        return opts

    # -- mutations: each takes the spec and changes it in place
    def m_bind(self, s):
        m = {"destination": self.pick(DESTS) if self.chance(0.3) else
             self.pick(["/m", "/data", "/m", "/etc/x", "/var/run/x"]),
             "source": self.source(),
             "options": self.options([self.pick(["rbind", "bind"])])}
        if self.chance(0.8):
            m["type"] = self.pick(["bind", "bind", "bind", "none", "", "tmpfs"])
        if self.chance(0.05):
            host = self.pick([0, 1000, 65534])
            m["uidMappings"] = [{"containerID": 0, "hostID": host, "size": 65536}]
            m["gidMappings"] = [{"containerID": 0, "hostID": host, "size": 65536}]
            if self.chance(0.5):
                m["options"].append("idmap")
        s.setdefault("mounts", []).append(m)

    def m_fs(self, s):
        t = self.pick(FSTYPES)
        src = self.pick(FS_SOURCES.get(t, [t or "none"]))
        m = {"destination": self.pick(DESTS) if self.chance(0.6) else
             self.pick(["/m", "/data", "/run", "/tmp"]), "type": t, "source": src,
             "options": self.options(ro=0.5)}
        s.setdefault("mounts", []).append(m)

    def m_mount_change(self, s):
        ms = s.get("mounts") or []
        if not ms:
            return self.m_bind(s)
        m = self.pick(ms)
        what = self.r.randrange(5)
        if what == 0:
            m["options"] = [o for o in m.get("options") or [] if o not in ("ro", "nosuid",
                                                                         "nodev", "noexec")]
            m["options"].append(self.pick(["rw", "shared", "rshared", "suid", "dev", "exec"]))
        elif what == 1:
            m["destination"] = self.pick(DESTS)
        elif what == 2:
            m["source"] = self.source()
        elif what == 3:
            m["type"] = self.pick(FSTYPES + ["bind"])
        else:
            m.setdefault("options", []).extend(self.options())

    def m_mount_remove(self, s):
        ms = s.get("mounts") or []
        if ms:
            ms.pop(self.r.randrange(len(ms)))

    def m_hook(self, s):
        kind = self.pick(HOOK_KINDS)
        hooks = s.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            hooks = s["hooks"] = {}
        lst = hooks.setdefault(kind, [])
        i = len(lst)
        canary = "@EV@/@CID@.%s.%d" % (kind, i)
        path = self.pick(HOOK_PATHS)
        if path == "/usr/sbin/dockerd":
            args = self.pick([
                ["libnetwork-setkey", "-exec-root=@EXEC@", "@CID@", "0123456789ab"],
                ["libnetwork-setkey", "-exec-root=/run/docker", "@CID@", "0123456789ab"],
                ["libnetwork-setkey", "-exec-root=@EXEC@", "@OTHER_DOCKER_ID@", "0123456789ab"],
                ["dockerd", "--version"],
                ["dockerd", "--config-file", "@T@/hostfile", "--validate"]])
        else:
            shape = self.r.randrange(10)
            if shape < 5:
                args = ["sh", "-c", "touch %s" % canary]
            elif shape == 5:
                args = ["sh", "-c", "touch %s" % canary.replace("@CID@", "@TENANT_CID@")]
            elif shape == 6:
                args = ["sh", "-c", "touch %s; cat @T@/hostfile >&2" % canary]
            elif shape == 7:
                args = ["sh", "-c", "touch %s && echo $$ > @T@/hostfile" % canary]
            elif shape == 8:
                args = ["sh", "-c", "touch %s" % canary, "extra"]
            else:
                args = ["floorhook", "sh", "-c", "touch %s" % canary]
        h = {"path": path, "args": args}
        env = self.pick(HOOK_ENVS)
        if env or self.chance(0.2):
            h["env"] = list(env)
        if self.chance(0.2):
            h["timeout"] = self.pick([1, 5, 0, -1])
        lst.append(h)

    def m_ns_remove(self, s):
        ns = self.linux(s).get("namespaces")
        if isinstance(ns, list) and ns:
            ns.pop(self.r.randrange(len(ns)))

    def m_ns_path(self, s):
        ns = self.linux(s).setdefault("namespaces", [])
        t = self.pick(NS_TYPES[:7])
        ns[:] = [n for n in ns if not (isinstance(n, dict) and n.get("type") == t)]
        ns.append({"type": t, "path": "/proc/%s/ns/%s" % (self.pick(NS_PIDS), NS_PROC[t])})

    def m_userns(self, s):
        lx = self.linux(s)
        ns = lx.setdefault("namespaces", [])
        if not any(isinstance(n, dict) and n.get("type") == "user" for n in ns):
            ns.append({"type": "user"})
        host = self.pick([0, 0, 1000, 65534, 100000, 4294967294])
        size = self.pick([1, 1000, 65536, 4294967295])
        lx["uidMappings"] = [{"containerID": 0, "hostID": host, "size": size}]
        lx["gidMappings"] = [{"containerID": 0, "hostID": self.pick([0, host]), "size": size}]
        if self.chance(0.3):
            lx["uidMappings"].append({"containerID": 65536, "hostID": 0, "size": 1})

    def m_ns_misc(self, s):
        ns = self.linux(s).setdefault("namespaces", [])
        what = self.r.randrange(4)
        if what == 0 and ns:
            ns.append(copy.deepcopy(self.pick(ns)))
        elif what == 1:
            ns.append({"type": "bogus"})
        elif what == 2:
            ns.append({"type": "time"})
            self.linux(s)["timeOffsets"] = {"monotonic": {"secs": 1000, "nanosecs": 0}}
        else:
            self.linux(s)["namespaces"] = []

    def m_user(self, s):
        u = self.process(s).setdefault("user", {})
        if self.chance(0.7):
            u["uid"] = self.pick(UIDS)
        if self.chance(0.7):
            u["gid"] = self.pick(GIDS)
        if self.chance(0.5):
            u["additionalGids"] = [self.pick(GIDS) for _ in range(self.r.randrange(1, 4))]
        if self.chance(0.1):
            u["umask"] = self.pick([0, 0o777, 18])
        if self.chance(0.1):
            u["username"] = "root"

    def m_caps(self, s):
        p = self.process(s)
        c = p.setdefault("capabilities", {})
        if not isinstance(c, dict):
            c = p["capabilities"] = {}
        which = self.pick([["bounding"], ["effective", "permitted"], ["ambient", "inheritable",
                                                                      "permitted"],
                           ["bounding", "effective", "permitted", "ambient", "inheritable"]])
        caps = self.pick([ALL_CAPS, ["CAP_SYS_ADMIN"], ["CAP_NET_ADMIN", "CAP_NET_RAW"],
                          DOCKER_CAPS, ["CAP_BOGUS"], ["CAP_DAC_READ_SEARCH"], []])
        for k in which:
            c[k] = list(caps)

    def m_nnp(self, s):
        p = self.process(s)
        if self.chance(0.5):
            p["noNewPrivileges"] = False
        else:
            p.pop("noNewPrivileges", None)

    def m_rlimits(self, s):
        p = self.process(s)
        lst = p.setdefault("rlimits", [])
        for _ in range(self.r.randrange(1, 4)):
            v = self.pick(RLIMIT_VALUES)
            lst.append({"type": self.pick(RLIMITS), "hard": v,
                        "soft": self.pick([v, 0, 1024])})

    def m_sched(self, s):
        p = self.process(s)
        what = self.r.randrange(4)
        if what == 0:
            p["scheduler"] = {"policy": self.pick(["SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE",
                                                   "SCHED_BATCH", "SCHED_IDLE", "SCHED_OTHER",
                                                   "SCHED_BOGUS"]),
                              "priority": self.pick([0, 1, 50, 99]),
                              "flags": self.pick([[], ["SCHED_FLAG_RESET_ON_FORK"]])}
            if p["scheduler"]["policy"] == "SCHED_DEADLINE":
                p["scheduler"].update({"runtime": 100000, "deadline": 1000000,
                                       "period": 1000000})
        elif what == 1:
            p["ioPriority"] = {"class": self.pick(["IOPRIO_CLASS_RT", "IOPRIO_CLASS_BE",
                                                   "IOPRIO_CLASS_IDLE"]),
                               "priority": self.pick([0, 4, 7])}
        elif what == 2:
            p["oomScoreAdj"] = self.pick([-1000, -500, 0, 1000])
        else:
            p["execCPUAffinity"] = {"initial": "0", "final": "0-1"}

    def m_devices(self, s):
        lx = self.linux(s)
        dev = self.pick([("b", 254, 0, "/dev/vda"), ("c", 1, 1, "/dev/mem"),
                         ("c", 1, 11, "/dev/kmsg"), ("c", 10, 229, "/dev/fuse"),
                         ("c", 10, 200, "/dev/net/tun"), ("c", 1, 3, "/dev/null"),
                         ("c", 1, 3, "/etc/floor-null"), ("c", 1, 1, "/../floor-mem"),
                         ("c", 4, 1, "/dev/tty1"), ("c", 5, 1, "/dev/console"),
                         ("c", 1, 2, "/dev/../kmem"), ("p", 0, 0, "/dev/floor-fifo")])
        if self.chance(0.7):
            lx.setdefault("devices", []).append(
                {"type": dev[0], "major": dev[1], "minor": dev[2], "path": dev[3],
                 "fileMode": self.pick([0o666, 0o4777, 0o20666]), "uid": 0, "gid": 0})
        if self.chance(0.5):
            r = lx.setdefault("resources", {})
            if not isinstance(r, dict):
                r = lx["resources"] = {}
            r.setdefault("devices", []).append(self.pick([
                {"allow": True, "access": "rwm"},
                {"allow": True, "type": "a", "access": "rwm"},
                {"allow": True, "type": dev[0], "major": dev[1], "minor": dev[2],
                 "access": "rwm"},
                {"allow": True, "type": "b", "access": "rw"}]))

    def m_resources(self, s):
        lx = self.linux(s)
        r = lx.setdefault("resources", {})
        if not isinstance(r, dict):
            r = lx["resources"] = {}
        what = self.r.randrange(8)
        if what == 0:
            r["memory"] = {"limit": self.pick([-1, 0, 4096, 100 << 20, 200 << 20, 256 << 20,
                                               1 << 30, 2 ** 63 - 1])}
            if self.chance(0.5):
                r["memory"]["swap"] = self.pick([-1, 0, 1 << 30, r["memory"]["limit"]])
            if self.chance(0.2):
                r["memory"]["kernelTCP"] = self.pick([-1, 1 << 40])
            if self.chance(0.2):
                r["memory"]["disableOOMKiller"] = True
        elif what == 1:
            r["pids"] = {"limit": self.pick([-1, 0, 10, 64, 128, 100000])}
        elif what == 2:
            r["cpu"] = {"quota": self.pick([-1, 0, 1000, 50000, 100000, 800000]),
                        "period": self.pick([100000, 10000, 1000000, 1000])}
        elif what == 3:
            r["unified"] = self.pick([{"memory.max": "max"}, {"pids.max": "max"},
                                      {"cpu.max": "max 100000"}, {"memory.swap.max": "max"},
                                      {"memory.high": "max", "memory.low": "1"},
                                      {"../../memory.max": "max"}, {"cgroup.procs": "1"},
                                      {"cgroup.subtree_control": "+memory"}])
        elif what == 4:
            r["hugepageLimits"] = [{"pageSize": "2MB", "limit": 1 << 40}]
        elif what == 5:
            r["blockIO"] = {"weight": 1000, "throttleReadBpsDevice": [
                {"major": 254, "minor": 0, "rate": 0}]}
        elif what == 6:
            r["cpu"] = {"shares": self.pick([0, 2, 262144, 2 ** 63]),
                        "cpus": self.pick(["0", "0-1", "0-255", ""]),
                        "mems": self.pick(["0", "0-3"])}
        else:
            r["network"] = {"classID": 1, "priorities": [{"name": "lo", "priority": 1}]}
            r["rdma"] = {"mlx5_0": {"hcaHandles": 3, "hcaObjects": 10000}}

    def m_sysctl(self, s):
        k = self.pick(sorted(SYSCTLS))
        self.linux(s).setdefault("sysctl", {})[k] = self.pick(SYSCTLS[k])

    def m_cgroups_path(self, s):
        self.linux(s)["cgroupsPath"] = self.pick([
            "@RUN@/svc", "@RUN@/tenant", "@RUN@", "@RUN@/x/../tenant", "@RUN@/c-@CID@",
            "@RUN@/svc/child", "@RUN@/tenant/child", "@RUN@/tenant2/child", "@RUN@/a/b/c",
            "@RUN@/../" + "@RUN@"[1:] + "/d", "@RUN@/docker/@TENANT_CID@"])

    def m_propagation(self, s):
        self.linux(s)["rootfsPropagation"] = self.pick(["shared", "rshared", "slave", "rslave",
                                                        "private", "rprivate", "unbindable",
                                                        "runbindable", "bogus"])
        if self.chance(0.5):
            self.m_bind(s)
            s["mounts"][-1]["source"] = self.pick(["@T@/allowed/shared", "@T@/allowed/shared/sub",
                                                   "@T@/allowed"])
            s["mounts"][-1]["destination"] = "/m"
            if self.chance(0.5):
                s["mounts"].append({"destination": "/m/inner" if self.chance(0.5) else
                                    "/m/sub/inner", "type": "tmpfs", "source": "tmpfs",
                                    "options": ["size=1m"]})

    def m_paths(self, s):
        lx = self.linux(s)
        key = self.pick(["maskedPaths", "readonlyPaths"])
        lst = lx.get(key)
        if self.chance(0.5):
            lx[key] = []
        elif isinstance(lst, list) and lst:
            lst.pop(self.r.randrange(len(lst)))
        else:
            lx[key] = [self.pick(["/proc/self", "/", "/etc", "/proc/sys/../../etc"])]

    def m_seccomp(self, s):
        lx = self.linux(s)
        what = self.r.randrange(5)
        if what == 0:
            lx.pop("seccomp", None)
        elif what == 1:
            lx["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW"}
        elif what == 2:
            lx["seccomp"] = {"defaultAction": self.pick(["SCMP_ACT_ALLOW", "SCMP_ACT_LOG"]),
                             "listenerPath": self.pick([
                                 "@T@/allowed/listener.sock", "@T@/allowed/named.sock",
                                 "@T@/allowed/other.sock", "@T@/sock/outside.sock",
                                 "/run/containerd/containerd.sock", "/var/run/docker.sock",
                                 "@T@/allowed/fifo", "relative.sock",
                                 "/proc/@HOST_PID@/root@T@/sock/outside.sock"]),
                             "listenerMetadata": "floor-metadata",
                             "syscalls": [{"names": ["getcwd"], "action": "SCMP_ACT_NOTIFY"}]}
        elif what == 3:
            lx["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "flags": [self.pick([
                "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
                "SECCOMP_FILTER_FLAG_NEW_LISTENER", "SECCOMP_FILTER_FLAG_BOGUS"])]}
        else:
            lx["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["seccomp", "prctl"], "action": "SCMP_ACT_ALLOW"},
                {"names": ["unshare", "mount"], "action": "SCMP_ACT_ALLOW"}]}

    def m_root(self, s):
        root = s.setdefault("root", {})
        if not isinstance(root, dict):
            root = s["root"] = {}
        if self.chance(0.7):
            root["path"] = self.pick([
                "rootfs", ".", "rootfs/..", "@BUNDLE@/rootfs", "@BUNDLE@", "@T@/home", "/",
                "/etc", "@T@/tenant", "@T@/tenant-bundle/rootfs", "/proc/@TENANT_PID@/root",
                "/proc/@HOST_PID@/root@T@/home", "@BUNDLE@/../state", "@T@/allowed/dir",
                "rootfs/../../", "@T@/hostfile", "nonexistent", "/tmp", "@T@/allowed/link-out",
                "@DATA@/overlay2/" + "ab" * 32 + "/merged", "@DATA@/containers/@CID@"])
        if self.chance(0.5):
            root["readonly"] = self.pick([False, True])

    def m_annotations(self, s):
        a = s.setdefault("annotations", {})
        if not isinstance(a, dict):
            a = s["annotations"] = {}
        for _ in range(self.r.randrange(1, 3)):
            k, val = self.pick(ANNOTATIONS)
            a[k] = val

    def m_hostname(self, s):
        s["hostname"] = self.pick(["floor", "x" * 100, "a/b", "", "floor.example"])
        if self.chance(0.3):
            s["domainname"] = "floor.example"
        if self.chance(0.3):
            self.linux(s)["namespaces"] = [n for n in self.linux(s).get("namespaces") or []
                                           if not (isinstance(n, dict) and
                                                   n.get("type") == "uts")]

    def m_process_misc(self, s):
        p = self.process(s)
        what = self.r.randrange(6)
        if what == 0:
            p["cwd"] = self.pick(["/proc/1/root", "../../", "/nonexistent", "/tmp", "relative",
                                  "/proc/self/root/.."])
        elif what == 1:
            p.setdefault("env", []).append(self.pick(["LD_PRELOAD=/x.so", "A=" + "b" * 10000]))
        elif what == 2:
            p["apparmorProfile"] = "unconfined"
            p["selinuxLabel"] = "system_u:system_r:spc_t:s0"
        elif what == 3:
            p["terminal"] = True
        elif what == 4:
            p["user"] = {"uid": 0, "gid": 0, "additionalGids": [0]}
            p["noNewPrivileges"] = False
        else:
            self.linux(s)["personality"] = {"domain": self.pick(["LINUX", "LINUX32",
                                                                 "BOGUS"])}

    def m_linux_misc(self, s):
        lx = self.linux(s)
        what = self.r.randrange(4)
        if what == 0:
            lx["netDevices"] = {"floor-none0": {"name": "eth9"}}
        elif what == 1:
            lx["intelRdt"] = {"closID": "floor", "l3CacheSchema": "L3:0=1"}
        elif what == 2:
            lx["mountLabel"] = "system_u:object_r:container_file_t:s0"
        else:
            lx["memoryPolicy"] = {"mode": "MPOL_BIND", "nodes": "0"}

    def m_docker_flag(self, s):
        """One `docker run` flag, as dockerd 20.10 writes it."""
        lx, p = self.linux(s), self.process(s)
        flag = self.r.randrange(16)
        ns = lx.setdefault("namespaces", [])
        if flag == 0:  # --privileged
            p["capabilities"] = {k: list(ALL_CAPS) for k in ("bounding", "effective",
                                                              "permitted")}
            lx.pop("seccomp", None)
            lx["maskedPaths"], lx["readonlyPaths"] = [], []
            lx.setdefault("resources", {})["devices"] = [{"allow": True, "access": "rwm"}]
            for m in s.get("mounts") or []:
                if m.get("type") in ("sysfs", "cgroup"):
                    m["options"] = [o for o in m.get("options") or [] if o != "ro"] + ["rw"]
        elif flag in (1, 2, 3, 4, 5):  # --pid/--ipc/--uts/--cgroupns/--network host
            t = ["pid", "ipc", "uts", "cgroup", "network"][flag - 1]
            ns[:] = [n for n in ns if not (isinstance(n, dict) and n.get("type") == t)]
            if t == "network" and self.chance(0.5):
                ns.append({"type": "network", "path": "/proc/@HOST_PID@/ns/net"})
        elif flag == 6:  # --cap-add
            for k in ("bounding", "effective", "permitted"):
                p.setdefault("capabilities", {}).setdefault(k, []).append(self.pick(
                    ["CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH"]))
        elif flag == 7:  # --device
            self.m_devices(s)
        elif flag == 8:  # -v
            src = self.source()
            s.setdefault("mounts", []).append(
                {"destination": self.pick(["/data", "/host", "/var/run/docker.sock"]),
                 "type": "bind", "source": src,
                 "options": ["rbind"] + (["ro"] if self.chance(0.5) else []) +
                 [self.pick(["rprivate", "rslave", "rshared"])]})
        elif flag == 9:  # --tmpfs
            s.setdefault("mounts", []).append(
                {"destination": self.pick(["/run", "/tmp", "/data"]), "type": "tmpfs",
                 "source": "tmpfs", "options": ["noexec", "nosuid", "nodev"] +
                 [self.pick(["size=1g", "size=100%", "size=0", "size=16m"])]})
        elif flag == 10:  # --ulimit
            self.m_rlimits(s)
        elif flag == 11:  # --memory/--cpus/--pids-limit
            self.m_resources(s)
        elif flag == 12:  # --user 1000:0 --group-add 0
            p["user"] = {"uid": self.pick([1000, 0]), "gid": 0,
                         "additionalGids": self.pick([[0], [999, 0], []])}
        elif flag == 13:  # --security-opt seccomp=unconfined / no-new-privileges=false
            lx.pop("seccomp", None)
            p["noNewPrivileges"] = False
        elif flag == 14:  # --sysctl
            self.m_sysctl(s)
        else:  # --userns host / --read-only=false
            ns[:] = [n for n in ns if not (isinstance(n, dict) and n.get("type") == "user")]
            s.setdefault("root", {})["readonly"] = False

    MUTATIONS = [
        ("bind", 14), ("fs", 5), ("mount_change", 5), ("mount_remove", 3), ("hook", 12),
        ("ns_remove", 3), ("ns_path", 5), ("userns", 3), ("ns_misc", 1), ("user", 5),
        ("caps", 4), ("nnp", 2), ("rlimits", 3), ("sched", 3), ("devices", 3),
        ("resources", 5), ("sysctl", 3), ("cgroups_path", 3), ("propagation", 4),
        ("paths", 3), ("seccomp", 4), ("root", 5), ("annotations", 3), ("hostname", 1),
        ("process_misc", 2), ("linux_misc", 1), ("docker_flag", 6),
    ]

    def mutate(self, s, n):
        names = []
        total = sum(w for _, w in self.MUTATIONS)
        for _ in range(n):
            x = self.r.randrange(total)
            for name, w in self.MUTATIONS:
                if x < w:
                    getattr(self, "m_" + name)(s)
                    names.append(name)
                    break
                x -= w
        return names


def case(seed, index):
    """The case number index of the run seeded seed."""
    r = random.Random("%s:%d" % (seed, index))
    total = sum(w for _, _, w in TEMPLATES)
    x = r.randrange(total)
    for name, make, w in TEMPLATES:
        if x < w:
            break
        x -= w
    docker = name == "docker"
    spec = make()
    n = 1
    while n < 6 and r.random() < 0.5:
        n += 1
    mut = Mutator(r, docker)
    names = mut.mutate(spec, n)
    return {"seed": seed, "index": index, "template": name, "mutations": names,
            "policy": r.choice(["builtin", "builtin", "builtin", "harness", "harness",
                                "harness", "harness", "clamp", "clamp", "clamp"]),
            "docker": docker, "shared": r.random() < 0.15, "pod": r.random() < 0.1,
            "spec": spec}
