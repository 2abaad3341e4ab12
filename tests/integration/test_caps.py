# SPDX-License-Identifier: Apache-2.0
"""process.capabilities, from inside the container (tests/tools/capstatus.c
prints the five sets of /proc/self/status and tries to raise capabilities):

  - all five sets are applied from the spec, each on its own;
  - the bounding set is dropped before exec: a setuid-root binary gets no
    more than it, and capset cannot put a capability outside it into the
    inheritable set;
  - ambient capabilities are raised only when permitted and inheritable
    both hold them (the kernel's rule), the others are skipped with a log
    line, not an error;
  - an unknown capability name is an error; a name the running kernel does
    not know is skipped with a warning;
  - a capability the runtime itself does not have (CAP_SYS_RESOURCE is not
    in this host's bounding set) is not silently dropped;
  - the inheritable set stays empty unless the spec fills it, whatever the
    caller's inheritable set is (CVE-2022-29162), for `run` and `exec`.
"""

import json
import os
import shutil

import pytest

from conftest import CAP_NAMES, cap_mask, kv_lines, make_spec, run_cmd, write_spec
from escape_helpers import in_private_mountns, quote

CAP_SETS = ("bounding", "effective", "permitted", "inheritable", "ambient")
STATUS_KEYS = ("CapBnd", "CapInh", "CapPrm", "CapEff", "CapAmb")


def expected_caps(caps, uid, nnp):
    """The five sets after execve of a file without file capabilities
    (security/commoncap.c): ambient needs permitted and inheritable; root
    gets P' = bounding | inheritable | ambient (capped to the old permitted
    under no_new_privs), E' = P'; any other uid P' = E' = ambient."""
    m = {k: cap_mask(caps.get(k)) for k in CAP_SETS}
    amb = m["ambient"] & m["permitted"] & m["inheritable"]
    if uid == 0:
        prm = m["bounding"] | m["inheritable"] | amb
        if nnp:
            prm &= m["permitted"]
        eff = prm
    else:
        prm = eff = amb
    return {"CapBnd": m["bounding"], "CapInh": m["inheritable"], "CapPrm": prm,
            "CapEff": eff, "CapAmb": amb}


def sets_of(kv, prefix=""):
    return {k: int(kv[prefix + k], 16) for k in STATUS_KEYS}


def hexed(d):
    return {k: "%016x" % v for k, v in d.items()}


def capstatus(env, caps, uid=0, nnp=True, actions=(), check=True):
    spec = make_spec(["capstatus"] + list(actions), process__noNewPrivileges=nnp,
                     process__user={"uid": uid, "gid": uid})
    if caps is not None:
        spec["process"]["capabilities"] = caps
    rc, out, err = env.run(spec)
    if check:
        assert rc == 0, (rc, out, err)
    return rc, kv_lines(out), err, spec


def runtime_bounding():
    """The bounding set of the runtime's callers (pytest's)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapBnd:"):
                return int(line.split()[1], 16)
    return 0


# ---- the five sets --------------------------------------------------------------------

BASE = ["CAP_CHOWN", "CAP_KILL", "CAP_SETUID", "CAP_SETGID"]
ONE_SET_CASES = {
    "bounding-wider": {"bounding": BASE + ["CAP_NET_RAW", "CAP_SYS_CHROOT"]},
    "bounding-narrower": {"bounding": ["CAP_CHOWN"]},
    "effective-narrower": {"effective": ["CAP_KILL"]},
    "effective-empty": {"effective": []},
    "permitted-narrower": {"permitted": ["CAP_CHOWN", "CAP_KILL"],
                           "effective": ["CAP_CHOWN"]},
    "inheritable-some": {"inheritable": ["CAP_KILL", "CAP_SETUID"]},
    "ambient-ok": {"inheritable": ["CAP_KILL"], "ambient": ["CAP_KILL"]},
}


@pytest.mark.parametrize("uid", [0, 1000])
@pytest.mark.parametrize("case", list(ONE_SET_CASES))
def test_each_set_applied(env, case, uid):
    caps = {k: list(BASE) for k in ("bounding", "effective", "permitted")}
    caps.update({"inheritable": [], "ambient": []})
    caps.update(ONE_SET_CASES[case])
    rc, kv, err, spec = capstatus(env, caps, uid=uid, nnp=True)
    assert hexed(sets_of(kv)) == hexed(expected_caps(caps, uid, True))


# ---- the bounding set is dropped before exec --------------------------------------------

def _setuid_capstatus(env):
    bundle = env.default_bundle()
    rootfs = os.path.join(bundle, "rootfs")
    dst = os.path.join(rootfs, "usr", "local", "bin", "capstatus-suid")
    shutil.copy2(os.path.join(rootfs, "usr", "local", "bin", "capstatus"), dst)
    os.chown(dst, 0, 0)
    os.chmod(dst, 0o4755)
    return "capstatus-suid"


def test_bounding_caps_setuid_root_binary(env):
    """A non-root container process that runs a setuid-root binary gets
    P' = E' = the bounding set (file caps of root: all, masked by the
    bounding set): the bounding set was in force before exec."""
    tool = _setuid_capstatus(env)
    bnd = ["CAP_CHOWN", "CAP_NET_RAW", "CAP_KILL"]
    caps = {"bounding": bnd, "effective": [], "permitted": [], "inheritable": [],
            "ambient": []}
    spec = make_spec([tool], process__noNewPrivileges=False,
                     process__user={"uid": 1000, "gid": 1000})
    spec["process"]["capabilities"] = caps
    rc, out, err = env.run(spec)
    assert rc == 0, (rc, out, err)
    kv = kv_lines(out)
    assert kv["euid"] == "0" and kv["uid"] == "1000", kv  # the setuid bit worked
    got = sets_of(kv)
    assert got["CapBnd"] == cap_mask(bnd), hexed(got)
    assert got["CapPrm"] == cap_mask(bnd) and got["CapEff"] == cap_mask(bnd), hexed(got)
    # ...and with no_new_privileges the setuid bit gives nothing.
    spec["process"]["noNewPrivileges"] = True
    rc, out, err = env.run(spec)
    kv = kv_lines(out)
    assert kv["euid"] == "1000" and int(kv["CapPrm"], 16) == 0, kv


def test_bounding_limits_inheritable(env):
    """With CAP_SETPCAP, capset may put into the inheritable set anything
    in the bounding set, and nothing outside it."""
    caps = {k: ["CAP_SETPCAP", "CAP_CHOWN"] for k in ("effective", "permitted")}
    caps["bounding"] = ["CAP_SETPCAP", "CAP_CHOWN", "CAP_NET_RAW"]
    raw, admin = CAP_NAMES.index("CAP_NET_RAW"), CAP_NAMES.index("CAP_SYS_ADMIN")
    rc, kv, err, spec = capstatus(env, caps, actions=["inh+%d" % raw, "inh+%d" % admin,
                                                      "bnd-%d" % raw])
    assert kv["inh+%d" % raw] == "ok", kv
    assert kv["inh+%d" % admin] == "EPERM", kv
    assert kv["bnd-%d" % raw] == "ok", kv  # CAP_SETPCAP may drop more
    assert int(kv["after.CapBnd"], 16) == cap_mask(["CAP_SETPCAP", "CAP_CHOWN"])


# ---- ambient ------------------------------------------------------------------------------

def test_ambient_only_with_permitted_and_inheritable(env, agentsbx_only):
    both, only_p, only_i, neither = ("CAP_NET_BIND_SERVICE", "CAP_KILL", "CAP_NET_RAW",
                                     "CAP_SYS_CHROOT")
    caps = {"bounding": [both, only_p, only_i, neither],
            "effective": [both, only_p], "permitted": [both, only_p],
            "inheritable": [both, only_i], "ambient": [both, only_p, only_i, neither]}
    log = os.path.join(env.tmp, "log")
    spec = make_spec(["capstatus", "amb+%d" % CAP_NAMES.index(only_p)],
                     process__user={"uid": 1000, "gid": 1000})
    spec["process"]["capabilities"] = caps
    write_spec(env.default_bundle(), spec)
    cid = env.track_id(env.new_id())
    rc, out, err = run_cmd(env.argv("--debug", "--log", log, "run", "--bundle",
                                    env.default_bundle(), cid))
    assert rc == 0, (rc, out, err)  # not an error
    kv = kv_lines(out)
    assert int(kv["CapAmb"], 16) == cap_mask([both]), kv
    assert int(kv["CapPrm"], 16) == int(kv["CapEff"], 16) == cap_mask([both]), kv
    # Inside, the kernel refuses the same raise: not in inheritable.
    assert kv["amb+%d" % CAP_NAMES.index(only_p)] == "EPERM", kv
    with open(log) as f:
        text = f.read().lower()  # the log spells them as libcap does: cap_kill
    for name in (only_p, only_i, neither):
        assert "ambient capability %s not raised" % name.lower() in text, text
    assert "ambient capability %s not raised" % both.lower() not in text


def test_inheritable_outside_bounding_is_an_error(env):
    """The kernel refuses an inheritable capability outside the bounding
    set; the container must not start without it as if nothing happened."""
    caps = {k: ["CAP_CHOWN"] for k in ("bounding", "effective", "permitted")}
    caps["inheritable"] = ["CAP_NET_RAW"]
    rc, kv, err, spec = capstatus(env, caps, check=False)
    assert rc != 0 and "capabilit" in err, (rc, kv, err)


# ---- names --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["CAP_FOO", "chown", "CAP_", "", "12", "CAP_12",
                                  "CAP_CHOWN ", "CAP_SYS_ADMIN,CAP_CHOWN"])
@pytest.mark.parametrize("which", CAP_SETS)
def test_unknown_capability_name_is_an_error(env, agentsbx_only, which, name):
    caps = {k: ["CAP_CHOWN"] for k in CAP_SETS}
    caps[which] = ["CAP_KILL", name]
    spec = make_spec(["true"])
    spec["process"]["capabilities"] = caps
    rc, out, err = env.run(spec)
    assert rc != 0, "capability %r in %s accepted" % (name, which)
    assert "capabilit" in err and which in err, err
    assert json.dumps(name)[1:-1] in err, err


def test_lowercase_capability_name_is_accepted(env):
    """libcap's names are case-insensitive; runc accepts "cap_chown"."""
    caps = {k: ["cap_chown", "CAP_Kill"] for k in ("bounding", "effective", "permitted")}
    rc, kv, err, spec = capstatus(env, caps, check=False)
    if rc == 0:
        assert int(kv["CapEff"], 16) == cap_mask(["CAP_CHOWN", "CAP_KILL"]), kv
    else:
        assert "cap_chown" in err, err


@pytest.mark.parametrize("name", ["CAP_FOO", "chown"])
def test_exec_unknown_capability_is_an_error(env, agentsbx_only, name):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    rc, out, err = env.rt("exec", "--cap", name, cid, "true", check=False)
    assert rc != 0 and name in err, (rc, out, err)


def test_capability_unknown_to_the_kernel_is_skipped_with_a_warning(env, agentsbx_only):
    """Simulated older kernel: /proc/sys/kernel/cap_last_cap reads 39 (a
    file bound over it, in a private mount namespace around the runtime),
    so CAP_CHECKPOINT_RESTORE (40) is a name libcap knows and "the kernel"
    does not: skipped with a warning, the rest applied."""
    last = os.path.join(env.tmp, "cap_last_cap")
    with open(last, "w") as f:
        f.write("39\n")
    want = ["CAP_CHOWN", "CAP_BPF"]
    caps = {k: want + ["CAP_CHECKPOINT_RESTORE"] for k in ("bounding", "effective",
                                                            "permitted")}
    spec = make_spec(["capstatus"])
    spec["process"]["capabilities"] = caps
    write_spec(env.default_bundle(), spec)
    cid = env.track_id(env.new_id())
    script = "mount --bind %s /proc/sys/kernel/cap_last_cap && exec %s" % (
        quote(last), " ".join(quote(a) for a in env.argv("run", "--bundle",
                                                          env.default_bundle(), cid)))
    rc, out, err = in_private_mountns(script)
    assert rc == 0, (rc, out, err)
    assert "CAP_CHECKPOINT_RESTORE is not known to the running kernel: skipped" in err, err
    kv = kv_lines(out)
    assert int(kv["CapEff"], 16) == cap_mask(want), kv
    assert int(kv["CapPrm"], 16) == cap_mask(want), kv
    # (CapBnd: the runtime drops 0..cap_last_cap; bit 40 of this real kernel
    # is outside the simulated range, so it is not checked here.)
    assert int(kv["CapBnd"], 16) & ~(1 << 40) == cap_mask(want), kv


# ---- a capability the runtime itself does not have ----------------------------------------

MISSING = "CAP_SYS_RESOURCE"


@pytest.fixture
def missing_cap():
    if runtime_bounding() & (1 << CAP_NAMES.index(MISSING)):
        pytest.skip("%s is in this host's bounding set" % MISSING)
    return MISSING


@pytest.mark.parametrize("sets", [("bounding", "effective", "permitted"),
                                  ("permitted",), ("inheritable",)])
def test_missing_capability_is_not_silently_granted(env, agentsbx_only, missing_cap, sets):
    caps = {k: ["CAP_CHOWN"] for k in ("bounding", "effective", "permitted")}
    for k in sets:
        caps[k] = caps.get(k, []) + [missing_cap]
    rc, kv, err, spec = capstatus(env, caps, check=False)
    # It cannot be had: the container must not start with it, nor start
    # as if nothing were wrong.
    assert rc != 0 or missing_cap in err, (rc, kv, err)
    if rc == 0:
        assert not int(kv["CapPrm"], 16) & (1 << CAP_NAMES.index(missing_cap)), kv


@pytest.mark.parametrize("sets", [("bounding", "effective", "permitted"),
                                  ("bounding",), ("inheritable",)])
def test_missing_capability_message_names_it(env, agentsbx_only, missing_cap, sets):
    """The warning or error says which capability: "set capabilities:
    Operation not permitted" leaves the user guessing, and a bounding-only
    request must not vanish without a word."""
    caps = {k: ["CAP_CHOWN"] for k in ("bounding", "effective", "permitted")}
    for k in sets:
        caps[k] = caps.get(k, []) + [missing_cap]
    rc, kv, err, spec = capstatus(env, caps, check=False)
    assert missing_cap in err, (
        "%s asked for in %s, which the runtime does not have: rc %d, stderr %r, "
        "CapBnd %s" % (missing_cap, "+".join(sets), rc, err, kv.get("CapBnd")))


# ---- inheritable stays empty (CVE-2022-29162) ----------------------------------------------

def _with_caller_inheritable(argv):
    """argv run by a caller whose inheritable set is not empty."""
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("no setpriv(1)")
    return [setpriv, "--inh-caps", "+net_raw,+sys_chroot,+chown", "--"] + argv


def test_inheritable_empty_by_default(env):
    spec = make_spec(["capstatus"])
    assert "inheritable" not in spec["process"]["capabilities"]
    write_spec(env.default_bundle(), spec)
    cid = env.track_id(env.new_id())
    rc, out, err = run_cmd(_with_caller_inheritable(
        env.argv("run", "--bundle", env.default_bundle(), cid)))
    assert rc == 0, (rc, out, err)
    kv = kv_lines(out)
    assert int(kv["CapInh"], 16) == 0, kv
    assert int(kv["CapAmb"], 16) == 0, kv


def test_inheritable_from_the_spec(env):
    caps = {k: ["CAP_CHOWN", "CAP_NET_RAW"] for k in ("bounding", "effective",
                                                      "permitted")}
    caps["inheritable"] = ["CAP_NET_RAW"]
    rc, kv, err, spec = capstatus(env, caps)
    assert int(kv["CapInh"], 16) == cap_mask(["CAP_NET_RAW"]), kv


@pytest.mark.parametrize("how", ["flags", "cap-flag", "process-file"])
def test_exec_inheritable_stays_empty(env, how):
    cid = env.create(make_spec(["sleep", "1000"]))
    env.rt("start", cid)
    if how == "flags":
        args = ["exec", cid, "capstatus"]
    elif how == "cap-flag":
        args = ["exec", "--cap", "CAP_NET_RAW", cid, "capstatus"]
    else:
        proc = make_spec(["capstatus"])["process"]
        assert "inheritable" not in proc["capabilities"]
        path = os.path.join(env.tmp, "process.json")
        with open(path, "w") as f:
            json.dump(proc, f)
        args = ["exec", "--process", path, cid]
    rc, out, err = run_cmd(_with_caller_inheritable(env.argv(*args)))
    assert rc == 0, (rc, out, err)
    kv = kv_lines(out)
    assert int(kv["CapInh"], 16) == 0, kv
    assert int(kv["CapAmb"], 16) == 0, kv
    if how == "cap-flag":
        raw = 1 << CAP_NAMES.index("CAP_NET_RAW")
        assert int(kv["CapBnd"], 16) & raw and int(kv["CapEff"], 16) & raw, kv
