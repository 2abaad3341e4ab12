"""The agent sandbox policy (spec/policy/policy.c, runtime/policy/enforce.c): the
floor is set by the runtime, not by the spec; audit changes nothing and logs;
off is a plain OCI runtime; bad policy files are refused clearly."""

import json
import os
import subprocess
import uuid

import pytest

from conftest import policy_file, make_spec, run_cmd
from escape_helpers import BUILDS, pick_runtime

pytestmark = pytest.mark.usefixtures("agentsbx_only")

PROBE = "/usr/local/bin/syscall_probe"


def status_fields(text):
    out = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def run_in(env, args, extra_global=(), spec_changes=None, check=True, runtime=None):
    spec = make_spec(args)
    if spec_changes:
        spec_changes(spec)
    bundle = env.make_bundle("b-" + uuid.uuid4().hex[:6], spec=spec)
    cid = env.new_id()
    cmd = [runtime or env.runtime, "--root", env.root] + list(extra_global) + \
        ["run", "--bundle", bundle, cid]
    rc, out, err = run_cmd(cmd, timeout=60)
    if check:
        assert rc == 0, "rc %d\nstdout: %s\nstderr: %s" % (rc, out, err)
    return rc, out, err


# ---- the default policy ---------------------------------------------------------

def test_default_policy_hardens_a_plain_spec(penv):
    rc, out, err = run_in(penv, ["sh", "-c",
                                 "cat /proc/self/status; echo ---; "
                                 "grep -E ' / | /tmp ' /proc/self/mountinfo; echo ---; "
                                 "ls /sys/class/net; echo ---; ulimit -t; ulimit -f"])
    status, mounts, nets, limits = out.split("---\n")
    st = status_fields(status)
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(st[cap], 16) == 0, (cap, st[cap])
    assert st["NoNewPrivs"] == "1"
    assert st["Seccomp"] == "2"
    assert int(st["Seccomp_filters"]) >= 1
    rows = [l.split() for l in mounts.splitlines()]
    root = [r for r in rows if r[4] == "/"][0]
    assert "ro" in root[5].split(","), root
    tmp = " ".join([r for r in rows if r[4] == "/tmp"][0])
    assert "tmpfs" in tmp and "nosuid" in tmp and "nodev" in tmp, tmp
    assert "size=32768k" in tmp, tmp
    assert nets.split() == ["lo"]
    cpu, fsize = limits.split()
    assert cpu == "unlimited"  # no RLIMIT_CPU in the floor (issue 17)
    assert int(fsize) * 512 == 32 * 1024 * 1024 or int(fsize) * 1024 == 32 * 1024 * 1024


DENIED = ["mount", "umount2", "unshare(CLONE_NEWUSER)", "unshare(CLONE_NEWNS)",
          "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
          "userfaultfd", "io_uring_setup", "ptrace", "process_vm_readv",
          "kexec_load", "init_module", "finit_module", "delete_module", "reboot",
          "swapon", "clock_settime", "settimeofday", "adjtimex",
          "open_by_handle_at", "name_to_handle_at", "socket(AF_PACKET)",
          "socket(AF_INET,SOCK_RAW)", "socket(AF_NETLINK,NETLINK_AUDIT)",
          "socket(AF_VSOCK)", "ioctl(TIOCSTI)", "personality(READ_IMPLIES_EXEC)",
          "acct", "pivot_root", "mknod(char)", "syslog"]


def probe_results(out):
    res = {}
    for line in out.splitlines():
        name, _, result = line.rpartition(" ")
        if name:
            res[name] = result
    return res


def test_default_policy_seccomp_denies_the_attack_surface(penv):
    rc, out, err = run_in(penv, [PROBE])
    res = probe_results(out)
    for name in DENIED:
        assert res.get(name) in ("EPERM", "ENOSYS"), (name, res.get(name))
    # newer than the profile, or uninspectable: ENOSYS so libc falls back
    assert res["clone3"] == "ENOSYS"
    assert res["clone3(CLONE_NEWUSER)"] == "ENOSYS"
    assert res["syscall(470)"] == "ENOSYS"
    # what ordinary programs need still works
    assert res["socket(AF_NETLINK,NETLINK_ROUTE)"] == "ok"
    assert res["personality(query)"] == "ok"


@pytest.mark.parametrize("build", BUILDS)
def test_default_policy_kills_the_32_bit_abi(penv, build):
    """The agent filter lists only the native ABI: getpid through int $0x80
    (the i386 entry) kills the process; without the policy it answers, and
    in the weak build (compat-abi: every x86 ABI listed, as Docker's) too."""
    off = policy_file(penv, {"mode": "off"})
    rc, out, err = run_in(penv, [PROBE, "int80"], extra_global=("--policy", off))
    if probe_results(out).get("int80(getpid)") != "ok":
        pytest.skip("no IA32 emulation in this kernel: %s" % out.strip())
    rt = pick_runtime(build, "compat-abi")
    rc, out, err = run_in(penv, [PROBE, "int80"], runtime=rt)
    want = "ok" if build == "weak" else "SYS"  # sigabbrev_np: SIGSYS
    assert probe_results(out)["int80(getpid)"] == want, out


def test_default_policy_limits_in_cgroup(penv):
    rc, out, err = run_in(penv, ["sh", "-c",
                                 "cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
                                 "/sys/fs/cgroup/pids/pids.max "
                                 "/sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || "
                                 "cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max "
                                 "/sys/fs/cgroup/cpu.max"])
    vals = out.split()
    assert vals[0] == str(256 * 1024 * 1024)
    assert vals[1] == "128"
    assert vals[2] == "100000"


def test_spec_cannot_loosen_the_floor(penv):
    def loosen(spec):
        caps = ["CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SYS_PTRACE"]
        for k in ("bounding", "effective", "permitted", "inheritable", "ambient"):
            spec["process"]["capabilities"][k] = caps
        spec["process"]["noNewPrivileges"] = False
        spec["root"]["readonly"] = False
        # (a spec leaving out its pid or network namespace, the host's, is
        # refused: test_policy_pod_net.py)
        spec["linux"]["namespaces"] = [n for n in spec["linux"]["namespaces"]
                                       if n["type"] not in ("mount", "cgroup")]
        spec["linux"]["resources"] = {"memory": {"limit": 8 << 30}, "pids": {"limit": 100000}}
        spec["linux"]["maskedPaths"] = []
        spec["linux"]["readonlyPaths"] = []
    # Asked for explicitly (caps beyond the engine set, the host's pid and
    # network, limits above the caps): refused by default...
    rc, out, err = run_in(penv, ["true"], spec_changes=loosen, check=False)
    assert rc != 0 and "policy: refused: the container asks for" in err, err
    # ...and with onRequestAboveFloor clamp, run at the floor.
    clamp = policy_file(penv, {"onRequestAboveFloor": "clamp"})
    rc, out, err = run_in(penv, ["sh", "-c",
                                 "grep -E 'CapEff|NoNewPrivs' /proc/self/status; "
                                 "echo x > /probe 2>/dev/null && echo root-writable; "
                                 "ls /sys/class/net; echo pid=$$; "
                                 "cat /proc/kcore | wc -c"],
                          extra_global=("--policy", clamp), spec_changes=loosen)
    st = status_fields(out)
    assert int(st["CapEff"], 16) == 0
    assert st["NoNewPrivs"] == "1"
    # a write to / lands in the policy's writable layer, never in the image
    assert all(not os.path.exists(os.path.join(b, "rootfs", "probe")) for b in penv.bundles)
    assert "pid=1" in out
    assert "\nlo\n" in "\n" + out


def test_host_bind_mount_of_root_is_refused(penv):
    def host_root(spec):
        spec["mounts"].append({"destination": "/host", "type": "bind",
                               "source": "/", "options": ["rbind", "rw"]})
    rc, out, err = run_in(penv, ["true"], spec_changes=host_root, check=False)
    assert rc != 0
    assert "bind mount of host path / on /host is not allowed" in err, err
    assert [e for e in os.listdir(penv.root) if not e.startswith(".")] == []


def test_bind_through_symlink_in_allowed_prefix_is_refused(penv):
    allowed = penv.hostdir("allowed")
    os.symlink("/etc", os.path.join(allowed, "escape"))
    pol = policy_file(penv, {"bindPrefixes": [allowed]})

    def bind(spec):
        spec["mounts"].append({"destination": "/data", "type": "bind",
                               "source": os.path.join(allowed, "escape"),
                               "options": ["rbind", "ro"]})
    rc, out, err = run_in(penv, ["true"], extra_global=("--policy", pol),
                          spec_changes=bind, check=False)
    assert rc != 0
    assert "outside the allowed prefixes" in err, err
    # the same prefix, a real directory: allowed
    data = os.path.join(allowed, "data")
    os.mkdir(data)
    with open(os.path.join(data, "f"), "w") as f:
        f.write("payload")

    def bind_ok(spec):
        spec["mounts"].append({"destination": "/data", "type": "bind",
                               "source": data, "options": ["rbind", "ro"]})
    rc, out, err = run_in(penv, ["cat", "/data/f"], extra_global=("--policy", pol),
                          spec_changes=bind_ok)
    assert out == "payload"


# ---- modes ----------------------------------------------------------------------

def test_audit_changes_nothing_and_logs_every_change(penv):
    pol = policy_file(penv, {"mode": "audit"})
    log = os.path.join(penv.tmp, "audit.log")
    rc, out, err = run_in(penv, ["grep", "-E", "CapEff|NoNewPrivs|Seccomp:",
                                 "/proc/self/status"],
                          extra_global=("--policy", pol, "--log", log))
    st = status_fields(out)
    assert int(st["CapEff"], 16) != 0  # the spec's capabilities, untouched
    assert st["Seccomp"] == "0"
    text = open(log).read()
    assert "policy (audit, not applied): capabilities: process.capabilities.bounding" in text
    assert "policy (audit, not applied): limits: linux.resources.memory.limit" in text
    assert "policy (audit, not applied): seccomp" in text


def test_off_is_a_plain_oci_runtime(penv):
    pol = policy_file(penv, '{"mode": "off"}')
    rc, out, err = run_in(penv, ["grep", "-E", "CapEff|Seccomp:", "/proc/self/status"],
                          extra_global=("--policy", pol))
    st = status_fields(out)
    assert int(st["CapEff"], 16) == (1 << 29) | (1 << 5) | (1 << 10)
    assert st["Seccomp"] == "0"


def test_enforce_logs_each_change(penv):
    log = os.path.join(penv.tmp, "enforce.log")
    run_in(penv, ["true"], extra_global=("--log", log, "--log-format", "json"))
    lines = [json.loads(l) for l in open(log) if l.strip()]
    msgs = [l["msg"] for l in lines if l["level"] == "info"]
    assert any(m.startswith("policy: capabilities: process.capabilities.bounding") for m in msgs), msgs
    assert any(m.startswith("policy: network") or "namespaces" in m or "rootfs" in m for m in msgs)


# ---- the policy file ---------------------------------------------------------

@pytest.mark.parametrize("content,needle", [
    ("{", "policy"),
    ('{"mode": "strict"}', "mode: expected enforce, audit or off"),
    ('{"networkAllowed": "yes"}', "networkAllowed"),
    ('{"capabilities": ["CAP_NOPE"]}', "capabilities[0]"),
    ('{"limits": {"memory": 10}}', "limits.memory"),
    ('{"limits": {"pids": -5}}', "limits.pids"),
    ('{"bindPrefixes": ["relative/dir"]}', "bindPrefixes[0]"),
    ('{"tmpfs": [{"path": "/tmp/../etc"}]}', "tmpfs[0].path"),
    ('{"relaxable": ["everything"]}', "relaxable[0]"),
    ('[1, 2, 3]', "policy"),
    ('{"mode": "enforce"}\x00', "policy"),
])
def test_bad_policy_file_is_refused(penv, content, needle):
    pol = policy_file(penv, content)
    rc, out, err = run_in(penv, ["true"], extra_global=("--policy", pol), check=False)
    assert rc != 0
    assert needle in err, err
    assert [e for e in os.listdir(penv.root) if not e.startswith(".")] == []
    rc, out, err = run_cmd([penv.runtime, "--policy", pol, "policy", "show"])
    assert rc != 0 and needle in err


def test_missing_given_policy_file_is_an_error(penv):
    rc, out, err = run_cmd([penv.runtime, "--policy", "/nonexistent/policy.json",
                            "policy", "show"])
    assert rc != 0
    assert "/nonexistent/policy.json" in err


def test_policy_show_prints_the_built_in_default(penv):
    rc, out, err = run_cmd([penv.runtime, "policy", "show"])
    assert rc == 0, err
    p = json.loads(out)
    assert p["source"] == "built-in default"
    assert p["mode"] == "enforce"
    assert p["networkAllowed"] is False
    assert "169.254.0.0/16" in p["denyCidrs"]
    assert p["capabilities"] == []
    assert p["limits"]["pids"] == 128


def test_policy_explain_lists_changes_without_creating(penv):
    bundle = penv.make_bundle("explain", spec=make_spec(["true"]))
    rc, out, err = run_cmd([penv.runtime, "--root", penv.root, "policy", "explain",
                            "--bundle", bundle])
    assert rc == 0, err
    assert "RULE" in out and "capabilities" in out and "process.capabilities.bounding" in out
    assert "linux.resources.memory.limit" in out
    assert os.listdir(penv.root) == []


def test_annotation_relaxation_only_where_allowed(penv):
    def ask_network(spec):
        spec.setdefault("annotations", {})["agentsbx.network"] = "allow"
    rc, out, err = run_in(penv, ["true"], spec_changes=ask_network, check=False)
    assert rc != 0
    assert "agentsbx.network=allow asks for a relaxation the policy" in err
    # uid null: the process stays uid 0 (the default, 65534, cannot write
    # the image's root-owned / even when it is mounted writable).
    pol = policy_file(penv, {"relaxable": ["writableRoot"], "uid": None, "identities": None})

    def ask_rw(spec):
        spec.setdefault("annotations", {})["agentsbx.rootfs"] = "writable"
        spec["root"]["readonly"] = False
    rc, out, err = run_in(penv, ["sh", "-c", "echo x > /w && cat /w"],
                          extra_global=("--policy", pol), spec_changes=ask_rw)
    assert out.strip() == "x"


# ---- networking allowed: egress rules ------------------------------------------

LISTENER = r"""
import socket, sys, threading
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 8080))
s.listen(16)
print("ready", flush=True)
s.settimeout(60)
while True:
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.sendall(b"hello\n")
    c.close()
"""


@pytest.fixture
def test_netns():
    """Two namespaces the test owns: the container's (joined by path) and a
    gateway holding 11.99.0.1 (allowed), 169.254.169.254 (metadata) and
    10.99.0.1 (RFC 1918), all on one veth.  Nothing leaves them."""
    tag = uuid.uuid4().hex[:6]
    cns, gns = "asbx-c-" + tag, "asbx-g-" + tag
    cmds = [
        ["ip", "netns", "add", cns], ["ip", "netns", "add", gns],
        ["ip", "link", "add", "vc" + tag, "netns", cns, "type", "veth",
         "peer", "name", "vg" + tag, "netns", gns],
        ["ip", "-n", cns, "addr", "add", "11.99.0.2/24", "dev", "vc" + tag],
        ["ip", "-n", cns, "link", "set", "vc" + tag, "up"],
        ["ip", "-n", cns, "route", "add", "169.254.0.0/16", "dev", "vc" + tag],
        ["ip", "-n", cns, "route", "add", "10.99.0.0/24", "dev", "vc" + tag],
        ["ip", "-n", gns, "addr", "add", "11.99.0.1/24", "dev", "vg" + tag],
        ["ip", "-n", gns, "addr", "add", "169.254.169.254/16", "dev", "vg" + tag],
        ["ip", "-n", gns, "addr", "add", "10.99.0.1/24", "dev", "vg" + tag],
        ["ip", "-n", gns, "link", "set", "vg" + tag, "up"],
        ["ip", "-n", gns, "link", "set", "lo", "up"],
    ]
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


def test_allowed_network_drops_metadata_and_private_ranges(penv, test_netns):
    pol = policy_file(penv, {"networkAllowed": True})

    def join(spec):
        for n in spec["linux"]["namespaces"]:
            if n["type"] == "network":
                n["path"] = test_netns
    script = ("for ip in 11.99.0.1 169.254.169.254 10.99.0.1; do "
              "  r=$(nc -w 2 $ip 8080 </dev/null 2>/dev/null); echo \"$ip=${r:-blocked}\"; "
              "done")
    # First without the policy (off): the namespace reaches all three, so
    # the test cannot pass because the network is simply broken.
    off = policy_file(penv, {"mode": "off"})
    rc, out, err = run_in(penv, ["sh", "-c", script], extra_global=("--policy", off),
                          spec_changes=join)
    res = dict(l.split("=", 1) for l in out.split())
    assert res == {"11.99.0.1": "hello", "169.254.169.254": "hello",
                   "10.99.0.1": "hello"}, out
    # Twice with it (each run's own table, removed when it is deleted).
    for _ in range(2):
        rc, out, err = run_in(penv, ["sh", "-c", script], extra_global=("--policy", pol),
                              spec_changes=join)
        res = dict(l.split("=", 1) for l in out.split())
        assert res["11.99.0.1"] == "hello", out
        assert res["169.254.169.254"] == "blocked", out
        assert res["10.99.0.1"] == "blocked", out
    # The namespace was joined: nothing of the containers' is left in it
    # (issue 12 row 11; tests/integration/test_policy_net.py).
    tables = subprocess.run(["ip", "netns", "exec", os.path.basename(test_netns), "nft",
                             "list", "tables"], capture_output=True, text=True).stdout
    assert "agentsbx" not in tables, tables


@pytest.mark.parametrize("content,key,near", [
    ('{"networkAlowed": true}', "networkAlowed", "networkAllowed"),
    ('{"bindprefixes": ["/srv"]}', "bindprefixes", "bindPrefixes"),
    ('{"limits": {"memroy": 1048576000}}', "limits.memroy", "memory"),
    ('{"tmpfs": [{"path": "/tmp", "sise": 4096}]}', "tmpfs[0].sise", "size"),
    ('{"allowEverything": true}', "allowEverything", None),
])
def test_unknown_policy_key_is_refused_naming_it(penv, content, key, near):
    """A misspelt key would leave the default in force while the operator
    believes otherwise: refused, named, with the nearest known key."""
    pol = policy_file(penv, content)
    rc, out, err = run_cmd([penv.runtime, "--policy", pol, "policy", "show"])
    assert rc != 0, out
    assert "%s: unknown key" % key in err, err
    if near:
        assert 'did you mean "%s"' % near in err, err
    rc, out, err = run_in(penv, ["true"], extra_global=("--policy", pol), check=False)
    assert rc != 0 and "unknown key" in err, err


def test_policy_show_output_is_a_valid_policy_file(penv):
    rc, out, err = run_cmd([penv.runtime, "policy", "show"])
    pol = policy_file(penv, out)
    rc, out2, err = run_cmd([penv.runtime, "--policy", pol, "policy", "show"])
    assert rc == 0, err
    a, b = json.loads(out), json.loads(out2)
    a.pop("source"), b.pop("source")
    assert a == b
