# Memory grab: 512 MiB, every page written (b"\x01" * n is a memset), held.
mib = int(ARGS[0]) if ARGS else 512
chunks = []
try:
    for i in range(mib // 8):
        chunks.append(b"\x01" * (8 << 20))
        if i % 16 == 15:
            info("holding %d MiB" % ((i + 1) * 8))
except MemoryError:
    failed("MemoryError after %d MiB" % (len(chunks) * 8))
else:
    succeeded("holding %d MiB" % (len(chunks) * 8))
