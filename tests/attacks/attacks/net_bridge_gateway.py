# A host service listening on all addresses, through the Docker bridge
# gateway (the default route's gateway, and 172.17.0.1).
token = ARGS[0]
port = int(ARGS[1])
results = []
for addr in sorted(set(a for a in (default_gateway(), ARGS[2]) if a)):
    data, e = banner(addr, port)
    if data and token in data:
        succeeded("%s:%d answered: %s" % (addr, port, data.strip()))
        break
    results.append("%s:%d %s" % (addr, port, e or "no token"))
else:
    failed("; ".join(results))
