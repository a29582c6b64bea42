// The C++ standard library's waits under the interposer: libstdc++ builds
// std::mutex, std::timed_mutex, std::shared_timed_mutex and
// std::condition_variable on pthread_mutex_*, pthread_rwlock_* and
// pthread_cond_* (the timed ones on the pthread_*_clock* functions with the
// steady clock, on the timed ones with the system clock), std::call_once on
// pthread_once, std::future on its own futex; std::barrier, std::latch and
// std::counting_semaphore wait on atomics (futex), beside the others.
//
// Checks itself: every check that fails prints "FAIL: what" and the
// program exits 1; a run that passes prints "done" last. Timeouts are
// checked as lower bounds only (a slow machine never fails a check).

#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <future>
#include <latch>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using system_clock = std::chrono::system_clock;

static std::atomic<int> failures{0};

static void check(bool ok, const char *what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what);
        std::fflush(stdout);
        failures++;
    }
}

// A wait that timed out must have lasted at least `timeout` (less a little
// for clock granularity), by the clock the wait used.
template <class Clock>
static bool lasted(typename Clock::time_point start, std::chrono::milliseconds timeout) {
    return Clock::now() - start >= timeout - 1ms;
}

static void mutex_exclusion() {
    std::mutex m;
    long counter = 0;
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < 100000; i++) {
                std::lock_guard<std::mutex> g(m);
                counter++;
            }
        });
    for (auto &t : ts) t.join();
    check(counter == 400000, "std::mutex: 4 threads x 100000 increments");
}

static void timed_mutex() {
    std::timed_mutex m;
    std::recursive_timed_mutex r;
    std::promise<void> held, release;
    auto released = release.get_future().share();
    std::thread holder([&] {
        std::lock_guard<std::timed_mutex> g(m);
        std::lock_guard<std::recursive_timed_mutex> rg(r);
        held.set_value();
        released.wait();
    });
    held.get_future().wait();
    // Steady clock: pthread_mutex_clocklock(CLOCK_MONOTONIC).
    auto s = steady::now();
    check(!m.try_lock_for(50ms), "timed_mutex::try_lock_for while held times out");
    check(lasted<steady>(s, 50ms), "timed_mutex::try_lock_for waited its timeout");
    // System clock: pthread_mutex_timedlock(CLOCK_REALTIME).
    auto w = system_clock::now();
    check(!m.try_lock_until(w + 50ms), "timed_mutex::try_lock_until while held times out");
    check(lasted<system_clock>(w, 50ms), "timed_mutex::try_lock_until waited its deadline");
    check(!r.try_lock_for(20ms), "recursive_timed_mutex::try_lock_for while held times out");
    // Released while a waiter waits: the waiter gets it well before its
    // (long) timeout.
    std::thread releaser([&] {
        std::this_thread::sleep_for(20ms);
        release.set_value();
    });
    check(m.try_lock_for(60s), "timed_mutex::try_lock_for gets a released mutex");
    m.unlock();
    holder.join();
    releaser.join();
    check(r.try_lock(), "recursive_timed_mutex: free after its holder left");
    check(r.try_lock_for(1ms), "recursive_timed_mutex: relocked by its owner");
    r.unlock();
    r.unlock();
}

static void shared_timed_mutex() {
    std::shared_timed_mutex m;
    // Readers hold it at once: each waits for the other inside.
    std::latch both_in(2);
    std::vector<std::thread> readers;
    for (int i = 0; i < 2; i++)
        readers.emplace_back([&] {
            std::shared_lock<std::shared_timed_mutex> g(m);
            both_in.arrive_and_wait();
        });
    for (auto &t : readers) t.join();

    // A writer holds it: timed shared and exclusive attempts time out
    // (pthread_rwlock_clockrdlock / clockwrlock, timedrdlock).
    std::promise<void> held, release;
    auto released = release.get_future().share();
    std::thread writer([&] {
        std::unique_lock<std::shared_timed_mutex> g(m);
        held.set_value();
        released.wait();
    });
    held.get_future().wait();
    auto s = steady::now();
    check(!m.try_lock_shared_for(40ms), "shared_timed_mutex::try_lock_shared_for under a writer times out");
    check(lasted<steady>(s, 40ms), "try_lock_shared_for waited its timeout");
    s = steady::now();
    check(!m.try_lock_for(40ms), "shared_timed_mutex::try_lock_for under a writer times out");
    check(lasted<steady>(s, 40ms), "try_lock_for waited its timeout");
    auto w = system_clock::now();
    check(!m.try_lock_shared_until(w + 40ms), "try_lock_shared_until under a writer times out");
    check(lasted<system_clock>(w, 40ms), "try_lock_shared_until waited its deadline");
    release.set_value();
    writer.join();

    // Mixed readers and writers: writers exclusive, readers see whole
    // updates (two fields written together).
    std::shared_mutex rw;
    long a = 0, b = 0;
    std::atomic<bool> torn{false};
    std::vector<std::thread> ts;
    for (int t = 0; t < 2; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < 20000; i++) {
                std::unique_lock<std::shared_mutex> g(rw);
                a++;
                b++;
            }
        });
    for (int t = 0; t < 3; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < 20000; i++) {
                std::shared_lock<std::shared_mutex> g(rw);
                if (a != b) torn = true;
            }
        });
    for (auto &t : ts) t.join();
    check(!torn && a == 40000 && b == 40000, "shared_mutex: writers exclusive, readers see whole updates");
}

static void condition_variable_queue() {
    // A bounded queue: 4 producers, 2 consumers that wait with timeouts
    // (pthread_cond_clockwait) and stop on a count.
    std::mutex m;
    std::condition_variable not_empty, not_full;
    std::deque<int> q;
    const int producers = 4, per = 20000, cap = 16;
    long sum = 0, taken = 0;
    std::vector<std::thread> ts;
    for (int p = 0; p < producers; p++)
        ts.emplace_back([&, p] {
            for (int i = 0; i < per; i++) {
                std::unique_lock<std::mutex> g(m);
                while (q.size() >= cap) not_full.wait_for(g, 100ms);
                q.push_back(p * per + i);
                not_empty.notify_one();
            }
        });
    for (int c = 0; c < 2; c++)
        ts.emplace_back([&] {
            std::unique_lock<std::mutex> g(m);
            while (taken < producers * per) {
                if (!not_empty.wait_for(g, 100ms, [&] { return !q.empty() || taken >= producers * per; }))
                    continue;
                if (q.empty()) break;
                sum += q.front();
                q.pop_front();
                taken++;
                not_full.notify_one();
                if (taken == producers * per) not_empty.notify_all();
            }
        });
    for (auto &t : ts) t.join();
    long n = producers * per;
    check(taken == n && sum == n * (n - 1) / 2, "condition_variable queue: every item once");

    // Timed waits with nobody notifying end at their deadline, by either
    // clock.
    std::unique_lock<std::mutex> g(m);
    auto s = steady::now();
    check(not_empty.wait_for(g, 30ms) == std::cv_status::timeout, "condition_variable::wait_for times out");
    check(lasted<steady>(s, 30ms), "condition_variable::wait_for waited its timeout");
    auto w = system_clock::now();
    check(not_empty.wait_until(g, w + 30ms) == std::cv_status::timeout, "condition_variable::wait_until (system clock) times out");
    check(lasted<system_clock>(w, 30ms), "condition_variable::wait_until waited its deadline");
}

static void broadcast_and_stop_tokens() {
    // notify_all wakes every waiter.
    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    int woke = 0;
    std::vector<std::thread> ts;
    for (int i = 0; i < 6; i++)
        ts.emplace_back([&] {
            std::unique_lock<std::mutex> g(m);
            cv.wait(g, [&] { return go; });
            woke++;
        });
    std::this_thread::sleep_for(20ms);
    {
        std::lock_guard<std::mutex> g(m);
        go = true;
    }
    cv.notify_all();
    for (auto &t : ts) t.join();
    check(woke == 6, "condition_variable::notify_all wakes all 6 waiters");

    // condition_variable_any with a stop token: request_stop ends the wait
    // (std::jthread joins in its destructor).
    std::condition_variable_any cva;
    std::mutex mm;
    std::atomic<bool> stopped{false};
    {
        std::jthread waiter([&](std::stop_token st) {
            std::unique_lock<std::mutex> g(mm);
            bool ready = cva.wait(g, st, [] { return false; });
            stopped = !ready && st.stop_requested();
        });
        std::this_thread::sleep_for(20ms);
        waiter.request_stop();
    }
    check(stopped, "condition_variable_any: request_stop ends the wait");
}

static void once_futures_and_atomic_waits() {
    std::once_flag once;
    std::atomic<int> ran{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; i++)
        ts.emplace_back([&] { std::call_once(once, [&] { std::this_thread::sleep_for(10ms); ran++; }); });
    for (auto &t : ts) t.join();
    check(ran == 1, "std::call_once: 8 threads, one call");

    std::vector<std::future<long>> fs;
    for (long i = 0; i < 8; i++)
        fs.push_back(std::async(std::launch::async, [i] {
            long s = 0;
            for (long k = 0; k <= 100000; k++) s += k * i;
            return s;
        }));
    long total = 0;
    for (auto &f : fs) total += f.get();
    check(total == 28L * 5000050000L, "std::async: 8 tasks' results");

    std::packaged_task<int()> task([] { return 42; });
    auto f = task.get_future();
    check(f.wait_for(10ms) == std::future_status::timeout, "future::wait_for before the value times out");
    std::thread(std::move(task)).join();
    check(f.get() == 42, "packaged_task's future gets its value");

    // barrier with a completion step, latch, counting_semaphore.
    const int threads = 4, phases = 200;
    std::atomic<int> completions{0};
    std::barrier sync(threads, [&]() noexcept { completions++; });
    std::latch done(threads);
    std::counting_semaphore<2> slots(2);
    std::atomic<int> inside{0}, most_inside{0};
    std::vector<std::thread> ws;
    for (int t = 0; t < threads; t++)
        ws.emplace_back([&] {
            for (int p = 0; p < phases; p++) {
                slots.acquire();
                int now = ++inside;
                int seen = most_inside.load();
                while (now > seen && !most_inside.compare_exchange_weak(seen, now)) {
                }
                --inside;
                slots.release();
                sync.arrive_and_wait();
            }
            done.count_down();
        });
    done.wait();
    for (auto &w : ws) w.join();
    check(completions == phases, "std::barrier: one completion per phase");
    check(most_inside <= 2, "counting_semaphore<2>: at most 2 inside");
    check(slots.try_acquire_for(1ms) && slots.try_acquire_for(1ms) && !slots.try_acquire_for(20ms),
          "counting_semaphore::try_acquire_for: 2 slots, then a timeout");
}

int main() {
    mutex_exclusion();
    timed_mutex();
    shared_timed_mutex();
    condition_variable_queue();
    broadcast_and_stop_tokens();
    once_futures_and_atomic_waits();
    if (failures != 0) {
        std::printf("%d checks failed\n", failures.load());
        return 1;
    }
    std::printf("done\n");
    return 0;
}
