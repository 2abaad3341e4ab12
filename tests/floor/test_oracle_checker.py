# SPDX-License-Identifier: Apache-2.0
"""The checker's own pieces, without a container: its reading of
mountinfo, its glob (the runtime's fnmatch(3) with flags 0), the device
rules, the mapping of a container's mount to a host path, and the mutator's
reproducibility (a case is its seed and index)."""

import json

import floor_checker as fc
import floor_mutator as fm

HOST = """22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 27 254:0 /srv/data /mnt/data\\040x rw,relatime shared:7 - ext4 /dev/vda rw
41 27 0:50 / /run rw shared:9 - tmpfs tmpfs rw,size=1024k
"""


def test_mountinfo_is_read_as_the_kernel_writes_it():
    ms = fc.parse_mountinfo(HOST)
    assert [m.mp for m in ms] == ["/proc", "/", "/mnt/data x", "/run"]
    assert ms[1].dev == (254, 0) and ms[1].optional == ["shared:1"]
    assert fc.peer_groups(ms) == {"1", "7", "9"}
    assert fc.super_size(ms[3]) == 1 << 20


def test_a_container_mount_maps_to_its_host_paths():
    host = fc.parse_mountinfo(HOST)
    c = fc.parse_mountinfo("90 72 254:0 /srv/data/sub /m ro - ext4 /dev/vda rw\n")[0]
    assert set(fc.map_to_host(c, host)) == {"/srv/data/sub", "/mnt/data x/sub"}
    gone = fc.parse_mountinfo("91 72 254:0 /x//deleted /m ro - ext4 /dev/vda rw\n")[0]
    assert fc.map_to_host(gone, host) == []
    other = fc.parse_mountinfo("92 72 0:99 / /m ro - tmpfs tmpfs rw\n")[0]
    assert fc.map_to_host(other, host) == []


def test_glob_is_fnmatch_with_no_flags():
    assert fc.glob_match("touch /ev/*", "touch /ev/a/b; rm -rf /")  # '*' crosses '/'
    assert not fc.glob_match("touch /ev/x.[0-2]", "touch /ev/x.3")
    assert fc.glob_match("a\\*b", "a*b") and not fc.glob_match("a\\*b", "axb")
    assert fc.glob_match("?*.prestart.[0-2]", "id.prestart.1")


def test_device_rules():
    assert fc.device_rule_ok("c 1:3 rwm") and fc.device_rule_ok("c *:* m")
    assert fc.device_rule_ok("c 136:* rwm")
    assert not fc.device_rule_ok("a *:* rwm")
    assert not fc.device_rule_ok("b 254:0 rw")
    assert not fc.device_rule_ok("c 1:1 r")


def test_a_case_is_its_seed_and_index():
    a, b = fm.case("s", 7), fm.case("s", 7)
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert json.dumps(fm.case("s", 8), sort_keys=True) != json.dumps(a, sort_keys=True)
