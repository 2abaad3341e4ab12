# SPDX-License-Identifier: Apache-2.0
"""The options a Sandbox and a Session share, as CLI flags."""

from ._cli import size_arg
from ._errors import SandboxError

LANGS = ("python", "sh", "node")


def domain_flags(allow_domains):
    """--allow-domain D for each name (or "*.suffix"): egress by name
    through the sandbox's proxy, within the policy's egress.allowDomains
    (agentsbx refuses more, naming that field).  None or empty: the
    policy's own list, often none (no network)."""
    if allow_domains is None:
        return []
    if isinstance(allow_domains, str):
        raise SandboxError("allow_domains: a list of names, not a string")
    flags = []
    for d in allow_domains:
        if not isinstance(d, str) or not d or "," in d:
            raise SandboxError("allow_domains: %r is not a host name or *.suffix" % (d,))
        flags += ["--allow-domain", d]
    return flags


def check_lang(lang):
    if lang not in LANGS:
        raise SandboxError("lang %r: expected one of %s" % (lang, ", ".join(LANGS)))
    return lang


def image_flags(image, image_root):
    """--image NAME (under image_root, $AGENTSBX_IMAGE_ROOT or
    /var/lib/agentsbx/images), or --rootfs DIR for an absolute path."""
    if not image:
        raise SandboxError("an image is needed: a name under the image root, or a directory")
    image = str(image)
    if image.startswith("/"):
        return ["--rootfs", image]
    flags = ["--image", image]
    if image_root:
        flags = ["--image-root", str(image_root)] + flags
    return flags


def limit_flags(memory=None, cpus=None, pids=None, disk=None, network=None, env=None, cwd=None):
    """--memory, --cpus, --pids, --disk, --network, -e, --cwd.  A value over
    the policy's is refused by agentsbx, with the policy's field."""
    flags = []
    if memory is not None:
        flags += ["--memory", size_arg(memory)]
    if cpus is not None:
        flags += ["--cpus", str(cpus)]
    if pids is not None:
        flags += ["--pids", str(int(pids))]
    if disk is not None:
        flags += ["--disk", size_arg(disk)]
    if network is True:
        raise SandboxError("network=True: give the path of a network namespace you prepared "
                           "(network='/var/run/netns/NAME'); the policy must allow networking")
    if network not in (None, False, "none"):
        flags += ["--network", str(network)]
    for k, v in (env or {}).items():
        flags += ["-e", "%s=%s" % (k, v)]
    if cwd is not None:
        flags += ["--cwd", str(cwd)]
    return flags
