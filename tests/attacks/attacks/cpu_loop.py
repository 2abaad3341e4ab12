# CPU loop: 4 busy processes on the host's 2 cores for WINDOW seconds; the
# children's CPU time over the wall time is the number of CPUs taken.
import time

window = float(ARGS[0]) if ARGS else 5.0
n = int(ARGS[1]) if len(ARGS) > 1 else 4
pids = []
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        end = time.monotonic() + window
        x = 0
        while time.monotonic() < end:
            x += 1
        os._exit(0)
    pids.append(pid)
info("spinning %d processes for %.0f s" % (n, window))
t0 = time.monotonic()
for p in pids:
    os.waitpid(p, 0)
wall = time.monotonic() - t0
t = os.times()
cpus = (t.children_user + t.children_system) / wall
info("cpus=%.2f" % cpus)
if cpus > 1.1:
    succeeded("%.2f CPUs for %.1f s" % (cpus, wall))
else:
    failed("%.2f CPUs for %.1f s" % (cpus, wall))
