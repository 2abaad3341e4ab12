# SPDX-License-Identifier: Apache-2.0
"""
The real engines, each started by the test process with its own state
under the session's temp dir, for tests/e2e and tests/attacks:

  Docker      Debian's dockerd 20.10 (it starts its own containerd) with
              its own --data-root, --exec-root, --pidfile, socket and no
              iptables; `d("run", ...)` runs the matching Debian client
  Containerd  a containerd of its own (no CRI plugin) for `ctr`
  Podman      podman with its own --root/--runroot/--tmpdir and a private
              containers.conf and storage.conf (conmon 2.1)

An engine takes a session object `s` with: tmp (the temp dir), tag
([a-z0-9], names cgroup parents and the containerd namespace), problems
(the end-of-session list); Containerd and Podman also runtime,
runtime_default and rootfs_tar (tests/e2e/e2e_lib.py's Session).  Each
engine's stop() stops by PID what it started and returns what was left
(processes, mounts, cgroups); leftovers() lists what a removed container
must not leave behind.

Importing this module makes the process a subreaper (tests/lib/procs.py):
shims and conmon daemonize.

Environment:
  AGENTSBX      the runtime under test (default: ./agentsbx of this checkout)
  E2E_DOCKERD, E2E_DOCKER, E2E_CONTAINERD, E2E_CTR, E2E_PODMAN, E2E_CONMON
                the engine binaries (defaults: Debian's, by absolute path;
                /usr/local/bin/docker is a newer client, not used)
"""

import json
import os
import time

from procs import (DEFAULT_TIMEOUT, cgroup_children, kill_pids, leftover_report,
                   mounts_under, pids_with_arg, proc_cmdline, rmdir_cgroup_tree,
                   run, spawn, start_reaper, state_entries, stop_process,
                   umount_all_under)

start_reaper()

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

RUNTIME = os.path.abspath(os.environ.get("AGENTSBX") or os.path.join(REPO, "agentsbx"))
DOCKERD = os.environ.get("E2E_DOCKERD", "/usr/sbin/dockerd")
DOCKER = os.environ.get("E2E_DOCKER", "/usr/bin/docker")
CONTAINERD = os.environ.get("E2E_CONTAINERD", "/usr/bin/containerd")
CTR = os.environ.get("E2E_CTR", "/usr/bin/ctr")
PODMAN = os.environ.get("E2E_PODMAN", "/usr/bin/podman")
CONMON = os.environ.get("E2E_CONMON", "/usr/bin/conmon")

# Directories an engine creates outside its configured state, removed at the
# end if the session created them.
HOST_PATHS = ["/run/docker", "/run/containerd", "/run/agentsbx",
              "/run/" + os.path.basename(RUNTIME),
              "/var/lib/containers", "/run/containers", "/run/libpod",
              "/etc/containerd", "/etc/cni/net.d",
              "/opt/containerd"]  # dockerd's containerd makes its opt dir


# conmon leaves its console socket behind when the runtime's create fails
CONMON_SOCKETS = "/tmp/conmon-term.*"


def wait_ready(proc, name, ready, log_tail, timeout=60):
    """Poll a daemon just started until ready() says it answers; None, or
    why not (it exited, or did not answer in time) with its log's tail."""
    end = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            return "%s exited with status %s:\n%s" % (name, proc.rc, log_tail())
        if ready():
            return None
        if time.monotonic() > end:
            return "%s did not answer in %ds:\n%s" % (name, timeout, log_tail())
        time.sleep(0.2)


def stop_daemon(proc, name, dir, cgroup):
    """Stop a daemon we started, then anything still running with DIR in its
    argv (its children, shims), by PID; unmount what is left under DIR and
    remove the cgroup tree CGROUP.  Returns what was found left."""
    problems = []
    stop_process(proc, name)
    for pid in pids_with_arg(dir):
        problems.append("process left after %s stopped: %d %s"
                        % (name, pid, proc_cmdline(pid)))
        kill_pids([pid])
    problems += leftover_report("mounts left after %s stopped" % name, umount_all_under(dir))
    problems += leftover_report("cgroups left after %s stopped" % name, cgroup_children(cgroup))
    problems += leftover_report("cgroups that could not be removed", rmdir_cgroup_tree(cgroup))
    return problems


def _tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


# --------------------------------------------------------------------------
# Docker


class Docker:
    """Our own dockerd; `d("run", ...)` runs the matching Debian client.
    RUNTIMES is daemon.json's "runtimes"; IMAGE is removed at stop();
    CGROUP_PARENT is absolute: a relative parent is placed under dockerd's
    own cgroup (runc's rule), which on these machines is inside
    process_api."""

    def __init__(self, s, runtimes, cgroup_parent, image):
        self.s = s
        self.runtimes = runtimes
        self.cgroup_parent = cgroup_parent
        self.image = image
        self.dir = os.path.join(s.tmp, "docker")
        self.sock = os.path.join(self.dir, "docker.sock")
        self.data = os.path.join(self.dir, "data")
        self.exec_root = os.path.join(self.dir, "exec")
        self.log = os.path.join(self.dir, "dockerd.log")
        self.config = os.path.join(self.dir, "daemon.json")
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
        return _tail(self.log, n)

    def daemon_json(self):
        """"deprecated-key-path" keeps dockerd 20.10 from writing
        /etc/docker/key.json."""
        return json.dumps({"runtimes": self.runtimes,
                           "deprecated-key-path": os.path.join(self.dir, "key.json")},
                          indent=2) + "\n"

    def network_args(self):
        """No bridge, no iptables, no NAT, no forwarding."""
        return ["--bridge", "none", "--iptables=false", "--ip6tables=false",
                "--ip-forward=false", "--ip-masq=false", "--userland-proxy=false"]

    def daemon_argv(self):
        return ([DOCKERD, "--config-file", self.config,
                 "--data-root", self.data, "--exec-root", self.exec_root,
                 "--pidfile", os.path.join(self.dir, "docker.pid"),
                 "--host", "unix://" + self.sock] + self.network_args() +
                ["--cgroup-parent", self.cgroup_parent,
                 "--exec-opt", "native.cgroupdriver=cgroupfs"])

    def start(self):
        """None once dockerd answers, else why not."""
        for d in (self.dir, self.data, self.exec_root):
            os.makedirs(d, exist_ok=True)
        with open(self.config, "w") as f:
            f.write(self.daemon_json())
        with open(self.log, "wb") as logf:
            self.proc = spawn(self.daemon_argv(), stdout=logf, stderr=logf)

        def ready():
            return os.path.exists(self.sock) and self(
                "version", "--format", "{{.Server.Version}}", timeout=20).rc == 0
        return wait_ready(self.proc, "dockerd", ready, self.log_tail)

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
        if self.proc is not None and self.proc.poll() is None:
            self.remove_all()
            self("rmi", "-f", self.image)
        # dockerd stops its containerd; make sure, by PID, and the shims.
        return stop_daemon(self.proc, "dockerd", self.dir, self.cgroup_parent)


# --------------------------------------------------------------------------
# containerd + ctr

# The daemon's own files, all under the test's dir; the CRI suite
# (tests/cri) adds its CRI plugin section to this.
CONTAINERD_BASE_TOML = """version = 2
root = "%(dir)s/root"
state = "%(dir)s/state"
%(disabled)s

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
# ctr only: no CRI plugin.
CONTAINERD_TOML = CONTAINERD_BASE_TOML.replace(
    "%(disabled)s", 'disabled_plugins = ["io.containerd.grpc.v1.cri"]')



# The README snippet for containerd's CRI plugin (Kubernetes), with the
# runtime's path filled in.  ctr's --runc-binary/--runc-root set the same

class Containerd:
    """A containerd of our own for `ctr`; the runtime is given with the
    runc-v2 shim's --runc-binary (the session's runtime under its default
    policy)."""

    def __init__(self, s, namespace, image):
        self.s = s
        self.dir = os.path.join(s.tmp, "ctd")
        self.sock = os.path.join(self.dir, "containerd.sock")
        self.log = os.path.join(self.dir, "containerd.log")
        self.ns = namespace
        self.runc_root = os.path.join(self.dir, "runc-root")
        # the shim hands the runtime --root <--runc-root>/<namespace>
        self.state_root = os.path.join(self.runc_root, self.ns)
        self.image = image
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
        return _tail(self.log, n)

    def start(self):
        """None once containerd answers, else why not."""
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
        return wait_ready(self.proc, "containerd",
                          lambda: os.path.exists(self.sock) and
                          self("version", timeout=20).rc == 0, self.log_tail)

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
        if self.proc is not None and self.proc.poll() is None:
            self.remove_all()
            self("images", "rm", self.image)
            self("namespaces", "rm", self.ns)
        return stop_daemon(self.proc, "containerd", self.dir, self.ns)


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
    """podman with its own storage and configuration; IMAGE is imported from
    the session's rootfs_tar by setup()."""

    def __init__(self, s, image):
        self.s = s
        self.dir = os.path.join(s.tmp, "podman")
        self.image = image
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
