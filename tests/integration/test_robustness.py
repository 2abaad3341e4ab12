"""Error paths that must neither hang nor leak (issue 14): a FIFO where the
runtime reads a file of the bundle or of the caller, and a pid file that
cannot be written."""

import os
import subprocess
import uuid

import pytest

from conftest import make_spec, run_cmd, write_spec


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
