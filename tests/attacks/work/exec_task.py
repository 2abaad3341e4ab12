# Run with `docker exec`: sees the main process's /tmp and its processes.
import os
with open("/tmp/main-was-here") as f:
    seen = f.read().strip()
pids = [p for p in os.listdir("/proc") if p.isdigit()]
assert seen == "main"
print("TASK-OK:docker-exec saw %r, %d processes" % (seen, len(pids)), flush=True)
