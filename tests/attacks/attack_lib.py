# SPDX-License-Identifier: Apache-2.0
"""
The attack suite: hostile programs run with a plain `docker run --runtime
agentsbx IMAGE python3 -c CODE` (no hardening flags), and the same programs
under runc with Docker's defaults and under runc with a careful operator's
flags.  See README.md in this directory.

The shared harness is tests/lib/, as for tests/e2e: process spawning with
the orphan reaper (dockerd's shims daemonize), pty sessions and the leftover
checks (procs.py), the private dockerd (engines.py, subclassed here to run
in the suite's own network namespace with Docker's bridge), and the cached
debootstrap rootfs (images.py, shared with tests/sandbox).
"""

import concurrent.futures
import json
import os
import platform
import re
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "lib"))

import engines  # noqa: E402
import procs  # noqa: E402
import images  # noqa: E402
from images import cache_lock, debootstrap_locked  # noqa: E402
from procs import PtySession, leftover_report, poll_until, run, spawn  # noqa: E402

RESULTS_MD = os.path.join(HERE, "results.md")
# The Python rootfs of tests/sandbox (`debootstrap --variant=minbase
# --include=python3 bookworm`, tests/lib/images.py's cache).
ROOTFS_NAME = "python"
IMAGE = "agentsbx-attacks-python:latest"
SUID_BINARY = "/usr/local/bin/suid-id"
# A subset of attacks/tasks for debugging (results.md is then not written).
ONLY = [x for x in os.environ.get("ATTACKS", "").split(",") if x]
WORKERS = int(os.environ.get("ATTACKS_WORKERS", "4"))
# The runtime under test: $AGENTSBX (make passes $(BUILD)/agentsbx), else
# the checkout's build/agentsbx; copied at the start of the session.
RUNTIME = os.environ.get("AGENTSBX") or (
    os.path.join(REPO, "build", "agentsbx")
    if os.path.exists(os.path.join(REPO, "build", "agentsbx")) else engines.RUNTIME)

# The network the suite builds: dockerd runs in a network namespace of the
# suite's own, with its default bridge (docker0, gateway 172.17.0.1); the
# addresses below live on that namespace's lo, so a container reaches them
# through the bridge gateway exactly as it would reach the host.
GATEWAY = "172.17.0.1"
METADATA = "169.254.169.254"
# "An outside address": a public-looking one on the suite's own namespace (the
# documentation ranges, TEST-NET-1..3, are among denyCidrs now).
OUTSIDE = "11.22.33.44"
PORT_LOOPBACK = 7001      # a service on the Docker host's 127.0.0.1 only
PORT_ALL = 7002           # a service on all of the Docker host's addresses
PORT_METADATA = 80
PORT_REVSHELL = 4444

HARDENED = ["--network", "none", "--read-only", "--tmpfs", "/tmp:size=16m",
            "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--memory", "512m", "--memory-swap", "512m", "--pids-limit", "64",
            "--cpus", "1"]

CPU_WINDOW = 5.0  # seconds the CPU loop runs
CPU_SPINNERS = 4


class Config:
    def __init__(self, key, title, runtime, flags):
        self.key, self.title, self.runtime, self.flags = key, title, runtime, flags

    def cmdline(self):
        return " ".join(["docker run --runtime", self.runtime] + self.flags + ["IMAGE python3 -c CODE"])


CONFIGS = [
    Config("agentsbx", "agentsbx default", "agentsbx", []),
    Config("runc", "runc default", "runc", []),
    Config("runc-hardened", "runc + hardened flags", "runc", HARDENED),
]
NET_CONFIG = Config("agentsbx-net", "agentsbx, networkAllowed", "agentsbx-net", [])


class Attack:
    """One hostile program (attacks/PROGRAM.py).  args(env) gives its
    arguments; flags are the attack's own `docker run` options (a -v bind,
    -u, -it); `resource` attacks count a timeout as blocked; `may_refuse`
    ones may be refused at create (that is blocking them); `verify(out,
    env)` double-checks a success marker (the secret's content); `na(env)`
    names why the attack cannot mean anything on this host."""

    def __init__(self, name, title, program, args=None, flags=(), kind="run",
                 timeout=40, resource=False, may_refuse=False, verify=None,
                 net=False, na=None, criterion="", show_info=()):
        self.name, self.title, self.program = name, title, program
        self.args = args or (lambda env: [])
        self.flags = flags if callable(flags) else list(flags)
        self.kind = kind
        self.timeout = timeout
        self.resource = resource
        self.may_refuse = may_refuse
        self.verify = verify
        self.net = net
        self.na = na
        self.criterion = criterion
        self.show_info = show_info  # INFO: prefixes worth putting in the report

    def code(self):
        parts = [read(os.path.join(HERE, "attacks", "_prelude.py"))]
        if self.net:
            parts.append(read(os.path.join(HERE, "attacks", "_net.py")))
        parts.append(read(os.path.join(HERE, "attacks", self.program + ".py")))
        return "\n".join(parts)


def read(path):
    with open(path) as f:
        return f.read()


def _secret_seen(out, env):
    return env.secret_token in out


def _absent(path, why):
    return lambda env: None if os.path.exists(path) else why


ATTACKS = [
    Attack("cpu-loop", "CPU loop (4 busy processes, 2-core host)", "cpu_loop", kind="cpu",
           args=lambda env: [str(CPU_WINDOW), str(CPU_SPINNERS)], resource=True,
           criterion="ALLOWED if the loop got more than 1.1 CPUs over the %.0f s window "
                     "(its children's CPU time / wall time). Otherwise BLOCKED if it was "
                     "killed, or if the running container's cgroup (read on the host: "
                     "cpu.cfs_quota_us / cpu.cfs_period_us, or cpu.max) holds it to at most "
                     "1 CPU; ALLOWED if nothing does (on a busy host the loop may get less "
                     "than 1.1 CPUs without any limit: the quota, the CPUs used and the "
                     "throttled periods from cpu.stat, and the load average, are all "
                     "reported). RLIMIT_CPU (/proc/PID/limits, read on the host) is reported: "
                     "with it, each process of the loop is also killed after that much CPU "
                     "time." % CPU_WINDOW),
    Attack("memory-512m", "Memory grab of 512 MiB (every page written)", "memory_grab",
           args=lambda env: ["512"], resource=True, timeout=60,
           criterion="ALLOWED if 512 MiB were allocated, written and held; BLOCKED on "
                     "MemoryError or the OOM killer."),
    Attack("fork-flood-200", "Fork flood: 200 processes alive at once", "fork_flood",
           args=lambda env: ["200"], resource=True, timeout=60,
           criterion="ALLOWED if 200 forked processes were alive at once."),
    Attack("disk-fill-root", "Disk fill: 50 MiB in /", "disk_fill",
           args=lambda env: ["/attack-fill.bin", "50"], resource=True,
           criterion="ALLOWED if 50 MiB were written and fsync'ed."),
    Attack("disk-fill-workdir", "Disk fill: 50 MiB in its working directory, 1-MiB files",
           "disk_fill", args=lambda env: ["./", "50"], flags=["-w", "/work"], resource=True,
           criterion="ALLOWED if 50 MiB were written and fsync'ed."),
    Attack("disk-fill-tmp", "Disk fill: 50 MiB in /tmp", "disk_fill",
           args=lambda env: ["/tmp/attack-fill.bin", "50"], resource=True,
           criterion="ALLOWED if 50 MiB were written and fsync'ed."),
    Attack("secret-bind", "Host secret through `-v HOSTDIR:/secret:ro`", "secret_bind",
           flags=lambda env: ["-v", "%s:/secret:ro" % env.secret_dir],
           args=lambda env: ["/secret/token"], may_refuse=True, verify=_secret_seen,
           criterion="ALLOWED if the secret's content was read. A container the runtime "
                     "refuses to create is BLOCKED (the reason is recorded)."),
    Attack("secret-proc", "Host secret through /proc (PID/root, PID/cwd, environ, kcore)",
           "secret_proc", args=lambda env: [env.secret_path, env.secret_token],
           verify=_secret_seen, show_info=("pids visible", "/proc/kcore"),
           criterion="ALLOWED if the secret's content (or /proc/kcore) was read."),
    Attack("secret-leaked-path", "Host secret through host paths leaked by mountinfo",
           "secret_leaked_path", args=lambda env: [env.secret_path, env.secret_token],
           verify=_secret_seen, show_info=("host paths leaked",),
           criterion="ALLOWED if the secret's content was read through its host path or "
                     "a path derived from what /proc/self/mountinfo leaks."),
    Attack("secret-open-by-handle", "Host filesystem through open_by_handle_at (shocker)",
           "secret_open_by_handle", args=lambda env: [env.secret_path, env.secret_token],
           criterion="ALLOWED if a handle to the host filesystem's root directory opened."),
    Attack("net-host-loopback", "Service on the host's loopback (127.0.0.1)",
           "net_host_loopback", net=True,
           args=lambda env: [env.net_token, str(PORT_LOOPBACK), str(env.host_port), GATEWAY],
           criterion="ALLOWED if a listener bound to 127.0.0.1 answered with the suite's "
                     "token: the Docker host's (the suite's namespace) or the machine's own."),
    Attack("net-bridge-gateway", "Service on the Docker bridge gateway (172.17.0.1)",
           "net_bridge_gateway", net=True,
           args=lambda env: [env.net_token, str(PORT_ALL), GATEWAY],
           criterion="ALLOWED if the host service on all addresses answered through the "
                     "default route's gateway or 172.17.0.1."),
    Attack("net-metadata", "Cloud metadata at 169.254.169.254:80", "net_metadata", net=True,
           args=lambda env: [env.net_token],
           criterion="ALLOWED if the fake metadata service answered the HTTP request."),
    Attack("net-reverse-shell", "Reverse shell to an outside address (11.22.33.44:4444)",
           "net_reverse_shell", net=True, args=lambda env: [OUTSIDE, str(PORT_REVSHELL)],
           criterion="ALLOWED if the listener got a working shell (it sends a command, "
                     "checks the answer, then has the shell print the marker)."),
    Attack("net-host-network", "`--network host`, then the host's loopback service",
           "net_host_loopback", net=True, flags=["--network", "host"],
           # the host's network namespace is refused at create (issue 16)
           may_refuse=True,
           args=lambda env: [env.net_token, str(PORT_LOOPBACK), str(env.host_port), GATEWAY],
           criterion="ALLOWED if, asking Docker for the host's network namespace, the "
                     "container reached a service on the host's 127.0.0.1."),
    Attack("raw-socket", "Raw IP sockets (SOCK_RAW)", "raw_socket",
           criterion="ALLOWED if any SOCK_RAW socket opened."),
    Attack("packet-socket", "Packet sockets (AF_PACKET)", "packet_socket",
           criterion="ALLOWED if any AF_PACKET socket opened."),
    Attack("mount", "mount(2) (tmpfs, proc, bind of /; also in a new user namespace)", "mount",
           criterion="ALLOWED if any mount succeeded."),
    Attack("unshare", "unshare(2) of any namespace", "unshare",
           criterion="ALLOWED if any unshare succeeded."),
    Attack("keyctl", "Kernel keyring (add_key, keyctl)", "keyctl",
           criterion="ALLOWED if a key or keyring was created."),
    Attack("bpf", "bpf(2) (map create, socket filter load)", "bpf",
           criterion="ALLOWED if bpf returned an fd."),
    Attack("io-uring", "io_uring_setup(2)", "io_uring",
           criterion="ALLOWED if io_uring_setup returned an fd."),
    Attack("userfaultfd", "userfaultfd(2)", "userfaultfd",
           criterion="ALLOWED if userfaultfd returned an fd."),
    Attack("ptrace-sibling", "ptrace / process_vm_readv of a sibling process", "ptrace_sibling",
           criterion="ALLOWED if PTRACE_ATTACH or process_vm_readv of a sibling worked."),
    Attack("sysrq-trigger", "Write /proc/sysrq-trigger", "sysrq_trigger",
           na=_absent("/proc/sysrq-trigger", "this kernel has no /proc/sysrq-trigger "
                      "(CONFIG_MAGIC_SYSRQ is not set): nothing to write"),
           criterion="ALLOWED if a byte was written to a /proc/sysrq-trigger that is not "
                     "masked."),
    Attack("core-pattern", "Write /proc/sys/kernel/core_pattern", "core_pattern",
           criterion="ALLOWED if the write succeeded (the value written is the one read)."),
    Attack("setuid-root", "Setuid-root binary run by uid 1000 (`-u 1000:1000`)", "setuid_root",
           flags=["-u", "1000:1000"], args=lambda env: [SUID_BINARY],
           criterion="ALLOWED if the setuid copy of id(1) reported euid 0."),
    Attack("mknod-dev-mem", "mknod + open /dev/mem (c 1:1)", "mknod_dev",
           args=lambda env: ["mem", "1", "1"],
           criterion="ALLOWED if open() worked, or failed only with ENXIO (the sandbox let "
                     "it through to a kernel without /dev/mem support)."),
    Attack("mknod-dev-kvm", "mknod + open /dev/kvm (c 10:232)", "mknod_dev",
           args=lambda env: ["kvm", "10", "232"],
           criterion="ALLOWED if /dev/kvm opened read-write."),
    Attack("set-clock", "Set the clock (settimeofday)", "set_clock",
           criterion="ALLOWED if settimeofday succeeded (it sets the timezone the kernel "
                     "already has: CAP_SYS_TIME and the seccomp rule are the same as for "
                     "setting the time, and the host clock is never changed)."),
    Attack("tiocsti", "TIOCSTI keystroke injection (`-it`, a pty the test owns)", "tiocsti",
           kind="tty", flags=["-i", "-t"],
           criterion="ALLOWED if the injected line was read back as terminal input."),
]
NET_ATTACKS = [a.name for a in ATTACKS if a.net]


class Task:
    """Ordinary agent work: work/PROGRAM.py prints TASK-OK:NAME."""

    def __init__(self, name, title, program, kind="run", flags=(), input=None, expect=None):
        self.name, self.title, self.program = name, title, program
        self.kind, self.flags, self.input, self.expect = kind, list(flags), input, expect

    def code(self, program=None):
        return read(os.path.join(HERE, "work", (program or self.program) + ".py"))


def _stats_expect():
    import statistics
    xs = [i * i for i in range(1, 1001)]
    return "mean=%s stdev=%.6f" % (statistics.mean(xs), statistics.stdev(xs))


STDIN_DATA = "".join("line %d of the agent's input\n" % i for i in range(1000))
TASKS = [
    Task("stats", "Mean and standard deviation of the first 1,000 squares", "stats",
         expect=_stats_expect()),
    Task("tmp-file", "Write and read a file in /tmp", "tmp_file"),
    Task("multiprocessing", "multiprocessing.Pool(4)", "multiprocessing_pool",
         expect="pool=4 processes"),
    Task("threads", "Threads (a pool of 8, 16 threads with a lock)", "threads",
         expect="count=16000"),
    Task("subprocess", "subprocess (sh pipeline, a child python, ls)", "subprocess_run"),
    Task("stdin", "Read stdin (`docker run -i`, 1,000 lines)", "stdin_read", flags=["-i"],
         input=STDIN_DATA, expect="%d bytes 1000 lines" % len(STDIN_DATA)),
    Task("docker-exec", "`docker exec` into the running container", "exec_task", kind="exec"),
]


def wanted(name):
    return not ONLY or name in ONLY


# --------------------------------------------------------------------------
# The Python image


def build_image_tar(out, extra_dir):
    """The cached Python rootfs (built once per machine under a lock) as a
    tarball for `docker import`, plus a setuid-root copy of id(1)."""
    with cache_lock():  # also keeps a rebuild away while we read
        rootfs = debootstrap_locked(ROOTFS_NAME, "python3")
        if not os.path.exists(os.path.join(rootfs, "usr", "bin", "python3")):
            raise RuntimeError("%s has no usr/bin/python3" % rootfs)
        run(["tar", "--numeric-owner", "--exclude", "./" + images.MARKER, "-C", rootfs,
             "-cf", out, "."], timeout=300).ok()
        suid = os.path.join(extra_dir, SUID_BINARY.lstrip("/"))
        os.makedirs(os.path.dirname(suid), exist_ok=True)
        shutil.copy2(os.path.join(rootfs, "usr", "bin", "id"), suid)
    os.chown(suid, 0, 0)
    os.chmod(suid, 0o4755)
    run(["tar", "--numeric-owner", "-C", extra_dir, "-rf", out, "." + SUID_BINARY],
        timeout=60).ok()
    return rootfs


# --------------------------------------------------------------------------
# The network namespace dockerd runs in, and the listeners


def ip(*args, check=True):
    r = run(["ip"] + list(args), timeout=20)
    if check:
        r.ok()
    return r


def make_gateway_netns(name):
    ip("netns", "add", name)
    ip("-n", name, "link", "set", "lo", "up")
    for addr in (METADATA, OUTSIDE):
        ip("-n", name, "addr", "add", addr + "/32", "dev", "lo")


class HostLoopbackListener:
    """A banner service on 127.0.0.1 of the machine's own network namespace."""

    def __init__(self, token):
        self.token = token
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = []
        self.stopped = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopped:
            try:
                c, peer = self.sock.accept()
            except OSError:
                return
            self.connections.append(peer)
            try:
                c.sendall(("AGENTSBX-LISTENER %s host-loopback\n" % self.token).encode())
            except OSError:
                pass
            c.close()

    def close(self):
        self.stopped = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


# --------------------------------------------------------------------------
# dockerd in the suite's network namespace, with Docker's default bridge


class AttackDocker(engines.Docker):
    def __init__(self, s, netns, runtimes):
        super().__init__(s, runtimes, "/agentsbx-attacks-%s" % s.tag, IMAGE)
        self.netns = netns

    def network_args(self):
        """As tests/e2e, but with the default bridge (docker0,
        172.17.0.1/16) inside our own namespace; no iptables, no NAT, no
        forwarding."""
        return ["--bip", GATEWAY + "/16", "--iptables=false", "--ip6tables=false",
                "--ip-forward=false", "--ip-masq=false", "--userland-proxy=false"]

    def daemon_argv(self):
        return ["nsenter", "--net=/run/netns/" + self.netns] + super().daemon_argv()

    @property
    def host_netns_bind(self):
        """dockerd's own bind mount of its network namespace, made for the
        first `--network host` container and kept while it runs."""
        return os.path.join(self.exec_root, "netns", "default")

    def stop(self):
        procs.stop_process(self.proc, "dockerd")
        if self.host_netns_bind in procs.mounts_under(self.exec_root):
            run(["umount", self.host_netns_bind])
        return super().stop()

    def remove_all(self):
        """As e2e's, but a hung `docker rm` is a problem reported, not an
        exception that would stop the teardown."""
        r = self.spawn("ps", "-aq", "--no-trunc").wait(timeout=30, check_timeout=False)
        ids = (r[1] or "").split()
        if ids:
            rc, _, err = self.spawn("rm", "-f", *ids).wait(timeout=90, check_timeout=False)
            if rc is None:
                self.s.problems.append("docker rm -f %s did not return in 90 s" % " ".join(ids))
        return ids

    def state_roots(self):
        base = self.exec_root
        try:
            return [os.path.join(base, d, "moby") for d in os.listdir(base)
                    if d.startswith("runtime-")]
        except FileNotFoundError:
            return []

    def leftovers(self):
        res = []
        for root in self.state_roots():
            res += leftover_report("container state under " + root, procs.state_entries(root))
        own = {self.data, self.host_netns_bind}
        res += leftover_report("cgroups under " + self.cgroup_parent,
                               procs.cgroup_children(self.cgroup_parent))
        res += leftover_report("mounts", [m for m in procs.mounts_under(self.dir)
                                          if m not in own])
        res += leftover_report("shims", procs.pids_with_arg(self.ctd_sock, "containerd-shim"))
        r = self.spawn("ps", "-aq").wait(timeout=30, check_timeout=False)
        res += leftover_report("containers", (r[1] or "").split())
        return res


# --------------------------------------------------------------------------
# The session


class Env:
    """What the attacks need to know, and what teardown must undo."""

    def __init__(self):
        self.t0 = time.monotonic()
        self.tmp = tempfile.mkdtemp(prefix="agentsbx-attacks-", dir="/tmp")
        os.chmod(self.tmp, 0o755)
        self.tag = secrets.token_hex(4)
        self.netns = "agentsbx-attacks-" + self.tag
        self.runtime = os.path.join(self.tmp, "bin", "agentsbx")
        self.secret_dir = os.path.join(self.tmp, "host-secret")
        self.secret_path = os.path.join(self.secret_dir, "token")
        self.secret_token = "AGENTSBX-TEST-SECRET-" + secrets.token_hex(8)
        self.net_token = "tok" + secrets.token_hex(6)
        self.problems = []
        self.preexisting = {p: os.path.lexists(p) for p in engines.HOST_PATHS}
        self.netns_made = False
        self.docker = None
        self.listener = None
        self.host_listener = None
        self.host_port = 0
        self.policy = None
        self.rootfs = None
        self.versions = {}

    # ---- set-up
    def setup(self):
        os.makedirs(os.path.dirname(self.runtime))
        # a copy: others may rebuild the checkout's binary while we run
        shutil.copy2(RUNTIME, self.runtime)
        os.makedirs(self.secret_dir, mode=0o700)
        with open(self.secret_path, "w") as f:
            f.write(self.secret_token + "\n")
        os.chmod(self.secret_path, 0o600)
        self._policies()
        self._versions()
        tar = os.path.join(self.tmp, "image.tar")
        self.rootfs = build_image_tar(tar, os.path.join(self.tmp, "image-extra"))
        make_gateway_netns(self.netns)
        self.netns_made = True
        self.docker = AttackDocker(self, self.netns, {
            "agentsbx": {"path": self.runtime, "runtimeArgs": ["--policy", self.policy_default]},
            "agentsbx-net": {"path": self.runtime, "runtimeArgs": ["--policy", self.policy_net]},
        })
        why = self.docker.start()
        if why:
            return why
        os.makedirs(os.path.dirname(self.docker.state_root), mode=0o700, exist_ok=True)
        self.docker("import", tar, IMAGE, timeout=300).ok()
        os.unlink(tar)
        self.versions["dockerd"] = self.docker("version", "--format",
                                               "{{.Server.Version}}").out.strip()
        self._listeners()
        return None

    def _policies(self):
        """The built-in default, plus the one deviation: bind mounts from the
        private dockerd's data-root/containers (where Docker keeps each
        container's hosts, hostname, resolv.conf and /dev/shm), the
        counterpart of the built-in /var/lib/docker/containers."""
        empty = os.path.join(self.tmp, "policy-empty.json")
        with open(empty, "w") as f:
            f.write("{}\n")
        builtin = json.loads(run([self.runtime, "--policy", empty, "policy", "show"]).ok().out)
        self.bind_prefix = os.path.join(self.tmp, "docker", "data", "containers")
        self.policy_default = os.path.join(self.tmp, "policy-default.json")
        # The policy's audit log (issue 17): this run's, never /var/log.
        audit = os.environ.get("AGENTSBX_POLICY_LOG") or os.path.join(self.tmp, "policy.log")
        with open(self.policy_default, "w") as f:
            json.dump({"bindPrefixes": builtin["bindPrefixes"] + [self.bind_prefix],
                       "auditLog": audit}, f, indent=2)
        self.policy_net = os.path.join(self.tmp, "policy-network-allowed.json")
        with open(self.policy_net, "w") as f:
            json.dump({"networkAllowed": True, "auditLog": audit,
                       "bindPrefixes": builtin["bindPrefixes"] + [self.bind_prefix]}, f, indent=2)
        self.policy = json.loads(run([self.runtime, "--policy", self.policy_default,
                                      "policy", "show"]).ok().out)
        self.builtin_policy = builtin

    def _versions(self):
        v = self.versions
        v["agentsbx"] = run([self.runtime, "--version"]).out.strip().splitlines()[0:1]
        v["agentsbx"] = v["agentsbx"][0] if v["agentsbx"] else "?"
        libs = run(["ldd", self.runtime]).out
        if re.search(r"lib(asan|ubsan|tsan)", libs):
            v["agentsbx"] += " (a sanitizer build)"
        r = run(["runc", "--version"])
        v["runc"] = r.out.splitlines()[0] if r.rc == 0 else "?"
        v["kernel"] = platform.release()
        v["cpus"] = os.cpu_count()
        v["commit"] = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]).out.strip()

    def _listeners(self):
        specs = ["banner:127.0.0.1:%d:docker-host-loopback" % PORT_LOOPBACK,
                 "banner:0.0.0.0:%d:docker-host-all-addresses" % PORT_ALL,
                 "http:%s:%d:metadata" % (METADATA, PORT_METADATA),
                 "revshell:%s:%d:outside" % (OUTSIDE, PORT_REVSHELL)]
        self.listener_log = os.path.join(self.tmp, "listener.log")
        with open(self.listener_log, "wb") as logf:
            self.listener = spawn(["nsenter", "--net=/run/netns/" + self.netns,
                                   sys.executable, "-u", os.path.join(HERE, "listener.py"),
                                   self.net_token] + specs, stdout=logf, stderr=logf)
        ok = poll_until(lambda: "READY" in read(self.listener_log) or
                        self.listener.poll() is not None, timeout=15)
        if not ok or "READY" not in read(self.listener_log):
            raise RuntimeError("listeners did not start:\n" + read(self.listener_log))
        self.host_listener = HostLoopbackListener(self.net_token)
        self.host_port = self.host_listener.port

    # ---- teardown
    def teardown(self):
        """Undo everything, each step on its own (one failing must not leave
        the rest behind); return the list of problems."""
        problems = self.problems

        def step(what, fn):
            try:
                fn()
            except Exception as e:  # keep going
                problems.append("teardown: %s: %s: %s" % (what, type(e).__name__, e))

        d = self.docker
        if d is not None:
            if d.proc is not None and d.proc.poll() is None:
                step("docker rm", d.remove_all)
                step("docker rmi", lambda: d.spawn("rmi", "-f", IMAGE).wait(
                    timeout=60, check_timeout=False))
            step("dockerd stop", lambda: problems.extend(d.stop()))
        if self.listener is not None:
            step("listener", lambda: procs.stop_process(self.listener, "listener", timeout=5))
        if self.host_listener is not None:
            step("host listener", self.host_listener.close)
        # whatever still runs with our temp dir in its argv (dockerd, its
        # containerd, shims, runtimes): ours, stopped by pid
        for pid in procs.pids_with_arg(self.tmp):
            problems.append("process left running: %d %s" % (pid, procs.proc_cmdline(pid)))
            procs.kill_pids([pid])
        if self.netns_made:
            def netns():
                r = ip("netns", "pids", self.netns, check=False)
                if r.out.split():
                    problems.append("processes left in %s: %s" % (self.netns, r.out.split()))
                    procs.kill_pids([int(p) for p in r.out.split()])
                ip("netns", "del", self.netns, check=False)
                if os.path.exists("/run/netns/" + self.netns):
                    problems.append("network namespace %s could not be removed" % self.netns)
            step("netns", netns)
        if d is not None:
            step("mounts", lambda: problems.extend(leftover_report(
                "mounts left", procs.umount_all_under(self.tmp))))
            step("cgroups", lambda: problems.extend(leftover_report(
                "cgroups that could not be removed", procs.rmdir_cgroup_tree(d.cgroup_parent))))
        others = [pid for pid in procs.all_pids() if os.path.basename(
            (procs.proc_cmdline(pid) or [""])[0]) in ("dockerd", "containerd", "podman")]
        for p in engines.HOST_PATHS:
            if self.preexisting[p] or not os.path.lexists(p):
                continue
            if others:  # another engine may be using it now
                continue
            if procs.only_empty_dirs(p):
                shutil.rmtree(p, ignore_errors=True)
            else:
                problems.append("%s was created during this session and is not empty" % p)
        left = procs.mounts_under(self.tmp)
        if left:
            problems.append("mounts left under %s: %s" % (self.tmp, left))
        if not procs.KEEP and not left:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return problems


# --------------------------------------------------------------------------
# Running one cell


class Cell:
    def __init__(self, verdict, seconds, detail, started=True, out="", err="", rc=None):
        self.verdict, self.seconds, self.detail = verdict, seconds, detail
        self.started, self.out, self.err, self.rc = started, out, err, rc

    def describe(self):
        return "%s in %.1fs (rc %s, started %s): %s\n--- stdout:\n%s\n--- stderr:\n%s" % (
            self.verdict, self.seconds, self.rc, self.started, self.detail,
            self.out[-3000:], self.err[-3000:])


def _host_network(attack):
    f = attack.flags
    return not callable(f) and "--network" in f and f[f.index("--network") + 1] == "host"


def _flags(attack_or_task, config, env):
    f = attack_or_task.flags
    return list(f(env) if callable(f) else f)


def _conflict(config, extra):
    """The operator's --network none and the attack's --network host."""
    return "--network" in config.flags and "--network" in extra


def _docker_error(err):
    lines = [l.strip() for l in err.splitlines() if l.strip()]
    for l in lines:
        if l.startswith("docker: Error response from daemon:"):
            return l[len("docker: Error response from daemon:"):].strip()
    return lines[-1] if lines else ""


def _marker_line(out, prefix):
    for line in out.splitlines():
        if line.startswith(prefix):
            return line[len(prefix):].strip()
    return None


def _inspect_and_remove(docker, name):
    r = docker("inspect", "-f", "{{.State.ExitCode}} {{.State.OOMKilled}}", name)
    docker("rm", "-f", name)
    if r.rc != 0:
        return None, False
    parts = r.out.split()
    return (int(parts[0]) if parts and parts[0].lstrip("-").isdigit() else None,
            len(parts) > 1 and parts[1] == "true")


def run_container(env, name, config, extra, cmd, timeout, tty=False, input=None):
    """docker run --name NAME --runtime RT FLAGS EXTRA IMAGE CMD; returns
    (rc, out, err, seconds, timed_out, exit_code, oom)."""
    d = env.docker
    argv = ["run", "--name", name, "--label", "agentsbx-attacks=" + env.tag,
            "--runtime", config.runtime] + config.flags + extra + [IMAGE] + cmd
    t0 = time.monotonic()
    timed_out = False
    if tty:
        s = PtySession(d.argv(*argv), rows=24, cols=200, env=d.env)
        try:
            end = t0 + timeout
            while s.proc.poll() is None and time.monotonic() < end:
                s._read(0.1)
            if s.proc.poll() is None:
                timed_out = True
            else:
                for _ in range(10):
                    if s.eof:
                        break
                    s._read(0.05)
        finally:
            s.close()
        rc, out, err = s.proc.rc, s.text, ""
    else:
        p = d.spawn(*argv) if input is None else spawn(d.argv(*argv), env=d.env, input=input)
        rc, out, err = p.wait(timeout=timeout, check_timeout=False)
        timed_out = rc is None
    secs = time.monotonic() - t0
    exit_code, oom = _inspect_and_remove(d, name)
    return rc, out, err, secs, timed_out, exit_code, oom


def _python_cmd(code, *args):
    return ["python3", "-c", code] + [str(a) for a in args]


def run_attack(env, attack, config):
    extra = _flags(attack, config, env)
    if _conflict(config, extra):
        return Cell("N/A", 0.0, "the operator's `--network none` and the attack's "
                    "`--network host` contradict each other", started=False)
    na = attack.na(env) if attack.na else None
    if attack.kind == "cpu":
        cell = run_cpu_attack(env, attack, config, extra)
    else:
        name = "atk-%s-%s-%s" % (env.tag, attack.name, config.key)
        rc, out, err, secs, timed_out, code, oom = run_container(
            env, name, config, extra, _python_cmd(attack.code(), attack.name, *attack.args(env)),
            attack.timeout, tty=attack.kind == "tty")
        cell = judge(attack, out, err, rc, secs, timed_out, code, oom, env)
    if na and cell.verdict == "BLOCKED":
        cell.verdict = "N/A"
        cell.detail = "%s (measured: %s)" % (na, cell.detail)
    return cell


def judge(attack, out, err, rc, secs, timed_out, code, oom, env):
    cell = _judge(attack, out, err, rc, secs, timed_out, code, oom, env)
    iface = _marker_line(out, "INFO:interfaces:")
    if attack.net and iface:
        cell.detail += " [inside: interfaces %s]" % iface
    for prefix in attack.show_info:
        line = _marker_line(out, "INFO:" + prefix)
        if line is not None:
            cell.detail += " [%s %s]" % (prefix, line)
    return cell


def _judge(attack, out, err, rc, secs, timed_out, code, oom, env):
    won = _marker_line(out, "ATTACK-SUCCEEDED:" + attack.name)
    lost = _marker_line(out, "ATTACK-FAILED:" + attack.name)
    started = ("ATTACK-STARTED:" + attack.name) in out
    if code is None and rc is not None:
        code = rc
    if won is not None:
        if attack.verify is None or attack.verify(out, env):
            return Cell("ALLOWED", secs, won, True, out, err, code)
        return Cell("ERROR", secs, "success claimed but not verified: " + won, True, out, err, code)
    if timed_out:
        verdict = "BLOCKED" if attack.resource else "ERROR"
        return Cell(verdict, secs, "timed out after %ds%s" % (
            attack.timeout, ": " + lost if lost else ""), started, out, err, code)
    if not started:
        why = _docker_error(err) or "no output, exit status %s" % code
        return Cell("BLOCKED", secs, "container did not start: " + why, False, out, err, code)
    if lost is not None:
        detail = lost
    elif oom or code == 137:
        detail = "killed by SIGKILL%s (exit 137)" % (" (OOM killer)" if oom else "")
    elif code and code > 128:
        detail = "killed by signal %d" % (code - 128)
    else:
        tail = [l for l in (out + "\n" + err).splitlines() if l.strip()]
        detail = "no success marker; exit %s; %s" % (code, tail[-1][:200] if tail else "")
    return Cell("BLOCKED", secs, detail, True, out, err, code)


# ---- the CPU loop


def _cgroup_paths(pid):
    res = {}
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            for c in ctrls.split(",") if ctrls else [""]:
                res[c] = path
    return res


def _hierarchy(controller):
    for h in procs.cgroup_hierarchies():
        if controller in os.path.basename(h).split(","):
            return h
    return None


def _readfile(path):
    with open(path) as f:
        return f.read().strip()


def read_cpu(pid):
    """(usage in ns, nr_throttled, CPUs the quota allows or None) of pid's
    cgroup, read from the kernel's files for the running container."""
    paths = _cgroup_paths(pid)
    acct, cpu = _hierarchy("cpuacct"), _hierarchy("cpu")
    if acct and cpu and "cpuacct" in paths and "cpu" in paths:
        cdir = os.path.join(cpu, paths["cpu"].lstrip("/"))
        usage = int(_readfile(os.path.join(acct, paths["cpuacct"].lstrip("/"), "cpuacct.usage")))
        quota = int(_readfile(os.path.join(cdir, "cpu.cfs_quota_us")))
        period = int(_readfile(os.path.join(cdir, "cpu.cfs_period_us")))
        usec = None
    else:  # cgroup v2
        base = [h for h in procs.cgroup_hierarchies()
                if os.path.exists(os.path.join(h, "cgroup.controllers"))][0]
        cdir = os.path.join(base, paths[""].lstrip("/"))
        q, per = _readfile(os.path.join(cdir, "cpu.max")).split()
        quota, period = (-1 if q == "max" else int(q)), int(per)
        usec = True
    vals = {}
    for line in _readfile(os.path.join(cdir, "cpu.stat")).splitlines():
        k, v = line.split()
        vals[k] = int(v)
    if usec:
        usage = vals["usage_usec"] * 1000
    return usage, vals.get("nr_throttled", 0), (quota / period if quota > 0 else None)


def rlimit_cpu(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max cpu time"):
                return line.split()[3]
    return "?"


def run_cpu_attack(env, attack, config, extra):
    d = env.docker
    name = "atk-%s-%s-%s" % (env.tag, attack.name, config.key)
    argv = ["run", "--name", name, "--label", "agentsbx-attacks=" + env.tag,
            "--runtime", config.runtime] + config.flags + extra + [IMAGE] + \
        _python_cmd(attack.code(), attack.name, *attack.args(env))
    t0 = time.monotonic()
    p = d.spawn(*argv)

    def pid():
        r = d("inspect", "-f", "{{.State.Running}} {{.State.Pid}}", name)
        parts = r.out.split()
        if r.rc == 0 and parts and parts[0] == "true" and int(parts[1]) > 0:
            return int(parts[1])
        return None

    host = None
    init = poll_until(lambda: pid() or p.poll() is not None, timeout=20, interval=0.05)
    if init is not True and init:
        try:
            poll_until(lambda: "spinning" in p.output()[0], timeout=10, interval=0.05)
            limit = rlimit_cpu(init)
            u0, th0, _ = read_cpu(init)
            m0 = time.monotonic()
            time.sleep(CPU_WINDOW - 1.5)
            u1, th1, quota = read_cpu(init)
            m1 = time.monotonic()
            host = ((u1 - u0) / 1e9 / (m1 - m0), th1 - th0, limit, m1 - m0, quota,
                    _readfile("/proc/loadavg").split()[0])
        except (OSError, ValueError, KeyError, IndexError) as e:
            env.problems.append("cpu-loop/%s: could not read the cgroup: %s" % (config.key, e))
    rc, out, err = p.wait(timeout=CPU_WINDOW + 40, check_timeout=False)
    secs = time.monotonic() - t0
    code, oom = _inspect_and_remove(d, name)
    cell = judge(attack, out, err, rc, secs, rc is None, code, oom, env)
    if host is None:
        if cell.verdict == "ALLOWED" or not cell.started:
            return cell
        return Cell("ERROR", secs, "no host-side measurement; " + cell.detail, cell.started,
                    out, err, code)
    inside = _marker_line(out, "INFO:cpus=")
    cpus, throttled, limit, window, quota, load = host
    facts = ("the container's cgroup: CFS quota %s, %.2f CPUs used over %.1f s, throttled "
             "in %d periods; in the container: %s CPUs; host load average %s; RLIMIT_CPU %s"
             % ("none" if quota is None else "%.2f CPUs" % quota, cpus, window, throttled,
                inside or "?", load, "unlimited" if limit == "unlimited" else limit + " s"))
    killed = cell.verdict == "BLOCKED" and cell.started and code is not None and code > 128
    if cell.verdict == "ALLOWED":
        cell.detail = facts
    elif killed:
        cell = Cell("BLOCKED", secs, "%s; %s" % (cell.detail, facts), True, out, err, code)
    elif quota is not None and quota <= 1.0 and cpus <= 1.1:
        cell = Cell("BLOCKED", secs, "held to %.2f CPUs by its cgroup: %s" % (quota, facts),
                    True, out, err, code)
    else:
        cell = Cell("ALLOWED", secs, "nothing held it to 1 CPU (it got less only because "
                    "the host was busy): " + facts, True, out, err, code)
    if cell.verdict == "BLOCKED" and limit != "unlimited":
        cell.detail += " (and killed after %s s of CPU time)" % limit
    return cell


# ---- ordinary work


def run_task(env, task, config):
    name = "work-%s-%s-%s" % (env.tag, task.name, config.key)
    d = env.docker
    if task.kind == "exec":
        t0 = time.monotonic()
        try:
            r = d("run", "-d", "--name", name, "--label", "agentsbx-attacks=" + env.tag,
                  "--runtime", config.runtime, *config.flags, IMAGE,
                  *_python_cmd(task.code("exec_main")))
            if r.rc != 0:
                return Cell("FAILED", time.monotonic() - t0,
                            "did not start: " + _docker_error(r.err), False, r.out, r.err, r.rc)
            if not poll_until(lambda: "MAIN-READY" in d("logs", name).out, timeout=20):
                return Cell("FAILED", time.monotonic() - t0, "the main process never got ready",
                            True, "", "", None)
            t1 = time.monotonic()
            p = d.spawn("exec", name, "python3", "-c", task.code())
            rc, out, err = p.wait(timeout=30, check_timeout=False)
            secs = time.monotonic() - t1
            if rc is None:
                return Cell("FAILED", secs, "docker exec did not return in 30 s", True,
                            out, err, rc)
        finally:
            d.spawn("rm", "-f", name).wait(timeout=60, check_timeout=False)
    else:
        rc, out, err, secs, timed_out, code, oom = run_container(
            env, name, config, list(task.flags), _python_cmd(task.code()), 60, input=task.input)
        if timed_out:
            return Cell("FAILED", secs, "timed out", True, out, err, rc)
    line = _marker_line(out, "TASK-OK:" + task.name)
    if line is not None and rc == 0 and (not task.expect or task.expect in line):
        return Cell("OK", secs, line, True, out, err, rc)
    tail = [l for l in (out + "\n" + err).splitlines() if l.strip()]
    return Cell("FAILED", secs, "rc %s: %s" % (rc, " | ".join(tail[-3:])[:400]), True,
                out, err, rc)


# --------------------------------------------------------------------------
# The whole matrix


class Matrix:
    def __init__(self, env):
        self.env = env
        self.cells = {}  # (attack, config key) -> Cell
        self.work = {}   # (task, config key) -> Cell
        self.leftovers = []
        self.host_effects = []
        self.diagnostics = []
        self.seconds = 0.0
        self.partial = bool(ONLY)

    def cell(self, attack, config):
        return self.cells.get((attack, config))

    def diagnose_network(self):
        """What Docker asks of the runtime for its bridge network and for
        --network host, and what the runtime made of it: the bundle's
        config.json (network namespace, prestart hooks), the runtime's own
        log lines about the network, and the interfaces inside."""
        env, d = self.env, self.env.docker
        for runtime, flags in (("agentsbx", []), ("agentsbx-net", ["--network", "host"]),
                               ("runc", [])):
            name = "diag-%s-%s" % (env.tag, runtime)
            try:
                r = d("run", "-d", "--name", name, "--runtime", runtime, *flags, IMAGE,
                      "sleep", "60")
                if r.rc != 0:
                    self.diagnostics.append((runtime, flags, "did not start: " +
                                             _docker_error(r.err)))
                    continue
                cid = r.out.strip()
                bundle = os.path.join(d.exec_root, "containerd", "daemon",
                                      "io.containerd.runtime.v2.task", "moby", cid)
                spec = json.loads(read(os.path.join(bundle, "config.json")))
                ns = [n for n in spec["linux"]["namespaces"] if n["type"] == "network"]
                hooks = [" ".join([os.path.basename(h["path"])] + h.get("args", [])[:1])
                         for h in (spec.get("hooks") or {}).get("prestart", [])]
                logs = []
                if os.path.exists(os.path.join(bundle, "log.json")):
                    for line in read(os.path.join(bundle, "log.json")).splitlines():
                        try:
                            msg = json.loads(line).get("msg", "")
                        except ValueError:
                            continue
                        if "network" in msg or "egress" in msg:
                            logs.append(msg)
                inside = d("exec", name, "sh", "-c",
                           "ls /sys/class/net | tr '\\n' ' '; readlink /proc/self/ns/net").out
                self.diagnostics.append((runtime, flags, (
                    "config.json network namespace: %s; prestart hooks: %s; the runtime's "
                    "log: %s; inside: interfaces and namespace %s"
                    % (json.dumps(ns), ", ".join(hooks) or "none",
                       " / ".join(logs) or "nothing about the network", inside.strip()))))
            except Exception as e:
                self.diagnostics.append((runtime, flags, "diagnostics failed: %s" % e))
            finally:
                d.spawn("rm", "-f", name).wait(timeout=60, check_timeout=False)
        self.diagnostics.append(("host", [], "the Docker host's network namespace is %s" %
                                 os.readlink("/proc/%d/ns/net" % d.proc.pid)))
        for effect in self.check_host_firewall("the diagnostics", record=False):
            self.diagnostics.append(("host", [], effect))

    def check_host_firewall(self, after, key=None, record=True):
        """nftables tables left in the Docker host's network namespace (the
        suite's) after containers ran: recorded, then deleted, so that they
        cannot skew what runs next."""
        ns = ["nsenter", "--net=/run/netns/" + self.env.netns, "nft"]
        found = []
        r = run(ns + ["list", "tables"], timeout=20)
        for line in r.out.splitlines():
            parts = line.split()
            if len(parts) != 3 or parts[0] != "table":
                continue
            body = run(ns + ["list", "table", parts[1], parts[2]], timeout=20).out
            rules = "; ".join(l.strip() for l in body.splitlines()
                              if "daddr" in l or "oifname" in l or "hook" in l)
            effect = ("after %s: the Docker host's network namespace holds the nftables table "
                      "`%s %s` (%s); the suite deleted it" % (after, parts[1], parts[2], rules))
            found.append(effect)
            if record:
                self.host_effects.append(effect)
            if key and key in self.cells:
                self.cells[key].detail += (" [left the nftables table %s %s in the host's "
                                           "network namespace]" % (parts[1], parts[2]))
            run(ns + ["delete", "table", parts[1], parts[2]], timeout=20)
        return found

    def run(self):
        t0 = time.monotonic()
        env = self.env
        by_name = {a.name: a for a in ATTACKS}
        # Phase 1, alone on the machine (as far as this suite goes): the CPU
        # loop, one configuration at a time.
        if wanted("cpu-loop"):
            for c in CONFIGS:
                self.cells[("cpu-loop", c.key)] = run_attack(env, by_name["cpu-loop"], c)
        # Phase 2: everything else, WORKERS at a time, but for the attacks
        # that ask for the host's network namespace (phase 3).
        jobs = []
        later = []
        for a in ATTACKS:
            if a.kind == "cpu" or not wanted(a.name):
                continue
            for c in CONFIGS + ([NET_CONFIG] if a.net else []):
                (later if _host_network(a) else jobs).append(("attack", a, c))
        for t in TASKS:
            if wanted(t.name):
                for c in CONFIGS:
                    jobs.append(("task", t, c))
        # the slow ones first
        jobs.sort(key=lambda j: 0 if j[0] == "attack" and (j[1].net or j[1].resource) else 1)

        def one(job):
            kind, x, c = job
            try:
                if kind == "attack":
                    return job, run_attack(env, x, c)
                return job, run_task(env, x, c)
            except Exception as e:  # a harness failure is an ERROR cell, not a crash
                return job, Cell("ERROR", 0.0, "harness: %s: %s" % (type(e).__name__, e), False)

        with concurrent.futures.ThreadPoolExecutor(WORKERS) as ex:
            for (kind, x, c), cell in ex.map(one, jobs):
                (self.cells if kind == "attack" else self.work)[(x.name, c.key)] = cell
        self.check_host_firewall("the other attacks")
        if any(a.net and wanted(a.name) for a in ATTACKS):
            self.diagnose_network()
        # Phase 3, one at a time: a container in the host's network namespace
        # can change it for everything after (an egress table there drops
        # the listeners' replies to 172.17/16), so each is checked after.
        for job in later:
            (_, a, c), cell = one(job)
            self.cells[(a.name, c.key)] = cell
            self.check_host_firewall("%s under %s" % (a.name, c.title), (a.name, c.key))
        self.seconds = time.monotonic() - t0
        env.docker.remove_all()
        self.leftovers = procs.wait_clean(env.docker.leftovers, timeout=20)
        r = ip("-n", env.netns, "-br", "link", check=False)
        ifaces = sorted(l.split()[0].split("@")[0] for l in r.out.splitlines() if l.strip())
        if ifaces != ["docker0", "lo"]:
            self.leftovers.append("interfaces left in %s: %s" % (env.netns, ifaces))
        if not self.partial:
            write_results(self)


# --------------------------------------------------------------------------
# results.md


def _cell_text(cell):
    if cell is None:
        return "—"
    mark = {"BLOCKED": "BLOCKED", "ALLOWED": "**ALLOWED**", "N/A": "n/a", "ERROR": "ERROR",
            "OK": "OK", "FAILED": "**FAILED**"}[cell.verdict]
    if cell.verdict == "N/A" and cell.seconds == 0:
        return mark
    return "%s %.1f s" % (mark, cell.seconds)


def _md_escape(s):
    return s.replace("|", "\\|").replace("\n", " ")


def render(m):
    env = m.env
    v = env.versions
    L = []
    L.append("# Attacks on a plain `docker run`: agentsbx against runc")
    L.append("")
    L.append("Generated by `tests/attacks` (`make attacks`) on %s; do not edit by hand."
             % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    L.append("")
    L.append("- Host: Linux %s, %s CPUs, %s cgroups; Docker %s (Debian's dockerd, containerd "
             "shim runc v2); %s; %s (checkout %s)."
             % (v["kernel"], v["cpus"], _cgroup_mode(), v.get("dockerd", "?"), v["runc"],
                v["agentsbx"], v["commit"]))
    L.append("- Every program is run as `docker run --runtime RUNTIME [FLAGS] IMAGE python3 -c "
             "CODE` in a Python image (`debootstrap --variant=minbase --include=python3 "
             "bookworm`, imported with `docker import`, plus a setuid-root copy of id(1)). "
             "Each prints `ATTACK-SUCCEEDED:NAME` only when it succeeded.")
    L.append("- Columns:")
    for c in CONFIGS:
        L.append("  - **%s**: `%s`" % (c.title, c.cmdline()))
    L.append("  - **%s** (network attacks only): agentsbx with a policy file that sets "
             "`\"networkAllowed\": true` (otherwise the default)." % NET_CONFIG.title)
    L.append("- The one deviation from agentsbx's built-in default policy: `bindPrefixes` also "
             "holds `<data-root>/containers` of the suite's private dockerd (the counterpart of "
             "the built-in `/var/lib/docker/containers`, where Docker keeps each container's "
             "hosts, hostname, resolv.conf and /dev/shm). The host secret lives elsewhere. "
             "(`auditLog` names the run's own file, not /var/log/agentsbx: no decision changes.)")
    L.append("- `$SUITE_TMP` is the suite's temp dir (`/tmp/agentsbx-attacks-*`); the host "
             "secret is `$SUITE_TMP/host-secret/token` (mode 0600, a random token).")
    L.append("- The network: dockerd runs in a network namespace the suite makes, with "
             "Docker's default bridge (docker0, gateway %s), no iptables. That namespace is "
             "the \"Docker host\": it holds a service on its 127.0.0.1:%d, one on all its "
             "addresses (:%d), a fake metadata service on %s:80 and a reverse-shell catcher "
             "on %s:%d (TEST-NET-3, \"outside\"), all on its own lo. A second loopback service "
             "runs in the machine's own namespace. No packet leaves the suite's namespaces."
             % (GATEWAY, PORT_LOOPBACK, PORT_ALL, METADATA, OUTSIDE, PORT_REVSHELL))
    L.append("- Times are wall-clock seconds of each `docker run` (container start to removal "
             "of its process), %d at a time; the CPU loop ran alone, and so did each "
             "`--network host` run. Matrix: %.0f s." % (WORKERS, m.seconds))
    L.append("")
    L.append("## Attacks")
    L.append("")
    L.append("| attack | " + " | ".join(c.title for c in CONFIGS) + " |")
    L.append("|---|" + "---|" * len(CONFIGS))
    for a in ATTACKS:
        L.append("| %s | %s |" % (_md_escape(a.title), " | ".join(
            _cell_text(m.cell(a.name, c.key)) for c in CONFIGS)))
    L.append("")
    allowed = [a.name for a in ATTACKS if m.cell(a.name, "agentsbx") and
               m.cell(a.name, "agentsbx").verdict not in ("BLOCKED", "N/A")]
    if allowed:
        L.append("**agentsbx with no flags did not block: %s.** See the details below." %
                 ", ".join("`%s`" % n for n in allowed))
    else:
        L.append("agentsbx with no flags blocked every attack.")
    L.append("")
    L.append("## Network attacks with `networkAllowed: true`")
    L.append("")
    L.append("With networking allowed, agentsbx keeps Docker's network and drops egress to its "
             "`denyCidrs` (link-local and metadata, RFC 1918, loopback, CGNAT) with nftables "
             "in the container's namespace: the reverse shell to a public address is meant to "
             "get through.")
    L.append("")
    L.append("| attack | %s | %s |" % (NET_CONFIG.title, CONFIGS[0].title))
    L.append("|---|---|---|")
    for a in ATTACKS:
        if a.net:
            L.append("| %s | %s | %s |" % (_md_escape(a.title),
                                          _cell_text(m.cell(a.name, NET_CONFIG.key)),
                                          _cell_text(m.cell(a.name, "agentsbx"))))
    L.append("")
    if m.diagnostics:
        L.append("### What Docker asked of the runtime")
        L.append("")
        L.append("A container started by the suite with `docker run -d --runtime R [FLAGS] "
                 "IMAGE sleep 60`, read while it ran:")
        L.append("")
        for runtime, flags, text in m.diagnostics:
            L.append("- %s: %s" % ("`%s`" % " ".join(["--runtime", runtime] + flags)
                                   if runtime != "host" else "host", _md_escape(text)))
        L.append("")
    L.append("### Side effects on the Docker host")
    L.append("")
    if m.host_effects:
        for e in m.host_effects:
            L.append("- " + _md_escape(e))
    else:
        L.append("None: after the attacks, the Docker host's network namespace had no "
                 "nftables table.")
    L.append("")
    L.append("## Ordinary agent work")
    L.append("")
    L.append("| task | " + " | ".join(c.title for c in CONFIGS) + " |")
    L.append("|---|" + "---|" * len(CONFIGS))
    for t in TASKS:
        L.append("| %s | %s |" % (_md_escape(t.title), " | ".join(
            _cell_text(m.work.get((t.name, c.key))) for c in CONFIGS)))
    L.append("")
    L.append("## Details")
    L.append("")
    for a in ATTACKS:
        L.append("### %s (`attacks/%s.py`)" % (a.name, a.program))
        L.append("")
        L.append("%s. Criterion: %s" % (a.title, a.criterion))
        extra = ["-v", "HOSTDIR:/secret:ro"] if callable(a.flags) else a.flags
        if extra:
            L.append("The attack's own `docker run` flags: `%s`." % " ".join(extra))
        L.append("")
        for c in CONFIGS + ([NET_CONFIG] if a.net else []):
            cell = m.cell(a.name, c.key)
            if cell:
                L.append("- %s: %s — %s" % (c.title, cell.verdict, _md_escape(cell.detail)))
        L.append("")
    L.append("### Ordinary work")
    L.append("")
    for t in TASKS:
        for c in CONFIGS:
            cell = m.work.get((t.name, c.key))
            if cell:
                L.append("- %s, %s: %s — %s" % (t.name, c.title, cell.verdict,
                                                _md_escape(cell.detail)))
    L.append("")
    return "\n".join(L)


def _cgroup_mode():
    hs = procs.cgroup_hierarchies()
    v2 = [h for h in hs if os.path.exists(os.path.join(h, "cgroup.controllers"))]
    if v2 and len(hs) == len(v2):
        return "v2"
    return "hybrid (v1 controllers)" if v2 or any("unified" in h for h in hs) else "v1"


def write_results(m):
    text = render(m).replace(m.env.tmp, "$SUITE_TMP")
    tmp = RESULTS_MD + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, RESULTS_MD)
    m.results_text = text


def summary_tables(m):
    """The tables of results.md, for the terminal (and the details, for a
    partial run, which writes no results.md)."""
    text = getattr(m, "results_text", None) or render(m)
    out = []
    keep = False
    for line in text.splitlines():
        if line.startswith("## Details") and not m.partial:
            break
        if line.startswith("## "):
            keep = True
        if keep:
            out.append(line)
    return "\n".join(out)
