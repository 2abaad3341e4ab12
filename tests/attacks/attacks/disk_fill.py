# Disk fill: write 50 MiB to a file (ARGS[0]) and fsync it; or, when ARGS[0]
# ends in "/", to 1-MiB files in that directory (no single file big enough
# for RLIMIT_FSIZE to stop it: only a bound on the filesystem can).
path = ARGS[0]
mib = int(ARGS[1]) if len(ARGS) > 1 else 50
buf = b"\xa5" * (1 << 20)
done = 0


def write_file(name, size):
    global done
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        end = done + size
        while done < end:
            done += os.write(fd, buf)
        os.fsync(fd)
    finally:
        os.close(fd)


try:
    if path.endswith("/"):
        for i in range(mib):
            write_file("%sattack-fill.%d" % (path, i), 1 << 20)
    else:
        write_file(path, mib << 20)
except OSError as e:
    failed("%s after %d MiB: %s" % (path, done >> 20, ename(e)))
else:
    if done >= mib << 20:
        succeeded("%d MiB written to %s" % (done >> 20, path))
    else:
        failed("only %d bytes in %s" % (done, path))
