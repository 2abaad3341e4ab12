# TIOCSTI: push a command line into the terminal's input queue from a child;
# success is the parent (standing in for the shell that started the agent)
# reading it as typed input.
import fcntl
import select
import termios
if not os.isatty(0):
    failed("stdin is not a terminal")
    sys.exit(0)
payload = "echo INJECTED-%d\n" % os.getpid()
pid = os.fork()
if pid == 0:
    try:
        for ch in payload.encode():
            fcntl.ioctl(0, termios.TIOCSTI, bytes([ch]))
        os._exit(0)
    except OSError as e:
        out("ATTACK-FAILED:%s TIOCSTI: %s" % (NAME, ename(e)))
        os._exit(1)
_, st = os.waitpid(pid, 0)
r, _, _ = select.select([0], [], [], 2)
got = os.read(0, 4096).decode("utf-8", "replace") if r else ""
if payload.strip() in got:
    succeeded("the parent read the injected %r" % got.strip())
elif os.WEXITSTATUS(st) == 0:
    failed("TIOCSTI returned 0 but nothing arrived (%r)" % got)
