# userfaultfd(2), plain and UFFD_USER_MODE_ONLY.
res = []
for flags, label in ((os.O_CLOEXEC | os.O_NONBLOCK, "plain"),
                     (os.O_CLOEXEC | os.O_NONBLOCK | 1, "UFFD_USER_MODE_ONLY")):
    fd, e = syscall(323, flags)
    if fd >= 0:
        succeeded("userfaultfd(%s): fd %d" % (label, fd))
        break
    res.append("%s %s" % (label, e))
else:
    failed("; ".join(res))
