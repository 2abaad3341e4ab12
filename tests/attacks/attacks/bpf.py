# bpf(2): create an array map, load a socket filter program.
attr = (ctypes.c_ubyte * 128)()
vals = (2, 4, 4, 1)  # BPF_MAP_TYPE_ARRAY, key_size, value_size, max_entries
ctypes.memmove(attr, (ctypes.c_uint32 * 4)(*vals), 16)
fd, e = syscall(321, 0, attr, 128)  # BPF_MAP_CREATE
# BPF_PROG_LOAD: BPF_PROG_TYPE_SOCKET_FILTER, "r0 = 0; exit"
insns = (ctypes.c_uint64 * 2)(0x00000000000000b7, 0x0000000000000095)
lic = ctypes.create_string_buffer(b"GPL")


class ProgAttr(ctypes.Structure):
    _fields_ = [("prog_type", ctypes.c_uint32), ("insn_cnt", ctypes.c_uint32),
                ("insns", ctypes.c_uint64), ("license", ctypes.c_uint64),
                ("pad", ctypes.c_ubyte * 96)]


pa = ProgAttr(1, 2, ctypes.addressof(insns), ctypes.addressof(lic))
pfd, pe = syscall(321, 5, ctypes.byref(pa), ctypes.sizeof(pa))
if fd >= 0 or pfd >= 0:
    succeeded("BPF_MAP_CREATE: %s, BPF_PROG_LOAD: %s" % (e or "fd %d" % fd, pe or "fd %d" % pfd))
else:
    failed("BPF_MAP_CREATE %s, BPF_PROG_LOAD %s" % (e, pe))
