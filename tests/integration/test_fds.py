# SPDX-License-Identifier: Apache-2.0
"""File descriptors: nothing of the caller's leaks in; --preserve-fds and
LISTEN_FDS (socket activation) pass fds 3.. on purpose."""

import os

from conftest import kv_lines, make_spec, run_cmd, write_spec

FD_SCRIPT = "procinfo fd; env | grep ^LISTEN_ || true; " \
            "for n in 3 4; do [ -e /proc/self/fd/$n ] && echo c$n=$(cat <&$n); done; true"


def wrapped(env, cid, shell_prefix, *runtime_args):
    """Run the runtime under the host's /bin/sh, which first sets up fds and
    environment with shell_prefix, then execs the runtime (same pid)."""
    return run_cmd(["/bin/sh", "-c", shell_prefix + ' exec "$@"', "sh"] +
                   env.argv("run", "--bundle", env.default_bundle(),
                            *runtime_args, env.track_id(cid)))


def files(env):
    a = os.path.join(env.tmp, "fd-a")
    b = os.path.join(env.tmp, "fd-b")
    with open(a, "w") as f:
        f.write("content-a\n")
    with open(b, "w") as f:
        f.write("content-b\n")
    return a, b


def test_callers_fds_do_not_leak(env):
    write_spec(env.default_bundle(), make_spec(["sh", "-c", FD_SCRIPT]))
    a, b = files(env)
    rc, out, err = wrapped(env, env.new_id(), 'exec 3<"%s" 4<"%s" 9<"%s";' % (a, b, a))
    assert rc == 0, err
    kv = kv_lines(out)
    assert sorted(k for k in kv if k.startswith("fd.")) == ["fd.0", "fd.1", "fd.2"], out
    assert "c3" not in kv and "c4" not in kv


def test_preserve_fds(env):
    write_spec(env.default_bundle(), make_spec(["sh", "-c", FD_SCRIPT]))
    a, b = files(env)
    rc, out, err = wrapped(env, env.new_id(), 'exec 3<"%s" 4<"%s" 9<"%s";' % (a, b, a),
                           "--preserve-fds", "2")
    assert rc == 0, err
    kv = kv_lines(out)
    assert sorted(k for k in kv if k.startswith("fd.")) == \
        ["fd.0", "fd.1", "fd.2", "fd.3", "fd.4"], out
    assert kv["c3"] == "content-a" and kv["c4"] == "content-b"
    assert not any(k.startswith("LISTEN_") for k in kv)


def test_preserve_fds_with_create(env):
    hostdir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "cat <&3 > /h/got"])
    spec["mounts"].append({"destination": "/h", "type": "bind", "source": hostdir,
                           "options": ["rbind", "rw"]})
    write_spec(env.default_bundle(), spec)
    a, _ = files(env)
    cid = env.track_id(env.new_id())
    rc, out, err = run_cmd(["/bin/sh", "-c", 'exec 3<"%s"; exec "$@"' % a, "sh"] +
                           env.argv("create", "--bundle", env.default_bundle(),
                                    "--preserve-fds", "1", cid))
    assert rc == 0, err
    env.rt("start", cid)
    env.wait_status(cid, "stopped")
    with open(os.path.join(hostdir, "got")) as f:
        assert f.read() == "content-a\n"


def test_listen_fds(env):
    # systemd socket activation: LISTEN_PID must be the runtime's pid; the
    # fds 3..3+LISTEN_FDS-1 are passed on, and the container gets
    # LISTEN_FDS=N and LISTEN_PID=1 (its own pid).
    write_spec(env.default_bundle(), make_spec(["sh", "-c", FD_SCRIPT]))
    a, b = files(env)
    rc, out, err = wrapped(env, env.new_id(),
                           'exec 3<"%s" 4<"%s"; export LISTEN_PID=$$ LISTEN_FDS=1;' % (a, b))
    assert rc == 0, err
    kv = kv_lines(out)
    assert sorted(k for k in kv if k.startswith("fd.")) == \
        ["fd.0", "fd.1", "fd.2", "fd.3"], out
    assert kv["c3"] == "content-a"
    assert kv["LISTEN_FDS"] == "1" and kv["LISTEN_PID"] == "1"


def test_listen_fds_for_another_pid_are_ignored(env):
    write_spec(env.default_bundle(), make_spec(["sh", "-c", FD_SCRIPT]))
    a, b = files(env)
    rc, out, err = wrapped(env, env.new_id(),
                           'exec 3<"%s" 4<"%s"; export LISTEN_PID=1 LISTEN_FDS=2;' % (a, b))
    assert rc == 0, err
    kv = kv_lines(out)
    assert sorted(k for k in kv if k.startswith("fd.")) == ["fd.0", "fd.1", "fd.2"], out
    assert not any(k.startswith("LISTEN_") for k in kv)
