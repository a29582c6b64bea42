"""concurrent.futures.ThreadPoolExecutor: map, submit/as_completed, wait
with a timeout, result(timeout) timing out, shutdown."""
import concurrent.futures as cf
import threading


def square(x):
    return x * x


with cf.ThreadPoolExecutor(max_workers=4) as pool:
    print("map sum:", sum(pool.map(square, range(500))))
    futs = [pool.submit(square, i) for i in range(100)]
    print("as_completed:", sorted(f.result() for f in cf.as_completed(futs, timeout=30))[-3:])

    gate = threading.Event()
    blocked = pool.submit(gate.wait, 30)
    done, not_done = cf.wait([blocked], timeout=0.05)
    print("wait(timeout) on a blocked task: done", len(done), "not done", len(not_done))
    try:
        blocked.result(timeout=0.05)
        print("result(timeout): got a result")
    except cf.TimeoutError:
        print("result(timeout): TimeoutError")
    gate.set()
    print("after release:", blocked.result(timeout=30))

    # Tasks that wait for tasks of a second pool.
    with cf.ThreadPoolExecutor(max_workers=2) as inner:

        def chain(n):
            return n + inner.submit(square, n).result(timeout=30)

        print("chained:", sum(pool.map(chain, range(1, 40))))
print("shutdown: ok")
