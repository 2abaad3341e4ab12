# SPDX-License-Identifier: Apache-2.0
"""`run`: output, exit codes, signals, --detach."""

import os
import time

from conftest import (drop_namespace, make_spec, pid_alive, proc_cmdline, wait_for,
                      write_spec)


def test_run_prints_output(env):
    rc, out, err = env.run(make_spec(["sh", "-c", "echo hi"]))
    assert rc == 0, err
    assert out == "hi\n"


def test_run_stderr_is_passed_through(env):
    rc, out, err = env.run(make_spec(["sh", "-c", "echo out; echo err >&2"]))
    assert rc == 0, err
    assert out == "out\n"
    assert "err\n" in err


def test_run_stdin_is_passed_through(env):
    rc, out, err = env.run(make_spec(["cat"]), input="from-stdin\n")
    assert rc == 0, err
    assert out == "from-stdin\n"


def test_run_exit_code_propagates(env):
    rc, out, err = env.run(make_spec(["sh", "-c", "exit 7"]))
    assert rc == 7, err


def test_run_exec_failure_is_an_error(env):
    rc, out, err = env.run(make_spec(["/no/such/program"]))
    assert rc != 0
    assert err.strip()


def test_run_is_deleted_after_exit(env):
    cid = env.new_id()
    rc, out, err = env.run(make_spec(["true"]), cid=cid)
    assert rc == 0, err
    assert env.state(cid, check=False) is None
    assert os.listdir(env.root) == []


def test_run_killed_by_signal_exits_128_plus_n(env):
    # Without a pid namespace sh is not an init, so it can SIGKILL itself
    # (a pid-namespace init is immune to signals from inside).
    spec = drop_namespace(make_spec(["sh", "-c", "kill -9 $$"]), "pid")
    rc, out, err = env.run(spec)
    assert rc == 128 + 9, (rc, err)


def test_run_init_killed_from_outside_exits_137(env):
    cid = env.new_id()
    b = env.default_bundle()
    write_spec(b, make_spec(["sleep", "1000"]))
    p = env.rt_spawn("run", "--bundle", b, cid)
    env.wait_status(cid, "running")
    env.rt("kill", cid, "KILL")
    rc, out, err = p.wait(timeout=20)
    assert rc == 137, (rc, err)


def test_run_init_sigterm_handled_exits_with_its_code(env):
    cid = env.new_id()
    b = env.default_bundle()
    hostdir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "trap 'exit 42' TERM; touch /h/ready; "
                      "sleep 1000 & wait"])
    spec["mounts"].append({"destination": "/h", "type": "bind",
                           "source": hostdir, "options": ["rbind", "rw"]})
    write_spec(b, spec)
    p = env.rt_spawn("run", "--bundle", b, cid)
    wait_for(lambda: os.path.exists(os.path.join(hostdir, "ready")),
             what="container ready")
    env.rt("kill", cid)  # default SIGTERM
    rc, out, err = p.wait(timeout=20)
    assert rc == 42, (rc, err)


def test_run_detach_returns_and_keeps_running(env):
    cid = env.new_id()
    t0 = time.time()
    rc, out, err = env.run(make_spec(["sleep", "1000"]), cid=cid,
                           extra=("--detach",), timeout=20)
    assert rc == 0, err
    assert time.time() - t0 < 15
    st = env.state(cid)
    assert st["status"] == "running"
    assert pid_alive(st["pid"])
    assert proc_cmdline(st["pid"])[:2] == [b"sleep", b"1000"]
    time.sleep(0.3)
    assert env.status(cid) == "running"
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")
    env.rt("delete", cid)


def test_run_d_short_flag(env):
    cid = env.new_id()
    rc, out, err = env.run(make_spec(["sleep", "1000"]), cid=cid, extra=("-d",))
    assert rc == 0, err
    assert env.status(cid) == "running"


def test_run_detach_output_goes_to_callers_stdout(env):
    # With terminal false the container's stdio are the caller's, even
    # after the runtime has exited (it is how shims collect the output).
    cid = env.new_id()
    out_path = os.path.join(env.tmp, "detached.out")
    b = env.default_bundle()
    write_spec(b, make_spec(["sh", "-c", "sleep 0.3; echo later"]))
    with open(out_path, "wb") as out_f:
        rc, _, err = env.rt("run", "-d", "--bundle", b, cid, stdout=out_f)
    assert rc == 0, err
    wait_for(lambda: open(out_path).read() == "later\n", what="detached output")
    env.wait_status(cid, "stopped")
    env.rt("delete", cid)
