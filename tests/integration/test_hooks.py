# SPDX-License-Identifier: Apache-2.0
"""OCI lifecycle hooks (config.md "POSIX-platform Hooks", runtime.md
"Lifecycle"): where each kind runs, what it reads on stdin, in what order
the six kinds run, failures, timeouts, output, args and env.

Every hook here is tests/integration/hooks/record.sh (a #!/bin/sh script:
busybox sh in the container, /bin/sh on the host), which records what it
saw as files in LOGDIR/KIND/ (see the script) and appends KIND to
LOGDIR/order.  LOGDIR is a host directory, bind-mounted at /hooklog in the
container for the startContainer hook, which runs inside the container and
is found in the container's rootfs (/hooks/record.sh).

Expected, per kind:
  prestart, createRuntime  runtime namespace (host mount ns), after the
                           container's namespaces exist, before pivot_root;
  createContainer          the container's mount ns, before pivot_root (it
                           sees the host's /, with the container's rootfs
                           mounted at its bundle path);
  startContainer           inside the container (its rootfs is /), after
                           `start`, before the user process;
  poststart                runtime namespace, after the user process
                           started, before `start` returns;
  poststop                 runtime namespace, on `delete`.
State on stdin: id, bundle, status (creating, creating, creating, created,
running, stopped) and pid: the init's pid as the runtime sees it for hooks
in the runtime namespace, as the container sees it (1: it has its own pid
namespace) for createContainer and startContainer (runtime.md "State").

runc 1.1.5 runs the poststart hooks during `create` (with status
"created"), lets a startContainer failure pass, waits for a timed-out
hook's children, and does not
log hook output: the tests of those take `agentsbx_only`.  Error message
contents (kind, path, "exited with status N") are agentsbx's format; for
another runtime only the exit status and the hook's stderr are looked for.
"""

import json
import os
import shutil
import time

import pytest

from conftest import (add_mount, find_cgroups, is_agentsbx, make_spec, pid_alive,
                      wait_for, write_spec)

HOOK_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hooks",
                        "record.sh")
KINDS = ["prestart", "createRuntime", "createContainer", "startContainer",
         "poststart", "poststop"]
CREATE_KINDS = KINDS[:3]
PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IN_CONTAINER_SCRIPT = "/hooks/record.sh"
IN_CONTAINER_LOGDIR = "/hooklog"
MARKER = ".hook-rootfs-marker"
# The user process: shows it ran, then stays until killed.
USER_PROCESS = ["sh", "-c", "touch /hooklog/user-ran; exec sleep 1000"]


def host_ns(kind):
    return os.readlink("/proc/self/ns/" + kind)


class Hooks:
    """A bundle whose config has record.sh hooks; the log directory."""

    def __init__(self, env, args=None, kinds=KINDS, name="bundle"):
        self.env = env
        self.logdir = env.hostdir(name + "-hooklog")
        # The script, executable whatever mode the checkout gave it.
        bindir = os.path.join(env.tmp, name + "-hookbin")
        os.mkdir(bindir)
        os.chmod(bindir, 0o755)
        self.script = os.path.join(bindir, "record.sh")
        shutil.copyfile(HOOK_SRC, self.script)
        os.chmod(self.script, 0o755)
        self.bundle = env.make_bundle(name)
        rootfs = os.path.join(self.bundle, "rootfs")
        os.makedirs(os.path.join(rootfs, "hooks"))
        shutil.copyfile(HOOK_SRC, os.path.join(rootfs, IN_CONTAINER_SCRIPT[1:]))
        os.chmod(os.path.join(rootfs, IN_CONTAINER_SCRIPT[1:]), 0o755)
        open(os.path.join(rootfs, MARKER), "w").close()
        os.makedirs(os.path.join(rootfs, IN_CONTAINER_LOGDIR[1:]))
        self.spec = make_spec(USER_PROCESS if args is None else args)
        add_mount(self.spec, IN_CONTAINER_LOGDIR, "bind", self.logdir,
                  ["rbind", "rw"])
        self.spec["hooks"] = {}
        for kind in kinds:
            self.add(kind)

    def hook(self, kind, status=0, nap=0, how="bg", timeout=None, env=None,
             args=None, path=None):
        inside = kind == "startContainer"
        script = IN_CONTAINER_SCRIPT if inside else self.script
        logdir = IN_CONTAINER_LOGDIR if inside else self.logdir
        h = {"path": path or script,
             "args": args if args is not None else
             [script, logdir, kind, str(status), str(nap), how],
             "env": env if env is not None else [PATH_ENV]}
        if timeout is not None:
            h["timeout"] = timeout
        return h

    def add(self, kind, **kw):
        self.spec["hooks"].setdefault(kind, []).append(self.hook(kind, **kw))

    def set(self, kind, **kw):
        self.spec["hooks"][kind] = [self.hook(kind, **kw)]

    def write(self):
        write_spec(self.bundle, self.spec)

    # ---- what the hooks recorded -----------------------------------------
    def ran(self, kind):
        return os.path.isdir(os.path.join(self.logdir, kind))

    def read(self, kind, what):
        with open(os.path.join(self.logdir, kind, what)) as f:
            return f.read()

    def fact(self, kind, what):
        return self.read(kind, what).strip()

    def state(self, kind):
        text = self.read(kind, "stdin")
        try:
            return json.loads(text)
        except ValueError:
            raise AssertionError("%s hook: stdin is not JSON: %r" % (kind, text))

    def order(self):
        try:
            with open(os.path.join(self.logdir, "order")) as f:
                return f.read().split()
        except FileNotFoundError:
            return []


def assert_nothing_left(env, cid):
    """A failed create must leave nothing: no state, no mount, no process,
    no cgroup (checked now, before the teardown cleans anything)."""
    assert os.listdir(env.root) == [], os.listdir(env.root)
    rc, out, err = env.rt("state", cid, check=False)
    assert rc != 0 and "does not exist" in err, (rc, out, err)
    with open("/proc/self/mountinfo") as f:
        mounts = [l for l in f if env.tmp in l]
    assert mounts == []
    assert env.processes_in_bundles() == []
    assert find_cgroups([cid]) == []


def read_log(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


# ---- where and when they run, what they read --------------------------------

def run_lifecycle(env, h, cid, cwd=None, strict=True):
    """create, start, kill, delete with every hook; return the init pid and
    its mount and net namespaces (read while it ran).  strict: `start` must
    return only after the startContainer hooks finished and poststart ran;
    else wait for them (for tests about something else)."""
    h.write()
    env.track_id(cid)
    env.rt("create", "--bundle", h.bundle, cid, cwd=cwd)
    st = env.state(cid)
    pid = st["pid"]
    ns = {k: os.readlink("/proc/%d/ns/%s" % (pid, k)) for k in ("mnt", "net")}
    assert h.order() == CREATE_KINDS, "after create: %s" % h.order()
    assert not h.ran("startContainer")
    env.rt("start", cid, cwd=cwd)
    if strict:
        assert h.order() == CREATE_KINDS + ["startContainer", "poststart"], \
            "when start returned: %s" % h.order()
    else:
        wait_for(lambda: len(h.order()) == 5, what="startContainer and poststart")
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")
    assert not h.ran("poststop")
    env.rt("delete", cid, cwd=cwd)
    assert h.order()[-1] == "poststop" and sorted(h.order()) == sorted(KINDS), h.order()
    return pid, ns


def check_where(h, pid, ns, bundle, strict=True):
    host_mnt, host_net = host_ns("mnt"), host_ns("net")
    assert ns["mnt"] != host_mnt and ns["net"] != host_net
    rootfs = os.path.join(bundle, "rootfs")
    rs = os.stat(rootfs)
    rootfs_id = "%d:%d" % (rs.st_dev, rs.st_ino)
    hs = os.stat("/")
    host_root_id = "%d:%d" % (hs.st_dev, hs.st_ino)

    for kind in ("prestart", "createRuntime", "poststart", "poststop"):
        assert h.fact(kind, "mntns") == host_mnt, kind
        assert h.fact(kind, "netns") == host_net, kind
        assert h.fact(kind, "rootmark") == "host", kind
        assert h.fact(kind, "rootid") == host_root_id, kind
    # prestart and createRuntime: the container's namespaces exist already.
    for kind in ("prestart", "createRuntime"):
        assert h.fact(kind, "pid_mntns") == ns["mnt"], kind
        assert h.fact(kind, "pid_netns") == ns["net"], kind
        # before pivot_root: the init still has the runtime's image
        assert "sleep 1000" not in h.fact(kind, "pid_cmdline"), kind
        assert h.fact(kind, "user_ran") == "no", kind

    # createContainer: the container's mount ns, before pivot_root: the
    # host's /, the rootfs mounted at its bundle path.
    assert h.fact("createContainer", "mntns") == ns["mnt"]
    assert h.fact("createContainer", "netns") == ns["net"]
    assert h.fact("createContainer", "rootmark") == "host"
    assert h.fact("createContainer", "rootid") == host_root_id
    points = [l.split()[4] for l in h.read("createContainer", "mountinfo").splitlines()]
    assert rootfs in points, "rootfs %s not a mount point in %s" % (rootfs, points)
    assert os.path.join(rootfs, "proc") in points, points
    assert h.fact("createContainer", "user_ran") == "no"

    # startContainer: inside the container, before the user process.
    assert h.fact("startContainer", "mntns") == ns["mnt"]
    assert h.fact("startContainer", "netns") == ns["net"]
    assert h.fact("startContainer", "rootmark") == "container"
    assert h.fact("startContainer", "rootid") == rootfs_id
    assert h.fact("startContainer", "cwd") == "/"
    assert h.fact("startContainer", "user_ran") == "no"
    points = [l.split()[4] for l in h.read("startContainer", "mountinfo").splitlines()]
    assert "/" in points and "/proc" in points

    # poststart: after the user process was executed.
    if strict:
        cmd = h.fact("poststart", "pid_cmdline")
        assert cmd in ("sh -c " + USER_PROCESS[2], "sleep 1000"), \
            "poststart hook: the init runs %r, not the user process yet" % cmd


def check_states(h, cid, pid, bundle):
    # (the pid of createContainer and startContainer: see
    # test_container_namespace_hooks_get_the_pid_the_container_sees)
    want = {"prestart": ("creating", pid), "createRuntime": ("creating", pid),
            "createContainer": ("creating", None), "startContainer": ("created", None),
            "poststart": ("running", pid), "poststop": ("stopped", None)}
    wrong = []
    for kind in KINDS:
        st = h.state(kind)
        status, want_pid = want[kind]
        for key, value in (("id", cid), ("bundle", bundle), ("status", status),
                           ("pid", want_pid)):
            if value is not None and st.get(key) != value:
                wrong.append("%s hook: %s is %r, want %r" % (kind, key, st.get(key), value))
        if not isinstance(st.get("ociVersion"), str) or not st["ociVersion"]:
            wrong.append("%s hook: no ociVersion" % kind)
    assert not wrong, "state on the hooks' stdin (init pid %d):\n  %s" % (
        pid, "\n  ".join(wrong))


def test_hooks_create_start_delete(env, agentsbx_only):
    # Where each kind ran; the order in which they finished.  The
    # startContainer hook takes a second: `start` must still return only
    # after it, the exec of the user process and the poststart hook.
    h = Hooks(env)
    h.set("startContainer", nap=1)
    cid = env.new_id()
    pid, ns = run_lifecycle(env, h, cid)
    check_where(h, pid, ns, os.path.realpath(h.bundle))


def test_hooks_where_create_start_delete(env, agentsbx_only):
    # The same, without insisting on `start` waiting (see above).
    h = Hooks(env)
    cid = env.new_id()
    pid, ns = run_lifecycle(env, h, cid, strict=False)
    check_where(h, pid, ns, os.path.realpath(h.bundle), strict=False)


def test_hooks_state_on_stdin_create_start_delete(env, agentsbx_only):
    h = Hooks(env)
    cid = env.new_id()
    pid, ns = run_lifecycle(env, h, cid, strict=False)
    check_states(h, cid, pid, os.path.realpath(h.bundle))


def test_container_namespace_hooks_get_the_pid_the_container_sees(env, agentsbx_only):
    # runtime.md "State": pid "for hooks executed in the container
    # namespace, it is the pid as seen by the container" -- createContainer
    # and startContainer run there (config.md), and the container has its
    # own pid namespace, in which its init is 1 (runc: Getpid() in init).
    h = Hooks(env)
    cid = env.new_id()
    pid, ns = run_lifecycle(env, h, cid, strict=False)
    got = {kind: h.state(kind).get("pid") for kind in KINDS}
    assert got["prestart"] == pid and got["poststart"] == pid, got
    assert got["createContainer"] == 1 and got["startContainer"] == 1, \
        "init pid %d on the host; the hooks' state says %s" % (pid, got)


def test_hooks_run_order_and_where(env, agentsbx_only):
    # `run` in the foreground: the same six, in order, poststop when `run`
    # deletes the container after its process exits.
    h = Hooks(env, args=["sh", "-c", "touch /hooklog/user-ran; sleep 1"])
    h.set("startContainer", nap=1)
    h.write()
    cid = env.new_id()
    rc, out, err = env.run(bundle=h.bundle, cid=cid)
    assert rc == 0, err
    assert h.order() == KINDS
    for kind in KINDS:
        assert h.fact(kind, "done") == "done", kind
    assert "sleep 1" in h.fact("poststart", "pid_cmdline"), \
        "poststart ran before the user process: %r" % h.fact("poststart", "pid_cmdline")
    st = h.state("startContainer")
    assert st["id"] == cid and st["status"] == "created", st
    assert h.fact("startContainer", "rootmark") == "container"
    assert h.fact("createContainer", "rootmark") == "host"
    assert h.fact("createContainer", "mntns") != host_ns("mnt")
    assert h.fact("prestart", "mntns") == host_ns("mnt")
    assert h.fact("poststop", "mntns") == host_ns("mnt")
    assert h.state("poststop")["status"] == "stopped"
    assert os.listdir(env.root) == []


def test_hooks_run_states(env, agentsbx_only):
    h = Hooks(env, args=["sh", "-c", "touch /hooklog/user-ran; sleep 0.5"])
    h.write()
    cid = env.new_id()
    rc, out, err = env.run(bundle=h.bundle, cid=cid)
    assert rc == 0, err
    pid = h.state("prestart")["pid"]
    assert isinstance(pid, int) and pid > 1
    check_states(h, cid, pid, os.path.realpath(h.bundle))


def test_hooks_run_detached(env, agentsbx_only):
    h = Hooks(env)
    h.set("startContainer", nap=1)
    h.write()
    cid = env.track_id(env.new_id())
    env.rt("run", "-d", "--bundle", h.bundle, cid)
    assert h.order() == KINDS[:5]
    assert env.status(cid) == "running"
    env.rt("delete", "--force", cid)
    assert sorted(h.order()) == sorted(KINDS)


def test_hooks_cwd_is_the_bundle(env):
    # runc and crun run the runtime-namespace hooks in the bundle directory
    # (hooks written for them read ./config.json), wherever the runtime was
    # started from (here: /).  No poststart: runc 1.1.5 runs it at create.
    h = Hooks(env, args=["true"], kinds=["prestart", "createRuntime",
                                         "createContainer", "poststop"])
    h.write()
    rc, out, err = env.run(bundle=h.bundle, cid=env.new_id(), cwd="/")
    assert rc == 0, err
    assert sorted(h.order()) == sorted(h.spec["hooks"]), h.order()
    bundle = os.path.realpath(h.bundle)
    wrong = ["%s hook cwd %r" % (kind, h.fact(kind, "cwd"))
             for kind in ("prestart", "createRuntime", "poststop")
             if h.fact(kind, "cwd") != bundle]
    # runc: the rootfs, crun: the bundle
    if h.fact("createContainer", "cwd") not in (bundle, os.path.join(bundle, "rootfs")):
        wrong.append("createContainer hook cwd %r" % h.fact("createContainer", "cwd"))
    assert not wrong, "want the bundle %s (runtime started in /): %s" % (bundle, wrong)


def test_hook_args_and_env_passed_exactly(env):
    # path is /bin/sh, args[0] something else: argv must be args exactly
    # (argv[0] included), envp must be env exactly (nothing added).
    h = Hooks(env, kinds=[])
    for kind in KINDS:
        inside = kind == "startContainer"
        script = IN_CONTAINER_SCRIPT if inside else h.script
        logdir = IN_CONTAINER_LOGDIR if inside else h.logdir
        # (busybox, the container's /bin/sh, picks its applet by argv[0])
        argv0 = "sh" if inside else "argv0-" + kind
        args = [argv0, script, logdir, kind, "0", "0", "bg"]
        envv = ["A=1", "B=with space", "EMPTY=", "DUP=x", PATH_ENV, "Z=" + kind]
        h.spec["hooks"][kind] = [h.hook(kind, path="/bin/sh", args=args, env=envv)]
    h.spec["process"]["args"] = ["true"]
    h.write()
    rc, out, err = env.run(bundle=h.bundle, cid=env.new_id())
    assert rc == 0, err
    assert sorted(h.order()) == sorted(KINDS), h.order()
    for kind in KINDS:
        inside = kind == "startContainer"
        script = IN_CONTAINER_SCRIPT if inside else h.script
        logdir = IN_CONTAINER_LOGDIR if inside else h.logdir
        argv0 = "sh" if inside else "argv0-" + kind
        assert h.read(kind, "cmdline").split("\n")[:-1] == \
            [argv0, script, logdir, kind, "0", "0", "bg"], kind
        assert h.read(kind, "environ").split("\n")[:-1] == \
            ["A=1", "B=with space", "EMPTY=", "DUP=x", PATH_ENV, "Z=" + kind], kind


def hook_without_args(env, hook_env):
    """A createRuntime hook with no args (and env hook_env, or none when
    None), run with HOOKMARK in the runtime's environment: (cmdline,
    environ, stdin) as the hook saw them."""
    h = Hooks(env, args=["true"], kinds=[])
    probe = os.path.join(env.tmp, "noargs.sh")
    out = os.path.join(h.logdir, "noargs")
    with open(probe, "w") as f:
        f.write("#!/bin/sh\n"
                "/bin/cat < /proc/self/cmdline > %s.cmdline\n"
                "/bin/cat < /proc/self/environ > %s.environ\n"
                "/bin/cat > %s.stdin\n" % (out, out, out))
    os.chmod(probe, 0o755)
    hook = {"path": probe}
    if hook_env is not None:
        hook["env"] = hook_env
    h.spec["hooks"]["createRuntime"] = [hook]
    h.write()
    cid = env.new_id()
    rc, out_, err = env.run(bundle=h.bundle, cid=cid,
                            env=dict(os.environ, HOOKMARK="issue15"))
    assert rc == 0, err
    got = []
    for what in ("cmdline", "environ", "stdin"):
        with open(out + "." + what, "rb") as f:
            got.append(f.read())
    assert json.loads(got[2])["id"] == cid
    # the kernel runs "/bin/sh PATH" for a #! script run as argv [PATH]
    assert got[0].split(b"\0")[:-1] == [b"/bin/sh", probe.encode()]
    return got[1].split(b"\0")[:-1]


def test_hook_without_env_gets_the_runtimes_environment(env):
    # runc and crun: a hook without "env" runs with the environment the
    # runtime was called with (issue 15).
    assert b"HOOKMARK=issue15" in hook_without_args(env, None)


def test_hook_with_empty_env_gets_none(env):
    assert hook_without_args(env, []) == []


def test_hooks_several_of_a_kind_run_in_order(env):
    h = Hooks(env, args=["true"], kinds=[])
    for i in range(3):
        h.spec["hooks"].setdefault("createRuntime", []).append(
            h.hook("createRuntime", args=[h.script, h.logdir, "cr%d" % i]))
    h.write()
    rc, out, err = env.run(bundle=h.bundle, cid=env.new_id())
    assert rc == 0, err
    assert h.order() == ["cr0", "cr1", "cr2"]


# ---- failures ---------------------------------------------------------------

FAIL_STATUS = 7


@pytest.fixture
def ours(runtime_version):
    """True for agentsbx: its messages have a known format."""
    return is_agentsbx(runtime_version)


def fail_hook(h, kind):
    """kind's hook exits FAIL_STATUS after writing to stderr."""
    h.set(kind, status=FAIL_STATUS)


def assert_hook_error(text, kind, path, ours=True):
    """The error names the hook, its exit status and quotes its stderr."""
    assert "hook-stderr-%s" % kind in text, "the hook's stderr is not quoted: %s" % text
    assert str(FAIL_STATUS) in text, text
    if ours:  # "createRuntime hook /path (#0) exited with status 7: <stderr>"
        assert "%s hook %s (#0) exited with status %d" % (kind, path, FAIL_STATUS) \
            in text, text


@pytest.mark.parametrize("kind", CREATE_KINDS)
def test_failing_create_hook_fails_create_leaves_nothing(env, ours, kind):
    h = Hooks(env)
    fail_hook(h, kind)
    h.write()
    cid = env.track_id(env.new_id())
    rc, out, err = env.rt("create", "--bundle", h.bundle, cid, check=False)
    assert rc != 0, "create succeeded although the %s hook failed" % kind
    assert_hook_error(err, kind, h.script, ours)
    # the hooks after it did not run (poststop: see below)
    n = CREATE_KINDS.index(kind) + 1
    assert [k for k in h.order() if k != "poststop"] == CREATE_KINDS[:n], h.order()
    assert_nothing_left(env, cid)


@pytest.mark.parametrize("kind", CREATE_KINDS)
def test_failing_create_hook_runs_poststop(env, kind):
    # runtime.md "Lifecycle": when a prestart, createRuntime or
    # createContainer hook fails, the runtime "MUST generate an error, stop
    # the container, and continue the lifecycle at step 12" -- destroy the
    # container -- and step 13: "The poststop hooks MUST be invoked".
    h = Hooks(env)
    fail_hook(h, kind)
    h.write()
    cid = env.track_id(env.new_id())
    rc, out, err = env.rt("create", "--bundle", h.bundle, cid, check=False)
    assert rc != 0
    n = CREATE_KINDS.index(kind) + 1
    assert h.order() == CREATE_KINDS[:n] + ["poststop"], h.order()
    st = h.state("poststop")
    assert st["id"] == cid and st["status"] == "stopped", st
    assert_nothing_left(env, cid)


@pytest.mark.parametrize("kind", CREATE_KINDS)
def test_failing_create_hook_fails_run(env, ours, kind):
    h = Hooks(env, args=["sh", "-c", "touch /hooklog/user-ran"])
    fail_hook(h, kind)
    h.write()
    cid = env.new_id()
    rc, out, err = env.run(bundle=h.bundle, cid=cid)
    assert rc != 0
    assert_hook_error(err, kind, h.script, ours)
    assert not os.path.exists(os.path.join(h.logdir, "user-ran"))
    assert "startContainer" not in h.order()
    assert_nothing_left(env, cid)


def test_failing_create_hook_logs_to_log_file(env, ours):
    h = Hooks(env)
    fail_hook(h, "createRuntime")
    h.write()
    log = os.path.join(env.tmp, "runtime.log")
    cid = env.track_id(env.new_id())
    rc, out, err = env.rt("--log", log, "create", "--bundle", h.bundle, cid,
                          check=False)
    assert rc != 0
    assert_hook_error(read_log(log), "createRuntime", h.script, ours)
    assert_nothing_left(env, cid)


def test_failing_hook_not_executable(env, ours):
    h = Hooks(env)
    h.spec["hooks"]["createRuntime"] = [{"path": "/no/such/hook", "args": ["x"]}]
    h.write()
    cid = env.track_id(env.new_id())
    rc, out, err = env.rt("create", "--bundle", h.bundle, cid, check=False)
    assert rc != 0
    assert "/no/such/hook" in err, err
    assert "no such file" in err.lower(), err
    if ours:
        assert "createRuntime hook /no/such/hook (#0) could not be executed" in err, err
    assert not h.ran("createContainer")
    assert_nothing_left(env, cid)


def test_failing_start_container_hook_fails_start(env, agentsbx_only):
    h = Hooks(env)
    fail_hook(h, "startContainer")
    h.write()
    cid = env.track_id(env.new_id())
    env.rt("create", "--bundle", h.bundle, cid)
    pid = env.state(cid)["pid"]
    rc, out, err = env.rt("start", cid, check=False)
    # the user process never ran, the init is gone
    wait_for(lambda: not pid_alive(pid), what="init to exit")
    assert not os.path.exists(os.path.join(h.logdir, "user-ran"))
    assert rc != 0, "start succeeded although the startContainer hook failed"
    assert_hook_error(err, "startContainer", IN_CONTAINER_SCRIPT)
    assert "poststart" not in h.order(), \
        "poststart ran although startContainer failed: %s" % h.order()
    assert env.status(cid) in (None, "stopped")
    env.rt("delete", "--force", cid)
    assert os.listdir(env.root) == []


def test_failing_start_container_hook_fails_run(env, agentsbx_only):
    h = Hooks(env, args=["sh", "-c", "touch /hooklog/user-ran"])
    fail_hook(h, "startContainer")
    h.write()
    cid = env.new_id()
    rc, out, err = env.run(bundle=h.bundle, cid=cid)
    assert rc != 0
    assert_hook_error(err, "startContainer", IN_CONTAINER_SCRIPT)
    assert not os.path.exists(os.path.join(h.logdir, "user-ran"))
    assert "poststart" not in h.order(), \
        "poststart ran although startContainer failed: %s" % h.order()
    assert_nothing_left(env, cid)


def test_failing_poststart_hook_fails_start_and_stops(env, agentsbx_only):
    # runtime.md, lifecycle step 9: "If any poststart hook fails, the runtime
    # MUST generate an error, stop the container, and continue the lifecycle
    # at step 12" (delete, which runs poststop), as runc does.
    h = Hooks(env)
    fail_hook(h, "poststart")
    h.write()
    log = os.path.join(env.tmp, "runtime.log")
    cid = env.track_id(env.new_id())
    env.rt("create", "--bundle", h.bundle, cid)
    rc, out, err = env.rt("--log", log, "start", cid, check=False)
    assert rc != 0
    assert_hook_error(err, "poststart", h.script)
    env.wait_status(cid, "stopped")
    env.rt("delete", cid)
    assert sorted(h.order()) == sorted(KINDS)


def test_failing_poststop_hook_only_warns(env, agentsbx_only):
    h = Hooks(env)
    fail_hook(h, "poststop")
    h.add("poststop")  # a second one still runs
    h.spec["hooks"]["poststop"][1]["args"][2] = "poststop2"
    h.write()
    log = os.path.join(env.tmp, "runtime.log")
    cid = env.track_id(env.new_id())
    env.rt("create", "--bundle", h.bundle, cid)
    env.rt("start", cid)
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")
    rc, out, err = env.rt("--log", log, "delete", cid, check=False)
    assert rc == 0, err
    text = read_log(log)
    assert "warn" in text, text
    assert_hook_error(text, "poststop", h.script)
    assert h.order()[-2:] == ["poststop", "poststop2"], h.order()
    assert os.listdir(env.root) == []


def test_failing_poststop_hook_run_exit_status(env, ours):
    # run: the container's exit status, not the hook's.
    h = Hooks(env, args=["sh", "-c", "exit 3"], kinds=CREATE_KINDS + ["poststop"])
    fail_hook(h, "poststop")
    h.write()
    rc, out, err = env.run(bundle=h.bundle, cid=env.new_id())
    assert rc == 3, err
    assert_hook_error(err, "poststop", h.script, ours)
    assert os.listdir(env.root) == []


# ---- timeouts -----------------------------------------------------------------

TIMEOUT = 2


def timed(fn):
    t0 = time.monotonic()
    r = fn()
    return r, time.monotonic() - t0


def assert_timeout_error(text, kind, path, ours):
    if ours:  # "createRuntime hook /path (#0) timed out after 2 s and was killed"
        assert "%s hook %s (#0) timed out after %d s and was killed" % (
            kind, path, TIMEOUT) in text, text
    else:
        assert "timeout" in text.lower() or "timed out" in text.lower(), text


@pytest.mark.parametrize("kind", CREATE_KINDS)
def test_hook_timeout_kills_it_create(env, ours, kind):
    # The hook itself sleeps (it execs sleep): killed at the timeout.
    h = Hooks(env)
    h.set(kind, nap=60, how="fg", timeout=TIMEOUT)
    h.write()
    cid = env.track_id(env.new_id())
    (rc, out, err), took = timed(lambda: env.rt(
        "create", "--bundle", h.bundle, cid, check=False, timeout=90))
    assert rc != 0
    assert took < TIMEOUT + 1, "create returned after %.2f s (timeout %d s)" % (took, TIMEOUT)
    assert took >= TIMEOUT - 0.1, "create returned after %.2f s" % took
    assert_timeout_error(err, kind, h.script, ours)
    assert not os.path.exists(os.path.join(h.logdir, kind, "done"))
    assert_nothing_left(env, cid)


@pytest.mark.parametrize("kind", ["prestart", "createRuntime"])
def test_hook_timeout_kills_the_hooks_children(env, agentsbx_only, kind):
    # The hook waits for a child of its process group, which holds its
    # stdout and stderr: the timeout kills both, and the runtime does not
    # wait for the pipes (runc 1.1.5 does, for the child's whole sleep).
    h = Hooks(env)
    h.set(kind, nap=60, how="bg", timeout=TIMEOUT)
    h.write()
    cid = env.track_id(env.new_id())
    (rc, out, err), took = timed(lambda: env.rt(
        "create", "--bundle", h.bundle, cid, check=False, timeout=90))
    assert rc != 0
    assert took < TIMEOUT + 1, "create returned after %.2f s (timeout %d s)" % (took, TIMEOUT)
    assert_timeout_error(err, kind, h.script, True)
    sleeper = int(h.fact(kind, "sleeper"))
    wait_for(lambda: not pid_alive(sleeper), timeout=1, what="the hook's child to die")
    assert_nothing_left(env, cid)


def test_hook_timeout_kills_it_create_container_children(env, agentsbx_only):
    # createContainer runs in the container: its children die with it.
    h = Hooks(env)
    h.set("createContainer", nap=60, how="bg", timeout=TIMEOUT)
    h.write()
    cid = env.track_id(env.new_id())
    (rc, out, err), took = timed(lambda: env.rt(
        "create", "--bundle", h.bundle, cid, check=False, timeout=90))
    assert rc != 0
    assert took < TIMEOUT + 1, "create returned after %.2f s (timeout %d s)" % (took, TIMEOUT)
    assert_timeout_error(err, "createContainer", h.script, True)
    assert_nothing_left(env, cid)


def test_hook_timeout_kills_it_start(env, agentsbx_only):
    h = Hooks(env)
    h.set("startContainer", nap=60, timeout=TIMEOUT)
    h.write()
    cid = env.track_id(env.new_id())
    env.rt("create", "--bundle", h.bundle, cid)
    pid = env.state(cid)["pid"]
    (rc, out, err), took = timed(lambda: env.rt("start", cid, check=False, timeout=90))
    assert took < TIMEOUT + 1, "start returned after %.2f s" % took
    wait_for(lambda: not pid_alive(pid), timeout=TIMEOUT + 1, what="init to exit")
    assert not os.path.exists(os.path.join(h.logdir, "user-ran"))
    assert rc != 0, "start succeeded although the startContainer hook timed out"
    assert_timeout_error(err, "startContainer", IN_CONTAINER_SCRIPT, True)
    env.rt("delete", "--force", cid)


@pytest.mark.parametrize("kind", ["poststart", "poststop"])
def test_hook_timeout_post_hooks_warn(env, agentsbx_only, kind):
    h = Hooks(env)
    h.set(kind, nap=60, timeout=TIMEOUT)
    h.write()
    log = os.path.join(env.tmp, "runtime.log")
    cid = env.track_id(env.new_id())
    env.rt("create", "--bundle", h.bundle, cid)
    if kind == "poststart":
        (rc, out, err), took = timed(lambda: env.rt(
            "--log", log, "start", cid, check=False, timeout=90))
    else:
        env.rt("start", cid)
        env.rt("kill", cid, "KILL")
        env.wait_status(cid, "stopped")
        (rc, out, err), took = timed(lambda: env.rt(
            "--log", log, "delete", cid, check=False, timeout=90))
    # poststart: an error that stops the container (runtime.md step 9);
    # poststop: a warning, the delete goes on.
    assert (rc != 0) if kind == "poststart" else (rc == 0), err
    assert took < TIMEOUT + 1, "%s returned after %.2f s" % (kind, took)
    text = read_log(log)
    if kind != "poststart":
        assert "warn" in text, text
    assert_timeout_error(text, kind, h.script, True)
    sleeper = int(h.fact(kind, "sleeper"))
    wait_for(lambda: not pid_alive(sleeper), timeout=2, what="the hook's child")
    if kind == "poststart":
        env.rt("delete", "--force", cid)


# ---- output ------------------------------------------------------------------

def test_hook_output_goes_to_the_runtime_log(env, agentsbx_only):
    h = Hooks(env, args=["sh", "-c", "echo container-out; echo container-err >&2; "
                         "touch /hooklog/user-ran"])
    h.write()
    log = os.path.join(env.tmp, "runtime.log")
    rc, out, err = env.rt("--log", log, "run", "--bundle", h.bundle,
                          env.track_id(env.new_id()), check=False)
    assert rc == 0, err
    assert out == "container-out\n", out
    assert "container-err" in err
    assert "hook-" not in out and "hook-" not in err, (out, err)
    text = read_log(log)
    for kind in KINDS:
        assert "hook-stdout-%s" % kind in text, (kind, text)
        assert "hook-stderr-%s" % kind in text, (kind, text)


# ---- features ------------------------------------------------------------------

def test_features_lists_the_hooks(env):
    rc, out, err = env.rt("features")
    feats = json.loads(out)
    assert sorted(feats["hooks"]) == sorted(KINDS)
