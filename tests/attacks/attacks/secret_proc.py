# Host secret through /proc: every /proc/PID/root and /proc/PID/cwd with the
# secret's host path under it, /proc/PID/environ of every process, and
# /proc/kcore (host memory).
host_path = ARGS[0]
marker = ARGS[1]
found = None
tried = 0
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    for base in ("root", "cwd"):
        p = "/proc/%s/%s%s" % (pid, base, host_path)
        tried += 1
        try:
            with open(p) as f:
                data = f.read()
            if marker in data:
                found = "%s: %s" % (p, data.strip())
        except OSError:
            pass
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            if marker.encode() in f.read():
                found = "/proc/%s/environ" % pid
    except OSError:
        pass
info("pids visible: %d" % len([p for p in os.listdir("/proc") if p.isdigit()]))
try:
    with open("/proc/kcore", "rb") as f:
        head = f.read(4096)
    info("/proc/kcore readable (%d bytes)" % len(head))
    if head:
        found = found or "/proc/kcore readable: host kernel memory"
except OSError as e:
    info("/proc/kcore: %s" % ename(e))
if found:
    succeeded(found)
else:
    failed("no /proc path led to %s (%d tried)" % (host_path, tried))
