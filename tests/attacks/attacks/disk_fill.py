# Disk fill: write 50 MiB to a file (ARGS[0]) and fsync it.
path = ARGS[0]
mib = int(ARGS[1]) if len(ARGS) > 1 else 50
buf = b"\xa5" * (1 << 20)
done = 0
try:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        while done < (mib << 20):
            done += os.write(fd, buf)
        os.fsync(fd)
    finally:
        os.close(fd)
except OSError as e:
    failed("%s after %d MiB: %s" % (path, done >> 20, ename(e)))
else:
    size = os.stat(path).st_size
    if size >= mib << 20:
        succeeded("%d MiB written to %s" % (size >> 20, path))
    else:
        failed("only %d bytes in %s" % (size, path))
