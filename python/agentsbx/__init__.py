# SPDX-License-Identifier: Apache-2.0
"""agentsbx for Python: run code an AI agent wrote in agentsbx's sandbox.

    import agentsbx
    r = agentsbx.Sandbox(timeout=10).run("print(6*7)")
    r.stdout, r.exit_code, r.timed_out, r.seconds     # "42\\n", 0, False, 0.03

    with agentsbx.Session() as s:                      # files persist between runs
        s.files.write("a.txt", "hi")
        s.run_code("open('a.txt').read()").text        # "'hi'"
        s.commands.run("ls -l").stdout

Standard library only; it runs the agentsbx CLI (`agentsbx sandbox --json`,
`agentsbx session ... --json`) and reads its JSON, never its text.  The
binary: binary=PATH, else $AGENTSBX, else `agentsbx` on PATH.
"""

from ._errors import (AgentsbxError, CommandExitError, NotSupportedError, SandboxError,
                      SessionError)
from ._result import Logs, Output, PythonError, Result
from ._sandbox import Sandbox
from ._session import Commands, EntryInfo, Files, Session
from ._tools import handle_run_python, run_python_tool

__version__ = "0.1.0"

__all__ = [
    "Sandbox", "Session", "Result", "Output", "PythonError", "Logs", "EntryInfo", "Files",
    "Commands", "AgentsbxError", "SandboxError", "SessionError", "CommandExitError",
    "NotSupportedError", "run_python_tool", "handle_run_python", "__version__",
]
