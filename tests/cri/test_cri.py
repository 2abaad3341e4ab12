# SPDX-License-Identifier: Apache-2.0
"""
Pods through containerd's CRI plugin, driven by crictl as the kubelet
drives them, for each handler (cri_lib.HANDLERS): runc as the baseline,
agentsbx under its default policy, agentsbx with networkAllowed.  Each test
is one row of tests/cri/results.md; what a row expects of each handler is
in the test.  Run with `make cri-test`.
"""

import json
import os
import re
import time

import pytest

import cri_lib as C
from conftest import row

HANDLERS = C.HANDLERS

# busybox: a server answering every connection with "pong" until killed
SERVE = ["nc", "-ll", "-p", "8080", "-e", "echo", "pong"]
SLEEP = ["sleep", "3600"]


def connect_cmd(addr, port, tries=1):
    """Connect (3 s timeout) `tries` times; print what the peer sent."""
    return ["sh", "-c", "for i in $(seq %d); do nc -w 3 %s %d </dev/null && exit 0; "
            "sleep 0.3; done; echo CONNECT-FAILED; exit 1" % (tries, addr, port)]


def pod_with(node, handler, name, **ns):
    pod = node.pod_config(name, **ns)
    pid = node.runp(handler, pod).ok().out.strip()
    return pod, pid


def cgroup_file(pid, controller, name):
    with open("/proc/%d/cgroup" % pid) as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(","):
                return os.path.join("/sys/fs/cgroup", controller, path.lstrip("/"), name)
    raise AssertionError("no %s cgroup for pid %d" % (controller, pid))


def read_int(path):
    with open(path) as f:
        return int(f.read().split()[0])


def ns_ino(pid, kind):
    return os.stat("/proc/%d/ns/%s" % (pid, kind)).st_ino


def container_pid(node, cid):
    return node.inspect(cid)["info"]["pid"]


def pod_pid(node, pod_id):
    return node.inspectp(pod_id)["info"]["pid"]


def exec_out(node, cid, *argv, sync=True):
    r = node.crictl("exec", *(["-s"] if sync else []), cid, *argv)
    return r


def reached(out, label, node):
    return ("AGENTSBX-LISTENER %s %s" % (node.token, label)) in out


# ---- basic lifecycle -------------------------------------------------------------

@row("one container: runp, create, start, exit code")
@pytest.mark.parametrize("handler", HANDLERS)
def test_one_container(node, handler, cell):
    pod, pid = pod_with(node, handler, "one")
    cid = node.run_container(pid, pod, "c", ["sh", "-c", "echo hello; exit 3"])
    st = node.wait_exited(cid)
    assert st["exitCode"] == 3, st
    assert "hello" in node.logs(cid)
    cell("exit 3, output seen")


@row("logs: stdout and stderr")
@pytest.mark.parametrize("handler", HANDLERS)
def test_logs(node, handler, cell):
    pod, pid = pod_with(node, handler, "logs")
    cid = node.run_container(pid, pod, "c", ["sh", "-c", "echo to-out; echo to-err >&2"])
    node.wait_exited(cid)
    logs = node.logs(cid)
    assert "to-out" in logs and "to-err" in logs, logs
    path = node.inspect(cid)["status"]["logPath"]
    with open(path) as f:
        text = f.read()
    assert re.search(r" stdout F to-out", text) and re.search(r" stderr F to-err", text), text
    cell("both streams in the CRI log file")


@row("tty")
@pytest.mark.parametrize("handler", HANDLERS)
def test_tty(node, handler, cell):
    pod, pid = pod_with(node, handler, "tty")
    cid = node.run_container(pid, pod, "c", ["sh", "-c", "tty; [ -t 1 ] && echo IS-A-TTY"],
                             tty=True)
    node.wait_exited(cid)
    logs = node.logs(cid)
    assert "/dev/pts/" in logs and "IS-A-TTY" in logs, logs
    cell(re.search(r"/dev/pts/\d+", logs).group(0))


@row("inspect / inspectp: state, pid, pod IP")
@pytest.mark.parametrize("handler", HANDLERS)
def test_inspect(node, handler, cell):
    pod, pid = pod_with(node, handler, "insp")
    cid = node.run_container(pid, pod, "c", SLEEP)
    info = node.inspect(cid)
    assert info["status"]["state"] == "CONTAINER_RUNNING"
    assert info["info"]["pid"] > 0 and info["info"]["runtimeSpec"]
    p = node.inspectp(pid)
    assert p["status"]["state"] == "SANDBOX_READY"
    ip = p["status"]["network"]["ip"]
    assert ip.startswith(C.POD_CIDR.rsplit(".", 1)[0] + "."), ip
    cell("running, pod IP %s" % ip)


@row("stats")
@pytest.mark.parametrize("handler", HANDLERS)
def test_stats(node, handler, cell):
    pod, pid = pod_with(node, handler, "stats")
    cid = node.run_container(pid, pod, "c", SLEEP)
    stats = C.json.loads(node.crictl("stats", "-o", "json", "--id", cid).ok().out)
    s = stats["stats"][0]
    ws = int(s["memory"]["workingSetBytes"]["value"])
    assert ws > 0, s
    assert "cpu" in s and int(s["cpu"]["timestamp"]) > 0, s
    cell("working set %d KiB" % (ws // 1024))


@row("stop, rm, stopp, rmp: nothing left")
@pytest.mark.parametrize("handler", HANDLERS)
def test_stop_remove(node, handler, cell):
    pod, pid = pod_with(node, handler, "rm")
    cid = node.run_container(pid, pod, "c", SLEEP)
    t = time.monotonic()
    node.crictl("stop", "--timeout", "2", cid).ok()
    assert node.state(cid) == "CONTAINER_EXITED"
    node.crictl("rm", cid).ok()
    node.crictl("stopp", pid).ok()
    node.crictl("rmp", pid).ok()
    assert node.crictl("pods", "-q").out.split() == []
    left = C.E.wait_clean(node.leftovers, timeout=15)
    assert not left, left
    cell("%.1f s; no state, cgroup, netns, shim or mount left" % (time.monotonic() - t))


# ---- exec --------------------------------------------------------------------

@row("exec -s (sync)")
@pytest.mark.parametrize("handler", HANDLERS)
def test_exec_sync(node, handler, cell):
    pod, pid = pod_with(node, handler, "execs")
    cid = node.run_container(pid, pod, "c", SLEEP)
    r = exec_out(node, cid, "sh", "-c", "echo exec-out").ok()
    assert "exec-out" in r.out, r
    r = exec_out(node, cid, "sh", "-c", "exit 4")
    assert r.rc != 0 and "exited with 4" in r.err, r
    cell("output and exit status")


@row("exec (streaming)")
@pytest.mark.parametrize("handler", HANDLERS)
def test_exec_stream(node, handler, cell):
    pod, pid = pod_with(node, handler, "exec")
    cid = node.run_container(pid, pod, "c", SLEEP)
    r = exec_out(node, cid, "sh", "-c", "echo streamed", sync=False).ok()
    assert "streamed" in r.out, r
    cell("through the stream server")


@row("exec -i (stdin)")
@pytest.mark.parametrize("handler", HANDLERS)
def test_exec_stdin(node, handler, cell):
    pod, pid = pod_with(node, handler, "execi")
    cid = node.run_container(pid, pod, "c", SLEEP)
    r = node.crictl("exec", "-i", cid, "sh", "-c", "tr a-z A-Z", input="from-stdin\n").ok()
    assert "FROM-STDIN" in r.out, r
    cell("stdin piped in")


# ---- resources ---------------------------------------------------------------

MiB = 1024 * 1024


@row("limits, then crictl update above the policy's caps")
@pytest.mark.parametrize("handler", HANDLERS)
def test_limits_update(node, handler, cell):
    pod, pid = pod_with(node, handler, "upd")
    cid = node.run_container(pid, pod, "c", SLEEP, resources={
        "memory_limit_in_bytes": 128 * MiB, "cpu_period": 100000, "cpu_quota": 50000})
    cpid = container_pid(node, cid)
    mem = cgroup_file(cpid, "memory", "memory.limit_in_bytes")
    quota = cgroup_file(cpid, "cpu", "cpu.cfs_quota_us")
    assert read_int(mem) == 128 * MiB
    assert read_int(quota) == 50000
    r = node.crictl("update", "--memory", 512 * MiB, "--cpu-period", 100000,
                    "--cpu-quota", 400000, cid)
    m, q = read_int(mem) // MiB, read_int(quota)
    if handler == "runc":
        r.ok()
        assert (m, q) == (512, 400000)
        cell("applied: 512 MiB, quota 400000")
        return
    # the policy's caps: 256 MiB, one CPU
    assert m <= 256 and 0 < q <= 100000, (m, q, r)
    cell("%s: memory %d MiB, quota %d" % ("refused" if r.rc else "capped", m, q))


@row("OOMKilled reported")
@pytest.mark.parametrize("handler", HANDLERS)
def test_oom(node, handler, cell):
    pod, pid = pod_with(node, handler, "oom")
    cid = node.run_container(pid, pod, "c",
                             ["dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"],
                             resources={"memory_limit_in_bytes": 32 * MiB})
    st = node.wait_exited(cid)
    assert st["reason"] == "OOMKilled" and st["exitCode"] == 137, st
    cell("reason OOMKilled, exit 137")


@row("long-running process: no per-process CPU-time limit")
@pytest.mark.parametrize("handler", HANDLERS)
def test_no_rlimit_cpu(node, handler, cell):
    pod, pid = pod_with(node, handler, "rlim")
    cid = node.run_container(pid, pod, "c", SLEEP)
    out = exec_out(node, cid, "sh", "-c", "ulimit -t").ok().out.strip()
    cell("ulimit -t: %s" % out)
    assert out == "unlimited"


# ---- namespaces of a pod -----------------------------------------------------

@row("two containers: one network namespace, localhost between them")
@pytest.mark.parametrize("handler", HANDLERS)
def test_two_containers_localhost(node, handler, cell):
    pod, pid = pod_with(node, handler, "two")
    srv = node.run_container(pid, pod, "srv", SERVE)
    cli = node.run_container(pid, pod, "cli", connect_cmd("127.0.0.1", 8080, tries=10))
    st = node.wait_exited(cli)
    logs = node.logs(cli)
    inos = {ns_ino(pod_pid(node, pid), "net"), ns_ino(container_pid(node, srv), "net")}
    assert len(inos) == 1, "pause and srv in different network namespaces"
    assert "pong" in logs and st["exitCode"] == 0, logs
    cell("pause, srv, cli share one netns; pong")


@row("two containers: shared pid (POD), ipc and uts")
@pytest.mark.parametrize("handler", HANDLERS)
def test_two_containers_shared_ns(node, handler, cell):
    pod, pid = pod_with(node, handler, "shpid", pid=0)
    a = node.run_container(pid, pod, "a", SLEEP)
    b = node.run_container(pid, pod, "b", SLEEP)
    pa, pb, pp = container_pid(node, a), container_pid(node, b), pod_pid(node, pid)
    for kind in ("pid", "ipc", "uts", "net"):
        assert ns_ino(pa, kind) == ns_ino(pb, kind) == ns_ino(pp, kind), kind
    ps = exec_out(node, b, "ps").ok().out
    assert "sleep 3600" in ps and "/pause" in ps, ps
    assert exec_out(node, a, "hostname").ok().out.strip() == pod["hostname"]
    cell("pid, ipc, uts, net shared; ps sees the pause and the other container")


# ---- the network -------------------------------------------------------------

@row("crictl port-forward reaches the pod")
@pytest.mark.parametrize("handler", HANDLERS)
def test_port_forward(node, handler, cell):
    pod, pid = pod_with(node, handler, "pf")
    node.run_container(pid, pod, "srv", SERVE)
    port = 20000 + os.getpid() % 10000
    pf = node.spawn_crictl("port-forward", pid, "%d:8080" % port)
    try:
        def attempt():
            r = node.in_node(["busybox", "nc", "-w", "3", "127.0.0.1", str(port)])
            return "pong" in r.out
        ok = C.E.poll_until(attempt, timeout=20, interval=0.5)
    finally:
        pf.kill()
        pf.wait(timeout=10, check_timeout=False)
    assert ok, "port-forward never answered: %s" % (pf.output(),)
    cell("pong through port-forward")


@row("inbound: another pod connects to this pod (Service path)")
@pytest.mark.parametrize("handler", HANDLERS)
def test_inbound_from_pod(node, handler, cell):
    pod, pid = pod_with(node, handler, "in")
    node.run_container(pid, pod, "srv", SERVE)
    ip = node.pod_ip(pid)
    cpod, cpid = pod_with(node, "runc", "incli")
    cli = node.run_container(cpid, cpod, "cli", connect_cmd(ip, 8080, tries=10))
    node.wait_exited(cli)
    logs = node.logs(cli)
    assert "pong" in logs, logs
    cell("a runc pod reached %s:8080" % ip)


def egress(node, handler, name, addr, port, want_reach, label=None):
    pod, pid = pod_with(node, handler, name)
    cid = node.run_container(pid, pod, "cli", connect_cmd(addr, port))
    node.wait_exited(cid, timeout=30)
    logs = node.logs(cid)
    got = reached(logs, label, node) if label else "pong" in logs
    assert got == want_reach, logs
    return "reached" if got else "blocked"


@row("pod-to-pod: this pod connects to another pod")
@pytest.mark.parametrize("handler", HANDLERS)
def test_pod_to_pod(node, handler, cell):
    spod, spid = pod_with(node, "runc", "p2psrv")
    node.run_container(spid, spod, "srv", SERVE)
    ip = node.pod_ip(spid)
    # default policy: nothing out; networkAllowed: the pod CIDR is in allowCidrs
    want = handler != "agentsbx"
    cell(egress(node, handler, "p2p", ip, 8080, want) + " (%s:8080)" % ip)


def test_egress_names_in_a_pod(node):
    """Egress by name (issue 27) is per container, a pod's CNI namespace is
    shared: under a policy that lists names a pod's containers get no
    proxy and every new outbound connection is dropped instead, said in
    the audit log (docs/egress.md)."""
    spod, spid = pod_with(node, "runc", "egsrv")
    node.run_container(spid, spod, "srv", SERVE)
    ip = node.pod_ip(spid)
    assert egress(node, "agentsbx-egress", "eg", ip, 8080, False) == "blocked"
    with open(os.path.join(node.dir, "policy.log")) as f:
        lines = [json.loads(l) for l in f]
    assert any(l["rule"] == "egress" and "not in a joined namespace" in l["to"]
               for l in lines), lines


@row("egress to the node's address")
@pytest.mark.parametrize("handler", HANDLERS)
def test_egress_node(node, handler, cell):
    # denyCidrs (10.0.0.0/8) keeps the node out even with networkAllowed
    cell(egress(node, handler, "node", C.NODE_ADDR, C.NODE_PORT, handler == "runc",
                label="node") + " (%s:%d)" % (C.NODE_ADDR, C.NODE_PORT))


@row("egress to the metadata address 169.254.169.254")
@pytest.mark.parametrize("handler", HANDLERS)
def test_egress_metadata(node, handler, cell):
    cell(egress(node, handler, "meta", C.METADATA, C.METADATA_PORT, handler == "runc",
                label="metadata"))


# ---- host namespaces ---------------------------------------------------------

def host_ns_row(node, handler, cell, name, field, **ns):
    pod = node.pod_config(name, **ns)
    r = node.runp(handler, pod)
    if handler == "runc":
        r.ok()
        cell("runs")
        return r.out.strip(), pod
    assert r.rc != 0, "the policy let a %s pod run" % field
    m = re.search(r"the host's %s namespace \[rule \w+; no policy field allows it"
                  % re.escape(field), r.err)
    assert m and "no policy field allows it" in r.err, r.err
    cell("refused: `%s`" % m.group(0))
    return None, pod


@row("hostNetwork pod")
@pytest.mark.parametrize("handler", HANDLERS)
def test_host_network(node, handler, cell):
    pid, pod = host_ns_row(node, handler, cell, "hnet", "network", network=2)
    if pid:  # runc: in the node's namespace, with the node's address
        cid = node.run_container(pid, pod, "c", ["ip", "addr"])
        node.wait_exited(cid)
        assert C.NODE_ADDR in node.logs(cid)


@row("hostPID pod")
@pytest.mark.parametrize("handler", HANDLERS)
def test_host_pid(node, handler, cell):
    host_ns_row(node, handler, cell, "hpid", "pid", pid=2)


@row("hostIPC pod")
@pytest.mark.parametrize("handler", HANDLERS)
def test_host_ipc(node, handler, cell):
    host_ns_row(node, handler, cell, "hipc", "ipc", ipc=2)
