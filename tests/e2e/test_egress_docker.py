# SPDX-License-Identifier: Apache-2.0
"""Egress by name (issue 27) through Docker: `docker run --runtime
agentsbx` with a policy that lists allowed.test.  A dockerd of this
module's own runs in the fake internet's host-sim namespace (tests/lib/
fake_internet.py), so the runtime its shim starts, and the egress proxy,
reach only the test's namespaces."""

import json
import os
import shutil
import sys
import tempfile
import types

import pytest

from e2e_lib import DOCKER, DOCKERD, IMAGE, require
import engines

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from fake_internet import ALLOWED, FakeInternet, egress_policy  # noqa: E402


class EgressDocker(engines.Docker):
    def __init__(self, s, runtimes, inet):
        super().__init__(s, runtimes, "/agentsbx-egress-%s-docker" % s.tag, IMAGE)
        self.inet = inet

    def daemon_argv(self):
        return self.inet.argv(super().daemon_argv())


@pytest.fixture(scope="module")
def egress_docker(session):
    require((DOCKERD, DOCKER), "Docker", "docker.io")
    if not session.policy_default:
        pytest.skip("the runtime has no sandbox policy")
    inet = FakeInternet()
    tmp = tempfile.mkdtemp(prefix="agentsbx-egress-docker-", dir="/tmp")
    os.chmod(tmp, 0o755)
    # the session's log (dockerd may pass AGENTSBX_POLICY_LOG on, or not:
    # auditLog names the same file)
    log = os.environ["AGENTSBX_POLICY_LOG"]
    pol = os.path.join(tmp, "egress-policy.json")
    builtin = session.policy
    with open(pol, "w") as f:
        json.dump(egress_policy(["allowed.test"], log,
                                bindPrefixes=builtin["bindPrefixes"] + [tmp]), f)
    s = types.SimpleNamespace(tmp=tmp, tag=session.tag + "e", problems=[])
    d = EgressDocker(s, {"agentsbx-egress": {"path": session.runtime,
                                             "runtimeArgs": ["--policy", pol]}}, inet)
    try:
        why = d.start()
        if why:
            pytest.fail("dockerd in the fake internet's namespace did not start: " + why)
        os.makedirs(os.path.dirname(d.state_root), mode=0o700, exist_ok=True)
        d("import", "--change", 'CMD ["sh"]', session.rootfs_tar, IMAGE, timeout=120).ok()
        d.audit_log = log
        yield d
    finally:
        problems = d.stop()
        inet.close()
        shutil.rmtree(tmp, ignore_errors=True)
        assert not problems, problems


def test_docker_run_reaches_its_names_only(egress_docker):
    d = egress_docker
    r = d("run", "--rm", "--runtime", "agentsbx-egress", IMAGE, "sh", "-c",
          "wget -qO- http://allowed.test/; wget -qO- http://denied.test/ 2>&1 | head -c 100; "
          "env -u http_proxy -u HTTP_PROXY wget -qO- http://11.98.0.11/ 2>&1 | head -c 100",
          timeout=120)
    assert r.rc == 0, str(r)
    assert "hello from %s" % ALLOWED in r.out, str(r)
    assert r.out.count("403") == 2, str(r)
    lines = d.inet.lines()
    assert lines and all(ALLOWED in l for l in lines), lines
    with open(d.audit_log) as f:
        audit = [json.loads(l) for l in f if '"op":"egress"' in l]
    assert any(a["action"] == "allowed" and a["name"] == "allowed.test" for a in audit), audit
    assert any(a["action"] == "refused" and a["name"] == "denied.test" for a in audit), audit
