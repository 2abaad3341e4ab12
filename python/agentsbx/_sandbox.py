# SPDX-License-Identifier: Apache-2.0
"""Sandbox: one call, one throwaway container (`agentsbx sandbox --json`)."""

import os
import tempfile

from ._cli import Cli, size_arg
from ._errors import SandboxError
from ._options import check_lang, domain_flags, image_flags, limit_flags
from ._result import Result

# What agentsbx may take beyond the run's own timeout (creating and
# deleting the container on a loaded machine) before the call is called hung.
GUARD_MARGIN = 120.0


class Sandbox:
    """Runs code in a fresh container per call; nothing persists between
    calls and nothing is left behind.

        sb = Sandbox(image="python", timeout=10, memory="128m")
        r = sb.run("print(6*7)")          # r.stdout == "42\\n"

    image: a name under the image root (image_root=, else
    $AGENTSBX_IMAGE_ROOT, else /var/lib/agentsbx/images), or an absolute
    directory.  timeout: seconds of wall-clock time per run (default 30),
    at which the whole container is killed.  memory (bytes or "256m"), cpus
    (1.5), pids, disk (the writable layer): lower than the policy's; more
    is refused with the policy field that would allow it.  network: None
    (no network, the default) or the path of a network namespace you
    prepared, which the policy must allow.  allow_domains: the names (or
    "*.suffix") the code may reach through the sandbox's egress proxy,
    within the policy's egress.allowDomains.  env: {K: V}; cwd: the
    working directory (default /tmp).  binary, root, policy: the agentsbx
    binary (default $AGENTSBX, else on PATH), its --root and --policy.
    """

    def __init__(self, image="python", timeout=30.0, memory=None, cpus=None, pids=None,
                 network=None, allow_domains=None, *, disk=None, env=None, cwd=None,
                 output_limit=None, image_root=None, binary=None, root=None, policy=None):
        if timeout is None or timeout <= 0:
            raise SandboxError("timeout must be a positive number of seconds")
        self.image = image
        self.timeout = float(timeout)
        self.cli = Cli(binary, root, policy)
        self._flags = image_flags(image, image_root) + limit_flags(
            memory, cpus, pids, disk, network, env, cwd) + domain_flags(allow_domains)
        if output_limit is not None:
            self._flags += ["--output-limit", size_arg(output_limit)]

    def run(self, code, lang="python", *, timeout=None, stdin=None, args=()):
        """Run code (a str or bytes) with lang's interpreter ("python",
        "sh", "node"); args go to the program.  Returns a Result whatever the
        code did; raises SandboxError if the sandbox itself failed, and a
        KeyboardInterrupt stops the run (the container is killed and
        deleted) before it propagates."""
        check_lang(lang)
        code = code.encode() if isinstance(code, str) else bytes(code)
        return self._call(["--lang", lang], code, timeout, stdin, list(args), True)

    def run_command(self, argv, *, timeout=None, stdin=None):
        """Run a command line (["python3", "-c", "print(1)"]) in the image."""
        if isinstance(argv, str) or not argv:
            raise SandboxError("run_command takes a list of arguments")
        return self._call([], None, timeout, stdin, list(argv), False)

    def _call(self, lang_flags, code, timeout, stdin, args, is_code):
        t = float(timeout) if timeout is not None else self.timeout
        if t <= 0:
            raise SandboxError("timeout must be a positive number of seconds")
        flags = ["--json", "--timeout", repr(t)] + lang_flags + self._flags
        tmpdir = None
        try:
            if is_code and stdin is not None:
                # stdin is the program's input: the code goes in a file.
                tmpdir = tempfile.mkdtemp(prefix="agentsbx-py-")
                path = os.path.join(tmpdir, "code")
                with open(path, "wb") as f:
                    f.write(code)
                flags += ["--code", path, "--stdin", "-"]
                data = _bytes(stdin)
            elif is_code:
                flags += ["--code", "-"]
                data = code
            else:
                if stdin is not None:
                    flags += ["--stdin", "-"]
                data = _bytes(stdin) if stdin is not None else b""
            argv = self.cli.argv("sandbox", *flags, "--", *args)
            _, parsed = self.cli.call(argv, data, guard=t + GUARD_MARGIN)
        finally:
            if tmpdir:
                for n in os.listdir(tmpdir):
                    os.unlink(os.path.join(tmpdir, n))
                os.rmdir(tmpdir)
        return Result.from_json(parsed)


def _bytes(v):
    return v.encode() if isinstance(v, str) else bytes(v)
