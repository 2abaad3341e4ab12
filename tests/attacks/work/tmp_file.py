# Write a file in /tmp and read it back.
import hashlib
import os
data = os.urandom(1 << 20) + "notes: ünïcode\n".encode()
with open("/tmp/agent-notes.bin", "wb") as f:
    f.write(data)
with open("/tmp/agent-notes.bin", "rb") as f:
    back = f.read()
os.unlink("/tmp/agent-notes.bin")
assert back == data
print("TASK-OK:tmp-file %d bytes sha256=%s" % (len(back), hashlib.sha256(back).hexdigest()[:16]), flush=True)
