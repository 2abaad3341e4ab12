# SPDX-License-Identifier: Apache-2.0
"""Result: what a run did, from the CLI's JSON (`agentsbx sandbox --json`,
`agentsbx session run --json`; docs/agents.md)."""

import base64
from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class PythonError:
    """A Python program's uncaught exception, parsed by agentsbx from its
    stderr: name ("ZeroDivisionError"), value ("division by zero") and the
    traceback as Python printed it.  The same three fields as E2B's
    ExecutionError."""
    name: str
    value: str
    traceback: str


@dataclass
class Output:
    """A file the run created or changed in /outputs.  content: its bytes
    for a one-call Sandbox (agentsbx returns up to 4 MiB in all), None for a
    session (read it with session.files.read(path, format="bytes"))."""
    path: str
    size: int
    content: Optional[bytes] = None


@dataclass
class Logs:
    """E2B's execution.logs: the streams as lists of chunks (one each here)."""
    stdout: List[str]
    stderr: List[str]


@dataclass
class Result:
    """What one run did.  The first five are the tutorial's interface
    (stdout, stderr, exit_code, timed_out, seconds); then what agentsbx
    knows beyond them."""
    stdout: str
    stderr: str
    exit_code: int        # 128+N for signal N (137: killed, as at the timeout)
    timed_out: bool       # killed at the wall-clock timeout
    seconds: float        # from start to exit
    oom_killed: bool = False    # the memory limit's OOM killer struck
    truncated: bool = False     # a stream was over the output limit (trimmed in the middle)
    value: Optional[str] = None  # Python: repr() of the last expression's value
    outputs: List[Output] = field(default_factory=list)
    outputs_truncated: bool = False
    error: Optional[PythonError] = None  # Python: the uncaught exception

    @property
    def ok(self):
        """Exited 0 in time."""
        return self.exit_code == 0 and not self.timed_out

    # E2B's Execution: .text is the last expression's value, .logs the streams.
    @property
    def text(self):
        return self.value

    @property
    def logs(self):
        return Logs([self.stdout] if self.stdout else [], [self.stderr] if self.stderr else [])

    @classmethod
    def from_json(cls, d):
        err = d.get("error")
        return cls(
            stdout=d.get("stdout", ""),
            stderr=d.get("stderr", ""),
            exit_code=int(d.get("exit_code", -1)),
            timed_out=bool(d.get("timed_out", False)),
            seconds=float(d.get("seconds", 0.0)),
            oom_killed=bool(d.get("oom_killed", False)),
            truncated=bool(d.get("truncated", False)),
            value=d.get("value"),
            outputs=[Output(o["path"], int(o.get("size", 0)),
                            base64.b64decode(o["content_base64"])
                            if o.get("content_base64") is not None else None)
                     for o in d.get("outputs") or []],
            outputs_truncated=bool(d.get("outputs_truncated", False)),
            error=PythonError(err.get("name", ""), err.get("value", ""), err.get("traceback", ""))
            if isinstance(err, dict) else None,
        )

    def to_dict(self):
        """JSON-ready (an output's content as base64), e.g. for a tool result."""
        d = {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code,
             "timed_out": self.timed_out, "seconds": self.seconds,
             "oom_killed": self.oom_killed, "truncated": self.truncated}
        if self.value is not None:
            d["value"] = self.value
        if self.error is not None:
            d["error"] = {"name": self.error.name, "value": self.error.value,
                          "traceback": self.error.traceback}
        if self.outputs:
            d["outputs"] = [dict({"path": o.path, "size": o.size},
                                 **({"content_base64": base64.b64encode(o.content).decode()}
                                    if o.content is not None else {}))
                            for o in self.outputs]
        return d
