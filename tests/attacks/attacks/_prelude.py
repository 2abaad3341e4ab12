# SPDX-License-Identifier: Apache-2.0
# Prepended to every attack program: `python3 -c PRELUDE+ATTACK NAME ARGS...`
# (sys.argv[0] is "-c").  An attack prints ATTACK-STARTED:NAME first, then
# ATTACK-SUCCEEDED:NAME only when it did what it set out to do;
# ATTACK-FAILED:NAME and INFO: lines are details for the report.
import ctypes
import errno
import os
import sys

NAME = sys.argv[1]
ARGS = sys.argv[2:]


def out(*a):
    print(*a, flush=True)


def succeeded(detail=""):
    out("ATTACK-SUCCEEDED:%s %s" % (NAME, detail))


def failed(detail):
    out("ATTACK-FAILED:%s %s" % (NAME, detail))


def info(detail):
    out("INFO:%s" % detail)


def ename(e):
    if isinstance(e, OSError):
        e = e.errno
    return errno.errorcode.get(e, str(e))


libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def syscall(nr, *args):
    """(return value, errno name or None) of a raw syscall."""
    conv = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return r, (ename(ctypes.get_errno()) if r == -1 else None)


out("ATTACK-STARTED:" + NAME)
