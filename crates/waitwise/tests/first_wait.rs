//! The first wait of a fresh process calibrates nothing and starts no
//! thread: no busy loop learns the TSC's rate, no hand-off
//! measures `B`; the process starts from a documented `B` and learns the
//! real one from its own wake-ups.
//!
//! Each scenario runs in a fresh process: this test binary runs itself
//! with `FIRST_WAIT_SCENARIO` set and only that test selected.
#![cfg(not(loom))]

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use waitwise::platform::clock::{cycle_clock, ClockSource};
use waitwise::platform::features;
use waitwise::policy::{block_cost, starting_block_cost, BlockCostSource};
use waitwise::semaphore::Semaphore;
use waitwise::{Event, Mutex};

const SCENARIO: &str = "FIRST_WAIT_SCENARIO";

/// The threads of this process (`/proc/self/task`).
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// Runs `test_name` in a fresh process of this binary with the scenario
/// variable set (and `WAITWISE_BLOCK_NS` unset), and checks that it passed
/// there.
fn in_fresh_process(test_name: &str) {
    in_fresh_process_with(test_name, |cmd| cmd.env_remove("WAITWISE_BLOCK_NS"));
}

/// [`in_fresh_process`] with the child's command adjusted by `setup`.
fn in_fresh_process_with(test_name: &str, setup: impl FnOnce(&mut Command) -> &mut Command) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(SCENARIO, "1");
    let out = setup(&mut cmd).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{test_name} in a fresh process:\n{text}"
    );
    assert!(
        text.contains("1 passed"),
        "{test_name} did not run:\n{text}"
    );
}

fn child() -> bool {
    std::env::var_os(SCENARIO).is_some()
}

/// What a first wait may have done to the process: no calibration of the
/// clock (where CPUID gives no TSC rate, it still reads the monotonic
/// clock: its rate is learned only after 100 ms), no measurement of `B`.
fn assert_nothing_calibrated() {
    if features::cpu().tsc_hz.is_none() {
        assert_eq!(cycle_clock().source(), ClockSource::Monotonic);
    }
    let start = starting_block_cost();
    assert!(
        !matches!(start.source, BlockCostSource::Measured { .. }),
        "{start:?}"
    );
    assert!(!matches!(
        block_cost().source,
        BlockCostSource::Measured { .. }
    ));
}

#[test]
fn first_event_wait_starts_no_thread_and_calibrates_nothing() {
    if !child() {
        return in_fresh_process("first_event_wait_starts_no_thread_and_calibrates_nothing");
    }
    let before = threads();
    let ev = Event::new();
    assert!(!ev.wait_timeout(Duration::ZERO));
    assert_eq!(
        threads(),
        before,
        "a thread was started behind the caller's back"
    );
    assert_nothing_calibrated();
}

#[test]
fn first_contended_lock_starts_no_thread_and_calibrates_nothing() {
    if !child() {
        return in_fresh_process("first_contended_lock_starts_no_thread_and_calibrates_nothing");
    }
    let m = Arc::new(Mutex::new(0u32));
    let held = Arc::new(AtomicBool::new(false));
    let finish = Arc::new(AtomicBool::new(false));
    let holder = {
        let (m, held, finish) = (m.clone(), held.clone(), finish.clone());
        std::thread::spawn(move || {
            {
                let mut g = m.lock();
                held.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                *g += 1;
            }
            // Stay alive until counted, so the count compares like with like.
            while !finish.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    while !held.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    let before = threads();
    *m.lock() += 1; // contended: the holder sleeps with it
    assert_eq!(
        threads(),
        before,
        "a thread was started behind the caller's back"
    );
    finish.store(true, Ordering::SeqCst);
    holder.join().unwrap();
    assert_eq!(*m.lock(), 2);
    assert_nothing_calibrated();
}

#[test]
fn first_timed_acquire_starts_no_thread_and_calibrates_nothing() {
    if !child() {
        return in_fresh_process("first_timed_acquire_starts_no_thread_and_calibrates_nothing");
    }
    let before = threads();
    let s = Semaphore::new(0);
    assert!(!s.acquire_timeout(Duration::from_millis(1)));
    assert_eq!(
        threads(),
        before,
        "a thread was started behind the caller's back"
    );
    assert_nothing_calibrated();
}

/// Without `WAITWISE_BLOCK_NS` or a machine profile, a process starts from
/// the documented default; the variable, when set, wins.
#[test]
fn the_starting_block_cost_follows_the_environment() {
    if !child() {
        return in_fresh_process_with("the_starting_block_cost_follows_the_environment", |cmd| {
            cmd.env("WAITWISE_BLOCK_NS", "7777")
        });
    }
    let start = starting_block_cost();
    assert_eq!(start.source, BlockCostSource::Environment);
    assert_eq!(start.ns, 7777.0);
}

/// Real wake-ups teach `B`: after a few dozen sleeps woken by another
/// thread, the learned value is in force.
#[test]
fn wake_ups_teach_the_block_cost() {
    if !child() {
        return in_fresh_process("wake_ups_teach_the_block_cost");
    }
    let ev = Arc::new(Event::with_options(
        waitwise::WaitOptions::new().policy(waitwise::Policy::always_block()),
    ));
    let done = Arc::new(Event::with_options(
        waitwise::WaitOptions::new().policy(waitwise::Policy::always_block()),
    ));
    let rounds = 64;
    let waiter = {
        let (ev, done) = (ev.clone(), done.clone());
        std::thread::spawn(move || {
            for _ in 0..rounds {
                ev.wait();
                done.notify();
            }
        })
    };
    for _ in 0..rounds {
        std::thread::sleep(Duration::from_micros(200));
        ev.notify();
        done.wait();
    }
    waiter.join().unwrap();
    let b = block_cost();
    let BlockCostSource::Learned { samples } = b.source else {
        panic!("B not learned after {rounds} wake-ups: {b:?}");
    };
    assert!(samples >= 16, "{samples}");
    assert!(b.ns >= 1_000.0 && b.ns <= 1_000_000.0, "{b:?}");
}
