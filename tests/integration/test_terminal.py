# SPDX-License-Identifier: Apache-2.0
"""Terminals: process.terminal with --console-socket (the pty master comes
back over the socket by SCM_RIGHTS) for create+start, run -d and exec -t;
a foreground `run`/`exec -t` driven from a pty the test made (echo, window
size, exit status); and, without a terminal, the container process in its
own session, so that it cannot push input into its caller's terminal with
TIOCSTI (tests/tools/tiocsti.c)."""

import fcntl
import json
import os
import select
import signal
import socket
import struct
import termios
import time
import tty

import pytest

from conftest import (_stat_fields, add_mount, is_agentsbx, kv_lines, make_spec,
                      pid_alive, spawn, wait_for, write_spec)

ROWS, COLS = 33, 101


# ---- helpers ------------------------------------------------------------------

class ConsoleSocket:
    """A unix socket listener for --console-socket."""

    def __init__(self, env, name="console.sock"):
        self.path = os.path.join(env.tmp, name)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(4)

    def receive(self, timeout=10):
        """Accept one connection; return the fd it sends (the pty master)."""
        self.sock.settimeout(timeout)
        conn, _ = self.sock.accept()
        try:
            conn.settimeout(timeout)
            msg, fds, flags, addr = socket.recv_fds(conn, 1024, 4)
        finally:
            conn.close()
        assert len(fds) == 1, "want one fd over the console socket, got %s" % fds
        for extra in fds[1:]:
            os.close(extra)
        return fds[0]

    def close(self):
        self.sock.close()


@pytest.fixture
def console(env):
    c = ConsoleSocket(env)
    yield c
    c.close()


def read_until(fd, want, timeout=10):
    """Read fd until every string of want has been seen (or EOF/EIO);
    return all that was read."""
    want = [want] if isinstance(want, str) else list(want)
    buf = b""
    deadline = time.monotonic() + timeout
    while True:
        text = buf.decode("utf-8", "replace")
        if all(w in text for w in want):
            return text
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("timed out waiting for %r in %r" % (want, text))
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the other side is gone
            chunk = b""
        if not chunk:
            raise AssertionError("EOF before %r in %r" % (want, text))
        buf += chunk


def drain(fd, timeout=5):
    """Read until EOF/EIO; return the text."""
    buf = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if not r:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    return buf.decode("utf-8", "replace")


def set_winsize(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def foreground_child(pid, comm):
    """A child of pid named comm that is its terminal's foreground group."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return False
    for k in kids:
        try:
            with open("/proc/%d/stat" % k) as f:
                data = f.read()
        except OSError:
            continue
        name = data[data.index("(") + 1:data.rindex(")")]
        rest = data[data.rindex(")") + 2:].split()
        # rest[2] pgrp, rest[5] tpgid
        if name == comm and rest[2] == rest[5]:
            return True
    return False


def tty_spec(args=("sh",), rows=ROWS, cols=COLS, **changes):
    spec = make_spec(list(args), process__terminal=True, **changes)
    if rows:
        spec["process"]["consoleSize"] = {"height": rows, "width": cols}
    return spec


# A command line for an interactive busybox sh on the container's pty: the
# markers are split by quotes so that the echo of the typed line cannot be
# mistaken for the output.
PROBE = "echo BE''GIN; tty; stty size; echo EN''D\n"


def probe(master, rows=ROWS, cols=COLS):
    os.write(master, PROBE.encode())
    text = read_until(master, ["BEGIN", "END"])
    out = text[text.index("BEGIN"):]
    lines = [l.strip() for l in out.splitlines()]
    return lines, text


def check_probe(master, rows=ROWS, cols=COLS):
    lines, text = probe(master, rows, cols)
    assert "/dev/pts/0" in lines, text
    assert "%d %d" % (rows, cols) in lines, text
    # the typed line came back: the pty echoes
    assert "echo BE''GIN; tty" in text, text


# ---- --console-socket --------------------------------------------------------------

def test_console_socket_create_start(env, console):
    cid = env.create(tty_spec(), extra=("--console-socket", console.path))
    master = console.receive()
    try:
        assert os.isatty(master)
        # a pty master, of the container's own devpts instance: pty 0
        tiocgptn = getattr(termios, "TIOCGPTN", 0x80045430)
        n, = struct.unpack("I", fcntl.ioctl(master, tiocgptn, struct.pack("I", 99)))
        assert n == 0, n
        assert env.status(cid) == "created"
        env.rt("start", cid)
        check_probe(master)
        os.write(master, b"exit 3\n")
        drain(master)
    finally:
        os.close(master)
    env.wait_status(cid, "stopped")


def test_console_socket_run_detached(env, console):
    cid = env.track_id(env.new_id())
    write_spec(env.default_bundle(), tty_spec())
    env.rt("run", "-d", "--console-socket", console.path, "--bundle",
           env.default_bundle(), cid, timeout=15)
    master = console.receive()
    try:
        assert env.status(cid) == "running"
        check_probe(master)
        os.write(master, b"exit 0\n")
        drain(master)
    finally:
        os.close(master)
    env.wait_status(cid, "stopped")


def test_console_socket_exec_tty(env, console, agentsbx_only):
    # exec -t --console-socket in the foreground: the master goes to the
    # socket, exec waits for the process and returns its status (runc 1.1.5
    # ignores --console-socket without --detach and uses its own stdio)
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    p = env.rt_spawn("exec", "-t", "--console-socket", console.path, cid, "sh")
    master = console.receive()
    try:
        # no consoleSize for exec from the command line: whatever the pty
        # starts with; set one and look
        lines, text = probe(master)
        assert "/dev/pts/0" in lines, text
        os.write(master, b"exit 5\n")
        drain(master)
    finally:
        os.close(master)
    rc, out, err = p.wait(timeout=10)
    assert rc == 5, (rc, out, err)
    assert env.status(cid) == "running"


def test_console_socket_exec_tty_detached(env, console):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    pidfile = os.path.join(env.tmp, "exec.pid")
    env.rt("exec", "-t", "-d", "--console-socket", console.path, "--pid-file", pidfile,
           cid, "sh", timeout=10)
    master = console.receive()
    try:
        lines, text = probe(master)
        assert "/dev/pts/0" in lines, text
        os.write(master, b"exit 0\n")
        drain(master)
    finally:
        os.close(master)
    with open(pidfile) as f:
        pid = int(f.read())
    wait_for(lambda: not pid_alive(pid), what="the exec'd shell to exit")


def test_console_socket_exec_process_file_console_size(env, console):
    # containerd's shape: exec --process (terminal, consoleSize) --detach
    # --console-socket
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    proc = {"terminal": True, "consoleSize": {"height": 19, "width": 77},
            "user": {"uid": 0, "gid": 0}, "args": ["sh"], "cwd": "/",
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    "TERM=xterm"]}
    path = os.path.join(env.tmp, "process.json")
    with open(path, "w") as f:
        json.dump(proc, f)
    pidfile = os.path.join(env.tmp, "exec.pid")
    env.rt("exec", "--process", path, "--detach", "--console-socket", console.path,
           "--pid-file", pidfile, cid, timeout=10)
    master = console.receive()
    try:
        check_probe(master, rows=19, cols=77)
        os.write(master, b"exit 0\n")
        drain(master)
    finally:
        os.close(master)
    with open(pidfile) as f:
        pid = int(f.read())
    wait_for(lambda: not pid_alive(pid), what="the exec'd shell to exit")


def test_console_socket_pty_is_controlling_terminal(env, console):
    # the container's process is a session leader with the pty as its
    # controlling terminal: job control signals reach it
    cid = env.create(tty_spec(["sh"]), extra=("--console-socket", console.path))
    master = console.receive()
    try:
        env.rt("start", cid)
        pid = env.state(cid)["pid"]
        os.write(master, b"echo RE''ADY; cat\n")
        read_until(master, "READY")
        wait_for(lambda: foreground_child(pid, "cat"), what="cat in the foreground")
        assert os.getsid(pid) == pid
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        assert int(fields[4]) != 0  # tty_nr
        os.write(master, b"\x03")  # ^C: SIGINT to the foreground group (cat)
        read_until(master, ["^C", "# "])  # the shell's next prompt: cat is gone
        os.write(master, b"echo AF''TER\n")
        read_until(master, "AFTER\r\n")
        os.write(master, b"exit\n")
        drain(master)
    finally:
        os.close(master)
    env.wait_status(cid, "stopped")


def test_console_socket_missing_fails(env):
    cid = env.track_id(env.new_id())
    write_spec(env.default_bundle(), tty_spec())
    rc, out, err = env.rt("create", "--console-socket",
                          os.path.join(env.tmp, "no-such.sock"), "--bundle",
                          env.default_bundle(), cid, check=False)
    assert rc != 0
    assert "no-such.sock" in err, err
    assert os.listdir(env.root) == []


def test_terminal_detached_without_console_socket_fails(env):
    cid = env.track_id(env.new_id())
    write_spec(env.default_bundle(), tty_spec())
    rc, out, err = env.rt("create", "--bundle", env.default_bundle(), cid, check=False)
    assert rc != 0
    assert "console" in err, err
    assert os.listdir(env.root) == []


# ---- foreground, driven from the test's pty -------------------------------------------

# Runs ARGV with fd N as its stdin, stdout and stderr; with CTTY "1", first
# in a new session whose controlling terminal that fd is.  Same pid as the
# runtime it execs.
PTY_WRAPPER = r"""
import fcntl, os, sys, termios
fd, ctty = int(sys.argv[1]), sys.argv[2] == "1"
if ctty:
    os.setsid()
    fcntl.ioctl(fd, termios.TIOCSCTTY, 0)
for i in range(3):
    os.dup2(fd, i)
os.close(fd)
os.execv(sys.argv[3], sys.argv[3:])
"""


class HostPty:
    """A pty; the runtime gets its slave as stdin, stdout and stderr."""

    def __init__(self, rows=41, cols=117):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # no echo from this pty: what we see is the container's
        set_winsize(self.slave, rows, cols)

    def spawn(self, argv, ctty=False):
        n = self.slave
        p = spawn(["/usr/bin/python3", "-c", PTY_WRAPPER, str(n), "1" if ctty else "0"]
                  + list(argv), pass_fds=(n,))
        os.close(self.slave)
        self.slave = -1
        return p

    def close(self):
        for fd in (self.master, self.slave):
            if fd >= 0:
                os.close(fd)
        self.master = self.slave = -1


@pytest.fixture
def ours(runtime_version):
    return is_agentsbx(runtime_version)


@pytest.fixture
def test_pty():
    t = HostPty()
    yield t
    t.close()


def test_run_foreground_terminal(env, test_pty):
    write_spec(env.default_bundle(), tty_spec(rows=0))
    cid = env.track_id(env.new_id())
    p = test_pty.spawn(env.argv("run", "--bundle", env.default_bundle(), cid))
    master = test_pty.master
    lines, text = probe(master)
    assert "/dev/pts/0" in lines, text
    # the window size of the test's pty, copied to the container's
    assert "41 117" in lines, text
    assert "echo BE''GIN; tty" in text, "typed input not echoed: %r" % text
    os.write(master, b"exit 7\n")
    drain(master)
    rc, out, err = p.wait(timeout=10)
    assert rc == 7, (rc, out, err)
    assert os.listdir(env.root) == []


def test_run_foreground_terminal_restores_the_callers_tty(env, test_pty):
    write_spec(env.default_bundle(), tty_spec(rows=0))
    before = termios.tcgetattr(test_pty.slave)
    keep = os.dup(test_pty.slave)
    try:
        p = test_pty.spawn(env.argv("run", "--bundle", env.default_bundle(),
                                    env.track_id(env.new_id())))
        os.write(test_pty.master, b"exit 0\n")
        rc, out, err = p.wait(timeout=10)  # (keep holds the slave: no EOF)
        drain(test_pty.master, timeout=0.2)
        assert rc == 0, (rc, out, err)
        assert termios.tcgetattr(keep) == before
    finally:
        os.close(keep)


def test_run_foreground_terminal_window_change(env, test_pty):
    write_spec(env.default_bundle(), tty_spec(rows=0))
    keep = os.dup(test_pty.slave)
    try:
        p = test_pty.spawn(env.argv("run", "--bundle", env.default_bundle(),
                                    env.track_id(env.new_id())))
        lines, text = probe(test_pty.master)
        assert "41 117" in lines, text
        set_winsize(keep, 22, 66)
        os.kill(p.pid, signal.SIGWINCH)  # not our ctty: tell it ourselves
        deadline = time.monotonic() + 5
        while True:
            lines, text = probe(test_pty.master)
            if "22 66" in lines or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert "22 66" in lines, text
        os.write(test_pty.master, b"exit 0\n")
        rc, out, err = p.wait(timeout=10)  # (keep holds the slave: no EOF)
        drain(test_pty.master, timeout=0.2)
        assert rc == 0, (rc, out, err)
    finally:
        os.close(keep)


def test_exec_tty_foreground(env, test_pty):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    p = test_pty.spawn(env.argv("exec", "-t", cid, "sh"))
    lines, text = probe(test_pty.master)
    assert "/dev/pts/0" in lines, text
    assert "41 117" in lines, text
    os.write(test_pty.master, b"exit 9\n")
    drain(test_pty.master)
    rc, out, err = p.wait(timeout=10)
    assert rc == 9, (rc, out, err)


# ---- without a terminal: its own session, no TIOCSTI into the caller's tty ------------

def test_tiocsti_control_on_the_host(env, test_pty):
    # The setup works: a process in the session of the pty can push input.
    tool = os.path.join(env.base_rootfs, "usr", "local", "bin", "tiocsti")
    out_file = os.path.join(env.tmp, "out")
    p = test_pty.spawn(["/bin/sh", "-c", '"$0" 0 x > "$1"', tool, out_file], ctty=True)
    rc, _, err = p.wait(timeout=10)
    assert rc == 0, err
    with open(out_file) as f:
        kv = kv_lines(f.read())
    assert kv["isatty"] == "1"
    assert kv["tiocsti"] == "OK", kv


def test_run_no_terminal_own_session_no_tiocsti(env, test_pty, ours):
    hostdir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "tiocsti 0 x > /h/out 2>&1"])
    add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    write_spec(env.default_bundle(), spec)
    p = test_pty.spawn(env.argv("run", "--bundle", env.default_bundle(),
                                env.track_id(env.new_id())), ctty=True)
    rc, out, err = p.wait(timeout=20)
    assert rc == 0, (rc, out, err, drain(test_pty.master, timeout=0.5))
    with open(os.path.join(hostdir, "out")) as f:
        kv = kv_lines(f.read())
    assert kv["tiocsti"] != "OK", "the container pushed input into the caller's tty: %s" % kv
    assert kv["sid"] == "1", kv  # a session of its own
    if ours:
        # agentsbx passes its stdio through: fd 0 is the caller's terminal,
        # but not the container's controlling terminal (runc 1.1.5 gives
        # the container pipes instead)
        assert kv["isatty"] == "1", kv
        assert kv["tiocsti"] == "EPERM", kv


def test_exec_no_terminal_own_session_no_tiocsti(env, test_pty, ours):
    hostdir = env.hostdir("h")
    spec = make_spec(["sleep", "1000"])
    add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    cid = env.create(spec)
    env.rt("start", cid)
    p = test_pty.spawn(env.argv("exec", cid, "sh", "-c", "tiocsti 0 x > /h/out 2>&1"),
                       ctty=True)
    rc, out, err = p.wait(timeout=20)
    assert rc == 0, (rc, out, err, drain(test_pty.master, timeout=0.5))
    with open(os.path.join(hostdir, "out")) as f:
        kv = kv_lines(f.read())
    assert kv["tiocsti"] != "OK", "the exec'd process pushed input into the caller's tty: %s" % kv
    if ours:
        assert kv["isatty"] == "1", kv
        assert kv["tiocsti"] == "EPERM", kv


def test_no_terminal_container_is_in_its_own_session(env):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    pid = env.state(cid)["pid"]
    assert os.getsid(pid) == pid, "init is not a session leader"
    assert os.getsid(pid) != os.getsid(0)
    pidfile = os.path.join(env.tmp, "exec.pid")
    env.rt("exec", "-d", "--pid-file", pidfile, cid, "sleep", "1000")
    with open(pidfile) as f:
        epid = int(f.read())
    env.pids[epid] = _stat_fields(epid)[2]
    assert os.getsid(epid) == epid, "the exec'd process is not a session leader"


def test_run_foreground_no_terminal_own_session(env):
    hostdir = env.hostdir("h")
    spec = make_spec(["sh", "-c", "cut -d' ' -f6 /proc/self/stat > /h/sid"])
    add_mount(spec, "/h", "bind", hostdir, ["rbind", "rw"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    with open(os.path.join(hostdir, "sid")) as f:
        # in its pid namespace, the session of a leader outside it reads 0
        assert f.read().strip() == "1"


# ---- signals in tty mode: forwarded, as runc does, and the tty restored -------------

TRAP = ("trap 'echo GOT''-%s; exit 7' %s; echo REA''DY; "
        "while :; do sleep 0.1; done")


@pytest.mark.parametrize("sig", ["TERM", "HUP", "INT"])
def test_run_foreground_terminal_forwards_signals(env, test_pty, sig):
    """A signal to `run -t` (a shim's SIGTERM, the SIGHUP of a closing
    terminal) reaches the container's process; the runtime stays, waits,
    deletes the container and restores the caller's terminal."""
    write_spec(env.default_bundle(), tty_spec(("sh", "-c", TRAP % (sig, sig)), rows=0))
    before = termios.tcgetattr(test_pty.slave)
    keep = os.dup(test_pty.slave)
    try:
        p = test_pty.spawn(env.argv("run", "--bundle", env.default_bundle(),
                                    env.track_id(env.new_id())))
        read_until(test_pty.master, "READY")
        os.kill(p.pid, getattr(signal, "SIG" + sig))
        text = read_until(test_pty.master, "GOT-" + sig)
        rc, out, err = p.wait(timeout=10)
        drain(test_pty.master, timeout=0.2)
        assert rc == 7, (rc, out, err, text)
        assert os.listdir(env.root) == [], "the container was not deleted"
        assert termios.tcgetattr(keep) == before, "the caller's tty was left changed"
    finally:
        os.close(keep)


def test_exec_tty_forwards_signals(env, test_pty):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    p = test_pty.spawn(env.argv("exec", "-t", cid, "sh", "-c", TRAP % ("TERM", "TERM")))
    read_until(test_pty.master, "READY")
    os.kill(p.pid, signal.SIGTERM)
    read_until(test_pty.master, "GOT-TERM")
    rc, out, err = p.wait(timeout=10)
    drain(test_pty.master, timeout=0.2)
    assert rc == 7, (rc, out, err)
    assert env.status(cid) == "running"
