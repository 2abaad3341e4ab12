# SPDX-License-Identifier: Apache-2.0
"""Session: a sandbox whose /workspace persists between runs, shaped as
E2B's code interpreter (`with Session() as s: s.run_code(...);
s.files.write(...); s.commands.run("pip list")`), on `agentsbx session`
(a small server per session; each run is a new container of it)."""

import base64
import os
import tempfile
from dataclasses import dataclass

from ._cli import Cli, size_arg
from ._errors import CommandExitError, SessionError
from ._options import check_lang, domain_flags, image_flags, limit_flags
from ._result import Result
from ._sandbox import GUARD_MARGIN, _bytes

CREATE_GUARD = 120.0  # seconds: creating the workspace and overlay, on a loaded machine
FILE_GUARD = 120.0


def _abs(path):
    """REL is /workspace/REL, as agentsbx resolves it."""
    path = str(path)
    if path.startswith("/"):
        return path
    rel = os.path.normpath(path)
    return "/workspace" if rel == "." else "/workspace/" + rel


@dataclass
class EntryInfo:
    """A directory entry (E2B's EntryInfo, plus the size): type is "file",
    "directory", "symlink" or "other", as agentsbx reports it."""
    name: str
    type: str
    path: str
    size: int


class Files:
    """session.files: paths are /workspace/REL, REL (relative to
    /workspace) or /outputs/REL, resolved inside the session only (no
    symlink followed out).  At most 64 MiB a file."""

    def __init__(self, session):
        self._s = session

    def write(self, path, data):
        """Write data (str: UTF-8, or bytes) to path, making its
        directories; the file is the session code's (it can change, rename
        and delete it).  Returns the EntryInfo."""
        d = self._s._call("write", [], [path, "-"], _bytes(data), FILE_GUARD)
        p = _abs(d.get("path", path))
        return EntryInfo(os.path.basename(p.rstrip("/")), "file", p, int(d.get("size", 0)))

    def read(self, path, format="text"):
        """The file's content: str (format="text", UTF-8) or bytes
        (format="bytes")."""
        if format not in ("text", "bytes"):
            raise SessionError("format %r: expected 'text' or 'bytes'" % format)
        d = self._s._call("read", [], [path], None, FILE_GUARD)
        data = base64.b64decode(d.get("content_base64", ""))
        return data if format == "bytes" else data.decode("utf-8")

    def list(self, path="/workspace"):
        """The entries of a directory."""
        d = self._s._call("ls", [], [path], None, FILE_GUARD)
        base = _abs(d.get("path", path))
        return [EntryInfo(e["name"], e.get("type", "other"),
                          base.rstrip("/") + "/" + e["name"], int(e.get("size", 0)))
                for e in d.get("entries", [])]

    def exists(self, path):
        """Whether path is there (its directory listed, nothing followed)."""
        parent, name = os.path.split(path.rstrip("/"))
        if not name:
            return True
        try:
            return any(e.name == name for e in self.list(parent or "/workspace"))
        except SessionError:
            return False


class Commands:
    """session.commands: shell commands in the session's image."""

    def __init__(self, session):
        self._s = session

    def run(self, cmd, *, timeout=None, stdin=None, check=True):
        """Run cmd with `sh -c` in a new container of the session, in
        /workspace.  Returns the Result; an exit code other than 0 raises
        CommandExitError (carrying it) as E2B's commands.run does, unless
        check=False."""
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else [str(a) for a in cmd]
        r = self._s._run(None, None, timeout, stdin, argv)
        if check and r.exit_code != 0:
            raise CommandExitError(r)
        return r


class Session:
    """A sandbox whose /workspace (and /outputs) persists between runs.
    Each run is a new container on the session's workspace: files persist,
    a Python program's variables do not (unlike a Jupyter kernel).

        with Session(image="python") as s:
            s.files.write("data.csv", "x,y\\n1,2\\n")
            r = s.run_code("import csv; len(list(csv.reader(open('data.csv'))))")
            r.text                     # "2"
            s.commands.run("ls -l").stdout

    The options are Sandbox's (image, memory, cpus, pids, network,
    allow_domains, disk, env, cwd, image_root, binary, root, policy), fixed
    for the session's life, plus lang (the language of run_code, default
    python), timeout (each run's default, 30 s), idle (seconds unused after
    which the session closes itself, default 600) and name (made up
    without one).  Created at once; close() (or the with block's end)
    deletes everything.
    """

    def __init__(self, image="python", timeout=30.0, memory=None, cpus=None, pids=None,
                 network=None, allow_domains=None, *, lang="python", disk=None, env=None,
                 cwd=None, idle=None, name=None, output_limit=None, image_root=None,
                 binary=None, root=None, policy=None, _connect=False):
        self.lang = check_lang(lang)
        self.timeout = float(timeout)
        self.image = image
        self.cli = Cli(binary, root, policy)
        self._output_limit = output_limit
        self.closed = False
        self.files = Files(self)
        self.commands = Commands(self)
        if _connect:
            self.session_id = name
            return
        flags = ["--json", "--lang", lang] + image_flags(image, image_root) + \
            limit_flags(memory, cpus, pids, disk, network, env, cwd) + domain_flags(allow_domains)
        if idle is not None:
            flags += ["--idle", repr(float(idle))]
        argv = self.cli.argv("session", "create", *flags, *(["--", name] if name else []))
        _, d = self.cli.call(argv, None, guard=CREATE_GUARD, error=SessionError)
        self.session_id = d["session_id"]

    @classmethod
    def connect(cls, session_id, *, lang="python", timeout=30.0, binary=None, root=None,
                policy=None):
        """A Session object for a session already open (as E2B's
        Sandbox.connect)."""
        return cls(lang=lang, timeout=timeout, binary=binary, root=root, policy=policy,
                   name=session_id, _connect=True)

    # ---- runs

    def run_code(self, code, language=None, *, timeout=None, stdin=None):
        """Run code in the session's language (or language), in /workspace.
        A Result whatever the code did (.text: the last expression's value,
        .error: the exception, .logs: the streams, as E2B's Execution).  A
        KeyboardInterrupt kills the run, not the session, then propagates."""
        lang = check_lang(language or self.lang)
        code = code.encode() if isinstance(code, str) else bytes(code)
        return self._run(lang, code, timeout, stdin, None)

    def _run(self, lang, code, timeout, stdin, argv):
        t = float(timeout) if timeout is not None else self.timeout
        if t <= 0:
            raise SessionError("timeout must be a positive number of seconds")
        flags = ["--timeout", repr(t)]
        if self._output_limit is not None:
            flags += ["--output-limit", size_arg(self._output_limit)]
        tmpdir = None
        try:
            if code is not None:
                flags += ["--lang", lang]
                if stdin is not None:
                    tmpdir = tempfile.mkdtemp(prefix="agentsbx-py-")
                    path = os.path.join(tmpdir, "code")
                    with open(path, "wb") as f:
                        f.write(code)
                    flags += ["--code", path, "--stdin", "-"]
                    data = _bytes(stdin)
                else:
                    flags += ["--code", "-"]
                    data = code
            else:
                data = b""
                if stdin is not None:
                    flags += ["--stdin", "-"]
                    data = _bytes(stdin)
            d = self._call("run", flags, argv or [], data, t + GUARD_MARGIN)
        finally:
            if tmpdir:
                for n in os.listdir(tmpdir):
                    os.unlink(os.path.join(tmpdir, n))
                os.rmdir(tmpdir)
        return Result.from_json(d)

    def _call(self, verb, flags, args, data, guard):
        """`session VERB --json FLAGS -- NAME ARGS`: after "--" nothing is
        taken for a flag (a path or a command that starts with "-")."""
        if self.closed:
            raise SessionError("session %s is closed" % self.session_id)
        argv = self.cli.argv("session", verb, "--json", *flags, "--", self.session_id, *args)
        _, d = self.cli.call(argv, data, guard=guard, error=SessionError)
        return d

    # ---- life

    def close(self):
        """Stop the session: its run killed, its files and containers
        deleted.  Closing twice is a no-op."""
        if self.closed:
            return
        self.closed = True
        argv = self.cli.argv("session", "close", "--json", "--", self.session_id)
        self.cli.call(argv, None, guard=CREATE_GUARD, error=SessionError)

    kill = close  # E2B's name

    def is_running(self):
        """Whether the session's server is alive."""
        if self.closed:
            return False
        _, lst = self.cli.call(self.cli.argv("session", "list", "--json"), None,
                               guard=FILE_GUARD, error=SessionError)
        return any(s.get("session_id") == self.session_id and s.get("status") == "alive"
                   for s in lst)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "Session(%r%s)" % (self.session_id, ", closed" if self.closed else "")
