# SPDX-License-Identifier: Apache-2.0
"""Egress by name (issue 27) on direct bundles: a container whose policy
lists names reaches those and nothing else, through the runtime's proxy.

The runtime runs in the host-sim namespace of a fake internet
(tests/lib/fake_internet.py), so its proxy's connections reach only the
test's own namespaces; the names resolve by the policy's egress.hosts pins.
The internet's server logs every connection it gets, and from where: only
the proxy's side (11.98.0.1) may appear, and only for allowed.test.
"""

import json
import os
import random
import signal
import sys
import time
import uuid

import pytest

from conftest import make_spec, policy_file, run_cmd, spawn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from fake_internet import ALLOWED, DENIED, PROXY_SIDE, FakeInternet, egress_policy  # noqa: E402

pytestmark = pytest.mark.usefixtures("agentsbx_only")


@pytest.fixture
def inet():
    i = FakeInternet()
    yield i
    i.close()


def run_in(penv, inet, script, pol, extra_spec=None):
    spec = make_spec(["sh", "-c", script])
    if extra_spec:
        extra_spec(spec)
    bundle = penv.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    cid = penv.track_id(penv.new_id())
    rc, out, err = run_cmd(inet.argv([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                                      "--bundle", bundle, cid]), timeout=120)
    return rc, out, err, cid


def audit(cid):
    path = os.environ["AGENTSBX_POLICY_LOG"]
    with open(path) as f:
        return [json.loads(l) for l in f if '"%s"' % cid in l and '"op":"egress"' in l]


PROBES = r"""
echo "http=$(wget -qO- http://allowed.test/ 2>&1)"
echo "transparent=$(env -u http_proxy -u HTTP_PROXY wget -qO- http://allowed.test/ 2>&1)"
echo "denied=$(wget -qO- http://denied.test/ 2>&1 | head -c 200)"
echo "metadata=$(wget -qO- http://metadata.test/ 2>&1 | head -c 200)"
echo "by-ip=$(env -u http_proxy -u HTTP_PROXY wget -qO- http://11.98.0.10/ 2>&1 | head -c 200)"
echo "tls-allowed=$(tlshello allowed.test 443 allowed.test)"
echo "tls-by-ip=$(tlshello 11.98.0.11 443 allowed.test)"
echo "tls-denied=$(tlshello 11.98.0.11 443 denied.test)"
echo "tls-no-sni=$(tlshello 11.98.0.10 443 '')"
echo "port22=$(nc -w 2 11.98.0.10 22 </dev/null >/dev/null 2>&1 && echo open || echo closed)"
echo "dns-off-list=$(nslookup x7.exfil.test 11.98.0.10 2>&1 | tr '\n' ' ' | head -c 200)"
echo "dns-sub=$(nslookup secret.allowed.test 2>&1 | tr '\n' ' ' | head -c 200)"
"""


def results(out):
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)


def test_a_container_reaches_its_names_and_nothing_else(penv, inet):
    pol = policy_file(penv, egress_policy(["allowed.test", "metadata.test"],
                                          os.environ["AGENTSBX_POLICY_LOG"]))
    rc, out, err, cid = run_in(penv, inet, PROBES, pol)
    assert rc == 0, err
    r = results(out)
    assert r["http"] == "hello from %s" % ALLOWED, out
    assert r["transparent"] == "hello from %s" % ALLOWED, out
    assert "403" in r["denied"], out
    assert "403" in r["metadata"], out
    assert "403" in r["by-ip"], out
    assert r["tls-allowed"] == "answer=tls", out
    # an address the container dialled is never where it goes: the name is
    assert r["tls-by-ip"] == "answer=tls", out
    assert r["tls-denied"] == "answer=none", out
    assert r["tls-no-sni"] == "answer=none", out
    assert r["port22"] == "closed", out
    assert "NXDOMAIN" in r["dns-off-list"] or "can't resolve" in r["dns-off-list"], out
    assert "NXDOMAIN" in r["dns-sub"] or "can't resolve" in r["dns-sub"], out
    # what reached the internet: only allowed.test, only from the proxy
    lines = inet.lines()
    assert lines, "nothing reached the fake internet"
    for l in lines:
        assert ALLOWED in l or "sni allowed.test" in l, lines
        assert "from " + PROXY_SIDE in l, lines
        assert not l.startswith(("udp53", "tcp22")), lines
    assert any(l.startswith("sni allowed.test") for l in lines), lines
    # every connection is an audit line, with the rule for a refusal
    a = audit(cid)
    refused = [x for x in a if x["action"] == "refused"]
    allowed = [x for x in a if x["action"] == "allowed"]
    assert any(x["name"] == "denied.test" and "egress.allowDomains" in x["to"] for x in refused), a
    assert any(x["name"] == "metadata.test" and "denyCidrs" in x["to"] for x in refused), a
    assert any(x["name"] == "allowed.test" and x["address"] == ALLOWED and x["bytesIn"] > 0
               for x in allowed), a
    assert any(x["field"] == "dns" and x["name"] == "x7.exfil.test" for x in refused), a


def test_the_denied_cidrs_hold_after_resolution(penv, inet):
    """metadata.test listed, but it resolves to 169.254.169.254: refused by
    denyCidrs; allowCidrs letting it through proves the refusal was that."""
    pol = policy_file(penv, egress_policy(["metadata.test"], os.environ["AGENTSBX_POLICY_LOG"],
                                          allowCidrs=["169.254.169.254/32"]))
    rc, out, err, cid = run_in(penv, inet, 'wget -qO- http://metadata.test/', pol)
    assert rc == 0 and out.strip() == "hello from 169.254.169.254", (out, err)


def test_an_annotation_narrows_and_more_is_refused(penv, inet):
    pol = policy_file(penv, egress_policy(["allowed.test", "denied.test"],
                                          os.environ["AGENTSBX_POLICY_LOG"]))

    def narrow(spec):
        spec["annotations"] = {"agentsbx.egress.allow": "allowed.test"}
    rc, out, err, _ = run_in(penv, inet, 'wget -qO- http://denied.test/ 2>&1 | head -c 300', pol,
                             narrow)
    assert rc == 0 and "403" in out, (out, err)

    def more(spec):
        spec["annotations"] = {"agentsbx.egress.allow": "github.com"}
    rc, out, err, _ = run_in(penv, inet, 'true', pol, more)
    assert rc != 0 and "egress.allowDomains (list github.com)" in err, err


def test_without_names_nothing_changes(penv, inet):
    """No allowDomains (the default): no proxy, only lo, as before."""
    pol = policy_file(penv, {"auditLog": os.environ["AGENTSBX_POLICY_LOG"]})
    rc, out, err, cid = run_in(penv, inet, 'wget -qO- http://11.98.0.10/ 2>&1; echo; env | grep -ci proxy; true', pol)
    assert rc == 0, err
    assert out.strip().splitlines()[-1] == "0", out
    assert not audit(cid)
    assert not inet.lines()


def proxies_of(root):
    """Our egress proxies: forked from `agentsbx --root ROOT ...` (no exec)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if root.encode() in argv and b"create" in argv:
            found.append(int(pid))
    return found


def test_sigkill_of_create_at_any_point_leaves_no_proxy(penv, inet):
    """create SIGKILLed at a random point, then delete --force: no proxy,
    no state; ten times over."""
    pol = policy_file(penv, egress_policy(["allowed.test"], os.environ["AGENTSBX_POLICY_LOG"]))
    bundle = penv.make_bundle("b-kill", spec=make_spec(["sleep", "60"]))
    rnd = random.Random(27)
    for i in range(10):
        cid = penv.track_id(penv.new_id())
        p = spawn(inet.argv([penv.runtime, "--root", penv.root, "--policy", pol, "create",
                             "--bundle", bundle, cid]))
        time.sleep(rnd.uniform(0.0, 0.15))
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
        run_cmd([penv.runtime, "--root", penv.root, "delete", "--force", cid], timeout=30)
        deadline = time.time() + 5
        while proxies_of(penv.root) and time.time() < deadline:
            time.sleep(0.05)
        assert not proxies_of(penv.root), "round %d: a proxy outlived delete --force" % i
        assert cid not in os.listdir(penv.root)
