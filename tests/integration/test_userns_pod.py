# SPDX-License-Identifier: Apache-2.0
"""A pod in a user namespace (Kubernetes' hostUsers: false): the pause
container makes the user, network and ipc namespaces; an app container
joins them and gets a new pid namespace of its own, which must be owned by
the pod's user namespace -- so the runtime makes it from inside that
namespace and forks the app's init into it (ns_fork_init)."""

import json
import os

from conftest import make_spec
from test_userns import HOST_ID, SIZE, userns_spec, chown_tree


def test_app_joins_the_pods_user_namespace_with_a_pid_namespace_of_its_own(env):
    b = env.default_bundle()
    chown_tree(os.path.join(b, "rootfs"), HOST_ID, HOST_ID)
    os.lchown(os.path.join(b, "rootfs"), HOST_ID, HOST_ID)
    pause = env.create(userns_spec(["sleep", "1000"]), bundle=b)
    env.rt("start", pause)
    ppid = json.loads(env.rt("state", pause)[1])["pid"]

    app = make_spec(["sh", "-c", "cat /proc/self/uid_map; echo pid=$$; "
                     "for n in user net ipc; do readlink /proc/self/ns/$n; done"])
    for ns in app["linux"]["namespaces"]:
        if ns["type"] in ("network", "ipc"):
            ns["path"] = "/proc/%d/ns/%s" % (ppid, "net" if ns["type"] == "network" else "ipc")
    app["linux"]["namespaces"].append({"type": "user", "path": "/proc/%d/ns/user" % ppid})
    rc, out, err = env.run(app, bundle=b)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["0", str(HOST_ID), str(SIZE)]  # the pod's map
    assert lines[1] == "pid=1"  # a pid namespace of its own
    for line, ns in zip(lines[2:5], ("user", "net", "ipc")):
        assert line == os.readlink("/proc/%d/ns/%s" % (ppid, ns)), ns
    # pid=1 came from the app's own /proc: mounting a procfs takes
    # CAP_SYS_ADMIN over the user namespace that owns the pid namespace,
    # which the app's root has only if that is the pod's (it has none on
    # the host).
