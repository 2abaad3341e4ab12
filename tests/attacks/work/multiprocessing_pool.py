# A multiprocessing pool of 4 workers (fork, semaphores in /dev/shm).
import multiprocessing
import os


def work(x):
    return x * x, os.getpid()


with multiprocessing.Pool(4) as pool:
    procs = len(multiprocessing.active_children())
    res = pool.map(work, range(200), chunksize=5)
assert procs == 4, procs
total = sum(r[0] for r in res)
workers = len(set(r[1] for r in res))
assert total == sum(x * x for x in range(200))
lock = multiprocessing.Lock()
with lock:
    pass
print("TASK-OK:multiprocessing sum=%d pool=%d processes, %d did work" % (total, procs, workers),
      flush=True)
