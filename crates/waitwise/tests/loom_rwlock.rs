//! Loom models of the reader-writer lock (`mutex/rwlock.rs`): exclusion
//! and publication (loom checks the `UnsafeCell` accesses) and no lost
//! wake-up in any interleaving, for its blocking, `try` and timed paths;
//! the readers' turn is in [`readers_turn`], the turns between CPUs in
//! `rwlock_cpu_turns_*`.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_rwlock`.
#![cfg(loom)]

mod loom_common;

use loom::thread;
use loom_common::locks::*;
use loom_common::model_reaching_both;
use waitwise::mutex::{set_model_cpu, RawRwLock, MAX_WRITERS_WAITING};
use waitwise::Deadline;
use waitwise_platform::shim::Arc;

/// Adds one to the count under the write lock.
fn write_increment(s: &Shared<RawRwLock>) {
    assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
    // SAFETY: write-locked just above: no other access.
    s.count.with_mut(|c| unsafe { *c += 1 });
    // SAFETY: write-locked above.
    unsafe { s.lock.unlock_exclusive() };
}

/// Reads the count under the read lock.
fn read_count(s: &Shared<RawRwLock>) -> u32 {
    assert!(s.lock.lock_shared_until(Deadline::NEVER));
    // SAFETY: read-locked just above: only reads run concurrently.
    let v = s.count.with(|c| unsafe { *c });
    // SAFETY: read-locked above.
    unsafe { s.lock.unlock_shared() };
    v
}

#[test]
fn rwlock_writer_excludes_reader() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        let s2 = s.clone();
        let reader = thread::spawn(move || {
            let v = read_count(&s2);
            assert!(v == 0 || v == 1);
        });
        write_increment(&s);
        reader.join().unwrap();
    });
}

/// A writer writes twice while a reader waits: the first write unlock
/// wakes the sleeping reader, and the second may come before the woken
/// reader runs, with `SLEEPING` cleared by the first, and skips its
/// wake-up. The reader, back on a write-locked word, sets `SLEEPING` again
/// before it sleeps, so the second unlock sees it: no lost wake-up in any
/// interleaving (loom reports a deadlock).
#[test]
fn rwlock_writer_relocks_before_a_woken_reader_runs() {
    loom::model(|| {
        let s = rwlock();
        let s2 = s.clone();
        let reader = thread::spawn(move || assert!(read_count(&s2) <= 2));
        write_increment(&s);
        write_increment(&s);
        reader.join().unwrap();
        assert_eq!(read_count(&s), 2);
    });
}

/// More writers wait than the lock counts (`MAX_WRITERS_WAITING`, 2 under
/// loom): the third waits uncounted until the count has room or the lock
/// may be taken. Every writer gets in; none sleeps forever (loom reports
/// a deadlock).
#[test]
fn rwlock_writers_beyond_the_count_wait_uncounted() {
    assert_eq!(MAX_WRITERS_WAITING, 2);
    loom::model(|| {
        let s = rwlock();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let writers: Vec<_> = (0..3)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || write_increment(&s))
            })
            .collect();
        // SAFETY: write-locked above by this thread.
        unsafe { s.lock.unlock_exclusive() };
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(read_count(&s), 3);
    });
}

/// A writer re-takes the lock by barging tries while another writer
/// waits: the waiter, woken to a write-locked word, has lost a round (one
/// starves it under loom) and starves; a barging try then fails on a free
/// lock. Every write counted, the lock free at the end, no lost wake-up
/// (loom reports a deadlock); some executions reach a starving writer and
/// some do not.
#[test]
fn rwlock_beaten_writer_starves_and_keeps_barging_writers_out() {
    model_reaching_both("a starving writer", || {
        let s = rwlock();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let s2 = s.clone();
        let waiter = thread::spawn(move || write_increment(&s2));
        let mut holding = true;
        let mut starving_seen = false;
        for _ in 0..2 {
            // SAFETY: write-locked by this thread (above, or by the
            // barging try of the last round).
            unsafe { s.lock.unlock_exclusive() };
            holding = s.lock.try_lock_exclusive();
            if !holding {
                starving_seen = format!("{:?}", s.lock).contains("writers_starving: 1");
                break;
            }
        }
        if holding {
            // SAFETY: the last barging try took the write lock.
            unsafe { s.lock.unlock_exclusive() };
        }
        waiter.join().unwrap();
        assert_eq!(read_count(&s), 1);
        assert!(!s.lock.is_locked());
        starving_seen
    });
}

/// Two readers wait behind a writer: the second to sleep may find
/// `SLEEPING` set by the first and sleep without setting it; the one write
/// unlock that clears it must wake both (a lost reader is a deadlock).
#[test]
fn rwlock_two_readers_sleep_behind_one_write() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        assert!(s.lock.try_lock_exclusive());
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || read_count(&s))
            })
            .collect();
        // SAFETY: write-locked above, by this thread.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: this thread holds the write lock.
        unsafe { s.lock.unlock_exclusive() };
        for r in readers {
            assert_eq!(r.join().unwrap(), 1);
        }
        assert!(!s.lock.is_locked());
    });
}

#[test]
fn rwlock_two_writers_and_a_reader() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        let writer = {
            let s = s.clone();
            thread::spawn(move || write_increment(&s))
        };
        let reader = {
            let s = s.clone();
            thread::spawn(move || {
                read_count(&s);
            })
        };
        write_increment(&s);
        writer.join().unwrap();
        reader.join().unwrap();
        // SAFETY: both threads are joined: no other access.
        assert_eq!(s.count.with(|c| unsafe { *c }), 2);
        assert!(!s.lock.is_locked());
    });
}

fn rwlock() -> Arc<Shared<RawRwLock>> {
    shared(RawRwLock::with_options(blocking()))
}

/// The try paths of the reader-writer lock against a writer: a read that
/// gets in sees the writer's write or precedes it, a write that gets in is
/// ordered with the writer's either way (loom checks the cell).
#[test]
fn rwlock_try_paths_race_a_writer() {
    model_reaching_both("try_lock_exclusive got the lock", || {
        let s = rwlock();
        let t = {
            let s = s.clone();
            thread::spawn(move || {
                if s.lock.try_lock_shared() {
                    assert!(count(&s) <= 1);
                    // SAFETY: read-locked just above.
                    unsafe { s.lock.unlock_shared() };
                }
                let wrote = s.lock.try_lock_exclusive();
                if wrote {
                    bump(&s);
                    // SAFETY: write-locked just above.
                    unsafe { s.lock.unlock_exclusive() };
                }
                wrote
            })
        };
        write_increment(&s);
        let wrote = t.join().unwrap();
        assert_eq!(read_count(&s), 1 + u32::from(wrote));
        wrote
    });
}

/// Two readers leave in either order before a writer enters: the writer
/// must come after both reads (the second reader's exit continues the
/// first one's release through the word), else its write races one.
#[test]
fn rwlock_writer_after_two_readers() {
    loom::model(|| {
        let s = rwlock();
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || assert!(read_count(&s) <= 1))
            })
            .collect();
        write_increment(&s);
        for r in readers {
            r.join().unwrap();
        }
        assert_eq!(read_count(&s), 1);
    });
}

/// A writer that registers as waiting holds new readers back; when it
/// gives up it must let them in. Here the thread that holds a read lock is
/// also the timed writer (its attempt can only time out, at once under
/// loom), which keeps the model at two threads: a reader that checks while
/// the writer is registered sleeps, and only the give-up's wake-up can
/// reach it (the read unlock that follows sees no waiting writer).
#[test]
fn rwlock_timed_out_writer_wakes_the_readers_it_held_back() {
    loom::model(|| {
        let s = rwlock();
        assert!(s.lock.lock_shared_until(Deadline::NEVER));
        let reader = {
            let s = s.clone();
            thread::spawn(move || read_count(&s))
        };
        assert!(!s.lock.lock_exclusive_until(Deadline::after(FAR)));
        // SAFETY: read-locked above.
        unsafe { s.lock.unlock_shared() };
        assert_eq!(reader.join().unwrap(), 0);
        assert!(!s.lock.is_locked());
    });
}

/// Timed readers and writers against a held write lock: each either gives
/// up having changed nothing, or gets in after the holder's write.
#[test]
fn rwlock_timed_attempts_race_a_writer() {
    model_reaching_both("timed writer got the lock", || {
        let s = rwlock();
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        let reader = {
            let s = s.clone();
            thread::spawn(move || {
                if s.lock.lock_shared_until(Deadline::after(FAR)) {
                    let v = count(&s);
                    // SAFETY: read-locked just above.
                    unsafe { s.lock.unlock_shared() };
                    assert!(v >= 1);
                }
            })
        };
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                let got = s.lock.lock_exclusive_until(Deadline::after(FAR));
                if got {
                    bump(&s);
                    // SAFETY: write-locked just above.
                    unsafe { s.lock.unlock_exclusive() };
                }
                got
            })
        };
        bump(&s);
        // SAFETY: write-locked above.
        unsafe { s.lock.unlock_exclusive() };
        reader.join().unwrap();
        let got = writer.join().unwrap();
        assert_eq!(read_count(&s), 1 + u32::from(got));
        assert!(!s.lock.is_locked());
        got
    });
}

/// A writer on model CPU 1 and a reader on model CPU 0 take the lock twice
/// each (turns of 2 releases, started at the first bookkeeping under loom,
/// `cpu_turns.rs`): exclusion, no lost wake-up, and executions where a
/// release kept a turn (the other CPU waited) as well as executions where
/// none did.
#[test]
fn rwlock_cpu_turns_between_model_cpus() {
    model_reaching_both("a release kept a turn", || {
        let s = shared(RawRwLock::with_options(blocking()));
        let s2 = s.clone();
        let writer = thread::spawn(move || {
            set_model_cpu(1);
            let mut kept = false;
            for _ in 0..2 {
                write_increment(&s2);
                kept |= s2.lock.turns().kept();
            }
            kept
        });
        set_model_cpu(0);
        let mut kept = false;
        for _ in 0..2 {
            assert!(read_count(&s) <= 2);
            kept |= s.lock.turns().kept();
        }
        kept |= writer.join().unwrap();
        assert_eq!(read_count(&s), 2);
        assert!(!s.lock.is_locked());
        kept
    });
}

/// Two writers on model CPU 1 and a reader on model CPU 0: a release on
/// CPU 1 keeps a turn while the reader waits or sleeps, so that an
/// arrival finds a turn kept for another CPU; no lost wake-up, and the
/// lock ends free with both writes counted.
#[test]
fn rwlock_cpu_turns_two_writers_and_a_reader() {
    loom::model(|| {
        let s = shared(RawRwLock::with_options(blocking()));
        let writers: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || {
                    set_model_cpu(1);
                    write_increment(&s);
                })
            })
            .collect();
        set_model_cpu(0);
        assert!(read_count(&s) <= 2);
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(read_count(&s), 2);
        assert!(!s.lock.is_locked());
    });
}

/// Loom models of the reader-writer lock's readers' turn
/// (`mutex/rwlock.rs`): a reader kept out by waiting writers asks for a
/// turn (`READERS_WAITING`), the next write unlock grants it (`READ_TURN`),
/// the first reader out ends it, and a writer ends a turn nobody took.
/// Checked in every interleaving: exclusion and publication (loom checks
/// the `UnsafeCell` accesses), no lost wake-up and no turn that keeps the
/// writers out for good (either is a deadlock loom reports).
mod readers_turn {
    use loom::cell::UnsafeCell;
    use loom::thread;
    use waitwise::mutex::RawRwLock;
    use waitwise::{Deadline, Policy, WaitOptions};
    use waitwise_platform::shim::Arc;

    /// A count that loom checks for unsynchronized access.
    struct Shared {
        lock: RawRwLock,
        count: UnsafeCell<u32>,
    }

    // SAFETY: `count` is only accessed with the lock held (loom checks it).
    unsafe impl Sync for Shared {}

    fn shared() -> Arc<Shared> {
        Arc::new(Shared {
            lock: RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block())),
            count: UnsafeCell::new(0),
        })
    }

    /// Adds one under the write lock.
    fn write_increment(s: &Shared) {
        assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
        // SAFETY: write-locked just above: no other access.
        s.count.with_mut(|c| unsafe { *c += 1 });
        // SAFETY: write-locked above.
        unsafe { s.lock.unlock_exclusive() };
    }

    /// A thread that adds one under the write lock.
    fn spawn_writer(s: &Arc<Shared>) -> thread::JoinHandle<()> {
        let s = s.clone();
        thread::spawn(move || write_increment(&s))
    }

    /// Reads the count under a read lock (until `deadline`); `None` if the
    /// attempt gave up.
    fn read_count(s: &Shared, deadline: Deadline) -> Option<u32> {
        if !s.lock.lock_shared_until(deadline) {
            return None;
        }
        // SAFETY: read-locked just above: only reads run concurrently.
        let v = s.count.with(|c| unsafe { *c });
        // SAFETY: read-locked above.
        unsafe { s.lock.unlock_shared() };
        Some(v)
    }

    /// A writer holds the lock, a second writer and a reader wait: the
    /// reader may get a turn ahead of the second writer; everybody gets in.
    #[test]
    fn rwlock_turn_reader_between_two_writers() {
        loom::model(|| {
            let s = shared();
            assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
            let writer = spawn_writer(&s);
            let reader = {
                let s = s.clone();
                thread::spawn(move || read_count(&s, Deadline::NEVER).unwrap())
            };
            // SAFETY: write-locked above: no other access.
            s.count.with_mut(|c| unsafe { *c += 1 });
            // SAFETY: write-locked above.
            unsafe { s.lock.unlock_exclusive() };
            writer.join().unwrap();
            let seen = reader.join().unwrap();
            assert!(seen == 1 || seen == 2, "{seen}");
            assert_eq!(read_count(&s, Deadline::NEVER), Some(2));
            assert!(!s.lock.is_locked());
        });
    }

    /// A reader that asks for a turn and gives up (loom times its sleep out at
    /// once) leaves a turn nobody takes: the waiting writer must still get in.
    #[test]
    fn rwlock_turn_unused_turn_does_not_keep_a_writer_out() {
        loom::model(|| {
            let s = shared();
            assert!(s.lock.lock_exclusive_until(Deadline::NEVER));
            let writer = spawn_writer(&s);
            let reader = {
                let s = s.clone();
                thread::spawn(move || {
                    // Far enough that the real clock never decides a branch.
                    let far = Deadline::after(std::time::Duration::from_secs(3600));
                    read_count(&s, far)
                })
            };
            // SAFETY: write-locked above.
            unsafe { s.lock.unlock_exclusive() };
            writer.join().unwrap();
            if let Some(seen) = reader.join().unwrap() {
                assert!(seen <= 1);
            }
            assert_eq!(read_count(&s, Deadline::NEVER), Some(1));
            assert!(!s.lock.is_locked());
        });
    }
}
