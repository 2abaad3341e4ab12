# A service bound to the host's loopback: 127.0.0.1:PORT of the Docker
# host (the suite's network namespace, where dockerd runs), 127.0.0.1:PORT2
# of the machine's own network namespace, and the first port again through
# the bridge gateway.
token = ARGS[0]
port, port2, gw = int(ARGS[1]), int(ARGS[2]), ARGS[3]
results = []
for addr, p in (("127.0.0.1", port), ("127.0.0.1", port2), (gw, port)):
    data, e = banner(addr, p)
    if data and token in data:
        succeeded("%s:%d answered: %s" % (addr, p, data.strip()))
        break
    results.append("%s:%d %s" % (addr, p, e or "answered without the token"))
else:
    failed("; ".join(results))
