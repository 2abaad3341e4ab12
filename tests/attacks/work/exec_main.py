# The container's main process for the `docker exec` task: leaves a file in
# /tmp and waits.
import time
with open("/tmp/main-was-here", "w") as f:
    f.write("main\n")
print("MAIN-READY", flush=True)
time.sleep(120)
