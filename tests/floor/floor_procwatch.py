# SPDX-License-Identifier: Apache-2.0
"""Every exec on the machine, from the kernel's process events connector
(NETLINK_CONNECTOR, CN_IDX_PROC): what the runtime's commands started.

A ProcWatch is started before a runtime command and stopped after it.  A
thread reads the fork and exec events; a process forked by a root (the
harness's own pid: every runtime command is its child) or by a process
already in the tree joins the tree, and every exec by a process of the tree
is recorded with what /proc still shows of it at once (its executable's
device and inode, argv, environment, uids and mount namespace).  A process
that exits before it is read is recorded with `gone`: the caller decides
from the other evidence (the hook canaries) what it was.

The connector sees every process of the machine (other suites run beside
this one): only the tree rooted at the harness is kept.
"""

import os
import socket
import struct
import threading
import time

NETLINK_CONNECTOR = 11
CN_IDX_PROC = 1
CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN = 1
PROC_CN_MCAST_IGNORE = 2
PROC_EVENT_FORK = 0x00000001
PROC_EVENT_EXEC = 0x00000002
NLMSG_HDR = struct.Struct("=IHHII")
CN_MSG = struct.Struct("=IIIIHH")
EVENT_HDR = struct.Struct("=IIQ")  # what, cpu, timestamp_ns
FORK = struct.Struct("=IIII")  # parent pid, parent tgid, child pid, child tgid
EXEC = struct.Struct("=II")  # pid, tgid


def available():
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
    except OSError:
        return False
    s.close()
    return True


def _read(path, binary=False):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data if binary else data.decode("utf-8", "replace")


def snapshot(pid):
    """What /proc shows of pid now (None where it is gone)."""
    out = {"pid": pid}
    try:
        st = os.stat("/proc/%d/exe" % pid)
        out["exe_id"] = (st.st_dev, st.st_ino)
    except OSError:
        out["exe_id"] = None
    try:
        out["exe"] = os.readlink("/proc/%d/exe" % pid)
    except OSError:
        out["exe"] = None
    cmd = _read("/proc/%d/cmdline" % pid, True)
    out["argv"] = None if cmd is None else \
        [a.decode("utf-8", "replace") for a in cmd.split(b"\0")[:-1]]
    env = _read("/proc/%d/environ" % pid, True)
    out["env"] = None if env is None else \
        [a.decode("utf-8", "replace") for a in env.split(b"\0")[:-1]]
    try:
        out["mntns"] = os.readlink("/proc/%d/ns/mnt" % pid)
    except OSError:
        out["mntns"] = None
    status = _read("/proc/%d/status" % pid) or ""
    for line in status.splitlines():
        if line.startswith("Uid:"):
            out["uids"] = [int(x) for x in line.split()[1:]]
        elif line.startswith("Gid:"):
            out["gids"] = [int(x) for x in line.split()[1:]]
    # an exiting process has no argv, exe nor namespaces any more: read
    # half-way, it is as good as gone (its canary tells)
    out["gone"] = not out["argv"] or out["exe_id"] is None or out["exe"] is None or \
        out["mntns"] is None
    return out


class ProcWatch:
    """with ProcWatch(roots=[os.getpid()]) as w: ...; w.execs"""

    def __init__(self, roots=None):
        self.roots = set(roots or [os.getpid()])
        self.tree = set()
        self.parents = {}
        self.execs = []
        self.forks = 0
        self.lost = False
        self._stop = False
        self._sock = None
        self._thread = None

    def _send(self, op):
        payload = struct.pack("=I", op)
        cn = CN_MSG.pack(CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(payload), 0) + payload
        nl = NLMSG_HDR.pack(NLMSG_HDR.size + len(cn), 3, 0, 0, 0) + cn  # NLMSG_DONE
        self._sock.send(nl)

    def start(self):
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        s.bind((0, CN_IDX_PROC))
        s.settimeout(0.05)
        self._sock = s
        self._send(PROC_CN_MCAST_LISTEN)
        self._thread = threading.Thread(target=self._loop, name="procwatch", daemon=True)
        self._thread.start()
        return self

    def _loop(self):
        while not self._stop:
            try:
                data = self._sock.recv(65536)
            except socket.timeout:
                continue
            except OSError as e:
                if e.errno == 105:  # ENOBUFS: events were dropped
                    self.lost = True
                    continue
                break
            off = 0
            while off + NLMSG_HDR.size <= len(data):
                length = NLMSG_HDR.unpack_from(data, off)[0]
                if length < NLMSG_HDR.size:
                    break
                self._event(data[off + NLMSG_HDR.size + CN_MSG.size: off + length])
                off += (length + 3) & ~3

    def _event(self, ev):
        if len(ev) < EVENT_HDR.size:
            return
        what = EVENT_HDR.unpack_from(ev)[0]
        body = ev[EVENT_HDR.size:]
        if what == PROC_EVENT_FORK and len(body) >= FORK.size:
            _, ptgid, _, ctgid = FORK.unpack_from(body)
            if ptgid in self.roots or ptgid in self.tree:
                self.tree.add(ctgid)
                self.parents[ctgid] = ptgid
                self.forks += 1
        elif what == PROC_EVENT_EXEC and len(body) >= EXEC.size:
            _, tgid = EXEC.unpack_from(body)
            if tgid in self.tree:
                snap = snapshot(tgid)
                snap["time"] = time.time()
                self.execs.append(snap)

    def stop(self):
        # let the last events in
        time.sleep(0.05)
        self._stop = True
        if self._thread:
            self._thread.join(2)
        try:
            self._send(PROC_CN_MCAST_IGNORE)
        except OSError:
            pass
        self._sock.close()
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.stop()
