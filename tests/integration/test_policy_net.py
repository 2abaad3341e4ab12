# SPDX-License-Identifier: Apache-2.0
"""Issue 12, network rows, under the default (enforce) policy:

10. the strict agent seccomp profile judges socket() by protocol too: TCP,
    UDP, ping and unix sockets are made; SCTP, MPTCP and UDP-Lite are not
    (weak build: socket-proto, the protocol test off);
11. the egress nftables table written into a JOINED network namespace is
    the container's own (named after it) and goes when the container does.
"""

import os
import subprocess
import uuid

import pytest

from conftest import kv_lines, make_spec, run_cmd
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")


def run_with(env, runtime, args, extra_global=(), spec_changes=None):
    spec = make_spec(args)
    if spec_changes:
        spec_changes(spec)
    bundle = env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    cid = env.new_id()
    rc, out, err = run_cmd([runtime, "--root", env.root] + list(extra_global) +
                           ["run", "--bundle", bundle, cid], timeout=60)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    return out


# ---- 10: socket() by protocol ----------------------------------------------------

ALLOWED = ["unix_stream", "unix_dgram", "tcp4", "tcp4_proto", "tcp4_flags", "tcp6",
           "tcp6_proto", "udp4", "udp4_proto", "udp6", "netlink_route"]
# The kernel may still refuse a ping socket (net.ipv4.ping_group_range):
# EACCES, never the profile's EPERM.
PING = ["ping4", "ping6"]
REFUSED = {"sctp4": "EPERM", "sctp4_seqpacket": "EPERM", "sctp6": "EPERM",
           "udplite4": "EPERM", "udplite6": "EPERM",
           "mptcp4": "EPROTONOSUPPORT", "mptcp6": "EPROTONOSUPPORT",
           "tcp4_as_dgram": "EPERM", "udp4_as_stream": "EPERM"}


@pytest.mark.parametrize("build", BUILDS)
def test_strict_profile_filters_socket_protocol(penv, build):
    rt = pick_runtime(build, "socket-proto")
    res = kv_lines(run_with(penv, rt, ["/usr/local/bin/sockproto"]))
    for k in ALLOWED:
        assert res[k] == "OK", (k, res)
    for k in PING:
        assert res[k] in ("OK", "EACCES"), (k, res)
    if build == "weak":
        # The protocol test off: what this kernel has is made.
        made = [k for k in ("mptcp4", "mptcp6", "udplite4", "udplite6") if res[k] == "OK"]
        assert made, "weak build (socket-proto): no refused protocol was created: %s" % res
        return
    for k, want in REFUSED.items():
        assert res[k] == want, (k, res)


# ---- 11: the egress table in a joined network namespace ------------------------------

@pytest.fixture
def joined_netns():
    """A network namespace made by the test (`ip netns add`), as a pod's."""
    name = "asbx-j-" + uuid.uuid4().hex[:6]
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True, timeout=10)
    try:
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=10)


def netns_tables(name):
    r = subprocess.run(["ip", "netns", "exec", name, "nft", "list", "tables"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    return [l.split()[-1] for l in r.stdout.splitlines() if l.startswith("table")]


def allow_network_policy(env):
    path = os.path.join(env.tmp, "policy-net.json")
    with open(path, "w") as f:
        f.write('{"networkAllowed": true}')
    return path


def joined_bundle(env, name, args):
    spec = make_spec(args)
    for n in spec["linux"]["namespaces"]:
        if n["type"] == "network":
            n["path"] = "/run/netns/" + name
    return env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)


def test_egress_table_removed_from_joined_netns_at_delete(penv, joined_netns):
    pol = allow_network_policy(penv)
    bundle = joined_bundle(penv, joined_netns, ["sleep", "30"])
    cid = penv.new_id()
    g = [penv.runtime, "--root", penv.root, "--policy", pol]
    rc, out, err = run_cmd(g + ["create", "--bundle", bundle, cid], timeout=30)
    assert rc == 0, err
    rc, out, err = run_cmd(g + ["start", cid], timeout=30)
    assert rc == 0, err
    tables = netns_tables(joined_netns)
    assert [t for t in tables if t.startswith("agentsbx")], tables
    # The container's own table (named after it), with the policy's rules.
    rules = subprocess.run(["ip", "netns", "exec", joined_netns, "nft", "list", "table",
                            "inet", "agentsbx-" + cid], capture_output=True, text=True).stdout
    assert rules.count("drop") == 2, rules
    rc, out, err = run_cmd(g + ["delete", "--force", cid], timeout=30)
    assert rc == 0, err
    tables = netns_tables(joined_netns)
    assert not [t for t in tables if t.startswith("agentsbx")], \
        "the container's egress table outlived it in the joined netns: %s" % tables


def test_egress_table_removed_after_run_and_failed_create(penv, joined_netns):
    pol = allow_network_policy(penv)
    g = [penv.runtime, "--root", penv.root, "--policy", pol]
    # run: the container deletes itself when its process exits.
    bundle = joined_bundle(penv, joined_netns, ["sh", "-c", "true"])
    rc, out, err = run_cmd(g + ["run", "--bundle", bundle, penv.new_id()], timeout=30)
    assert rc == 0, err
    assert not [t for t in netns_tables(joined_netns) if t.startswith("agentsbx")]
    # A create that fails after init wrote the table (no such executable).
    bundle = joined_bundle(penv, joined_netns, ["/no/such/program"])
    rc, out, err = run_cmd(g + ["create", "--bundle", bundle, penv.new_id()], timeout=30)
    assert rc != 0
    assert not [t for t in netns_tables(joined_netns) if t.startswith("agentsbx")], \
        "a failed create left its egress table in the joined netns"
