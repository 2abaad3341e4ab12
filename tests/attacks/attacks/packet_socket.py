# Packet sockets (AF_PACKET, every protocol): sniff and forge frames.
import socket
ok = []
errs = []
for typ, label in ((socket.SOCK_RAW, "SOCK_RAW"), (socket.SOCK_DGRAM, "SOCK_DGRAM")):
    try:
        socket.socket(socket.AF_PACKET, typ, socket.htons(0x0003)).close()
        ok.append(label)
    except OSError as e:
        errs.append("AF_PACKET/%s %s" % (label, ename(e)))
if ok:
    succeeded("AF_PACKET opened: %s" % ", ".join(ok))
else:
    failed("; ".join(errs))
