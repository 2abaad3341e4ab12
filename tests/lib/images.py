# SPDX-License-Identifier: Apache-2.0
"""
Images for the suites that run real programs in real images: a
busybox-static rootfs (tests/e2e), an OCI archive of a rootfs tarball for
`ctr images import`, and the Debian rootfs made by `debootstrap
--variant=minbase --include=PKGS bookworm`, built once per machine and
cached (tests/sandbox's python and node images, tests/attacks' Python
image: the same cache and the same recipe).

Environment:
  AGENTSBX_TEST_CACHE   the debootstrap cache (default /var/cache/agentsbx-test)
  AGENTSBX_TEST_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
"""

import contextlib
import fcntl
import hashlib
import io
import json
import os
import shutil
import tarfile

from procs import run

BUSYBOX = "/bin/busybox"
CACHE = os.environ.get("AGENTSBX_TEST_CACHE", "/var/cache/agentsbx-test")
MIRROR = os.environ.get("AGENTSBX_TEST_MIRROR", "http://deb.debian.org/debian")
# A finished tree has it; a half-built one is never under the final name.
MARKER = ".agentsbx-complete"

# --------------------------------------------------------------------------
# busybox-static

ROOT_PASSWD = (
    "root:x:0:0:root:/root:/bin/sh\n"
    "user:x:1000:1000:user:/home/user:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
ROOT_GROUP = "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n"


def build_rootfs(dest):
    """A busybox-static rootfs: /bin/busybox and a symlink per applet,
    /etc/passwd with root and user 1000."""
    for d in ("bin", "etc", "proc", "sys", "dev", "tmp", "root", "home/user",
              "var/log", "run"):
        os.makedirs(os.path.join(dest, d), exist_ok=True)
    shutil.copy2(BUSYBOX, os.path.join(dest, "bin", "busybox"))
    applets = run([BUSYBOX, "--list"]).ok().out.split()
    for a in applets:
        if a != "busybox" and "/" not in a:
            os.symlink("busybox", os.path.join(dest, "bin", a))
    with open(os.path.join(dest, "etc", "passwd"), "w") as f:
        f.write(ROOT_PASSWD)
    with open(os.path.join(dest, "etc", "group"), "w") as f:
        f.write(ROOT_GROUP)
    os.chmod(os.path.join(dest, "tmp"), 0o1777)
    os.chown(os.path.join(dest, "home", "user"), 1000, 1000)


def oci_archive(layer_tar, out, ref):
    """An OCI image-layout tarball with one uncompressed layer, for
    `ctr images import` (made here, so the ctr tests need no docker)."""
    with open(layer_tar, "rb") as f:
        layer = f.read()
    ldig = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                   "Cmd": ["sh"]},
        "rootfs": {"type": "layers", "diff_ids": [ldig]},
    }, sort_keys=True).encode()
    cdig = "sha256:" + hashlib.sha256(config).hexdigest()
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": cdig, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": ldig, "size": len(layer)}],
    }, sort_keys=True).encode()
    mdig = "sha256:" + hashlib.sha256(manifest).hexdigest()
    index = json.dumps({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": mdig, "size": len(manifest),
        "annotations": {"io.containerd.image.name": ref,
                        "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[1]}}]}).encode()
    with tarfile.open(out, "w") as t:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
        add("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
        add("index.json", index)
        for dig, data in ((ldig, layer), (cdig, config), (mdig, manifest)):
            add("blobs/sha256/" + dig.split(":")[1], data)


# --------------------------------------------------------------------------
# debootstrap, cached


class ImageError(Exception):
    pass


@contextlib.contextmanager
def cache_lock():
    """The cache's lock: held while an image is built, and by a reader that
    must not see a rebuild while it copies an image out."""
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def debootstrap_locked(name, include):
    """CACHE/NAME, built by debootstrap with INCLUDE when it is not there
    yet; the caller holds cache_lock().  Raises ImageError (with
    debootstrap's output) when it cannot be built here."""
    path = os.path.join(CACHE, name)
    if os.path.exists(os.path.join(path, MARKER)):
        return path
    if not shutil.which("debootstrap", path="/usr/sbin:/usr/bin:/sbin:/bin"):
        run(["apt-get", "install", "-y", "-qq", "debootstrap"], timeout=600,
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if not shutil.which("debootstrap", path="/usr/sbin:/usr/bin:/sbin:/bin"):
        raise ImageError("debootstrap is not installed and apt-get could not install it")
    tmp = "%s.tmp-%d" % (path, os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    r = run(["debootstrap", "--variant=minbase", "--include=" + include, "bookworm", tmp,
             MIRROR], timeout=1500)
    if r.rc != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ImageError("debootstrap failed: %r" % r)
    open(os.path.join(tmp, MARKER), "w").close()
    shutil.rmtree(path, ignore_errors=True)
    os.rename(tmp, path)
    return path


def debootstrap_image(name, include):
    """CACHE/NAME (built once, under the lock), or None when it cannot be
    built here (the reason is printed)."""
    with cache_lock():
        try:
            return debootstrap_locked(name, include)
        except ImageError as e:
            print(str(e)[-2000:])
            return None
