# mknod a character device (ARGS: label major minor) and open it; also open
# an existing /dev/LABEL.  /dev/mem: a success is open() working or failing
# only with ENXIO (the sandbox let it through; this kernel has no driver).
# /dev/kvm: KVM_GET_API_VERSION on the open fd.
import fcntl
label, major, minor = ARGS[0], int(ARGS[1]), int(ARGS[2])
notes = []
paths = []
for d in ("/dev", "/tmp", "/"):
    p = os.path.join(d, "attack-%s" % label)
    try:
        os.mknod(p, 0o600 | 0o020000, os.makedev(major, minor))
        notes.append("mknod %s ok" % p)
        paths.append(p)
    except OSError as e:
        notes.append("mknod %s %s" % (p, ename(e)))
if os.path.exists("/dev/" + label):
    paths.append("/dev/" + label)
won = None
for p in paths:
    try:
        fd = os.open(p, os.O_RDWR if label == "kvm" else os.O_RDONLY)
    except OSError as e:
        notes.append("open %s %s" % (p, ename(e)))
        if e.errno == errno.ENXIO and label == "mem":
            won = "open %s reached the driver (ENXIO: no /dev/mem in this kernel)" % p
        continue
    if label == "kvm":
        try:
            v = fcntl.ioctl(fd, 0xAE00)  # KVM_GET_API_VERSION
            won = "open %s: KVM API version %d" % (p, v)
        except OSError as e:
            won = "open %s O_RDWR succeeded (ioctl %s)" % (p, ename(e))
    else:
        won = "open %s: read %d bytes" % (p, len(os.read(fd, 16)))
    os.close(fd)
for p in paths:
    if p.startswith(("/dev/attack-", "/tmp/attack-", "/attack-")):
        try:
            os.unlink(p)
        except OSError:
            pass
if won:
    succeeded(won + "; " + "; ".join(notes))
else:
    failed("; ".join(notes))
