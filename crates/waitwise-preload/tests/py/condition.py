"""threading.Condition: wait(timeout) and wait_for(predicate, timeout)
time out; notify / notify_all wake the waiters; a bounded buffer."""
import threading

cv = threading.Condition()
with cv:
    print("wait(0.05) without notify:", cv.wait(0.05))
    print("wait_for(false, 0.05):", cv.wait_for(lambda: False, timeout=0.05))

ready = []


def make_ready():
    with cv:
        ready.append(1)
        cv.notify()


threading.Timer(0.02, make_ready).start()
with cv:
    print("wait_for(ready, 10):", cv.wait_for(lambda: ready, timeout=10))

# notify_all wakes every waiter.
go = False
woken = []


def waiter(i):
    with cv:
        if cv.wait_for(lambda: go, timeout=10):
            woken.append(i)


threads = [threading.Thread(target=waiter, args=(i,)) for i in range(6)]
for th in threads:
    th.start()
with cv:
    go = True
    cv.notify_all()
for th in threads:
    th.join()
print("notify_all woke:", sorted(woken))

# Bounded buffer: 2 producers, 2 consumers, capacity 4.
buf, cap, total, items = [], 4, [0], 2000
not_full = threading.Condition()


def produce(start):
    for i in range(start, start + items // 2):
        with not_full:
            while not not_full.wait_for(lambda: len(buf) < cap, timeout=5):
                pass
            buf.append(i)
            not_full.notify_all()


def consume(n):
    for _ in range(n):
        with not_full:
            while not not_full.wait_for(lambda: buf, timeout=5):
                pass
            total[0] += buf.pop(0)
            not_full.notify_all()


threads = [threading.Thread(target=produce, args=(s,)) for s in (1, 1 + items // 2)]
threads += [threading.Thread(target=consume, args=(items // 2,)) for _ in range(2)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print("bounded buffer sum:", total[0], "expected:", items * (items + 1) // 2)
