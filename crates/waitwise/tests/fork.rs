//! `fork()` while other threads are in their first waits: the
//! lazily initialized state those waits set up (the cycle clock, the CPU
//! features, the environment, the starting `B`, the wake-up latency
//! window) may be half done at the fork, and the child, which has only the
//! forking thread, must still wait and wake normally.
//!
//! Each iteration is a fresh process (this binary run again with
//! `FORK_SCENARIO` set), so the state is really uninitialized when its
//! threads start; it forks after a random delay, and the child must make
//! timed waits, lock a mutex, hand a semaphore permit to itself and notify
//! an event within a few seconds.
#![cfg(not(loom))]

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use waitwise::semaphore::Semaphore;
use waitwise::{Event, Mutex};

const SCENARIO: &str = "FORK_SCENARIO";
/// Fresh processes, each forking once.
const ITERATIONS: u32 = 200;
/// A child that has not exited by then is hung.
const CHILD_LIMIT: Duration = Duration::from_secs(5);

/// A small deterministic generator (xorshift), seeded per iteration.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// What the child does with only the forking thread: every kind of first
/// wait, each of which must end.
fn child_work() -> bool {
    let ev = Event::new();
    if ev.wait_timeout(Duration::from_micros(200)) {
        return false;
    }
    ev.notify();
    if !ev.wait_timeout(Duration::from_secs(1)) {
        return false;
    }
    let m = Mutex::new(1u32);
    *m.lock() += 1;
    let s = Semaphore::new(0);
    if s.acquire_timeout(Duration::from_micros(300)) {
        return false;
    }
    s.release(1);
    s.acquire_timeout(Duration::from_secs(1)) && *m.lock() == 2
}

/// One fresh process: threads start their first waits, the main thread
/// forks after `delay_us`, and the child must finish [`child_work`].
fn scenario(delay_us: u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let ev = Arc::new(Event::new());
    let m = Arc::new(Mutex::new(0u64));
    let mut threads = Vec::new();
    for i in 0..3 {
        let (stop, ev, m) = (stop.clone(), ev.clone(), m.clone());
        threads.push(std::thread::spawn(move || {
            let s = Semaphore::new(0);
            while !stop.load(Ordering::Relaxed) {
                match i {
                    0 => {
                        let _ = ev.wait_timeout(Duration::from_micros(50));
                    }
                    1 => *m.lock() += 1,
                    _ => {
                        let _ = s.acquire_timeout(Duration::from_micros(30));
                    }
                }
            }
        }));
    }
    let t = Instant::now();
    while t.elapsed() < Duration::from_micros(delay_us) {
        std::hint::spin_loop();
    }
    // SAFETY: the child only runs `child_work` (waitwise's waits, which
    // take no lock another thread could have held at the fork) and
    // `_exit`, which runs no atexit handlers.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = child_work();
        // SAFETY: ends the child without running the parent's handlers.
        unsafe { libc::_exit(if ok { 0 } else { 3 }) };
    }
    stop.store(true, Ordering::Relaxed);
    ev.notify();
    for t in threads {
        t.join().unwrap();
    }
    let deadline = Instant::now() + CHILD_LIMIT;
    loop {
        let mut status = 0;
        // SAFETY: waits for our own child, without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            assert!(
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                "child failed: status {status:#x} (delay {delay_us} us)"
            );
            return;
        }
        if Instant::now() > deadline {
            // SAFETY: kills our own hung child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("child hung after a fork {delay_us} us into the first waits");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn fork_during_first_waits_leaves_a_working_child() {
    if let Ok(delay) = std::env::var(SCENARIO) {
        return scenario(delay.parse().unwrap());
    }
    let exe = std::env::current_exe().unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..ITERATIONS {
        // 0-300 µs: the first waits' set-up takes microseconds.
        let delay_us = next(&mut x) % 300;
        let out = Command::new(&exe)
            .args([
                "fork_during_first_waits_leaves_a_working_child",
                "--exact",
                "--test-threads=1",
            ])
            .env(SCENARIO, delay_us.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "iteration {i} (fork {delay_us} us in):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
