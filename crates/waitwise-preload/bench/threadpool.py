"""A Python thread-pool program for the interposer benchmark: prints its
own wall time in seconds.

Every lock CPython takes with a timeout goes through sem_clockwait, and its
queues and futures through condition variables built on those locks: a
ThreadPoolExecutor maps many small tasks, and producer/consumer threads
hand items through a queue.Queue with timed gets.
"""
import concurrent.futures
import queue
import threading
import time

TASKS = 20000
ITEMS = 20000


def task(x):
    return (x * x) % 7


def pool():
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as ex:
        return sum(ex.map(task, range(TASKS), chunksize=1))


def hand_off():
    q = queue.Queue(maxsize=64)
    total = [0]

    def consumer():
        while True:
            item = q.get(timeout=10)
            if item is None:
                return
            total[0] += item

    c = threading.Thread(target=consumer)
    c.start()
    for i in range(ITEMS):
        q.put(i, timeout=10)
    q.put(None)
    c.join()
    return total[0]


t0 = time.perf_counter()
assert pool() == sum(task(x) for x in range(TASKS))
assert hand_off() == ITEMS * (ITEMS - 1) // 2
print(f"{time.perf_counter() - t0:.6f}")
