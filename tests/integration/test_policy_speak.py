"""The policy speaks (issue 17): a request the floor will not grant is
refused at create with one error naming what was asked, the rule, the
policy file and the field that would allow it; what the engine filled in
unasked is tightened quietly; every decision is a JSON line in the audit
log (`agentsbx policy log`).

The bundles mimic what each engine writes (captured from Debian's dockerd
20.10 and podman 4.3 on this machine, tests/integration/test_policy_speak.py
docstrings below): Docker is told by its binds from
<data-root>/containers/<id>/, podman by io.container.manager=libpod, CRI
by io.kubernetes.cri.* annotations."""

import json
import os
import signal
import time
import uuid

import pytest

from conftest import CAP_NAMES, make_spec, policy_file, run_cmd, spawn
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")

DOCKER_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
               "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
               "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"]
PODMAN_CAPS = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
               "CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
               "CAP_SETUID", "CAP_SYS_CHROOT"]
# A profile is present (its content does not matter to the rule).
SECCOMP = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"],
           "syscalls": [{"names": ["acct"], "action": "SCMP_ACT_ERRNO"}]}


def status_fields_of(text):
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def docker_id():
    return uuid.uuid4().hex + uuid.uuid4().hex


def set_caps(spec, caps):
    spec["process"]["capabilities"] = {k: list(caps) for k in ("bounding", "effective",
                                                               "permitted")}


def as_docker(env, spec, cid):
    """What dockerd 20.10 writes for a plain `docker run`: its 14 caps, its
    seccomp profile, /etc/hostname bound from <data-root>/containers/<id>/."""
    set_caps(spec, DOCKER_CAPS)
    spec["linux"]["seccomp"] = json.loads(json.dumps(SECCOMP))
    d = os.path.join(env.tmp, "containers", cid)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "hostname"), "w") as f:
        f.write(cid[:12] + "\n")
    spec["mounts"].append({"destination": "/etc/hostname", "type": "bind",
                           "source": os.path.join(d, "hostname"),
                           "options": ["rbind", "rprivate"]})
    spec["hostname"] = cid[:12]


def as_podman(env, spec, cid):
    """podman 4.3: 11 caps, RLIMIT_NOFILE 1048576 unasked, its annotations."""
    set_caps(spec, PODMAN_CAPS)
    spec["linux"]["seccomp"] = json.loads(json.dumps(SECCOMP))
    spec["process"]["rlimits"] = [
        {"type": "RLIMIT_NOFILE", "hard": 1048576, "soft": 1048576},
        {"type": "RLIMIT_NPROC", "hard": 32768, "soft": 32768}]
    spec["annotations"] = {"io.container.manager": "libpod",
                           "io.kubernetes.cri-o.TTY": "false",
                           "io.podman.annotations.privileged": "FALSE"}


def as_cri(env, spec, cid):
    """containerd CRI: containerd's 14 caps, no seccomp (Kubernetes'
    Unconfined unless the pod asks for RuntimeDefault), pod annotations."""
    set_caps(spec, DOCKER_CAPS)
    spec["linux"].pop("seccomp", None)
    spec["annotations"] = {"io.kubernetes.cri.container-type": "container",
                           "io.kubernetes.cri.container-name": "web",
                           "io.kubernetes.cri.sandbox-name": "pod-1",
                           "io.kubernetes.cri.sandbox-namespace": "default"}


ENGINES = {"docker": as_docker, "podman": as_podman, "cri": as_cri}


def file_env():
    """The environment without $AGENTSBX_POLICY_LOG (which wins over the
    policy's auditLog): for the tests of auditLog itself."""
    return {k: v for k, v in os.environ.items() if k != "AGENTSBX_POLICY_LOG"}


def audit_lines(cid):
    path = os.environ["AGENTSBX_POLICY_LOG"]
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        rec = json.loads(line)
        if rec.get("container") == cid:
            out.append(rec)
    return out


def engine_policy(env, **extra):
    """The built-in default but for bindPrefixes: this test's fake
    <data-root>/containers (the real one is /var/lib/docker/containers)."""
    pol = {"bindPrefixes": [os.path.join(env.tmp, "containers")]}
    pol.update(extra)
    return policy_file(env, pol)


def run_engine(env, engine, change=None, args=("true",), pol=None, check=True):
    cid = env.track_id(docker_id())
    spec = make_spec(list(args))
    ENGINES[engine](env, spec, cid)
    if change:
        change(spec)
    bundle = env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    pol = pol or engine_policy(env)
    rc, out, err = run_cmd([env.runtime, "--root", env.root, "--policy", pol,
                            "run", "--bundle", bundle, cid], timeout=60)
    if check:
        assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    return cid, pol, rc, out, err


# ---- the Docker flags of the issue, each refused naming what and how --------

def cap_add(spec):
    for k in ("bounding", "effective", "permitted"):
        spec["process"]["capabilities"][k].append("CAP_NET_ADMIN")


def privileged(spec):
    set_caps(spec, CAP_NAMES[:38])
    spec["linux"].pop("seccomp", None)
    spec["linux"]["devices"] = [
        {"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229},
        {"path": "/dev/loop-control", "type": "c", "major": 10, "minor": 237}]
    spec["linux"]["maskedPaths"] = []


def unconfined(spec):
    spec["linux"].pop("seccomp", None)


def device(spec):
    spec["linux"]["devices"] = [{"path": "/dev/fuse", "type": "c", "major": 10,
                                 "minor": 229, "fileMode": 438, "uid": 0, "gid": 0}]


def ulimit(spec):
    spec["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "hard": 4096, "soft": 4096}]


def tmpfs(spec):
    spec["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                           "options": ["noexec", "nosuid", "nodev", "size=512m"]})


def memory(spec):
    spec["linux"]["resources"] = {"memory": {"limit": 1 << 30, "swap": 2 << 30}}


def cpus(spec):
    spec["linux"]["resources"] = {"cpu": {"quota": 200000, "period": 100000}}


def pid_host(spec):
    spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                   if n["type"] != "pid"]


def network_host(spec):
    # Docker 20.10 passes the host's namespace by path (<exec-root>/netns/default).
    for n in spec["linux"]["namespaces"]:
        if n["type"] == "network":
            n["path"] = "/proc/self/ns/net"  # the runtime's own: the host's


REQUESTS = [
    ("cap-add", cap_add, ["capabilities beyond the engine's default set: CAP_NET_ADMIN (--cap-add)",
                          "rule capabilities",
                          '"capabilities" (list CAP_NET_ADMIN) with "identities": null and "uid": null']),
    ("privileged", privileged, ["every capability", "--privileged", "no seccomp filter",
                                '"strictSeccomp": false', "devices /dev/fuse, /dev/loop-control",
                                '"defaultDevicesOnly": false']),
    ("seccomp-unconfined", unconfined, ["no seccomp filter (--security-opt seccomp=unconfined",
                                        "rule seccomp", '"strictSeccomp": false']),
    ("device", device, ["device /dev/fuse (--device)", "rule devices",
                        '"defaultDevicesOnly": false']),
    ("ulimit", ulimit, ["RLIMIT_NOFILE 4096 (--ulimit nofile), above the cap limits.rlimitNofile = 1024",
                        '"limits": {"rlimitNofile": ...}']),
    ("tmpfs", tmpfs, ["a tmpfs of 536870912 bytes on /tmp", "above its cap of 33554432",
                      '"tmpfs": [{"path": "/tmp", "size": 536870912}]']),
    ("memory", memory, ["a memory limit of 1073741824 bytes (--memory), above the cap limits.memory = 268435456",
                        '"limits": {"memory": ...}']),
    ("cpus", cpus, ["a cpu quota of 200000 per 100000 us (--cpus)",
                    "above the cap limits.cpuQuota = 100000 per 100000 us"]),
    ("pid-host", pid_host, ["the host's pid namespace (--pid=host)", "no policy field allows it"]),
    ("network-host", network_host, ["the host's network namespace (--network host)",
                                    "no policy field allows it",
                                    '"networkAllowed": true gives the container a network of its own']),
]


@pytest.mark.parametrize("name,change,needles", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_docker_request_above_the_floor_is_refused(penv, name, change, needles):
    cid, pol, rc, out, err = run_engine(penv, "docker", change, check=False)
    assert rc != 0, out
    assert "policy: refused: the container asks for" in err, err
    assert "The policy in force (%s)" % pol in err, err
    assert "onRequestAboveFloor" in err, err
    for n in needles:
        assert n in err, (n, err)
    assert [e for e in os.listdir(penv.root) if not e.startswith(".")] == []
    lines = audit_lines(cid)
    assert lines and all(l["action"] == "refused" and l["applied"] for l in lines), lines
    assert lines[0]["engine"] == "docker" and lines[0]["policy"] == pol


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_engine_defaults_are_tightened_quietly_and_logged(penv, engine):
    """A plain `docker run`, `podman run`, CRI container: the engine's own
    capabilities, podman's RLIMIT_NOFILE 1048576, CRI's missing seccomp are
    not requests: the container runs at the floor, each change logged."""
    cid, pol, rc, out, err = run_engine(
        penv, engine, args=["sh", "-c", "grep -E 'CapEff|Seccomp:' /proc/self/status; ulimit -n"])
    st = status_fields_of(out)
    assert int(st["CapEff"], 16) == 0
    assert st["Seccomp"] == "2"
    assert out.split()[-1] == "1024"
    lines = audit_lines(cid)
    rules = {l["rule"] for l in lines}
    assert {"capabilities", "limits", "seccomp"} <= rules, lines
    # (and on a cgroup v1 host the warning that TCP socket memory is not
    # bounded by the memory limit there: not applied, said)
    assert all((l["action"] == "applied" and l["applied"]) or
               (l["action"] == "warning" and l["from"] == "cgroup v1") for l in lines), lines
    assert all(l["engine"] == engine for l in lines), lines
    caps = [l for l in lines if l["field"] == "process.capabilities.bounding"][0]
    assert "CAP_CHOWN" in caps["from"] and caps["to"] == "(none)"
    if engine == "cri":
        assert lines[0]["annotations"] == {
            "io.kubernetes.cri.container-name": "web",
            "io.kubernetes.cri.sandbox-name": "pod-1",
            "io.kubernetes.cri.sandbox-namespace": "default"}, lines[0]
    if engine == "podman":
        assert lines[0]["annotations"]["io.container.manager"] == "libpod"


@pytest.mark.parametrize("engine,change,needle", [
    ("podman", cap_add, "CAP_NET_ADMIN (--cap-add)"),
    ("podman", unconfined, "no seccomp filter"),
    ("cri", cap_add, "capabilities beyond the engine's default set: CAP_NET_ADMIN"),
    ("cri", pid_host, "the host's pid namespace"),
])
def test_other_engines_requests_are_refused(penv, engine, change, needle):
    cid, pol, rc, out, err = run_engine(penv, engine, change, check=False)
    assert rc != 0 and needle in err, err


def test_podman_pids_limit_and_rlimits_are_defaults(penv):
    """podman sends containers.conf's pids_limit (2048) and default_ulimits
    unasked, indistinguishable from --pids-limit / --ulimit: tightened and
    logged, not refused (Docker's --ulimit is a request)."""
    def conf(spec):
        spec["linux"]["resources"] = {"pids": {"limit": 2048}}
        spec["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "hard": 4096, "soft": 1024}]
    cid, pol, rc, out, err = run_engine(penv, "podman", conf,
                                        args=["sh", "-c", "ulimit -Hn; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"])
    assert out.split() == ["1024", "128"], out
    fields = {l["field"] for l in audit_lines(cid)}
    assert {"RLIMIT_NOFILE", "linux.resources.pids.limit"} <= fields, fields


def test_podman_device_file_mode_with_type_bits_is_accepted(penv):
    """podman writes fileMode as the whole st_mode (020666 for a char
    device); runc takes it.  Under the policy off, /dev/fuse is made."""
    if not os.path.exists("/dev/fuse"):
        pytest.skip("no /dev/fuse")
    off = policy_file(penv, {"mode": "off"})
    spec = make_spec(["sh", "-c", "ls -l /dev/fuse"])
    spec["linux"]["devices"] = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229,
                                 "fileMode": 0o20666, "uid": 0, "gid": 0}]
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", off, "run",
                            "--bundle", bundle, cid], timeout=60)
    assert rc == 0 and out.startswith("crw-rw-rw-"), (out, err)
    # a type that is not the device's own is still refused
    spec["linux"]["devices"][0]["fileMode"] = 0o60666
    bundle = penv.make_bundle("b2", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", off, "run",
                            "--bundle", bundle, penv.new_id()], timeout=60)
    assert rc != 0 and "is not a permission mode" in err, err


def test_cri_without_seccomp_is_a_default_but_docker_without_is_a_request(penv):
    # CRI: no profile is Kubernetes' default (Unconfined): tightened quietly.
    run_engine(penv, "cri")
    # The same spec with Docker's binds: Docker always sends a profile.
    cid, pol, rc, out, err = run_engine(penv, "docker", unconfined, check=False)
    assert rc != 0 and "no seccomp filter" in err, err


def test_unknown_engine_without_seccomp_is_a_default(penv):
    """`runc spec`, ctr: no profile unless asked; the floor's own applies."""
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=make_spec(["true"]))
    run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid], check=True)


def test_one_error_names_every_request(penv):
    def both(spec):
        cap_add(spec)
        memory(spec)
    cid, pol, rc, out, err = run_engine(penv, "docker", both, check=False)
    assert rc != 0
    msgs = [l for l in err.splitlines() if "policy: refused" in l]
    assert len(msgs) == 1, err
    assert "CAP_NET_ADMIN" in msgs[0] and "a memory limit of 1073741824" in msgs[0]
    assert "does not grant these" in msgs[0]
    assert len(audit_lines(cid)) == 2


# ---- onRequestAboveFloor: clamp, and audit mode ---------------------------------

def test_clamp_runs_the_request_tightened_and_logs_it(penv):
    pol = engine_policy(penv, onRequestAboveFloor="clamp")

    def both(spec):
        cap_add(spec)
        memory(spec)
    cid, pol, rc, out, err = run_engine(
        penv, "docker", both, pol=pol,
        args=["sh", "-c", "grep CapEff /proc/self/status; "
              "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || "
              "cat /sys/fs/cgroup/memory.max"])
    st = status_fields_of(out)
    assert int(st["CapEff"], 16) == 0
    assert out.split()[-1] == str(256 << 20)
    lines = audit_lines(cid)
    clamped = [l for l in lines if l["action"] == "clamped"]
    assert len(clamped) == 2 and all(l["applied"] for l in clamped), lines
    assert "CAP_NET_ADMIN" in clamped[0]["from"]


@pytest.mark.parametrize("clamp", [False, True], ids=["refuse", "clamp"])
def test_host_network_by_path_promises_no_clamp(penv, clamp):
    """The host's network namespace joined by path (docker --network host)
    is refused whatever onRequestAboveFloor says: the refusal does not offer
    clamp, and under clamp it is refused as a request (not "clamped to the
    floor" first and then refused by the namespace judge)."""
    pol = engine_policy(penv, onRequestAboveFloor="clamp") if clamp else None
    cid, pol, rc, out, err = run_engine(penv, "docker", network_host, pol=pol, check=False)
    assert rc != 0, out
    assert "policy: refused: the container asks for the host's network namespace" in err, err
    assert "it would run tightened" not in err and "clamped to the floor" not in err, err
    assert "is refused whatever onRequestAboveFloor says" in err, err
    lines = audit_lines(cid)
    assert lines and all(l["action"] == "refused" for l in lines), lines


def test_clamp_still_names_what_it_cannot_clamp(penv):
    """A request clamp can tighten (a capability) beside one it cannot (the
    host's network by path): refused, the error says which one blocks."""
    def both(spec):
        cap_add(spec)
        network_host(spec)
    pol = engine_policy(penv, onRequestAboveFloor="clamp")
    cid, pol, rc, out, err = run_engine(penv, "docker", both, pol=pol, check=False)
    assert rc != 0 and "the host's network namespace" in err, err
    assert "CAP_NET_ADMIN" not in err.split("refused:")[1].split(".")[0], err


def test_the_policy_field_named_in_the_error_allows_the_request(penv):
    pol = engine_policy(penv, capabilities=["CAP_NET_ADMIN"], uid=None, identities=None)
    cid, pol, rc, out, err = run_engine(
        penv, "docker", cap_add, pol=pol,
        args=["sh", "-c", "grep CapEff /proc/self/status"])
    assert int(status_fields_of(out)["CapEff"], 16) == 1 << 12  # CAP_NET_ADMIN


def test_audit_mode_logs_the_refusal_as_not_applied(penv):
    pol = engine_policy(penv, mode="audit")
    cid, pol, rc, out, err = run_engine(penv, "docker", cap_add, pol=pol,
                                        args=["sh", "-c", "grep CapEff /proc/self/status"])
    assert int(status_fields_of(out)["CapEff"], 16) & (1 << 12)
    lines = audit_lines(cid)
    refused = [l for l in lines if l["action"] == "refused"]
    assert refused and not any(l["applied"] for l in lines), lines
    assert all(l["mode"] == "audit" for l in lines)


def test_policy_fields_are_shown_and_checked(penv):
    rc, out, err = run_cmd([penv.runtime, "policy", "show"], check=True)
    shown = json.loads(out)
    assert shown["onRequestAboveFloor"] == "refuse"
    assert shown["auditLog"] == "/var/log/agentsbx/policy.log"
    assert shown["limits"]["rlimitCpu"] == 0
    for bad, needle in [({"onRequestAboveFloor": "allow"}, "expected refuse or clamp"),
                        ({"auditLog": "rel/x.log"}, "auditLog: must be an absolute path")]:
        rc, out, err = run_cmd([penv.runtime, "--policy", policy_file(penv, bad),
                                "policy", "show"])
        assert rc != 0 and needle in err, err


# ---- the audit log ----------------------------------------------------------------

def test_audit_log_field_moves_it_and_empty_turns_it_off(penv):
    log = os.path.join(penv.tmp, "moved", "policy.log")
    pol = policy_file(penv, {"auditLog": log})
    cid = penv.new_id()
    bundle = penv.make_bundle("b1", spec=make_spec(["true"]))
    run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run", "--bundle", bundle,
             cid], check=True, env=file_env())
    recs = [json.loads(l) for l in open(log)]
    assert recs and all(r["container"] == cid for r in recs)
    assert oct(os.stat(log).st_mode & 0o777) == "0o640"
    # "": no audit log at all
    off = policy_file(penv, {"auditLog": ""})
    cid2 = penv.new_id()
    bundle = penv.make_bundle("b2", spec=make_spec(["true"]))
    run_cmd([penv.runtime, "--root", penv.root, "--policy", off, "run", "--bundle", bundle,
             cid2], check=True, env=file_env())
    assert audit_lines(cid2) == []


def test_an_unwritable_audit_log_never_blocks_create(penv):
    log = penv.hostdir("a-directory")  # open(O_WRONLY) fails: EISDIR
    pol = policy_file(penv, {"auditLog": log})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=make_spec(["echo", "ran"]))
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                            "--bundle", bundle, cid], env=file_env())
    assert rc == 0 and out.strip() == "ran", err
    assert "policy audit log %s: open" % log in err, err


def test_audit_log_is_rotation_safe(penv):
    """Each batch opens the path anew: after a rename (logrotate's create
    mode) the next container's lines land in the new file."""
    log = os.path.join(penv.tmp, "rot.log")
    pol = policy_file(penv, {"auditLog": log})
    ids = []
    for i in range(2):
        cid = penv.new_id()
        ids.append(cid)
        bundle = penv.make_bundle("b%d" % i, spec=make_spec(["true"]))
        run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run", "--bundle",
                 bundle, cid], check=True, env=file_env())
        if i == 0:
            os.rename(log, log + ".1")
    old = {json.loads(l)["container"] for l in open(log + ".1")}
    new = {json.loads(l)["container"] for l in open(log)}
    assert old == {ids[0]} and new == {ids[1]}


def test_policy_log_command_filters_and_follows(penv):
    log = os.path.join(penv.tmp, "cmd.log")
    pol = policy_file(penv, {"auditLog": log})
    ids = []
    for i in range(2):
        cid = penv.new_id()
        ids.append(cid)
        bundle = penv.make_bundle("b%d" % i, spec=make_spec(["true"]))
        run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run", "--bundle",
                 bundle, cid], check=True, env=file_env())
    rc, out, err = run_cmd([penv.runtime, "--policy", pol, "policy", "log", "--container",
                            ids[1]], check=True, env=file_env())
    recs = [json.loads(l) for l in out.splitlines()]
    assert recs and {r["container"] for r in recs} == {ids[1]}
    rc, out, err = run_cmd([penv.runtime, "--policy", pol, "policy", "log"], check=True, env=file_env())
    assert {json.loads(l)["container"] for l in out.splitlines()} == set(ids)
    # --follow: a line appended later is printed
    outpath = os.path.join(penv.tmp, "follow.out")
    with open(outpath, "wb") as outf:
        p = spawn([penv.runtime, "--policy", pol, "policy", "log", "--follow", "--container",
                   "later"], stdout=outf, env=file_env())
        time.sleep(0.5)
        os.rename(log, log + ".1")  # rotated while followed
        with open(log, "a") as f:
            f.write(json.dumps({"container": "later", "rule": "x"}) + "\n")
        deadline = time.time() + 10
        while time.time() < deadline and "later" not in open(outpath).read():
            time.sleep(0.1)
        p.popen.send_signal(signal.SIGTERM)
        rc, _, err = p.wait(10)
    out = open(outpath).read()
    assert json.loads(out.splitlines()[0])["container"] == "later", (out, err)


# ---- RLIMIT_CPU -----------------------------------------------------------------------

def test_default_floor_has_no_rlimit_cpu(penv):
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=make_spec(["sh", "-c", "grep 'Max cpu time' /proc/1/limits"]))
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid],
                           check=True)
    assert out.split()[3:5] == ["unlimited", "unlimited"], out


def test_a_lowered_rlimit_cpu_in_the_policy_still_stops_a_busy_loop(penv):
    pol = policy_file(penv, {"limits": {"rlimitCpu": 1}})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=make_spec(["sh", "-c", "while :; do :; done"]))
    t0 = time.time()
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                            "--bundle", bundle, cid], timeout=60)
    assert rc in (128 + signal.SIGXCPU, 128 + signal.SIGKILL), (rc, err)
    assert time.time() - t0 < 30


# ---- --init: Debian's docker-init is a symlink to tini-static ------------------------

DOCKER_INIT = "/usr/bin/docker-init"


@pytest.mark.skipif(not os.path.exists(DOCKER_INIT), reason="no %s (docker.io)" % DOCKER_INIT)
def test_docker_init_bind_runs_under_the_default_policy(penv):
    """What `docker run --init` writes: /usr/bin/docker-init bound read-only
    on /sbin/docker-init, which runs the command.  The bind source's own
    path (under bindPrefixes) and where it resolves (tini-static, an
    engine-provided init binary) are both judged."""
    spec = make_spec(["/sbin/docker-init", "--", "echo", "init-ok"])
    spec["mounts"].append({"destination": "/sbin/docker-init", "type": "bind",
                           "source": DOCKER_INIT, "options": ["bind", "ro"]})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid],
                           timeout=60)
    assert rc == 0 and out.strip() == "init-ok", (rc, out, err)


@pytest.mark.skipif(not os.path.exists(DOCKER_INIT), reason="no %s (docker.io)" % DOCKER_INIT)
def test_docker_init_bind_is_made_read_only(penv):
    """A writable bind of the engine's init would let a container that
    runs as root rewrite the host's tini-static: it is bound read-only
    whatever the spec says."""
    spec = make_spec(["sh", "-c", "grep ' /sbin/docker-init ' /proc/self/mountinfo"])
    spec["mounts"].append({"destination": "/sbin/docker-init", "type": "bind",
                           "source": DOCKER_INIT, "options": ["bind", "rw"]})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid],
                           timeout=60)
    assert rc == 0, err
    assert out.split()[5].split(",")[0] == "ro", out


def test_a_symlink_under_a_prefix_to_an_ordinary_file_stays_refused(penv):
    """Only the engines' init binaries are allowed by name where they
    resolve: another link under an allowed prefix pointing outside is not."""
    allowed = penv.hostdir("allowed")
    os.symlink("/etc/passwd", os.path.join(allowed, "docker-init"))
    pol = policy_file(penv, {"bindPrefixes": [allowed]})
    spec = make_spec(["true"])
    spec["mounts"].append({"destination": "/sbin/docker-init", "type": "bind",
                           "source": os.path.join(allowed, "docker-init"),
                           "options": ["bind", "ro"]})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                            "--bundle", bundle, cid], timeout=60)
    assert rc != 0 and "outside the allowed prefixes" in err, err
    assert "bindPrefixes of the policy %s): %s." % (pol, allowed) in err, err
    lines = audit_lines(cid)  # refused on the opened fd (prepare), logged too
    assert [l["action"] for l in lines if l["rule"] == "refusal"] == ["refused"], lines


@pytest.mark.parametrize("build", BUILDS)
def test_engine_init_link_cannot_be_bound_writable(penv, build):
    """The attack behind the read-only rule, on a file of the test's own
    (never the host's tini): a prefix that is a link to a root-owned binary
    (as /usr/bin/docker-init -> tini-static), bound "rw" by a hostile
    config.json under a policy that keeps host root (uid null).  Real: the
    bind is read-only, the host file untouched.  Weak (init-rw): the
    container rewrites the host file."""
    runtime = pick_runtime(build, "init-rw")
    bindir = penv.hostdir("bin")
    real = os.path.join(bindir, "tini-static")
    with open(real, "w") as f:
        f.write("original\n")
    os.chmod(real, 0o755)
    link = os.path.join(bindir, "docker-init")
    os.symlink(real, link)
    pol = policy_file(penv, {"bindPrefixes": [link], "uid": None, "identities": None})
    spec = make_spec(["sh", "-c", "echo pwned > /sbin/docker-init; echo rc=$?"])
    spec["mounts"].append({"destination": "/sbin/docker-init", "type": "bind",
                           "source": link, "options": ["bind", "rw"]})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([runtime, "--root", penv.root, "--policy", pol, "run", "--bundle",
                            bundle, cid], timeout=60)
    assert rc == 0, err
    content = open(real).read()
    if build == "real":
        assert content == "original\n" and "rc=0" not in out, (content, out)
    else:
        assert content == "pwned\n", "weak build: the host file was not rewritten: " + out


# ---- errors that say what to do ------------------------------------------------------

def test_bind_refusal_lists_the_prefixes_and_the_field(penv):
    spec = make_spec(["true"])
    spec["mounts"].append({"destination": "/data", "type": "bind", "source": "/etc",
                           "options": ["rbind", "ro"]})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid])
    assert rc != 0
    assert "allowed prefixes (bindPrefixes of the policy built-in default): " \
        "/usr/bin/docker-init, /usr/libexec/docker" in err, err
    assert 'add its directory to "bindPrefixes" in the policy file' in err, err
    assert "agentsbx policy show" in err, err
    lines = audit_lines(cid)  # judged on the opened source, logged all the same
    assert [l["action"] for l in lines] == ["refused"] and "/etc" in lines[0]["from"], lines


def test_docker_data_root_elsewhere_is_explained(penv):
    """dockerd with data-root /srv/docker (here: the test's temp dir):
    the refusal names the directory to add to bindPrefixes."""
    cid = penv.track_id(docker_id())
    spec = make_spec(["true"])
    as_docker(penv, spec, cid)  # binds from <tmp>/containers/<id>/hostname
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid])
    assert rc != 0
    want = os.path.join(penv.tmp, "containers")
    assert "%s is an engine's per-container directory: a dockerd data-root" % want in err, err
    assert 'needs "%s" added to "bindPrefixes"' % want in err, err


# ---- list fields: a key replaces the default list, "extend" adds to it ---------------

LIST_FIELDS = [
    ("denyCidrs", "11.98.0.0/16"),
    ("maskedPaths", "/proc/driver"),
    ("readonlyPaths", "/proc/sysvipc"),
    ("bindPrefixes", "/srv/docker/containers"),
    ("dockerHook", "/opt/docker/bin/dockerd"),
    ("rootfsPrefixes", "/srv/images"),
    ("bindSpecialFiles", "/run/agent.sock"),
    ("bindVolumeDirs", "/srv/docker/volumes"),
    ("seccompListeners", "/run/seccomp-agent.sock"),
    ("capabilities", "CAP_NET_BIND_SERVICE"),
    ("tmpfs", {"path": "/run", "size": 4194304}),
    ("relaxable", "network"),
]


def shown(penv, content):
    rc, out, err = run_cmd([penv.runtime, "--policy", policy_file(penv, content), "policy",
                            "show"])
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize("field,item", LIST_FIELDS, ids=[f for f, _ in LIST_FIELDS])
def test_list_field_replaces_and_extend_adds(penv, field, item):
    default = shown(penv, {})[field]
    # the key itself: the list in force is exactly the file's
    assert shown(penv, {field: [item]})[field] == [item]
    # under "extend": the default list, then the new item
    assert shown(penv, {"extend": {field: [item]}})[field] == default + [item]
    # both: the file's list, extended; an item already there is not doubled
    assert shown(penv, {field: [item], "extend": {field: [item]}})[field] == [item]


def test_extend_replaces_a_tmpfs_at_the_same_path(penv):
    got = shown(penv, {"extend": {"tmpfs": [{"path": "/tmp", "size": 8388608}]}})["tmpfs"]
    assert got == [{"path": "/tmp", "size": 8388608}]


@pytest.mark.parametrize("content,needle", [
    ({"extend": {"bindprefixes": ["/srv"]}}, 'extend.bindprefixes: unknown key "bindprefixes" (did you mean "bindPrefixes"?)'),
    ({"extend": {"limits": {}}}, 'extend.limits: unknown key "limits"'),
    ({"extend": {"bindPrefixes": ["relative"]}}, "bindPrefixes[2]: must be an absolute path"),  # after the 2 defaults
    ({"extend": {"capabilities": ["CAP_NOPE"]}}, 'unknown capability "CAP_NOPE"'),
    ({"extend": []}, "extend"),
])
def test_extend_is_as_strict_as_the_rest(penv, content, needle):
    rc, out, err = run_cmd([penv.runtime, "--policy", policy_file(penv, content), "policy",
                            "show"])
    assert rc != 0 and needle in err, err


def test_extended_bind_prefix_keeps_dockers_and_allows_the_new_one(penv):
    """One directory added (a dockerd data-root elsewhere), the defaults
    kept; no default is a directory of every tenant's files."""
    p = shown(penv, {"extend": {"bindPrefixes": [os.path.join(penv.tmp, "containers")]}})
    assert "/usr/bin/docker-init" in p["bindPrefixes"]
    for shared in ("/var/lib/docker/containers", "/var/lib/docker/volumes", "/run/containerd",
                   "/var/lib/kubelet/pods", "/var/lib/containers", "/run/containers"):
        assert shared not in p["bindPrefixes"], p["bindPrefixes"]
    pol = policy_file(penv, {"extend": {"bindPrefixes": [os.path.join(penv.tmp, "containers")]}})
    run_engine(penv, "docker", pol=pol)


# ---- a limit that acted is in the audit log ----------------------------------------------

def test_oom_kill_and_refused_forks_are_in_the_audit_log(penv):
    """When the policy's memory limit kills a process or its pids limit
    refuses a fork, the audit log says which (read from the cgroup when
    the container is released)."""
    pol = policy_file(penv, {"limits": {"memory": 16 << 20, "pids": 8}})
    cid = penv.new_id()
    spec = make_spec(["sh", "-c",
                      "(x=$(head -c 67108864 /dev/zero | tr '\\0' a); echo survived); "
                      "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1 & done 2>/dev/null; wait"])
    bundle = penv.make_bundle("b", spec=spec)
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                            "--bundle", bundle, cid], timeout=60)
    assert "survived" not in out, (rc, out, err)
    hits = [l for l in audit_lines(cid) if l["op"] == "delete"]
    fields = {l["field"]: l for l in hits}
    assert "linux.resources.memory.limit" in fields, hits
    assert "killed by its memory limit" in fields["linux.resources.memory.limit"]["to"]
    assert "linux.resources.pids.limit" in fields, hits
    assert "refused by its pids limit" in fields["linux.resources.pids.limit"]["to"]


def test_no_limit_line_when_no_limit_acted(penv):
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=make_spec(["true"]))
    run_cmd([penv.runtime, "--root", penv.root, "run", "--bundle", bundle, cid], check=True)
    assert [l for l in audit_lines(cid) if l["op"] == "delete"] == []


def test_engine_dev_and_default_shm_are_not_requests(penv):
    """/dev (65536k from every engine) and Docker's 64 MiB /dev/shm are the
    engine's: with limits.memory below them they are capped, not refused;
    --shm-size (another size) above the cap is a request."""
    pol = engine_policy(penv, limits={"memory": 32 << 20})

    def shm(size):
        def change(spec):
            spec["mounts"].append({"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
                                   "options": ["nosuid", "noexec", "nodev", "mode=1777",
                                               "size=%d" % size]})
        return change
    run_engine(penv, "docker", shm(64 << 20), pol=pol)
    cid, pol, rc, out, err = run_engine(penv, "docker", shm(128 << 20), pol=pol, check=False)
    assert rc != 0 and "a tmpfs of 134217728 bytes on /dev/shm" in err, err


def test_policy_explain_shows_the_refusal(penv):
    cid = docker_id()
    spec = make_spec(["true"])
    as_docker(penv, spec, cid)
    cap_add(spec)
    bundle = penv.make_bundle(cid, spec=spec)  # Docker's bundle dir is named by the id
    rc, out, err = run_cmd([penv.runtime, "policy", "explain", "--bundle", bundle])
    assert rc != 0 and "refused: policy: refused: the container asks for capabilities beyond " \
        "the engine's default set: CAP_NET_ADMIN (--cap-add)" in out, (out, err)
    clamp = policy_file(penv, {"onRequestAboveFloor": "clamp",
                               "bindPrefixes": [os.path.join(penv.tmp, "containers")]})
    rc, out, err = run_cmd([penv.runtime, "--policy", clamp, "policy", "explain", "--bundle",
                            bundle])
    assert rc == 0 and "clamped to the floor" in out and "capabilities" in out, (out, err)


def test_an_audit_log_that_would_block_never_blocks_create(penv):
    """A FIFO nobody reads (open O_WRONLY|O_NONBLOCK: ENXIO) and a FIFO
    whose reader never reads (the pipe fills: EAGAIN, a short write): the
    container is created and runs all the same, with a warning."""
    fifo = os.path.join(penv.tmp, "log.fifo")
    os.mkfifo(fifo)
    pol = policy_file(penv, {"auditLog": fifo})
    bundle = penv.make_bundle("b", spec=make_spec(["echo", "ran"]))
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                            "--bundle", bundle, penv.new_id()], timeout=30, env=file_env())
    assert rc == 0 and out.strip() == "ran" and "policy audit log %s: open" % fifo in err, err
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        wfd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            while True:  # fill the pipe
                os.write(wfd, b"x" * 4096)
        except BlockingIOError:
            pass
        bundle = penv.make_bundle("b2", spec=make_spec(["echo", "ran"]))
        rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run",
                                "--bundle", bundle, penv.new_id()], timeout=30, env=file_env())
        assert rc == 0 and out.strip() == "ran", err
        assert "policy audit log %s: write: Resource temporarily unavailable" % fifo in err, err
        os.close(wfd)
    finally:
        os.close(rfd)


def test_update_decisions_are_in_the_audit_log(penv):
    cid = penv.create(make_spec(["sleep", "30"]), bundle=penv.make_bundle("b-upd"))
    rc, out, err = penv.rt("update", "--memory", "1073741824", cid, check=False)
    penv.rt("delete", "--force", cid)
    assert rc != 0 and "above the cap limits.memory = 268435456" in err, err
    lines = [l for l in audit_lines(cid) if l["op"] == "update"]
    assert [l["action"] for l in lines] == ["refused"], lines


def test_env_audit_log_wins_over_the_policy_file(penv):
    """$AGENTSBX_POLICY_LOG (set by every test suite) wins over auditLog,
    so that a policy file naming /var/log/agentsbx/policy.log (as
    policy.json.example does) writes nothing there in a test."""
    named = os.path.join(penv.tmp, "named.log")
    pol = policy_file(penv, {"auditLog": named})
    cid = penv.new_id()
    bundle = penv.make_bundle("b", spec=make_spec(["true"]))
    run_cmd([penv.runtime, "--root", penv.root, "--policy", pol, "run", "--bundle", bundle, cid],
            check=True)
    assert not os.path.exists(named)
    assert audit_lines(cid)
