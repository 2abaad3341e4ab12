# SPDX-License-Identifier: Apache-2.0
"""The options a Sandbox and a Session share, as CLI flags."""

from ._cli import size_arg
from ._errors import NotSupportedError, SandboxError

LANGS = ("python", "sh", "node")
ALLOW_DOMAINS_FIELD = "egress.allowDomains"


def check_allow_domains(allow_domains):
    """Egress by domain name is issue 27's, not built yet: refuse it, never
    ignore it (a caller who asked for two domains must not get no network
    without a word, nor, some day, everything)."""
    if allow_domains:
        raise NotSupportedError(
            "allow_domains=%r: egress by domain name per call is not built yet (issue 27: "
            "the policy field %s names the domains every container may reach; the sandbox "
            "and session commands cannot narrow it per call yet).  Until then a sandbox has "
            "no network (network=None), or joins a network namespace you prepared "
            "(network='/var/run/netns/NAME', if the policy allows networking)"
            % (list(allow_domains), ALLOW_DOMAINS_FIELD))


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
