# Host secret through a -v bind mount of its host directory.
path = ARGS[0]
try:
    with open(path) as f:
        data = f.read().strip()
except OSError as e:
    failed("%s: %s" % (path, ename(e)))
else:
    succeeded("read %s: %s" % (path, data))
