# SPDX-License-Identifier: Apache-2.0
"""The exceptions of the package: what went wrong in agentsbx itself, never
what the code did (a non-zero exit, a timeout, an exception of the program:
those are in the Result)."""


class AgentsbxError(Exception):
    """agentsbx failed; .message is the runtime's own message (from its
    JSON {"error": {"message"}}), .status its exit status, .argv the call."""

    def __init__(self, message, status=None, argv=None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.argv = list(argv) if argv else []


class SandboxError(AgentsbxError):
    """The sandbox could not run the code: no such image, no interpreter in
    it, a limit over the policy's (the message names the policy field), no
    agentsbx binary, ..."""


class SessionError(SandboxError):
    """A session could not be created, reached or used (closed, expired
    after its idle time, a path outside /workspace and /outputs, ...)."""


class CommandExitError(AgentsbxError):
    """Session.commands.run(cmd) exited non-zero (as E2B's
    CommandExitException; check=False returns the result instead).  The
    result is .result; .exit_code, .stdout, .stderr are its."""

    def __init__(self, result, argv=None):
        super().__init__("command exited with code %d%s" % (
            result.exit_code, ": " + result.stderr.strip()[-500:] if result.stderr.strip() else ""),
            status=result.exit_code, argv=argv)
        self.result = result
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr


class NotSupportedError(AgentsbxError, NotImplementedError):
    """Asked for something agentsbx does not do yet (allow_domains)."""
