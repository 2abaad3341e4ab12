#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Stage the benchmark bundles: one busybox-static rootfs and the configs.

    bench/prepare.py STAGE_DIR

STAGE_DIR/rootfs/          busybox-static, with true, sh, sleep links
STAGE_DIR/config-base.json the default spec as `runc spec` writes it (pid,
                           network, ipc, uts and mount namespaces), without a
                           terminal, running /bin/true
config-sleep.json          the same, running `sleep 3600` (case 6: exec)
config-docker.json         + Docker's default seccomp profile
                           (tests/unit/data/seccomp/docker-default.json)
config-strict.json         + the strict agent profile (bench/profiles/agent-strict.json)
config-memory.json         + linux.resources.memory.limit = 123456789, the
                           placeholder suite.sh replaces (case 7)
config-{nonet,pidmnt,nosys,nomask}.json  base without the network namespace;
                           with the pid and mount namespaces only; without
                           the /sys and /sys/fs/cgroup mounts; without masked
                           and read-only paths (profile.sh's ablation)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def default_spec():
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["runc", "spec"], cwd=d, check=True)
        with open(os.path.join(d, "config.json")) as f:
            return json.load(f)


def main():
    stage = sys.argv[1]
    os.makedirs(stage, exist_ok=True)
    root = os.path.join(stage, "rootfs")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "bin"))
    for d in ("proc", "sys", "dev", "tmp"):
        os.makedirs(os.path.join(root, d))
    shutil.copy2("/bin/busybox", os.path.join(root, "bin", "busybox"))
    for a in ("true", "sh", "sleep", "cat"):
        os.symlink("busybox", os.path.join(root, "bin", a))

    base = default_spec()
    base["process"]["terminal"] = False
    base["process"]["args"] = ["/bin/true"]
    ns = sorted(n["type"] for n in base["linux"]["namespaces"])
    assert ns == ["ipc", "mount", "network", "pid", "uts"], ns

    def write(name, spec):
        with open(os.path.join(stage, f"config-{name}.json"), "w") as f:
            json.dump(spec, f, indent=1)

    write("base", base)
    s = json.loads(json.dumps(base))
    s["process"]["args"] = ["sleep", "3600"]
    write("sleep", s)
    for name, path in (("docker", os.path.join(REPO, "tests/unit/data/seccomp/docker-default.json")),
                       ("strict", os.path.join(HERE, "profiles/agent-strict.json"))):
        s = json.loads(json.dumps(base))
        with open(path) as f:
            s["linux"]["seccomp"] = json.load(f)
        write(name, s)
    s = json.loads(json.dumps(base))
    s["linux"].setdefault("resources", {})["memory"] = {"limit": 123456789}
    write("memory", s)

    def variant(name, edit):
        v = json.loads(json.dumps(base))
        edit(v)
        write(name, v)

    variant("nonet", lambda v: v["linux"].update(
        namespaces=[n for n in v["linux"]["namespaces"] if n["type"] != "network"]))
    def pidmnt(v):
        v["linux"]["namespaces"] = [n for n in v["linux"]["namespaces"] if n["type"] in ("pid", "mount")]
        v.pop("hostname", None)  # no uts namespace
    variant("pidmnt", pidmnt)
    variant("nosys", lambda v: v.update(
        mounts=[m for m in v["mounts"] if not m["destination"].startswith("/sys")]))

    def nomask(v):
        v["linux"].pop("maskedPaths", None)
        v["linux"].pop("readonlyPaths", None)
    variant("nomask", nomask)


if __name__ == "__main__":
    main()
