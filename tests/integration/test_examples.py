"""The examples at the top of the repository run as they are:
config.json.example (a bundle config for untrusted code, documented field by
field in config.json.example.md) with the default policy in force and with
the policy off."""

import json
import os

import pytest

from conftest import run_cmd, write_spec

pytestmark = pytest.mark.usefixtures("agentsbx_only")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_example():
    with open(os.path.join(REPO, "config.json.example")) as f:
        return json.load(f)


def status_of(out):
    return dict(l.split(":\t", 1) for l in out.splitlines() if ":\t" in l)


@pytest.mark.parametrize("policy", ["default", "off"])
def test_config_json_example_runs(penv, policy):
    bundle = penv.make_bundle("example")
    write_spec(bundle, load_example())
    extra = []
    if policy == "off":
        path = os.path.join(penv.tmp, "off.json")
        with open(path, "w") as f:
            f.write('{"mode": "off"}\n')
        extra = ["--policy", path]
    cid = penv.new_id()
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root] + extra +
                           ["run", "--bundle", bundle, cid], timeout=60)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    lines = out.splitlines()
    assert lines[0] == "hello from agentsbx"
    # the example's own uid, or under the policy one of the container's own
    assert lines[1] == "65534" if policy == "off" else int(lines[1]) >= 1879048192, out
    st = status_of(out)
    assert int(st["CapEff"], 16) == 0
    assert st["NoNewPrivs"] == "1"
    # The example carries no profile of its own; the default policy stacks
    # its strict one (config.json.example.md says so).
    assert st["Seccomp"] == ("2" if policy == "default" else "0")


def test_policy_json_example_loads_and_runs(penv):
    """policy.json.example (installed by `make install` under /etc/agentsbx)
    is a valid policy, the same as the built-in default, and runs the
    example config."""
    example = os.path.join(REPO, "policy.json.example")
    rc, out, err = run_cmd([penv.runtime, "--policy", example, "policy", "show"])
    assert rc == 0, err
    shown = json.loads(out)
    rc, out, err = run_cmd([penv.runtime, "policy", "show"])
    default = json.loads(out)
    assert shown.pop("source") == example
    default.pop("source")
    assert shown == default
    bundle = penv.make_bundle("example")
    write_spec(bundle, load_example())
    cid = penv.new_id()
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", example,
                            "run", "--bundle", bundle, cid], timeout=60)
    assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    assert out.splitlines()[0] == "hello from agentsbx"


def test_make_install_into_destdir(tmp_path):
    """`make install DESTDIR=...`: the binary runs from where it was put, the
    example policy lands under etc/agentsbx, and a second install keeps an
    example (and a policy.json) the operator already has."""
    dest = str(tmp_path / "root")
    env = dict(os.environ, MAKEFLAGS="")
    # The build under test (BUILD=build-asan for make asan), so that
    # install copies it instead of building another one.
    build = os.path.relpath(os.path.dirname(os.path.realpath(os.environ["AGENTSBX"])), REPO)
    make = ["make", "-s", "-C", REPO, "install", "DESTDIR=" + dest]
    if not build.startswith(".."):
        make.append("BUILD=" + build)
    rc, out, err = run_cmd(make, timeout=300, env=env)
    assert rc == 0, out + err
    binary = os.path.join(dest, "usr/local/bin/agentsbx")
    rc, out, err = run_cmd([binary, "--version"])
    assert rc == 0 and out.startswith("agentsbx version "), out + err
    example = os.path.join(dest, "etc/agentsbx/policy.json.example")
    with open(example) as f, open(os.path.join(REPO, "policy.json.example")) as g:
        assert f.read() == g.read()
    with open(example, "w") as f:
        f.write("{}\n")
    policy = os.path.join(dest, "etc/agentsbx/policy.json")
    with open(policy, "w") as f:
        f.write('{"mode": "audit"}\n')
    rc, out, err = run_cmd(make, timeout=300, env=env)
    assert rc == 0, out + err
    with open(example) as f:
        assert f.read() == "{}\n"
    with open(policy) as f:
        assert f.read() == '{"mode": "audit"}\n'
