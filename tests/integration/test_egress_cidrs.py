# SPDX-License-Identifier: Apache-2.0
"""The CIDR path (networkAllowed + denyCidrs), the egress issue's holes: a
container reached Azure's wireserver (168.63.129.16), Oracle Cloud's
metadata (192.0.0.192), 198.18.0.1, and 169.254.169.254 itself through
NAT64 (64:ff9b::a9fe:a9fe), 6to4 (2002:a9fe:a9fe::1) and IPv4-mapped forms.

A test network namespace stands in for a cloud host: its gateway answers on
every one of those addresses (one listener, dual-stack).  First with the
policy off, every address answers (so the test cannot pass on a broken
network); then under networkAllowed every denied one is blocked while an
allowed address still answers.
"""

import subprocess
import uuid

import pytest

from conftest import make_spec, policy_file, run_cmd

pytestmark = pytest.mark.usefixtures("agentsbx_only")

LISTENER = r"""
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", 8080))
s.listen(64)
print("ready", flush=True)
s.settimeout(120)
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.sendall(b"hello\n")
    c.close()
"""

ALLOWED = ["11.99.0.1", "2a00:11::1"]
DENIED = ["168.63.129.16", "192.0.0.192", "198.18.0.1", "169.254.169.254",
          "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "64:ff9b::a83f:8110",
          "64:ff9b:1:a9fe:a9::fe00", "2001:0:a9fe:a9fe::1"]


@pytest.fixture
def cloud_netns():
    tag = uuid.uuid4().hex[:6]
    cns, gns = "asbx-c-" + tag, "asbx-g-" + tag
    vc, vg = "vc" + tag, "vg" + tag
    cmds = [
        ["ip", "netns", "add", cns], ["ip", "netns", "add", gns],
        ["ip", "link", "add", vc, "netns", cns, "type", "veth", "peer", "name", vg,
         "netns", gns],
        ["ip", "-n", cns, "addr", "add", "11.99.0.2/24", "dev", vc],
        ["ip", "-n", cns, "addr", "add", "2a00:11::2/64", "dev", vc, "nodad"],
        ["ip", "-n", cns, "link", "set", vc, "up"],
        ["ip", "-n", cns, "route", "add", "default", "dev", vc],
        ["ip", "-n", cns, "-6", "route", "add", "default", "dev", vc],
        ["ip", "-n", gns, "link", "set", vg, "up"],
        ["ip", "-n", gns, "link", "set", "lo", "up"],
    ]
    for a in ALLOWED + DENIED:
        v6 = ":" in a
        cmds.append(["ip", "-n", gns, "addr", "add", a + ("/128" if v6 else "/32"), "dev", vg]
                    + (["nodad"] if v6 else []))
    cmds += [["ip", "-n", gns, "route", "add", "11.99.0.0/24", "dev", vg],
             ["ip", "-n", gns, "-6", "route", "add", "2a00:11::/64", "dev", vg]]
    listener = None
    try:
        for c in cmds:
            subprocess.run(c, check=True, capture_output=True, timeout=10)
        listener = subprocess.Popen(["ip", "netns", "exec", gns, "/usr/bin/python3", "-c",
                                     LISTENER], stdout=subprocess.PIPE, text=True)
        assert listener.stdout.readline().strip() == "ready"
        yield "/run/netns/" + cns
    finally:
        if listener:
            listener.kill()
            listener.wait()
        for ns in (cns, gns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=10)


def probe(penv, netns, policy, addrs):
    spec = make_spec(["sh", "-c", "for a in %s; do r=$(nc -w 2 $a 8080 </dev/null 2>/dev/null); "
                      "echo \"$a=${r:-blocked}\"; done" % " ".join(addrs)])
    for n in spec["linux"]["namespaces"]:
        if n["type"] == "network":
            n["path"] = netns
    bundle = penv.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", policy, "run",
                            "--bundle", bundle, penv.new_id()], timeout=120)
    assert rc == 0, err
    return dict(l.split("=", 1) for l in out.split())


def test_every_metadata_and_translated_form_is_refused(penv, cloud_netns):
    addrs = ALLOWED + DENIED
    off = probe(penv, cloud_netns, policy_file(penv, {"mode": "off"}), addrs)
    assert off == {a: "hello" for a in addrs}, off
    got = probe(penv, cloud_netns, policy_file(penv, {"networkAllowed": True}), addrs)
    assert {a: got[a] for a in ALLOWED} == {a: "hello" for a in ALLOWED}, got
    assert {a: got[a] for a in DENIED} == {a: "blocked" for a in DENIED}, got


def test_the_translations_follow_an_operators_own_list(penv, cloud_netns):
    """denyCidrs of the operator's own (11.99.0.0/24 only): its NAT64 and
    6to4 forms are refused with it."""
    pol = policy_file(penv, {"networkAllowed": True, "denyCidrs": ["11.99.0.0/24"]})
    got = probe(penv, cloud_netns, pol, ["11.99.0.1", "2a00:11::1"])
    assert got == {"11.99.0.1": "blocked", "2a00:11::1": "hello"}, got
