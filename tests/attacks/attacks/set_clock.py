# Set the clock.  settimeofday(2) with only a timezone takes the same
# CAP_SYS_TIME check (and seccomp rule) as setting the time; the suite sets
# the timezone the kernel already has, so a success changes nothing.  If
# the kernel timezone is not UTC (a first call could warp the clock), it
# uses clock_settime(CLOCK_REALTIME, now) instead (a step of microseconds).


class TV(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("usec", ctypes.c_long)]


class TZ(ctypes.Structure):
    _fields_ = [("minuteswest", ctypes.c_int), ("dsttime", ctypes.c_int)]


tv, tz = TV(), TZ()
r, e = syscall(96, ctypes.byref(tv), ctypes.byref(tz))  # gettimeofday
if tz.minuteswest == 0 and tz.dsttime == 0:
    r, e = syscall(164, None, ctypes.byref(tz))  # settimeofday(NULL, tz)
    what = "settimeofday(NULL, {0, 0})"
else:
    class TS(ctypes.Structure):
        _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]
    ts = TS()
    syscall(228, 0, ctypes.byref(ts))
    r, e = syscall(227, 0, ctypes.byref(ts))  # clock_settime(CLOCK_REALTIME)
    what = "clock_settime(CLOCK_REALTIME, now)"
if r == 0:
    succeeded(what + " succeeded")
else:
    failed("%s: %s" % (what, e))
