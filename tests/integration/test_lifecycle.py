# SPDX-License-Identifier: Apache-2.0
"""create / start / state / kill / delete, and their errors."""

import json
import os
import re
import time

import pytest

from conftest import (_MYPID, TOOLS, _stat_fields, add_mount, make_spec, pid_alive,
                      proc_cmdline, proc_exe, run_cmd, wait_for, write_spec)

# A container init that exits on SIGTERM (a pid-namespace init ignores
# signals it has no handler for, even from outside) and shows it ran.
TRAP_TERM = "trap 'exit 143' TERM; touch /h/started; sleep 1000 & wait"


def spec_with_hostdir(env, script, name="h", **changes):
    hostdir = env.hostdir(name)
    spec = make_spec(["sh", "-c", script], **changes)
    add_mount(spec, "/" + name, "bind", hostdir, ["rbind", "rw"])
    return spec, hostdir


def test_create_start_kill_delete(env):
    spec, hostdir = spec_with_hostdir(env, TRAP_TERM)
    marker = os.path.join(hostdir, "started")
    cid = env.create(spec)

    # created: init exists, is blocked, the user program has not run
    st = env.state(cid)
    assert st["status"] == "created"
    pid = st["pid"]
    assert isinstance(pid, int) and pid > 0
    assert pid_alive(pid)
    time.sleep(0.3)
    assert not os.path.exists(marker), "the program ran before start"
    assert _stat_fields(pid)[0] in ("S", "D"), "init should be blocked (sleeping)"
    assert not proc_exe(pid).endswith("busybox"), proc_exe(pid)
    assert proc_cmdline(pid)[:2] != [b"sh", b"-c"]
    assert env.status(cid) == "created"

    # start: running, the program runs, in the same process
    rc, out, err = env.rt("start", cid)
    assert wait_for(lambda: os.path.exists(marker), what="program start")
    st = env.state(cid)
    assert st["status"] == "running"
    assert st["pid"] == pid
    assert proc_cmdline(pid)[:2] == [b"sh", b"-c"]

    # kill (SIGTERM by default): stopped
    env.rt("kill", cid)
    env.wait_status(cid, "stopped")

    # delete: gone
    env.rt("delete", cid)
    rc, out, err = env.rt("state", cid, check=False)
    assert rc != 0
    assert "does not exist" in err
    assert os.listdir(env.root) == []


def test_created_init_is_child_of_callers_subreaper(env):
    # The runtime exits after create; init is re-parented to the caller's
    # subreaper (here, pytest), as containerd's shim expects.
    cid = env.create(make_spec(["sleep", "1000"]))
    pid = env.state(cid)["pid"]
    assert _stat_fields(pid)[1] == _MYPID


def test_state_of_missing_container(env):
    cid = env.new_id()
    rc, out, err = env.rt("state", cid, check=False)
    assert rc != 0
    assert "does not exist" in err
    assert out.strip() == ""


@pytest.mark.parametrize("cmd", [["state"], ["start"], ["kill"], ["kill", "KILL"],
                                 ["delete"]])
def test_missing_container_exact_text(env, agentsbx_only, cmd):
    cid = env.new_id()
    rc, out, err = env.rt(cmd[0], cid, *cmd[1:], check=False)
    assert rc != 0
    assert 'container "%s" does not exist' % cid in err


def test_lifecycle_under_subreaper_tool(env):
    """tests/tools/subreaper as the caller (a shim): the init left by create
    is re-parented to it, and reaped by it after kill."""
    tool = os.path.join(TOOLS, "subreaper")
    write_spec(env.default_bundle(), make_spec(["sleep", "1000"]))
    cid = env.track_id(env.new_id())
    rt = " ".join("'%s'" % a for a in env.argv())
    script = """
        set -e
        {rt} create --bundle '{b}' {id} </dev/null >/dev/null
        pid=$({rt} state {id} | grep '"pid"' | tr -dc 0-9)
        echo pid=$pid
        echo init_ppid=$(grep PPid /proc/$pid/status | tr -dc 0-9)
        echo subreaper=$PPID
        {rt} start {id}
        {rt} kill {id} KILL
        while {rt} state {id} | grep -q '"running"'; do sleep 0.02; done
        {rt} delete {id}
    """.format(rt=rt, b=env.default_bundle(), id=cid)
    rc, out, err = run_cmd([tool, "--wait-all", "/bin/sh", "-c", script], timeout=30)
    assert rc == 0, err
    kv = dict(l.split("=", 1) for l in out.splitlines() if "=" in l)
    assert kv["init_ppid"] == kv["subreaper"]
    assert not pid_alive(int(kv["pid"]))


@pytest.mark.parametrize("cmd", [["start"], ["kill"], ["kill", "@", "KILL"],
                                 ["delete"], ["pause"], ["resume"], ["ps"]])
def test_commands_on_missing_container(env, cmd):
    cid = env.new_id()
    args = [cid if a == "@" else a for a in cmd]
    if "@" not in cmd:
        args.append(cid)
    rc, out, err = env.rt(*args, check=False)
    assert rc != 0
    if cmd[0] in ("start", "kill", "delete"):
        assert "does not exist" in err


def test_delete_force_missing_container_succeeds(env):
    # runc: `delete --force` of an unknown id is not an error (containerd
    # relies on it when cleaning up).
    rc, out, err = env.rt("delete", "--force", env.new_id(), check=False)
    assert rc == 0, err


@pytest.mark.parametrize("sig", [None, "TERM", "SIGTERM", "15",
                                 "KILL", "SIGKILL", "9"])
def test_kill_signal_forms(env, sig):
    spec, hostdir = spec_with_hostdir(env, TRAP_TERM)
    cid = env.create(spec)
    env.rt("start", cid)
    wait_for(lambda: os.path.exists(os.path.join(hostdir, "started")))
    pid = env.state(cid)["pid"]
    env.rt("kill", cid, *([sig] if sig else []))
    env.wait_status(cid, "stopped")
    wait_for(lambda: not pid_alive(pid), what="init to die")
    env.rt("delete", cid)


def test_kill_invalid_signal_fails(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    for sig in ("NOSUCHSIG", "SIGFOO", "-1", "1000"):
        rc, out, err = env.rt("kill", cid, sig, check=False)
        assert rc != 0, sig
    assert env.status(cid) == "running"


def test_kill_created_container(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")
    env.rt("delete", cid)
    assert env.state(cid, check=False) is None


def test_kill_stopped_container_fails(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    env.rt("kill", cid, "KILL")
    env.wait_status(cid, "stopped")
    for args in (["9"], []):
        rc, out, err = env.rt("kill", cid, *args, check=False)
        assert rc != 0
        assert "container not running" in err


def test_kill_all(env):
    cid = env.create(make_spec(["sh", "-c", "sleep 1000 & sleep 1000 & wait"]))
    env.rt("start", cid)
    env.rt("kill", "--all", cid, "KILL")
    env.wait_status(cid, "stopped")


def test_start_twice_fails(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    rc, out, err = env.rt("start", cid, check=False)
    assert rc != 0
    assert err.strip()
    assert env.status(cid) == "running"


def test_start_stopped_fails(env):
    cid = env.create(make_spec(["true"]))
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    rc, out, err = env.rt("start", cid, check=False)
    assert rc != 0
    assert err.strip()
    assert env.status(cid) == "stopped"


def test_program_exit_makes_stopped(env):
    cid = env.create(make_spec(["sh", "-c", "exit 3"]))
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    env.rt("delete", cid)


def test_delete_running_without_force_fails(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    rc, out, err = env.rt("delete", cid, check=False)
    assert rc != 0
    assert err.strip()
    assert env.status(cid) == "running"
    assert pid_alive(env.state(cid)["pid"])


def test_delete_created_without_force_kills_it(env):
    # runc (unlike the letter of the OCI spec) deletes a created container
    # without --force: it kills the waiting init.  containerd relies on it.
    cid = env.create(make_spec(["sleep", "1000"]))
    pid = env.state(cid)["pid"]
    env.rt("delete", cid)
    assert env.state(cid, check=False) is None
    wait_for(lambda: not pid_alive(pid), what="init to be killed")


@pytest.mark.parametrize("start", [False, True], ids=["created", "running"])
def test_delete_force(env, start):
    cid = env.create(make_spec(["sleep", "1000"]))
    if start:
        env.rt("start", cid)
    pid = env.state(cid)["pid"]
    env.rt("delete", "--force", cid)
    assert env.state(cid, check=False) is None
    wait_for(lambda: not pid_alive(pid), what="init to be killed")
    assert os.listdir(env.root) == []


def test_create_existing_id_fails(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    pid = env.state(cid)["pid"]
    b2 = env.make_bundle("bundle2", make_spec(["sleep", "1000"]))
    rc, out, err = env.rt("create", "--bundle", b2, cid, check=False)
    assert rc != 0
    assert "exist" in err.lower()
    st = env.state(cid)
    assert st["status"] == "created" and st["pid"] == pid
    assert st["bundle"] == env.default_bundle()


RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


def test_state_fields(env):
    spec = make_spec(["sleep", "1000"],
                     annotations={"org.example.key": "value", "b": "2"})
    cid = env.create(spec)
    bundle = env.default_bundle()
    rc, out, err = env.rt("state", cid)
    st = json.loads(out)
    assert isinstance(st["ociVersion"], str) and st["ociVersion"]
    assert st["id"] == cid
    assert st["status"] == "created"
    assert isinstance(st["pid"], int) and st["pid"] > 0
    assert st["bundle"] == bundle and os.path.isabs(st["bundle"])
    assert st["rootfs"] == os.path.join(bundle, "rootfs")
    assert RFC3339.match(st["created"]), st["created"]
    assert "owner" in st and isinstance(st["owner"], str)
    assert st["annotations"] == {"org.example.key": "value", "b": "2"}
    env.rt("start", cid)
    st2 = env.state(cid)
    assert st2["created"] == st["created"]
    assert st2["status"] == "running"


def test_state_bundle_is_absolute_when_given_relative(env):
    bundle = env.default_bundle()
    write_spec(bundle, make_spec(["sleep", "1000"]))
    cid = env.track_id(env.new_id())
    env.rt("create", "--bundle", "bundle", cid, cwd=env.tmp)
    st = env.state(cid)
    assert st["bundle"] == bundle
    assert st["rootfs"] == os.path.join(bundle, "rootfs")


def test_create_default_bundle_is_cwd(env):
    bundle = env.default_bundle()
    write_spec(bundle, make_spec(["sleep", "1000"]))
    cid = env.track_id(env.new_id())
    env.rt("create", cid, cwd=bundle)
    assert env.state(cid)["bundle"] == bundle


def test_stopped_state_pid(env):
    cid = env.create(make_spec(["true"]))
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    st = env.state(cid)
    assert st["status"] == "stopped"
    assert isinstance(st["pid"], int)


@pytest.mark.parametrize("how", ["create", "run-d"])
def test_pid_file(env, how):
    pidfile = os.path.join(env.tmp, "init.pid")
    cid = env.new_id()
    spec = make_spec(["sleep", "1000"])
    if how == "create":
        env.create(spec, cid=cid, extra=("--pid-file", pidfile))
        want = "created"
    else:
        rc, out, err = env.run(spec, cid=cid, extra=("-d", "--pid-file", pidfile))
        assert rc == 0, err
        want = "running"
    st = env.state(cid)
    assert st["status"] == want
    with open(pidfile) as f:
        content = f.read()
    assert int(content.strip()) == st["pid"]
    assert content.strip() == str(st["pid"])


def test_pid_file_relative_is_relative_to_cwd(env):
    cid = env.new_id()
    write_spec(env.default_bundle(), make_spec(["sleep", "1000"]))
    env.track_id(cid)
    env.rt("create", "--bundle", env.default_bundle(), "--pid-file", "rel.pid",
           cid, cwd=env.tmp)
    with open(os.path.join(env.tmp, "rel.pid")) as f:
        assert int(f.read().strip()) == env.state(cid)["pid"]


def test_root_dirs_are_separate(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    other = os.path.join(env.tmp, "other-root")
    os.mkdir(other, 0o700)
    from conftest import run_cmd
    rc, out, err = run_cmd([env.runtime, "--root", other, "state", cid])
    assert rc != 0
    rc, out, err = run_cmd([env.runtime, "--root", other, "list", "-q"])
    assert rc == 0 and out.strip() == ""
    os.rmdir(other)
