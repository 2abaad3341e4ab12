# ptrace of a sibling: child B attaches to its sibling A (same uid), reads
# its registers area; and process_vm_readv of the sibling.
import signal
import time

PTRACE_PEEKUSER, PTRACE_ATTACH, PTRACE_DETACH = 3, 16, 17
a = os.fork()
if a == 0:
    time.sleep(30)
    os._exit(0)
time.sleep(0.1)
rfd, wfd = os.pipe()
b = os.fork()
if b == 0:
    os.close(rfd)
    msgs = []
    r, e = syscall(101, PTRACE_ATTACH, a, 0, 0)
    if r == 0:
        os.waitpid(a, 0)
        word = ctypes.c_long()
        v, e2 = syscall(101, PTRACE_PEEKUSER, a, 0, ctypes.byref(word))
        syscall(101, PTRACE_DETACH, a, 0, 0)
        msgs.append("1ptrace(PTRACE_ATTACH) of sibling pid %d: attached, PEEKUSER %s"
                    % (a, e2 or "read its registers"))
    else:
        msgs.append("0ptrace %s" % e)

    class IOVec(ctypes.Structure):
        _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
    buf = ctypes.create_string_buffer(64)
    local = IOVec(ctypes.cast(buf, ctypes.c_void_p), 64)
    # the sibling is a fork of this program: None lives at the same address
    remote = IOVec(id(None), 16)
    n, e3 = syscall(310, a, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    msgs.append(("1process_vm_readv of sibling: %d bytes" % n) if n > 0 else "0process_vm_readv %s" % e3)
    os.write(wfd, "\n".join(msgs).encode())
    os._exit(0)
os.close(wfd)
res = os.read(rfd, 4096).decode().splitlines()
os.waitpid(b, 0)
os.kill(a, signal.SIGKILL)
os.waitpid(a, 0)
wins = [m[1:] for m in res if m.startswith("1")]
if wins:
    succeeded("; ".join(wins))
else:
    failed("; ".join(m[1:] for m in res))
