# io_uring_setup(2).
params = (ctypes.c_ubyte * 120)()
fd, e = syscall(425, 4, params)
if fd >= 0:
    succeeded("io_uring_setup: fd %d" % fd)
else:
    failed("io_uring_setup: %s" % e)
