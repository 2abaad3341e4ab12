# Network helpers (appended after the prelude for the net_* attacks).
import socket


def banner(addr, port, timeout=3.0):
    """(text received, None) or (None, error name)."""
    try:
        s = socket.create_connection((addr, port), timeout=timeout)
    except OSError as e:
        return None, (ename(e) if e.errno else type(e).__name__)
    try:
        s.settimeout(timeout)
        data = s.recv(4096).decode("utf-8", "replace")
        return data, None
    except OSError as e:
        return None, (ename(e) if e.errno else type(e).__name__)
    finally:
        s.close()


def default_gateway():
    try:
        with open("/proc/net/route") as f:
            for line in f.readlines()[1:]:
                p = line.split()
                if p[1] == "00000000":
                    g = int(p[2], 16)
                    return "%d.%d.%d.%d" % (g & 255, g >> 8 & 255, g >> 16 & 255, g >> 24)
    except OSError:
        pass
    return None


def interfaces():
    try:
        return sorted(os.listdir("/sys/class/net"))
    except OSError:
        return []


info("interfaces: %s; default gateway: %s" % (",".join(interfaces()), default_gateway()))
