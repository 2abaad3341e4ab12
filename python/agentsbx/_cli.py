# SPDX-License-Identifier: Apache-2.0
"""Calling the agentsbx CLI: always with --json, one line of JSON back
(docs/agents.md); never its human-readable text.

A failure of agentsbx itself is {"error": {"message": ...}} with exit
status 125; that becomes an exception carrying the message.  A
KeyboardInterrupt (or any exception) while a call runs stops that call:
the CLI gets SIGTERM (`agentsbx sandbox` then kills and deletes its
container; a `session run` client that goes away makes its session kill
the run, the session stays), then SIGKILL if it is still there after a
grace period (its watchdog deletes what it made).
"""

import json
import os
import shutil
import signal
import subprocess

from ._errors import SandboxError

ENV_BINARY = "AGENTSBX"
EXIT_SANDBOX_FAILED = 125
STOP_GRACE = 10.0  # seconds a stopped call has to clean up before SIGKILL

# The class that runs the CLI.  A harness that reaps orphans itself (a test
# process that is a child subreaper) swaps in a subclass it registers, so
# that it never reaps a child whose exit status Popen is waiting for.
Popen = subprocess.Popen


def find_binary(binary=None):
    """binary, else $AGENTSBX, else `agentsbx` on PATH, else
    /usr/local/bin/agentsbx."""
    for cand in (binary, os.environ.get(ENV_BINARY)):
        if cand:
            return cand
    found = shutil.which("agentsbx")
    if found:
        return found
    if os.access("/usr/local/bin/agentsbx", os.X_OK):
        return "/usr/local/bin/agentsbx"
    raise SandboxError("agentsbx: the binary was not found (give binary=PATH, set $%s, "
                       "or put agentsbx on PATH)" % ENV_BINARY)


def size_arg(v):
    """256 * 2**20 or "256m" -> "268435456" / "256m" (the CLI's sizes)."""
    if isinstance(v, bool):
        raise TypeError("a size is bytes (int) or a string such as '256m'")
    return str(int(v)) if isinstance(v, int) else str(v)


class Cli:
    """The binary and the global options every call of one object uses."""

    def __init__(self, binary=None, root=None, policy=None):
        self.binary = find_binary(binary)
        self.root = root
        self.policy = policy

    def argv(self, *args):
        argv = [self.binary]
        if self.root:
            argv += ["--root", str(self.root)]
        if self.policy:
            argv += ["--policy", str(self.policy)]
        return argv + [str(a) for a in args]

    def call(self, argv, input=None, guard=None, error=SandboxError):
        """Run argv (built by self.argv), feed input (bytes), parse the one
        line of JSON it prints.  Returns (status, parsed).  guard: seconds
        after which a call that is still running is stopped and an error
        raised (agentsbx enforces the run's own timeout; this is for an
        agentsbx that hangs).  {"error": {"message"}} raises error(message).
        """
        try:
            p = Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                      stderr=subprocess.PIPE)
        except OSError as e:
            raise error("agentsbx: cannot run %s: %s" % (argv[0], e), argv=argv) from None
        try:
            out, err = p.communicate(input if input is not None else b"", timeout=guard)
        except subprocess.TimeoutExpired:
            stop(p)
            raise error("agentsbx did not finish in %.0f s: %s" % (guard, " ".join(argv[:6])),
                        argv=argv) from None
        except BaseException:
            # KeyboardInterrupt above all: the call stops, nothing is left.
            stop(p)
            raise
        status = p.returncode
        text = out.decode("utf-8", "replace").strip()
        stderr = err.decode("utf-8", "replace").strip()
        parsed = None
        if text:
            try:
                parsed = json.loads(text.splitlines()[-1])
            except ValueError:
                parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) and \
                "message" in parsed["error"] and set(parsed) == {"error"}:
            raise error(parsed["error"]["message"], status=status, argv=argv)
        if parsed is None or status != 0:
            raise error("agentsbx exited with status %s%s" % (
                status, ": " + stderr[-2000:] if stderr else " and no JSON"),
                status=status, argv=argv)
        return status, parsed


def _signal(p, sig):
    try:
        p.send_signal(sig)
    except OSError:
        pass


def stop(p):
    """SIGTERM, a grace period, SIGKILL; reaped either way (a second
    KeyboardInterrupt only cuts the grace short)."""
    if p.poll() is None:
        _signal(p, signal.SIGTERM)
        try:
            p.wait(STOP_GRACE)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            _signal(p, signal.SIGKILL)
            while True:
                try:
                    p.wait()
                    break
                except KeyboardInterrupt:
                    continue
    for f in (p.stdin, p.stdout, p.stderr):
        try:
            if f:
                f.close()
        except OSError:
            pass
