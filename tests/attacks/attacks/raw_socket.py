# Raw IP sockets (ICMP, and any protocol).
import socket
ok = []
errs = []
for fam, proto, label in ((socket.AF_INET, socket.IPPROTO_ICMP, "AF_INET/ICMP"),
                          (socket.AF_INET, socket.IPPROTO_RAW, "AF_INET/IPPROTO_RAW"),
                          (socket.AF_INET6, socket.IPPROTO_ICMPV6, "AF_INET6/ICMPV6")):
    try:
        socket.socket(fam, socket.SOCK_RAW, proto).close()
        ok.append(label)
    except OSError as e:
        errs.append("%s %s" % (label, ename(e)))
if ok:
    succeeded("SOCK_RAW opened: %s" % ", ".join(ok))
else:
    failed("; ".join(errs))
