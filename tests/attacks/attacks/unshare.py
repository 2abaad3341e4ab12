# unshare(2) of each namespace type, each in a child of its own.
FLAGS = [("NEWUSER", 0x10000000), ("NEWNS", 0x00020000), ("NEWNET", 0x40000000),
         ("NEWPID", 0x20000000), ("NEWUTS", 0x04000000), ("NEWIPC", 0x08000000),
         ("NEWCGROUP", 0x02000000), ("NEWUSER|NEWNET", 0x10000000 | 0x40000000)]
ok = []
errs = []
for label, flag in FLAGS:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        r, e = syscall(272, flag)
        os.write(wfd, (e or "OK").encode())
        os._exit(0)
    os.close(wfd)
    res = os.read(rfd, 100).decode()
    os.close(rfd)
    os.waitpid(pid, 0)
    (ok if res == "OK" else errs).append(label if res == "OK" else "%s %s" % (label, res))
if ok:
    succeeded("unshare succeeded for: %s" % ", ".join(ok))
else:
    failed("; ".join(errs))
