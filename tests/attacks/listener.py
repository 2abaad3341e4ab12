# SPDX-License-Identifier: Apache-2.0
"""
The services the network attacks try to reach, run by the suite inside its
own network namespace (the one dockerd runs in, where Docker's bridge
gateway 172.17.0.1 lives) with `nsenter --net=... python3 listener.py`:

    listener.py TOKEN KIND:ADDR:PORT:LABEL ...

KIND banner   on connect, send "AGENTSBX-LISTENER TOKEN LABEL\\n"
     http     answer one HTTP request with a fake metadata document
              containing "AGENTSBX-LISTENER TOKEN LABEL"
     revshell a reverse-shell catcher: send a command, and only when its
              output proves a working shell, make that shell print the
              success marker on the container's side

Every event is printed (flushed) on stdout, which the suite reads.
Runs until killed.
"""

import socket
import sys
import threading
import time

TOKEN = sys.argv[1]
LOCK = threading.Lock()


def log(*a):
    with LOCK:
        print(time.strftime("%H:%M:%S"), *a, flush=True)


def recv_until(c, needle, limit=65536, timeout=6.0):
    c.settimeout(0.5)
    end = time.monotonic() + timeout
    data = b""
    while needle not in data and len(data) < limit and time.monotonic() < end:
        try:
            chunk = c.recv(4096)
        except socket.timeout:
            continue
        if not chunk:
            break
        data += chunk
    return data


def handle(kind, label, c, peer):
    try:
        if kind == "banner":
            c.sendall(("AGENTSBX-LISTENER %s %s\n" % (TOKEN, label)).encode())
            log("CONNECT", label, peer[0])
        elif kind == "http":
            req = recv_until(c, b"\r\n\r\n", timeout=3)
            body = ('{"Code": "Success", "AccessKeyId": "AGENTSBX-LISTENER %s %s"}\n'
                    % (TOKEN, label)).encode()
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            log("HTTP", label, peer[0], req.split(b"\r\n", 1)[0].decode("ascii", "replace"))
        elif kind == "revshell":
            log("REVSHELL-CONNECT", label, peer[0])
            c.sendall(b"echo pwned-$((6*7))\n")
            got = recv_until(c, b"pwned-42")
            if b"pwned-42" in got:
                log("REVSHELL-VERIFIED", label, peer[0])
                c.sendall(("echo ATTACK-SUCCEEDED:net-reverse-shell shell verified by the "
                           "listener at %s >&2; exit 0\n" % label).encode())
                recv_until(c, b"\0", timeout=2)
            else:
                log("REVSHELL-NO-SHELL", label, peer[0], repr(got[:200]))
    except OSError as e:
        log("ERROR", label, peer[0], e)
    finally:
        c.close()


def serve(kind, addr, port, label):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    log("LISTEN", kind, addr, port, label)
    while True:
        c, peer = s.accept()
        threading.Thread(target=handle, args=(kind, label, c, peer), daemon=True).start()


def main():
    threads = []
    for spec in sys.argv[2:]:
        kind, addr, port, label = spec.split(":", 3)
        t = threading.Thread(target=serve, args=(kind, addr, int(port), label), daemon=True)
        t.start()
        threads.append(t)
    time.sleep(0.3)
    log("READY")
    while all(t.is_alive() for t in threads):
        time.sleep(0.5)
    log("A LISTENER DIED")
    sys.exit(1)


if __name__ == "__main__":
    main()
