# SPDX-License-Identifier: Apache-2.0
"""Issue 16, the network model and the host namespaces, under the default
(enforce) policy, on direct bundles (tests/cri drives the same through
containerd's CRI plugin):

- a joined network namespace (a pod's: empty, made by the test as CNI
  makes one) is kept, with its address: a connection INTO the container
  works; every new connection OUT of it is dropped (weak build
  pod-egress: the table is not installed and the container reaches the
  gateway, the metadata address and an RFC 1918 address);
- networkAllowed with allowCidrs: the allowed range wins over denyCidrs;
- a joined namespace some process (not a container under --root) is in
  is refused (weak build ns-host: joined);
- a spec without a network, pid, ipc or uts namespace (the host's: docker
  --network/--pid/--ipc/--uts host, Kubernetes hostNetwork/hostPID/
  hostIPC) is refused as a request above the floor, with the same error
  as a path to the host's (weak build ns-absent: it runs); with
  onRequestAboveFloor clamp it runs in a namespace of its own.
"""

import os
import subprocess
import time
import uuid

import pytest

from conftest import make_spec, policy_file, run_cmd, spawn
from escape_helpers import BUILDS, pick_runtime, rt_as
from test_policy import test_netns  # noqa: F401  (fixture: cns + gateway gns)
from test_policy_namespaces import HostProcess

pytestmark = pytest.mark.usefixtures("agentsbx_only")

PROBE = ("for ip in 11.99.0.1 169.254.169.254 10.99.0.1; do "
         "  r=$(nc -w 5 $ip 8080 </dev/null 2>/dev/null); echo \"$ip=${r:-blocked}\"; "
         "done; ip -4 -o addr show | grep -c 11.99.0.2")


def joined_spec(args, netns):
    spec = make_spec(args)
    for n in spec["linux"]["namespaces"]:
        if n["type"] == "network":
            n["path"] = netns
    return spec


def run_spec(env, runtime, spec, *global_args):
    bundle = env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    return rt_as(env, runtime, *global_args, "run", "--bundle", bundle, env.new_id(),
                 timeout=60)


def probe_result(out):
    lines = out.split()
    return dict(l.split("=", 1) for l in lines if "=" in l), lines[-1] if lines else ""


@pytest.mark.parametrize("build", BUILDS)
def test_pod_netns_kept_and_egress_dropped(penv, test_netns, build):  # noqa: F811
    rt = pick_runtime(build, "pod-egress")
    rc, out, err = run_spec(penv, rt, joined_spec(["sh", "-c", PROBE], test_netns))
    assert rc == 0, err
    res, addrs = probe_result(out)
    # the namespace (and its address) is the one joined, not a new lo-only one
    assert addrs == "1", out
    if build == "real":
        assert res == {"11.99.0.1": "blocked", "169.254.169.254": "blocked",
                       "10.99.0.1": "blocked"}, out
    else:
        assert res["11.99.0.1"] == "hello" and res["169.254.169.254"] == "hello", out
    tables = subprocess.run(["ip", "netns", "exec", os.path.basename(test_netns), "nft",
                             "list", "tables"], capture_output=True, text=True).stdout
    assert "agentsbx" not in tables, "the container's table outlived it: " + tables


def test_pod_netns_inbound_connection_and_reply(penv, test_netns):  # noqa: F811
    """A server in the container is reached from the gateway namespace
    (a probe, a Service): replies to inbound connections pass."""
    gns = "asbx-g-" + os.path.basename(test_netns)[len("asbx-c-"):]
    spec = joined_spec(["nc", "-l", "-p", "9090", "-e", "echo", "pong"], test_netns)
    bundle = penv.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    server = spawn([penv.runtime, "--root", penv.root, "run", "--bundle", bundle,
                    penv.new_id()])
    got = ""
    try:
        end = time.monotonic() + 20
        while time.monotonic() < end and "pong" not in got:
            rc, got, _ = run_cmd(["ip", "netns", "exec", gns, "busybox", "nc", "-w", "2",
                                  "11.99.0.2", "9090"], timeout=10)
            time.sleep(0.2)
    finally:
        rc, out, err = server.wait(timeout=30)  # nc -l exits after one connection
    assert "pong" in got, "the container's server was not reached from outside: %s" % err


def test_allow_cidrs_win_over_deny_cidrs(penv, test_netns):  # noqa: F811
    pol = policy_file(penv, {"networkAllowed": True, "allowCidrs": ["10.99.0.0/24"]})
    rc, out, err = run_spec(penv, penv.runtime, joined_spec(["sh", "-c", PROBE], test_netns),
                            "--policy", pol)
    assert rc == 0, err
    res, _ = probe_result(out)
    assert res == {"11.99.0.1": "hello", "169.254.169.254": "blocked",
                   "10.99.0.1": "hello"}, out


@pytest.mark.parametrize("build", BUILDS)
def test_netns_with_a_process_in_it_refused(penv, build):
    """Not a container's and not empty: some daemon's namespace (with its
    own services on its lo) is not a pod's."""
    rt = pick_runtime(build, "ns-host")
    victim = HostProcess(["--net"])
    try:
        rc, out, err = run_spec(penv, rt, joined_spec(["true"], victim.ns("net")))
    finally:
        victim.stop()
    if build == "real":
        assert rc != 0
        assert ("is neither the network namespace of a running container under --root "
                "%s nor an empty one" % penv.root) in err, err
    else:
        assert rc == 0, err


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("nstype", ["network", "pid", "ipc", "uts"])
def test_missing_namespace_is_the_hosts_refused(penv, build, nstype):
    rt = pick_runtime(build, "ns-absent")
    spec = make_spec(["true"])
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                   if n["type"] != nstype]
    if nstype == "uts":
        spec.pop("hostname", None)
    rc, out, err = run_spec(penv, rt, spec)
    if build == "real":
        assert rc != 0, "ran in the host's %s namespace" % nstype
        assert ("the container asks for the host's %s namespace [rule %s; no policy field "
                "allows it" % (nstype, "network" if nstype == "network" else "namespaces")) \
            in err, err
    else:
        assert rc == 0, err


def test_host_netns_by_path_same_error(penv):
    """docker --network host sends the host's namespace as a path: the same
    "host network" refusal as an entry left out (a hostNetwork pod)."""
    rc, out, err = run_spec(penv, penv.runtime, joined_spec(["true"], "/proc/self/ns/net"))
    assert rc != 0
    assert ("the container asks for the host's network namespace [rule network; no policy "
            "field allows it") in err, err


def test_missing_namespace_clamped(penv):
    """onRequestAboveFloor clamp: the host's pid namespace asked for by
    leaving it out is tightened to one of the container's own."""
    pol = policy_file(penv, {"onRequestAboveFloor": "clamp"})
    spec = make_spec(["sh", "-c", "echo pid=$$"])
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                   if n["type"] != "pid"]
    rc, out, err = run_spec(penv, penv.runtime, spec, "--policy", pol)
    assert rc == 0, err
    assert "pid=1" in out, out


# ---- bind prefixes that follow the engine ------------------------------------------

def containerd_layout(env, cid, work_target=None):
    """A bundle where containerd (any --state) puts it, the shim's `work`
    link to its --root, and the CRI's files for this container's pod."""
    state, root = os.path.join(env.tmp, "ctd-state"), os.path.join(env.tmp, "ctd-root")
    task = os.path.join("io.containerd.runtime.v2.task", "k8s.io")
    os.makedirs(os.path.join(state, task), exist_ok=True)
    os.makedirs(os.path.join(root, task, cid), exist_ok=True)
    for sid in (cid, "other-pod"):
        d = os.path.join(root, "io.containerd.grpc.v1.cri", "sandboxes", sid)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "hosts"), "w") as f:
            f.write("10.0.0.1 %s\n" % sid)
    bundle = env.make_bundle(os.path.join("ctd-state", task, cid))
    os.symlink(work_target or os.path.join(root, task, cid), os.path.join(bundle, "work"))
    return bundle, root


def bind(spec, source, dest):
    spec["mounts"].append({"destination": dest, "type": "bind", "source": source,
                           "options": ["rbind", "ro"]})
    return spec


def test_engine_dirs_are_bind_sources(penv):
    """containerd with a --root/--state of its own (not the built-in
    bindPrefixes): the pod's hosts file binds; another pod's does not; a
    `work` link naming "/" widens nothing; -v /:/host stays refused."""
    cid = penv.new_id()
    bundle, root = containerd_layout(penv, cid)
    hosts = os.path.join(root, "io.containerd.grpc.v1.cri", "sandboxes", cid, "hosts")
    from conftest import write_spec
    write_spec(bundle, bind(make_spec(["cat", "/etc/hosts"]), hosts, "/etc/hosts"))
    rc, out, err = rt_as(penv, penv.runtime, "run", "--bundle", bundle, cid, timeout=60)
    assert rc == 0, err
    assert "10.0.0.1 %s" % cid in out
    other = os.path.join(root, "io.containerd.grpc.v1.cri", "sandboxes", "other-pod", "hosts")
    for source in (other, "/"):
        write_spec(bundle, bind(make_spec(["true"]), source, "/x"))
        rc, out, err = rt_as(penv, penv.runtime, "run", "--bundle", bundle, cid, timeout=60)
        assert rc != 0 and "bind mount of host path %s on /x is not allowed" % source in err, err


def test_engine_work_link_elsewhere_widens_nothing(penv):
    cid = penv.new_id()
    bundle, root = containerd_layout(penv, cid, work_target="/")
    hosts = os.path.join(root, "io.containerd.grpc.v1.cri", "sandboxes", cid, "hosts")
    from conftest import write_spec
    write_spec(bundle, bind(make_spec(["true"]), hosts, "/etc/hosts"))
    rc, out, err = rt_as(penv, penv.runtime, "run", "--bundle", bundle, cid, timeout=60)
    assert rc != 0 and "is not allowed by the policy" in err, err
