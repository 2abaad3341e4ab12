# subprocess: a shell pipeline and a child python.
import subprocess
import sys
a = subprocess.run(["sh", "-c", "echo sub-$((6*7)) | tr a-z A-Z"], capture_output=True, text=True, check=True)
b = subprocess.run([sys.executable, "-c", "print(sum(range(10)))"], capture_output=True, text=True, check=True)
c = subprocess.run(["ls", "/usr/bin"], capture_output=True, text=True, check=True)
assert a.stdout == "SUB-42\n" and b.stdout == "45\n" and "python3" in c.stdout.split()
print("TASK-OK:subprocess %s %s" % (a.stdout.strip(), b.stdout.strip()), flush=True)
