"""queue.Queue: producers and consumers with put/get timeouts; get on an
empty queue and put on a full one time out (Empty / Full)."""
import queue
import threading

q = queue.Queue(maxsize=8)
try:
    q.get(timeout=0.05)
    print("get on empty: got an item")
except queue.Empty:
    print("get on empty: Empty")
for i in range(8):
    q.put(i, timeout=1)
try:
    q.put(99, timeout=0.05)
    print("put on full: put")
except queue.Full:
    print("put on full: Full")
print("drained:", [q.get(timeout=1) for _ in range(8)])
for _ in range(8):
    q.task_done()

# 3 producers, 3 consumers, a small queue: many blocked puts and gets.
N = 1000
STOP = object()
sums = []
lock = threading.Lock()


def producer(base):
    for i in range(base, base + N):
        q.put(i, timeout=10)


def consumer():
    s = 0
    while True:
        item = q.get(timeout=10)
        if item is STOP:
            break
        s += item
        q.task_done()
    q.task_done()
    with lock:
        sums.append(s)


producers = [threading.Thread(target=producer, args=(k * N,)) for k in range(3)]
consumers = [threading.Thread(target=consumer) for _ in range(3)]
for th in producers + consumers:
    th.start()
for th in producers:
    th.join()
for _ in consumers:
    q.put(STOP, timeout=10)
for th in consumers:
    th.join()
print("consumed sum:", sum(sums), "expected:", sum(range(3 * N)))
q.join()
print("join after task_done: ok")

# LifoQueue and PriorityQueue share the machinery.
pq = queue.PriorityQueue()
for x in (5, 1, 4, 2, 3):
    pq.put(x)
print("priority order:", [pq.get(timeout=1) for _ in range(5)])
