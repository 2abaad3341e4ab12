# SPDX-License-Identifier: Apache-2.0
"""The attack programs run rootless (issue 20): each one through
`agentsbx sandbox` started by a plain user (uid 4711, no passwd entry, no
capability on the host), with the default policy.  The kernel-facing
attacks must stay blocked; the resource ones are measured and the table
(rootless-results.md) says which protection holds them and where none
does: with no cgroup delegated to the user (this host's v1 hierarchies)
nothing bounds memory or processes, and the table says so.

Attacks that need Docker flags (-v, -u, -it, --network host), the suite's
host services or its host secret are not in this table: the Docker table
(results.md) has them."""

import json
import os
import shutil
import subprocess

import pytest

import asuser
import attack_lib as A
from asuser import UID
from images import debootstrap_image
HERE = os.path.dirname(os.path.abspath(__file__))

# attack name -> what blocks it rootless (or, for resource attacks, what
# would: the verdict column says whether it did).
KERNEL = {
    "raw-socket": "no CAP_NET_RAW in the container's user namespace over the host's network; strict seccomp profile",
    "packet-socket": "strict seccomp profile (socket family); no CAP_NET_RAW",
    "mount": "no capabilities; strict seccomp profile (mount, unshare)",
    "unshare": "strict seccomp profile; no_new_privs",
    "keyctl": "strict seccomp profile (add_key, keyctl)",
    "bpf": "strict seccomp profile (bpf)",
    "io-uring": "strict seccomp profile (io_uring_setup)",
    "userfaultfd": "strict seccomp profile (userfaultfd)",
    "ptrace-sibling": "strict seccomp profile (ptrace, process_vm_readv)",
    "core-pattern": "/proc/sys read-only; the host's sysctls belong to the init user namespace",
    "sysrq-trigger": "masked path; host-only file",
    "mknod-dev-mem": "no mknod in a user namespace; strict seccomp profile",
    "mknod-dev-kvm": "no mknod in a user namespace; strict seccomp profile",
    "set-clock": "no CAP_SYS_TIME in the init user namespace; strict seccomp profile",
    "secret-open-by-handle": "no CAP_DAC_READ_SEARCH in the init user namespace; strict seccomp profile",
}
RESOURCE = {
    "disk-fill-root": "read-only root (policy readonlyRoot)",
    "disk-fill-tmp": "the policy's 32 MiB /tmp tmpfs",
    "fork-flood-200": "the pids cgroup limit, only where a cgroup is delegated",
    "memory-512m": "the memory cgroup limit, only where a cgroup is delegated",
}
BY_NAME = {a.name: a for a in A.ATTACKS}
ROWS = list(KERNEL) + list(RESOURCE)
RESULTS = {}


class FakeEnv:
    """What an attack's args(env) reads: a secret of the test's own."""

    def __init__(self, tmp):
        self.secret_path = os.path.join(tmp, "secret")
        self.secret_token = "rootless-secret-%d" % os.getpid()
        with open(self.secret_path, "w") as f:
            f.write(self.secret_token)
        os.chmod(self.secret_path, 0o600)


@pytest.fixture(scope="module")
def rootless():
    if os.geteuid() != 0 or asuser.SETPRIV is None:
        pytest.skip("needs root (to make the user's directories) and setpriv")
    rootfs = debootstrap_image("python", "python3")
    if not rootfs:
        pytest.skip("no python image")
    tmp, xdg = asuser.make_dirs("agentsbx-rootless-attacks-")
    yield rootfs, xdg, FakeEnv(tmp)
    left, procs = asuser.leftovers(xdg)
    shutil.rmtree(tmp, ignore_errors=True)
    write_table()
    assert left == [] and procs == [], "left: %s, processes: %s" % (left, procs)


def run_attack(rootless, attack):
    rootfs, xdg, env = rootless
    cmd = ["python3", "-c", attack.code(), attack.name] + [str(a) for a in attack.args(env)]
    p = subprocess.run(asuser.argv(A.RUNTIME, "sandbox", "--json", "--rootfs", rootfs,
                                   "--timeout", attack.timeout, "--", *cmd),
                       env=asuser.env(xdg),
                       cwd="/", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=attack.timeout + 60)
    r = json.loads(p.stdout.decode().splitlines()[0])
    out = r["stdout"]
    started = "ATTACK-STARTED:" in out
    # A resource attack killed (timeout, OOM) or failing is blocked too.
    verdict = "ALLOWED" if "ATTACK-SUCCEEDED:" in out else "BLOCKED"
    detail = [l for l in out.splitlines() if l.startswith(("ATTACK-", "INFO:"))]
    RESULTS[attack.name] = (verdict, started, "; ".join(detail)[:300], r)
    return verdict, started, r


@pytest.mark.parametrize("name", list(KERNEL))
def test_kernel_attack_blocked_rootless(rootless, name):
    attack = BY_NAME[name]
    why = attack.na(rootless[2]) if attack.na else None
    if why:
        RESULTS[name] = ("N/A", False, why, {})
        pytest.skip(why)
    verdict, started, r = run_attack(rootless, attack)
    assert started, "vacuous: the program never ran: %s" % r
    assert verdict == "BLOCKED", RESULTS[name][2]


@pytest.mark.parametrize("name", list(RESOURCE))
def test_resource_attack_measured_rootless(rootless, name):
    verdict, started, r = run_attack(rootless, BY_NAME[name])
    assert started, "vacuous: the program never ran: %s" % r
    if name.startswith("disk-fill"):
        assert verdict == "BLOCKED", RESULTS[name][2]


def write_table():
    feats = json.loads(subprocess.run(asuser.argv(A.RUNTIME, "features"),
                                      stdout=subprocess.PIPE).stdout)["annotations"]
    lines = [
        "# The attack programs, rootless",
        "",
        "Each program of [attacks/](attacks/) run by uid %d (no capability on the host) through "
        "`agentsbx sandbox --rootfs PYTHON -- python3 -c CODE`, default policy; written by "
        "tests/attacks/test_rootless_attacks.py (`make attacks`). This host: cgroup mode %s, "
        "cgroup limits for this user: %s." % (UID, feats.get("io.agentsbx.cgroup.mode"),
                                              feats.get("io.agentsbx.cgroup.limits")),
        "",
        "| attack | rootless agentsbx | what holds it |",
        "|---|---|---|",
    ]
    for name in ROWS:
        if name not in RESULTS:
            continue
        verdict, _, detail, _ = RESULTS[name]
        holds = KERNEL.get(name) or RESOURCE.get(name)
        if verdict == "ALLOWED":
            holds = "nothing here: " + holds
        lines.append("| %s | %s | %s |" % (BY_NAME[name].title, verdict, holds))
    with open(os.path.join(HERE, "rootless-results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
