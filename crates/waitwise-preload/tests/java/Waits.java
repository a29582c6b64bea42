// java.util.concurrent and monitors under the interposer: the JVM parks and
// unparks its threads, runs its monitors and timed waits, and stops its
// pool on pthread mutexes and condition variables (HotSpot's PlatformEvent
// and Parker). Prints one line per check; any wrong result throws, and the
// JVM exits non-zero.
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

public class Waits {
    static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
        System.out.println("ok " + what);
    }

    public static void main(String[] args) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicLong sum = new AtomicLong();
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            final int k = i;
            futures.add(pool.submit(() -> sum.addAndGet(k)));
        }
        for (Future<?> f : futures) f.get();
        check(sum.get() == 1999000L, "thread pool: 2000 tasks");

        BlockingQueue<Integer> queue = new ArrayBlockingQueue<>(16);
        AtomicLong taken = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < 4; p++) {
            threads.add(new Thread(() -> {
                try {
                    for (int i = 0; i < 20000; i++) queue.put(1);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        threads.add(new Thread(() -> {
            try {
                for (int i = 0; i < 80000; i++) taken.addAndGet(queue.take());
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }));
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        check(taken.get() == 80000L, "bounded queue: 4 producers, 80000 items");

        Object monitor = new Object();
        long[] count = {0};
        threads.clear();
        for (int t = 0; t < 4; t++) {
            threads.add(new Thread(() -> {
                for (int i = 0; i < 100000; i++) {
                    synchronized (monitor) {
                        count[0]++;
                    }
                }
            }));
        }
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        check(count[0] == 400000L, "monitor: 4 threads, 400000 increments");

        // Timed waits may return early (spurious wake-ups are allowed to
        // both), so each waits in a loop to its deadline; a timed wait
        // that returned at once every time would loop a million times.
        long deadline = System.nanoTime() + 200_000_000L;
        int waits = 0;
        synchronized (monitor) {
            for (long left; (left = deadline - System.nanoTime()) > 0; waits++) {
                monitor.wait(Math.max(1, left / 1_000_000L));
            }
        }
        check(waits < 1000, "Object.wait(200 ms) slept (" + waits + " calls)");

        deadline = System.nanoTime() + 100_000_000L;
        waits = 0;
        for (long left; (left = deadline - System.nanoTime()) > 0; waits++) {
            LockSupport.parkNanos(left);
        }
        check(waits < 1000, "LockSupport.parkNanos(100 ms) slept (" + waits + " calls)");

        CyclicBarrier barrier = new CyclicBarrier(4);
        threads.clear();
        for (int t = 0; t < 4; t++) {
            threads.add(new Thread(() -> {
                try {
                    for (int i = 0; i < 500; i++) barrier.await();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }));
        }
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        check(!barrier.isBroken(), "CyclicBarrier: 4 threads, 500 rounds");

        boolean[] interrupted = {false};
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted[0] = true;
            }
        });
        sleeper.start();
        Thread.sleep(50);
        sleeper.interrupt();
        sleeper.join();
        check(interrupted[0], "Thread.interrupt woke a sleeping thread");

        pool.shutdown();
        check(pool.awaitTermination(60, TimeUnit.SECONDS), "thread pool shut down");
        System.gc();
        System.out.println("done");
    }
}
