# SPDX-License-Identifier: Apache-2.0
"""Issue 12, rows 14 and 17 (hooks and capabilities).

Row 14: an OCI hook in config.json runs on the host as root with every
capability and the argv config.json gives it.  Under the default (enforce)
policy a hook is a command: it runs only when the file its path opens to
(located by runtime/judge/: symlinks and /proc/PID/exe followed, and the
file must be where the kernel says in this mount namespace), its argv and
its env match a rule — Docker's own libnetwork-setkey hook for this
container, or an operator's hookRules entry (spec/policy/policy_hooks.c,
hooks/hook_guard.c) — and that very fd is executed.  startContainer hooks
(looked up in the image) are refused.  Weak build "hook-prefixes": hooks are
not judged, the attack runs.

Row 17 (policy off, runc-compatible): no process.capabilities means no
capabilities; hooks run with umask 022, also the container-side ones.
"""

import json
import os
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import policy_file, add_mount, make_spec, run_cmd
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")

SH = "/bin/sh"


def hook_spec(kind, path, args, process=("true",)):
    spec = make_spec(list(process))
    spec["hooks"] = {kind: [{"path": path, "args": list(args)}]}
    return spec


def run_bundle(env, spec, runtime=None, extra=()):
    bundle = env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    cid = env.new_id()
    argv = [runtime or env.runtime, "--root", env.root] + list(extra) + \
        ["run", "--bundle", bundle, cid]
    return run_cmd(argv, timeout=60)


def rule(path, args, env=None, kinds=None):
    """One hookRules entry."""
    r = {"path": path, "args": list(args)}
    if env is not None:
        r["env"] = list(env)
    if kinds is not None:
        r["kinds"] = list(kinds)
    return r


def allowed_dir(env):
    """A directory for the hook binaries a test policy's hookRules name."""
    d = os.path.join(env.tmp, "hookbin")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    return d


def marker_script(d, name="mark.sh"):
    """#!/bin/sh script: touch "$1" (a script: executed from an O_PATH fd,
    its interpreter reads it from /dev/fd/N)."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write('#!/bin/sh\ntouch "$1"\n')
    os.chmod(path, 0o755)
    return path


# ---- row 14: the default policy --------------------------------------------------

@pytest.mark.parametrize("build", BUILDS)
def test_prestart_shell_hook_refused_under_default_policy(penv, build):
    runtime = pick_runtime(build, "hook-prefixes")
    out = penv.hostdir("host")
    pwned = os.path.join(out, "pwned")
    spec = hook_spec("prestart", SH, ["sh", "-c", "touch %s" % pwned])
    rc, _, err = run_bundle(penv, spec, runtime=runtime)
    if build == "weak":
        assert os.path.exists(pwned), (
            "weak build (hook-prefixes): the hook did not run, the test proves "
            "nothing: rc %d %s" % (rc, err))
        return
    assert rc != 0
    assert not os.path.exists(pwned), "a config.json hook ran /bin/sh on the host"
    assert "hooks.prestart[0]" in err and SH in err, err
    assert "hookRules" in err and "hooks rule" in err, err


@pytest.mark.parametrize("kind", ["createRuntime", "createContainer", "poststart",
                                  "poststop"])
def test_every_host_hook_kind_refused_at_create(penv, kind):
    out = penv.hostdir("host")
    pwned = os.path.join(out, "pwned")
    spec = hook_spec(kind, SH, ["sh", "-c", "touch %s" % pwned])
    bundle = penv.make_bundle("b", spec=spec)
    cid = penv.new_id()
    rc, _, err = penv.rt("create", "--bundle", bundle, cid, check=False)
    assert rc != 0
    assert "hooks.%s[0]" % kind in err and "hookRules" in err, err
    assert not os.path.exists(pwned)
    rc, _, _ = penv.rt("state", cid, check=False)
    assert rc != 0, "a refused create left a container"


def test_start_container_hook_refused_even_if_allowed(penv):
    d = allowed_dir(penv)
    pol = policy_file(penv, {"hookRules": [rule("/bin/true", [])]})
    spec = hook_spec("startContainer", "/bin/true", [])
    rc, _, err = run_bundle(penv, spec, extra=["--policy", pol])
    assert rc != 0
    assert "hooks.startContainer[0]" in err and "startContainer hook" in err, err


def test_hook_matching_a_rule_runs(penv):
    d = allowed_dir(penv)
    script = marker_script(d)
    out = penv.hostdir("host")
    mark = os.path.join(out, "ran")
    pol = policy_file(penv, {"hookRules": [rule(script, [script, mark + "-*"])]})
    spec = make_spec(["true"])
    spec["hooks"] = {k: [{"path": script, "args": [script, mark + "-" + k]}]
                     for k in ("prestart", "createRuntime", "createContainer",
                               "poststart", "poststop")}
    rc, _, err = run_bundle(penv, spec, extra=["--policy", pol])
    assert rc == 0, err
    for k in spec["hooks"]:
        assert os.path.exists(mark + "-" + k), (k, err)
        # row 17: hooks run with umask 022
        assert os.stat(mark + "-" + k).st_mode & 0o777 == 0o644, k


def test_symlink_in_allowed_prefix_to_outside_refused(penv):
    d = allowed_dir(penv)
    link = os.path.join(d, "sh")
    os.symlink(SH, link)
    out = penv.hostdir("host")
    pwned = os.path.join(out, "pwned")
    pol = policy_file(penv, {"hookRules": [rule(link, ["sh", "-c", "*"])]})
    spec = hook_spec("prestart", link, ["sh", "-c", "touch %s" % pwned])
    rc, _, err = run_bundle(penv, spec, extra=["--policy", pol])
    assert rc != 0
    assert not os.path.exists(pwned)
    real = os.path.realpath(SH)
    assert link in err and "(the file %s)" % real in err, err


def test_proc_pid_exe_judged_on_the_binary(penv):
    """/proc/<pid>/exe (Docker's libnetwork-setkey hook path) is allowed when
    the binary it opens to is; the same string for a shell is refused."""
    d = allowed_dir(penv)
    mysh = os.path.join(d, "mysh")
    shutil.copy2(os.path.realpath(SH), mysh)
    out = penv.hostdir("host")
    pol = policy_file(penv, {"hookRules": [rule(mysh, ["mysh", "-c", "touch *"])]})
    allowed = subprocess.Popen([mysh, "-c", "read x"], stdin=subprocess.PIPE)
    other = subprocess.Popen([SH, "-c", "read x"], stdin=subprocess.PIPE)
    try:
        time.sleep(0.2)
        mark = os.path.join(out, "via-exe")
        spec = hook_spec("prestart", "/proc/%d/exe" % allowed.pid,
                         ["mysh", "-c", "touch %s" % mark])
        rc, _, err = run_bundle(penv, spec, extra=["--policy", pol])
        assert rc == 0, err
        assert os.path.exists(mark)
        pwned = os.path.join(out, "pwned")
        spec = hook_spec("prestart", "/proc/%d/exe" % other.pid,
                         ["sh", "-c", "touch %s" % pwned])
        rc, _, err = run_bundle(penv, spec, extra=["--policy", pol])
        assert rc != 0 and not os.path.exists(pwned)
        assert "/proc/%d/exe" % other.pid in err and "hookRules" in err, err
    finally:
        for p in (allowed, other):
            p.kill()
            p.wait(10)


def test_policy_show_lists_the_hook_rules(penv):
    rc, out, err = penv.rt("policy", "show", check=False)
    assert rc == 0, err
    shown = json.loads(out)
    assert "/usr/bin/dockerd" in shown["dockerHook"], shown
    assert shown["hookRules"] == [], shown
    assert "hookPrefixes" not in shown


def test_hook_prefixes_key_is_refused_with_what_replaced_it(penv):
    pol = policy_file(penv, {"hookPrefixes": ["/usr/bin"]})
    rc, _, err = penv.rt("--policy", pol, "policy", "show", check=False)
    assert rc != 0
    assert "hookPrefixes" in err and "hookRules" in err and "dockerHook" in err, err


# ---- issue 26 rows 1-4: a hook is a command, judged on the located file --------

@pytest.mark.parametrize("build", BUILDS)
def test_hook_in_another_mount_namespace_is_refused(penv, build):
    """Row 1: an operator rule names the host binary TOOL; another
    container's image has a shell at the same path, and
    /proc/<its pid>/root/TOOL opens to that shell, whose readlink in the
    runtime says TOOL.  Located in this mount namespace (re-opened and
    compared), it is not what is at TOOL: refused.  Weak build "locate":
    the readlink is trusted and the shell runs on the host."""
    runtime = pick_runtime(build, "locate")
    d = allowed_dir(penv)
    tool = os.path.join(d, "tool")
    with open(tool, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(tool, 0o755)
    pwned = os.path.join(penv.hostdir("host"), "pwned")
    other = penv.make_bundle("other", spec=make_spec(["sleep", "60"]))
    planted = os.path.join(other, "rootfs") + tool
    os.makedirs(os.path.dirname(planted), exist_ok=True)
    shutil.copy2(os.path.realpath("/bin/busybox"), planted)
    ocid = penv.new_id()
    # policy off for the other container: no tmpfs over /tmp hides the plant
    off = policy_file(penv, {"mode": "off"})
    penv.rt("--policy", off, "create", "--bundle", other, ocid)
    try:
        pid = json.loads(penv.rt("state", ocid)[1])["pid"]
        pol = policy_file(penv, {"hookRules": [rule(tool, ["sh", "-c", "*"])]})
        spec = hook_spec("prestart", "/proc/%d/root%s" % (pid, tool),
                         ["sh", "-c", "touch %s" % pwned])
        rc, _, err = run_bundle(penv, spec, runtime=runtime, extra=["--policy", pol])
    finally:
        penv.rt("delete", "--force", ocid, check=False)
    if build == "weak":
        assert os.path.exists(pwned), "weak build: the planted shell did not run: %s" % err
        return
    assert rc != 0 and not os.path.exists(pwned), err
    assert "not what is at %s" % tool in err, err


def env_script(d, name="env.sh"):
    """#!/bin/sh script: write its argv and LD_PRELOAD into "$1"."""
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write('#!/bin/sh\necho "args=$* preload=$LD_PRELOAD" > "$1"\n')
    os.chmod(path, 0o755)
    return path


@pytest.mark.parametrize("build", BUILDS)
def test_allowed_binary_with_ld_preload_is_refused(penv, build):
    """Row 2: the binary is allowed, its environment chooses what it
    loads: any LD_* entry is refused whatever the rules say.  Weak build
    "hook-prefixes" (hooks not judged as commands): the host-root process
    runs with the author's LD_PRELOAD."""
    runtime = pick_runtime(build, "hook-prefixes")
    d = allowed_dir(penv)
    script = env_script(d)
    mark = os.path.join(penv.hostdir("host"), "ran")
    pol = policy_file(penv, {"hookRules": [rule(script, [script, "*"], env=["*"])]})
    spec = hook_spec("prestart", script, [script, mark])
    spec["hooks"]["prestart"][0]["env"] = ["LD_PRELOAD=/nonexistent/evil.so"]
    rc, _, err = run_bundle(penv, spec, runtime=runtime, extra=["--policy", pol])
    if build == "weak":
        with open(mark) as f:
            assert "preload=/nonexistent/evil.so" in f.read(), "weak build: no LD_PRELOAD"
        return
    assert rc != 0 and not os.path.exists(mark), err
    assert "LD_" in err, err


@pytest.mark.parametrize("build", BUILDS)
def test_allowed_binary_with_the_authors_argv_is_refused(penv, build):
    """Row 3's class: the binary is the operator's, the argv the author's
    (dockerd's --pidfile, -H, --config-file): a rule names the argv's shape
    too, and an argv outside it is refused.  Weak build: it runs with the
    author's argv on the host, as root."""
    runtime = pick_runtime(build, "hook-prefixes")
    d = allowed_dir(penv)
    script = env_script(d)
    mark = os.path.join(penv.hostdir("host"), "ran")
    pol = policy_file(penv, {"hookRules": [rule(script, [script, "/only/this/file"])]})
    spec = hook_spec("prestart", script, [script, mark, "--pidfile", "/etc/victim"])
    rc, _, err = run_bundle(penv, spec, runtime=runtime, extra=["--policy", pol])
    if build == "weak":
        with open(mark) as f:
            assert "--pidfile /etc/victim" in f.read(), "weak build: not run with that argv"
        return
    assert rc != 0 and not os.path.exists(mark), err
    assert "hooks.prestart[0]" in err and "hookRules" in err, err


@pytest.mark.parametrize("args", [
    ["dockerd", "--pidfile", "/etc/hostname-victim", "-H", "unix:///tmp/x.sock"],
    ["dockerd", "--config-file", "/etc/shadow"],
    ["libnetwork-setkey", "-exec-root=/run/docker", "0" * 64, "0123456789ab"],
])
def test_dockerd_with_other_argv_is_refused(penv, args):
    """Rows 3 and 4: the dockerd binary itself, with argv of the author's
    choice (a pid file, an API socket, a config file echoed back), or
    Docker's own hook shape naming another container: refused."""
    dockerd = shutil.which("dockerd")
    if not dockerd:
        pytest.skip("no dockerd")
    spec = hook_spec("prestart", dockerd, args)
    rc, _, err = run_bundle(penv, spec)
    assert rc != 0, err
    assert "hooks.prestart[0]" in err and "hookRules" in err, err
    assert "shadow" not in err.replace("/etc/shadow", "") or "root:" not in err


# ---- row 17: policy off (runc-compatible) -------------------------------------------

CAP_FIELDS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


def test_no_capabilities_field_means_no_capabilities(env):
    spec = make_spec(["cat", "/proc/self/status"])
    del spec["process"]["capabilities"]
    rc, out, err = run_bundle(env, spec, extra=env.policy_args)
    assert rc == 0, err
    caps = {l.split(":")[0]: int(l.split(":")[1], 16)
            for l in out.splitlines() if l.split(":")[0] in CAP_FIELDS}
    assert caps == {k: 0 for k in CAP_FIELDS}, caps


@pytest.mark.parametrize("kind", ["createContainer", "startContainer"])
def test_container_side_hook_files_are_0644(env, kind):
    out = env.hostdir("out")
    spec = make_spec(["true"])
    add_mount(spec, "/out", "bind", out, ["rbind", "rw"])
    # createContainer runs before pivot_root (host paths), startContainer
    # inside the container (its /out).
    target = os.path.join(out, "f") if kind == "createContainer" else "/out/f"
    spec["hooks"] = {kind: [{"path": "/bin/sh",
                             "args": ["sh", "-c", "touch %s" % target]}]}
    rc, _, err = run_bundle(env, spec, extra=env.policy_args)
    assert rc == 0, err
    mode = os.stat(os.path.join(out, "f")).st_mode & 0o777
    assert mode == 0o644, "%s hook made its file %o" % (kind, mode)
