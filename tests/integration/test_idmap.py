# SPDX-License-Identifier: Apache-2.0
"""Id-mapped bind mounts (mounts[].options idmap/ridmap, spec v1.2+), done
with mount_setattr(MOUNT_ATTR_IDMAP) on the detached clone of the source:
a file owned by one id on the host is seen with the id the mount's mapping
gives it; without mappings of its own the mount takes the container's user
namespace mappings.  Under the default policy (enforce) an id-mapped bind is
refused, naming the policy field that allows it."""

import os

import pytest

from conftest import add_mount, make_spec, policy_file, write_spec
from test_userns import HOST_ID, SIZE, userns_spec, chown_tree


def source_dir(env, uid, gid):
    """A test-made directory with a file `f` owned by uid:gid and a file
    `root` owned by 0:0."""
    src = os.path.join(env.tmp, "idmap-src")
    os.mkdir(src)
    os.chmod(src, 0o755)
    for name, owner in (("f", (uid, gid)), ("root", (0, 0))):
        path = os.path.join(src, name)
        with open(path, "w") as f:
            f.write(name)
        os.chown(path, *owner)
    return src


def idmapped(spec, src, option, uids=None, gids=None):
    add_mount(spec, "/mnt", "bind", src, ["rbind", option, "ro"])
    if uids is not None:
        spec["mounts"][-1]["uidMappings"] = uids
        spec["mounts"][-1]["gidMappings"] = gids
    return spec


@pytest.mark.parametrize("option", ["idmap", "ridmap"])
def test_mount_mapping_shows_host_1000_as_0(env, option):
    src = source_dir(env, 1000, 1000)
    m = [{"containerID": 1000, "hostID": 0, "size": 1}]
    spec = idmapped(make_spec(["sh", "-c", "stat -c %u:%g /mnt/f /mnt/root"]),
                    src, option, m, m)
    rc, out, err = env.run(spec)
    assert rc == 0, err
    # 1000 is mapped to 0; 0 has no mapping in the mount: the overflow id.
    assert out.split() == ["0:0", "65534:65534"]
    st = os.stat(os.path.join(src, "f"))
    assert (st.st_uid, st.st_gid) == (1000, 1000)  # the host's view is unchanged


def test_idmap_without_mappings_takes_the_containers(env):
    """Files owned by root on the host appear owned by the container's root
    (host uid HOST_ID through the user namespace)."""
    b = env.default_bundle()
    chown_tree(os.path.join(b, "rootfs"), HOST_ID, HOST_ID)
    os.lchown(os.path.join(b, "rootfs"), HOST_ID, HOST_ID)
    src = source_dir(env, 1000, 1000)
    spec = idmapped(userns_spec(["sh", "-c", "stat -c %u:%g /mnt/root /mnt/f"]),
                    src, "idmap")
    rc, out, err = env.run(spec, bundle=b)
    assert rc == 0, err
    assert out.split() == ["0:0", "1000:1000"]


def test_idmap_on_a_tmpfs_is_refused(env):
    spec = make_spec(["true"])
    m = [{"containerID": 0, "hostID": 1000, "size": 1}]
    add_mount(spec, "/mnt", "tmpfs", "tmpfs", ["idmap"])
    spec["mounts"][-1]["uidMappings"] = m
    spec["mounts"][-1]["gidMappings"] = m
    rc, out, err = env.run(spec)
    assert rc != 0
    assert "only bind mounts can be id-mapped" in err


def test_default_policy_refuses_an_idmapped_bind(penv):
    src = source_dir(penv, 1000, 1000)
    m = [{"containerID": 0, "hostID": 65534, "size": 65536}]
    b = penv.make_bundle("idmap")
    write_spec(b, idmapped(make_spec(["true"]), src, "idmap", m, m))
    rc, out, err = penv.rt("run", "--bundle", b, penv.new_id(), check=False)
    assert rc != 0
    assert "id-mapped mount (idmap)" in err and "idmappedMounts: true" in err


def test_policy_field_allows_it(penv):
    """idmappedMounts lifts only this rule: the source must still be under
    the bind prefixes (here the test's own directory is added to them)."""
    src = source_dir(penv, 1000, 1000)
    pol = policy_file(penv, {"idmappedMounts": True,
                             "bindPrefixes": [penv.tmp]})
    m = [{"containerID": 1000, "hostID": 65534, "size": 1}]
    b = penv.make_bundle("idmap")
    write_spec(b, idmapped(make_spec(["stat", "-c", "%u", "/mnt/f"]), src, "idmap", m, m))
    rc, out, err = penv.rt("--policy", pol, "run", "--bundle", b, penv.new_id(), check=False)
    assert rc == 0, err
    assert out.strip() == "65534"
