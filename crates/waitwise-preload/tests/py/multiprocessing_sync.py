"""multiprocessing's synchronization between processes, under each start
method: Lock, Semaphore, Queue, Barrier and Condition are named POSIX
semaphores (sem_open: process-shared, so the interposer hands them to
glibc) in processes that run under the interposer; a Pool's result
handling uses threads with locks and condition variables in each
process. Prints only deterministic results."""
import multiprocessing as mp
import time


def add(lock, counter, n):
    for _ in range(n):
        with lock:
            counter.value += 1


def consume(q, out):
    total = 0
    while True:
        x = q.get()
        if x is None:
            break
        total += x
    out.put(total)


def wait_for_flag(cond, flag, out):
    with cond:
        out.put(cond.wait_for(lambda: flag.value == 1, timeout=30))


def main():
    for method in ("fork", "spawn", "forkserver"):
        ctx = mp.get_context(method)

        lock = ctx.Lock()
        counter = ctx.Value("i", 0, lock=False)
        ps = [ctx.Process(target=add, args=(lock, counter, 2000)) for _ in range(4)]
        for p in ps:
            p.start()
        for p in ps:
            p.join()
        print(method, "Lock: 4 processes x 2000 increments =", counter.value)

        q, out = ctx.Queue(maxsize=8), ctx.Queue()
        c = ctx.Process(target=consume, args=(q, out))
        c.start()
        for i in range(5000):
            q.put(i)
        q.put(None)
        print(method, "Queue(maxsize=8): sum of 0..4999 =", out.get(timeout=30))
        c.join()

        sem = ctx.Semaphore(0)
        t = time.monotonic()
        got = sem.acquire(timeout=0.2)
        print(method, "Semaphore(0).acquire(timeout=0.2):", got,
              "after its timeout:", time.monotonic() - t >= 0.19)

        barrier = ctx.Barrier(3)
        ps = [ctx.Process(target=barrier.wait) for _ in range(2)]
        for p in ps:
            p.start()
        barrier.wait(timeout=30)
        for p in ps:
            p.join()
        print(method, "Barrier(3): passed, exit codes", [p.exitcode for p in ps])

        cond, flag, got = ctx.Condition(), ctx.Value("i", 0), ctx.Queue()
        w = ctx.Process(target=wait_for_flag, args=(cond, flag, got))
        w.start()
        time.sleep(0.05)
        with cond:
            flag.value = 1
            cond.notify_all()
        print(method, "Condition.wait_for in another process:", got.get(timeout=30))
        w.join()

        with ctx.Pool(3) as pool:
            squares = pool.starmap(pow, [(i, 2) for i in range(200)])
        print(method, "Pool(3).starmap: sum of squares =", sum(squares))


if __name__ == "__main__":
    main()
