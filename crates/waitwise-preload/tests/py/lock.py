"""threading.Lock and RLock: acquire(timeout=...) times out while another
thread holds the lock and succeeds once it lets go; counting under the
lock from several threads."""
import threading

lock = threading.Lock()
held = threading.Event()
release = threading.Event()


def holder(lk):
    with lk:
        held.set()
        release.wait(10)


for name, lk in (("Lock", threading.Lock()), ("RLock", threading.RLock())):
    held.clear()
    release.clear()
    t = threading.Thread(target=holder, args=(lk,))
    t.start()
    held.wait(10)
    print(name, "acquire(blocking=False) while held:", lk.acquire(blocking=False))
    print(name, "acquire(timeout=0.05) while held:", lk.acquire(timeout=0.05))
    threading.Timer(0.02, release.set).start()
    got = lk.acquire(timeout=10)
    print(name, "acquire(timeout=10) after the holder lets go:", got)
    if got:
        lk.release()
    t.join()

# RLock recursion: the owner re-enters, another thread cannot.
r = threading.RLock()
r.acquire()
print("RLock re-acquire by owner:", r.acquire(timeout=0.05))
out = []
t = threading.Thread(target=lambda: out.append(r.acquire(timeout=0.05)))
t.start()
t.join()
print("RLock acquire(timeout) by another thread:", out)
r.release()
r.release()
t = threading.Thread(target=lambda: out.append(r.acquire(timeout=10) and (r.release() or True)))
t.start()
t.join()
print("RLock acquire after full release:", out)

# Contended counting.
counter = 0


def add(n):
    global counter
    for _ in range(n):
        with lock:
            counter += 1


threads = [threading.Thread(target=add, args=(5000,)) for _ in range(4)]
for th in threads:
    th.start()
for th in threads:
    th.join()
print("counter:", counter)
