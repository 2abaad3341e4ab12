# A setuid-root binary in the image (a copy of id(1), mode 4755) run by
# uid 1000: success is an effective uid of 0.
import subprocess
info("running as uid %d euid %d" % (os.getuid(), os.geteuid()))
r = subprocess.run([ARGS[0], "-u"], capture_output=True, text=True)
euid = r.stdout.strip()
if r.returncode == 0 and euid == "0" and os.getuid() != 0:
    succeeded("%s -u printed 0 for uid %d" % (ARGS[0], os.getuid()))
else:
    failed("%s -u printed %r (rc %d) %s" % (ARGS[0], euid, r.returncode, r.stderr.strip()))
