# SPDX-License-Identifier: Apache-2.0
"""The run_python tool for an LLM's tool-use API, and its handler: the
model asks to run Python, the loop runs it in a Sandbox and hands back the
result.

    tools = [agentsbx.run_python_tool()]                 # Anthropic's shape
    ... the model answers with a tool_use block {name, input} ...
    content = agentsbx.handle_run_python(block.input, sandbox)
"""

import json

from ._sandbox import Sandbox

NAME = "run_python"
DESCRIPTION = (
    "Run a Python 3 program in a fresh, isolated sandbox and get back what it printed. "
    "The sandbox has no network, a read-only root with a writable /tmp (the working "
    "directory), limited memory and processes, and a wall-clock timeout; nothing persists "
    "between calls, so each program must be complete. Print what you want to see: the "
    "result has stdout, stderr, exit_code, timed_out, the value of the last expression "
    "(as a REPL shows it) and, for an uncaught exception, its name, value and traceback. "
    "Files the program writes under /outputs are returned too.")
MAX_TIMEOUT = 300

SCHEMA = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "The Python 3 program to run."},
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT,
                            "description": "Wall-clock limit in seconds (default 30)."},
        "stdin": {"type": "string", "description": "Text given to the program on stdin."},
    },
    "required": ["code"],
    "additionalProperties": False,
}


def run_python_tool(format="anthropic"):
    """The tool definition: "anthropic" ({name, description, input_schema}),
    "openai" ({type: function, function: {name, description, parameters}})
    or "mcp" ({name, description, inputSchema})."""
    schema = json.loads(json.dumps(SCHEMA))  # a copy the caller may change
    if format == "anthropic":
        return {"name": NAME, "description": DESCRIPTION, "input_schema": schema}
    if format == "openai":
        return {"type": "function",
                "function": {"name": NAME, "description": DESCRIPTION, "parameters": schema}}
    if format == "mcp":
        return {"name": NAME, "description": DESCRIPTION, "inputSchema": schema}
    raise ValueError("format %r: expected 'anthropic', 'openai' or 'mcp'" % format)


def handle_run_python(arguments, sandbox=None):
    """Run a run_python call (its arguments, a dict or the JSON text of
    one) in sandbox (default: Sandbox()) and return the tool result as JSON
    text for the model: the Result's fields, with outputs as paths and
    sizes.  Arguments the schema does not allow raise ValueError."""
    if isinstance(arguments, (str, bytes)):
        arguments = json.loads(arguments)
    if not isinstance(arguments, dict) or not isinstance(arguments.get("code"), str):
        raise ValueError("run_python: arguments.code: required, a string")
    extra = set(arguments) - set(SCHEMA["properties"])
    if extra:
        raise ValueError("run_python: unknown arguments: %s" % ", ".join(sorted(extra)))
    timeout = arguments.get("timeout_seconds")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not 0 < timeout <= MAX_TIMEOUT):
        raise ValueError("run_python: timeout_seconds: a number in (0, %d]" % MAX_TIMEOUT)
    stdin = arguments.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        raise ValueError("run_python: stdin: a string")
    sb = sandbox if sandbox is not None else Sandbox()
    r = sb.run(arguments["code"], "python", timeout=timeout, stdin=stdin)
    d = r.to_dict()
    if "outputs" in d:
        d["outputs"] = [{"path": o["path"], "size": o["size"]} for o in d["outputs"]]
    return json.dumps(d)
