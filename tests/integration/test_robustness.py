"""Error paths that must neither hang nor leak (issue 14): a FIFO where the
runtime reads a file of the bundle or of the caller, and a pid file that
cannot be written."""

import os
import subprocess
import time

import pytest

from conftest import make_spec, write_spec


def test_fifo_config_json_is_refused_not_waited_on(env):
    bundle = env.make_bundle("fifo-config")
    os.makedirs(bundle, exist_ok=True)
    os.mkfifo(os.path.join(bundle, "config.json"))
    cid = env.track_id(env.new_id())
    rc, out, err = env.rt("create", "--bundle", bundle, cid, check=False, timeout=10)
    assert rc != 0
    assert "config.json" in err and "not a regular file" in err, err
    assert os.listdir(env.root) in ([], [".seccomp-cache"]), os.listdir(env.root)


def test_fifo_process_json_is_refused_not_waited_on(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    fifo = os.path.join(env.tmp, "process.json")
    os.mkfifo(fifo)
    rc, out, err = env.rt("exec", "--process", fifo, cid, check=False, timeout=10)
    assert rc != 0
    assert "not a regular file" in err, err
    assert env.status(cid) == "running"


def test_pid_file_write_failure_leaves_no_temp_file(env):
    """The pid file's temp file is removed when the write fails (ENOSPC on a
    full tmpfs of the test's own, in a private mount namespace)."""
    full = os.path.join(env.tmp, "full")
    os.mkdir(full)
    write_spec(env.default_bundle(), make_spec(["sleep", "1000"]))
    cid = env.track_id(env.new_id())
    script = ("mount -t tmpfs -o size=4k tmpfs %(d)s && "
              "(dd if=/dev/zero of=%(d)s/fill bs=4k count=4 2>/dev/null || true) && "
              "%(rt)s create --bundle %(b)s --pid-file %(d)s/init.pid %(id)s; "
              "echo rc=$?; ls -A %(d)s" %
              {"d": full, "rt": " ".join(env.argv()), "b": env.default_bundle(), "id": cid})
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=60)
    out = r.stdout
    assert "rc=0" not in out, (out, r.stderr)
    assert "write pid file" in r.stderr, r.stderr
    left = out.split("rc=", 1)[1].split("\n", 1)[1].split()
    assert left == ["fill"], "left in the pid file's directory: %r" % left
    # the failed create is undone
    assert env.state(cid, check=False) is None


def test_fifo_passwd_in_image_is_a_clear_error_not_a_hang(env):
    """HOME comes from the image's /etc/passwd, read before READY from a
    regular file only: a FIFO there (HOME unset) fails create at once."""
    spec = make_spec(["true"])
    spec["process"]["env"] = [e for e in spec["process"]["env"] if not e.startswith("HOME=")]
    bundle = env.default_bundle()
    write_spec(bundle, spec)
    passwd = os.path.join(bundle, "rootfs", "etc", "passwd")
    os.unlink(passwd)
    os.mkfifo(passwd)
    cid = env.track_id(env.new_id())
    rc, out, err = env.rt("create", "--bundle", bundle, cid, check=False, timeout=15)
    assert rc != 0, "create succeeded"
    assert "/etc/passwd is not a regular file" in err, err
    assert env.state(cid, check=False) is None


def test_home_from_passwd_still_works(env):
    spec = make_spec(["sh", "-c", "echo $HOME"], process__user__uid=1000,
                     process__user__gid=1000)
    spec["process"]["env"] = [e for e in spec["process"]["env"] if not e.startswith("HOME=")]
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert out.strip() == "/home/user"


def _hook(path, args, timeout=None):
    h = {"path": path, "args": args}
    if timeout:
        h["timeout"] = timeout
    return h


@pytest.mark.parametrize("kind", ["startContainer", "poststart"])
def test_start_does_not_hold_the_lock_while_hooks_run(env, kind):
    """While `start` waits for a slow startContainer or poststart hook,
    state and kill answer at once."""
    spec = make_spec(["sleep", "1000"])
    spec["hooks"] = {kind: [_hook("/bin/sleep", ["sleep", "4"], timeout=20)]}
    cid = env.create(spec)
    p = env.rt_spawn("start", cid)
    time.sleep(1.0)
    t0 = time.monotonic()
    st = env.state(cid)
    took = time.monotonic() - t0
    assert p.popen.poll() is None, "start returned before its hook ended"
    assert took < 2.0, "state waited %.1f s for start's lock" % took
    assert st["status"] in ("running", "created")
    rc, out, err = p.wait(timeout=30)
    assert rc == 0, (rc, out, err)


def test_hook_dies_with_a_killed_runtime(env):
    """A runtime SIGKILLed while its prestart hook runs takes the hook
    along (nothing else knows the hook's pid)."""
    pidfile = os.path.join(env.tmp, "hook.pid")
    spec = make_spec(["true"])
    spec["hooks"] = {"prestart": [{"path": "/bin/sh", "args": [
        "sh", "-c", "echo $$ > %s; exec sleep 60" % pidfile]}]}
    write_spec(env.default_bundle(), spec)
    cid = env.track_id(env.new_id())
    p = env.rt_spawn("create", "--bundle", env.default_bundle(), cid)
    deadline = time.time() + 15
    while not os.path.exists(pidfile) or not open(pidfile).read().strip():
        assert time.time() < deadline, "the hook did not start"
        time.sleep(0.05)
    hook = int(open(pidfile).read())
    os.kill(p.pid, 9)
    p.wait(timeout=10)
    deadline = time.time() + 3
    while os.path.exists("/proc/%d" % hook):
        with open("/proc/%d/stat" % hook) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        assert time.time() < deadline, "the hook outlived the killed runtime"
        time.sleep(0.05)
    env.rt("delete", "--force", cid)
