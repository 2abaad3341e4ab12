# Threads: a pool of 8 and plain threading with a lock.
import threading
from concurrent.futures import ThreadPoolExecutor

with ThreadPoolExecutor(8) as ex:
    total = sum(ex.map(lambda x: x * 3, range(10000)))
count = [0]
lock = threading.Lock()


def bump():
    for _ in range(1000):
        with lock:
            count[0] += 1


ts = [threading.Thread(target=bump) for _ in range(16)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert total == 3 * sum(range(10000)) and count[0] == 16000
print("TASK-OK:threads total=%d count=%d" % (total, count[0]), flush=True)
