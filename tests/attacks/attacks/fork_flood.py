# Fork flood: 200 processes alive at once.
import signal
import time

want = int(ARGS[0]) if ARGS else 200
pids = []
error = None
try:
    for _ in range(want):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        pids.append(pid)
except OSError as e:
    error = e
if len(pids) >= want:
    succeeded("%d processes alive" % len(pids))
else:
    failed("fork failed after %d processes: %s" % (len(pids), ename(error)))
for p in pids:
    os.kill(p, signal.SIGKILL)
for p in pids:
    os.waitpid(p, 0)
