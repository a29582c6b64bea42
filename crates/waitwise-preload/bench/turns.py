"""Python threads taking turns, for the interposer benchmark: prints its
own wall time in seconds.

8 threads pass a turn around in order through a threading.Condition and
notify_all. CPython builds the Condition on locks (sem_t: the interposer's
semaphores), each waiter sleeping on a lock of its own, and hands the
interpreter between threads through its GIL (a pthread mutex and
condition variable).
"""
import threading
import time

THREADS = 8
TURNS = 1000


def main():
    cv = threading.Condition()
    state = {"turn": 0}

    def taker(me):
        for _ in range(TURNS):
            with cv:
                while state["turn"] % THREADS != me:
                    cv.wait()
                state["turn"] += 1
                cv.notify_all()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=taker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    assert state["turn"] == THREADS * TURNS
    print(f"{elapsed:.6f}")


main()
