exec(open("/tmp/nsxr/mk.py").read())
s = make_spec(["sh","-c","test -d /proc/6761 && echo SAW-HOST-PID; ls /proc | grep -c '^[0-9]'"])
for n in s["linux"]["namespaces"]:
    if n["type"]=="pid": n["path"]="/proc/6761/ns/pid"
bundle("pid", s)
s = make_spec(["cat","/proc/sysvipc/msg"])
for n in s["linux"]["namespaces"]:
    if n["type"]=="ipc": n["path"]="/proc/6761/ns/ipc"
bundle("ipc", s)
