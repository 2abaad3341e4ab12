# Write /proc/sysrq-trigger ("h": the harmless help key).  A path masked with
# /dev/null takes the write and does nothing: that is not a success.
import stat
p = "/proc/sysrq-trigger"
try:
    st = os.stat(p)
except OSError as e:
    failed("%s: %s" % (p, ename(e)))
else:
    if stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3:
        failed("%s is masked (/dev/null)" % p)
    else:
        try:
            fd = os.open(p, os.O_WRONLY)
            n = os.write(fd, b"h")
            os.close(fd)
            succeeded("wrote %d byte to %s" % (n, p))
        except OSError as e:
            failed("%s: %s" % (p, ename(e)))
