# Write /proc/sys/kernel/core_pattern (the host's: it is not namespaced).
# The value written is the one read, so a success changes nothing.
import stat
p = "/proc/sys/kernel/core_pattern"
try:
    st = os.stat(p)
    if stat.S_ISCHR(st.st_mode):
        raise OSError(errno.EPERM, "masked with a device node")
    with open(p, "rb") as f:
        cur = f.read()
    info("core_pattern is %r" % cur)
    fd = os.open(p, os.O_WRONLY)
    try:
        n = os.write(fd, cur)
    finally:
        os.close(fd)
except OSError as e:
    failed("%s: %s" % (p, ename(e)))
else:
    succeeded("wrote %d bytes to %s (the value it had)" % (n, p))
