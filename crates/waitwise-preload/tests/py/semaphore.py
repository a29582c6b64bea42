"""threading.Semaphore and BoundedSemaphore: acquire(timeout=...) times
out when the count is 0 and succeeds after a release; at most N holders;
BoundedSemaphore rejects an extra release; threading.Barrier with a
timeout."""
import threading

for cls in (threading.Semaphore, threading.BoundedSemaphore):
    name = cls.__name__
    s = cls(2)
    print(name, "acquire x2:", s.acquire(timeout=1), s.acquire(timeout=1))
    print(name, "acquire(timeout=0.05) at 0:", s.acquire(timeout=0.05))
    print(name, "acquire(blocking=False) at 0:", s.acquire(blocking=False))
    threading.Timer(0.02, s.release).start()
    print(name, "acquire(timeout=10) after a release:", s.acquire(timeout=10))
    s.release()
    s.release()

b = threading.BoundedSemaphore(1)
try:
    b.release()
    print("extra release: accepted")
except ValueError:
    print("extra release: ValueError")

# At most 3 holders among 8 threads.
s = threading.Semaphore(3)
inside, peak, lock = [0], [0], threading.Lock()


def work():
    for _ in range(200):
        if not s.acquire(timeout=10):
            continue
        with lock:
            inside[0] += 1
            peak[0] = max(peak[0], inside[0])
        with lock:
            inside[0] -= 1
        s.release()


threads = [threading.Thread(target=work) for _ in range(8)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print("peak holders <= 3:", peak[0] <= 3, "inside at end:", inside[0])

# Barrier: 4 parties meet; a lone party times out (BrokenBarrierError).
bar = threading.Barrier(4, timeout=10)
ids = []


def meet():
    ids.append(bar.wait())


threads = [threading.Thread(target=meet) for _ in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print("barrier indices:", sorted(ids))
lone = threading.Barrier(2)
try:
    lone.wait(timeout=0.05)
    print("lone barrier: passed")
except threading.BrokenBarrierError:
    print("lone barrier: BrokenBarrierError")
