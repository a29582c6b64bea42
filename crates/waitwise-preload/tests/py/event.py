"""threading.Event: wait(timeout) times out, and returns once set
(CPython's lock waits: sem_clockwait with a timeout, sem_wait without)."""
import threading

e = threading.Event()
print("wait on a clear event, 50 ms:", e.wait(0.05))
print("is_set:", e.is_set())

# Set by a Timer (itself an Event.wait(timeout) on another thread).
t = threading.Timer(0.02, e.set)
t.start()
print("wait until a timer sets it:", e.wait(10))
t.join()
print("wait on a set event:", e.wait(0.05))

# Many waiters, one set.
e.clear()
results = []
lock = threading.Lock()


def waiter():
    r = e.wait(10)
    with lock:
        results.append(r)


threads = [threading.Thread(target=waiter) for _ in range(8)]
for th in threads:
    th.start()
e.set()
for th in threads:
    th.join(10)
    print("waiter joined:", not th.is_alive())
print("all woken:", results == [True] * 8)

# Thread.join(timeout) on a running thread times out.
gate = threading.Event()
th = threading.Thread(target=gate.wait)
th.start()
th.join(0.05)
print("join(timeout) on a running thread, alive:", th.is_alive())
gate.set()
th.join()
print("after set, alive:", th.is_alive())
