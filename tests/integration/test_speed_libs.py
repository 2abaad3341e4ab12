# SPDX-License-Identifier: Apache-2.0
"""Issue 19: a call loads only the libraries it uses.  libnftables (egress
rules), libsystemd (--systemd-cgroup) and libmount (mount options outside
the built-in table) are opened when needed, with an error naming the
library when it cannot be; `ldd` lists only what every call uses."""

import os
import subprocess

import pytest

from conftest import add_mount, make_spec, run_cmd

ON_DEMAND = ("libnftables", "libsystemd", "libmount", "libblkid", "libselinux",
             "libpcre2", "libgcrypt", "libjansson", "libnftnl", "libmnl",
             "libxtables", "liblzma", "libzstd", "liblz4")


def _lib_path(soname):
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        line = line.strip()
        if line.startswith(soname + " ") and "x86-64" in line:
            return os.path.realpath(line.rsplit(" => ", 1)[1])
    return None


def test_ldd_lists_no_on_demand_library(runtime, agentsbx_only):
    r = subprocess.run(["ldd", runtime], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    linked = [l.split()[0] for l in r.stdout.splitlines() if l.strip()]
    bad = [l for l in linked if l.startswith(ON_DEMAND)]
    assert not bad, "linked at start: %s\n%s" % (bad, r.stdout)


def test_systemd_cgroup_without_libsystemd_names_it(env, agentsbx_only):
    lib = _lib_path("libsystemd.so.0")
    if not lib:
        pytest.skip("libsystemd.so.0 is not installed here")
    b = env.make_bundle(spec=make_spec(["true"]))
    cid = env.track_id(env.new_id())
    # libsystemd hidden (/dev/null over it) in a private mount namespace:
    # the host's mounts are untouched.
    argv = ["unshare", "-m", "--propagation", "private", "--",
            "sh", "-c", 'mount --bind /dev/null "$0" && shift && exec "$@"', lib, "x"] + \
        [env.runtime, "--root", env.root, "--systemd-cgroup"] + env.policy_args + \
        ["run", "--bundle", b, cid]
    rc, out, err = run_cmd(argv)
    assert rc != 0, (out, err)
    assert "libsystemd.so.0" in err and "--systemd-cgroup" in err, err
    assert os.listdir(env.root) == []


def test_mount_option_outside_the_table_goes_to_libmount(env, agentsbx_only):
    spec = add_mount(make_spec(["sh", "-c", "grep ' /mnt ' /proc/mounts"]), "/mnt", "tmpfs",
                     "tmpfs", ["nosuid", "lazytime", "mode=700"])
    rc, out, err = env.run(spec)
    assert rc == 0, err
    assert "nosuid" in out and "lazytime" in out and "mode=700" in out, out


def test_mount_option_without_libmount_names_it(env, agentsbx_only):
    lib = _lib_path("libmount.so.1")
    if not lib:
        pytest.skip("libmount.so.1 is not installed here")
    b = env.make_bundle(spec=add_mount(make_spec(["true"]), "/mnt", "tmpfs", "tmpfs",
                                       ["lazytime"]))
    argv = ["unshare", "-m", "--propagation", "private", "--",
            "sh", "-c", 'mount --bind /dev/null "$0" && shift && exec "$@"', lib, "x"]
    rc, out, err = run_cmd(argv + env.argv("run", "--bundle", b, env.track_id(env.new_id())))
    assert rc != 0, (out, err)
    assert "libmount.so.1" in err and "mounts[" in err, err
    # ... and a spec whose options are all in the table does not need it.
    b2 = env.make_bundle(name="plain", spec=make_spec(["true"]))
    rc, out, err = run_cmd(argv + env.argv("run", "--bundle", b2, env.track_id(env.new_id())))
    assert rc == 0, err
    assert os.listdir(env.root) == []
