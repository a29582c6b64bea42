//! Unit tests of [`RawRwLock`](super::RawRwLock): its state word's
//! transitions, who sleeps and who wakes, and lock_api's behaviour.

use super::*;
use std::sync::Arc;
use std::time::Duration;

/// A `lock_api::RwLock` puts its value right after the raw lock, whose
/// words come last: the value lies beside the state word, so that an
/// acquisition brings both to its core with one line in most placements
/// (the value a line away cost a line transfer per acquisition between
/// two cores).
#[test]
fn the_value_of_a_lock_api_rwlock_lies_beside_the_state_word() {
    let lock = crate::RwLock::new(0u64);
    // SAFETY: only the address of the raw lock's state word is taken.
    let state = unsafe { lock.raw() }.words.state.value() as *const _ as usize;
    let value = lock.data_ptr() as usize;
    assert!(
        value > state && value - state <= 8,
        "state {state:#x}, value {value:#x}"
    );
}

/// Releases wake (advance the epoch) only when a waiter set
/// `SLEEPING`, and clear it when they do; a counted waiting writer
/// that polls costs its releases no wake-up (module doc, "Who sleeps").
#[test]
fn releases_wake_only_when_a_waiter_announced_its_sleep() {
    let lock = RawRwLock::new();
    let Words { state, wakes } = &lock.words;
    let epoch = || wakes.value().load(Ordering::SeqCst);
    // A writer holds, another waits (polling): no wake-up.
    state
        .value()
        .store(WRITE_LOCKED | WRITER_WAITING, Ordering::SeqCst);
    // SAFETY: the word says a writer holds the lock; this releases it.
    unsafe { lock.unlock_exclusive() };
    assert_eq!(epoch(), 0);
    assert_eq!(state.value().load(Ordering::SeqCst), WRITER_WAITING);
    // The same with a sleeper announced: one wake-up, the bit cleared.
    state
        .value()
        .store(WRITE_LOCKED | WRITER_WAITING | SLEEPING, Ordering::SeqCst);
    // SAFETY: as above.
    unsafe { lock.unlock_exclusive() };
    assert_eq!(epoch(), 1);
    assert_eq!(state.value().load(Ordering::SeqCst), WRITER_WAITING);
    // Two readers hold, a writer sleeps: only the last reader out wakes.
    state
        .value()
        .store((2 * READER) | WRITER_WAITING | SLEEPING, Ordering::SeqCst);
    // SAFETY: the word says two readers hold the lock; these release them.
    unsafe { lock.unlock_shared() };
    assert_eq!(epoch(), 1);
    assert_eq!(
        state.value().load(Ordering::SeqCst),
        READER | WRITER_WAITING | SLEEPING
    );
    // SAFETY: as above.
    unsafe { lock.unlock_shared() };
    assert_eq!(epoch(), 2);
    assert_eq!(state.value().load(Ordering::SeqCst), WRITER_WAITING);
}

/// A reader kept out by a writer publishes its beat while it polls (a
/// writer reads it before holding a readers' turn open for it).
#[test]
fn a_waiting_reader_publishes_its_beat() {
    let lock = Arc::new(RawRwLock::with_options(
        WaitOptions::new().policy(Policy::always_spin()),
    ));
    assert!(lock.try_lock_exclusive());
    let l2 = lock.clone();
    let reader = std::thread::spawn(move || {
        assert!(l2.lock_shared_until(Deadline::NEVER));
        // SAFETY: read-locked just above.
        unsafe { l2.unlock_shared() };
    });
    while lock.reader_beat.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    // SAFETY: write-locked above, by this thread.
    unsafe { lock.unlock_exclusive() };
    reader.join().unwrap();
    assert!(!lock.is_locked());
}

#[test]
fn fast_paths_whose_first_guess_misses_act_on_the_word_they_find() {
    let lock = RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()));
    let w = lock.words.state.value();
    // Guessed free, found read-locked twice.
    w.store(2 * READER, Ordering::SeqCst);
    assert!(!lock.try_lock_exclusive());
    assert_eq!(
        w.load(Ordering::SeqCst),
        2 * READER,
        "a failed try changes nothing"
    );
    assert!(lock.try_lock_shared());
    assert_eq!(w.load(Ordering::SeqCst), 3 * READER);
    // Guessed the only reader, found three and a waiting writer.
    w.store((3 * READER) | WRITER_WAITING, Ordering::SeqCst);
    // SAFETY: the word says three readers hold the lock; this releases
    // one of them.
    unsafe { lock.unlock_shared() };
    assert_eq!(w.load(Ordering::SeqCst), (2 * READER) | WRITER_WAITING);
    // Guessed the only writer, found a waiting writer as well.
    w.store(WRITE_LOCKED | WRITER_WAITING, Ordering::SeqCst);
    // SAFETY: the word says a writer holds the lock; this releases it.
    unsafe { lock.unlock_exclusive() };
    assert_eq!(w.load(Ordering::SeqCst), WRITER_WAITING);
    // Guesses that hit: free => writer => free => reader => free.
    w.store(0, Ordering::SeqCst);
    assert!(lock.try_lock_exclusive());
    assert_eq!(w.load(Ordering::SeqCst), WRITE_LOCKED);
    // SAFETY: taken just above.
    unsafe { lock.unlock_exclusive() };
    assert!(lock.try_lock_shared());
    assert_eq!(w.load(Ordering::SeqCst), READER);
    // SAFETY: taken just above.
    unsafe { lock.unlock_shared() };
    assert_eq!(w.load(Ordering::SeqCst), 0);
}

#[test]
fn a_write_unlock_gives_waiting_readers_a_turn_that_the_first_reader_out_ends() {
    let lock = RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()));
    let w = lock.words.state.value();
    // Write-locked, a writer waiting, a reader asking for a turn.
    w.store(
        WRITE_LOCKED | WRITER_WAITING | READERS_WAITING,
        Ordering::SeqCst,
    );
    assert!(
        !lock.try_lock_shared(),
        "the waiting writer keeps readers out"
    );
    // SAFETY: the word says a writer holds the lock; this releases it.
    unsafe { lock.unlock_exclusive() };
    assert_eq!(w.load(Ordering::SeqCst), WRITER_WAITING | READ_TURN);
    assert!(!lock.try_lock_exclusive(), "writers keep out of the turn");
    assert!(lock.try_lock_shared() && lock.try_lock_shared());
    // SAFETY: two read locks taken just above.
    unsafe { lock.unlock_shared() };
    assert_eq!(w.load(Ordering::SeqCst), WRITER_WAITING | READER);
    assert!(
        !lock.try_lock_shared(),
        "the first reader out ended the turn"
    );
    // SAFETY: one read lock left.
    unsafe { lock.unlock_shared() };
    // Without a waiting writer the bit is only cleared: readers enter
    // anyway, and so does a writer that comes first (no turn keeps it
    // out).
    w.store(WRITE_LOCKED | READERS_WAITING, Ordering::SeqCst);
    // SAFETY: as above.
    unsafe { lock.unlock_exclusive() };
    assert_eq!(w.load(Ordering::SeqCst), 0);
    assert!(lock.try_lock_exclusive(), "no turn keeps a lone writer out");
    // SAFETY: taken just above.
    unsafe { lock.unlock_exclusive() };
}

#[test]
fn a_waiting_writer_ends_a_turn_nobody_takes() {
    let lock = RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()));
    // A turn whose reader gave up: free, READ_TURN, nobody waiting.
    lock.words.state.value().store(READ_TURN, Ordering::SeqCst);
    assert!(!lock.try_lock_exclusive());
    assert!(lock.lock_exclusive_until(Deadline::NEVER));
    assert_eq!(
        lock.words.state.value().load(Ordering::SeqCst),
        WRITE_LOCKED
    );
    // SAFETY: write-locked just above.
    unsafe { lock.unlock_exclusive() };
    assert!(!lock.is_locked());
}

#[test]
fn a_starving_writer_keeps_barging_and_waiting_writers_out() {
    let lock = RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()));
    let w = lock.words.state.value();
    // Free, two writers waiting, one of them starving.
    let s = 2 * WRITER_WAITING + WRITER_STARVING;
    w.store(s, Ordering::SeqCst);
    assert!(!lock.try_lock_exclusive(), "a barging writer keeps out");
    assert!(
        !lock.try_lock_shared(),
        "the waiting writers keep readers out"
    );
    assert!(free_for(s, true), "the starving writer may take it");
    assert!(!free_for(s, false), "the other waiting writer may not");
    assert!(free_for(2 * WRITER_WAITING, false));
    assert_eq!(
        w.load(Ordering::SeqCst),
        s,
        "the failed tries changed nothing"
    );
}

#[test]
fn writers_start_starving_up_to_the_count_s_limit() {
    let lock = RawRwLock::with_options(WaitOptions::new().policy(Policy::always_block()));
    let w = lock.words.state.value();
    let waiting = (MAX_WRITERS_STARVING + 2) * WRITER_WAITING;
    w.store(WRITE_LOCKED | waiting, Ordering::SeqCst);
    for n in 1..=MAX_WRITERS_STARVING {
        assert!(lock.join_starving());
        assert_eq!(writers_starving(w.load(Ordering::SeqCst)), n);
    }
    assert!(!lock.join_starving(), "the count is full");
    let s = w.load(Ordering::SeqCst);
    assert_eq!(writers_starving(s), MAX_WRITERS_STARVING);
    assert_eq!(writers_waiting(s), MAX_WRITERS_STARVING + 2);
    assert!(write_locked(s) && readers(s) == 0);
}

/// A writer that re-takes the lock at once after each unlock beats a
/// sleeping writer round after round, until the sleeper starves: then
/// the barging try fails on a free lock and the sleeper gets it. (On a
/// busy machine the sleeper may also get in between an unlock and the
/// next try; it must finish either way.)
#[test]
fn a_writer_beaten_round_after_round_starves_and_gets_the_lock() {
    let lock = Arc::new(RawRwLock::with_options(
        WaitOptions::new().policy(Policy::always_block()),
    ));
    assert!(lock.try_lock_exclusive());
    let l2 = lock.clone();
    let waiter = std::thread::spawn(move || {
        assert!(l2.lock_exclusive_until(Deadline::NEVER));
        // SAFETY: write-locked just above.
        unsafe { l2.unlock_exclusive() };
    });
    // The waiter registered and asleep: every round below starts with
    // it in the kernel.
    while writers_waiting(lock.words.state.value().load(Ordering::SeqCst)) == 0
        || lock.words.state.value().load(Ordering::SeqCst) & SLEEPING == 0
    {
        std::thread::yield_now();
    }
    // Hang detector only: the rounds are counted, not timed.
    let give_up = Instant::now() + Duration::from_secs(120);
    let mut rounds = 0u32;
    let kept_out = loop {
        // Holding: let the waiter wake to a held lock (a lost round).
        std::thread::sleep(Duration::from_millis(1));
        // SAFETY: this thread holds the write lock.
        unsafe { lock.unlock_exclusive() };
        if !lock.try_lock_exclusive() {
            break true;
        }
        rounds += 1;
        if waiter.is_finished() {
            // It got in between an unlock and the try.
            // SAFETY: the try just above took the write lock.
            unsafe { lock.unlock_exclusive() };
            break false;
        }
        assert!(
            Instant::now() < give_up,
            "no starving after {rounds} rounds"
        );
    };
    if kept_out {
        assert!(
            rounds >= HAND_OFF_AFTER_LOST_ROUNDS,
            "the barging writer kept out after {rounds} rounds"
        );
    }
    waiter.join().unwrap();
    assert!(!lock.is_locked());
    assert_eq!(lock.words.state.value().load(Ordering::SeqCst), 0);
}

#[test]
fn a_reader_waiting_for_room_is_woken_when_a_reader_leaves() {
    let lock = Arc::new(RawRwLock::with_options(
        WaitOptions::new().policy(Policy::always_block()),
    ));
    // A lock that MAX_READERS readers hold (taking a million read locks
    // one by one would only be slower).
    lock.words
        .state
        .value()
        .store(MAX_READERS * READER, Ordering::SeqCst);
    let l2 = lock.clone();
    let reader = std::thread::spawn(move || l2.lock_shared_until(Deadline::NEVER));
    // Let the reader find the lock full and go to sleep.
    while lock.words.state.value().load(Ordering::SeqCst) & SLEEPING == 0 {
        std::thread::yield_now();
    }
    std::thread::sleep(Duration::from_millis(10));
    // SAFETY: the word says MAX_READERS readers hold the lock; this
    // releases one of them.
    unsafe { lock.unlock_shared() };
    assert!(reader.join().unwrap());
    assert_eq!(
        readers(lock.words.state.value().load(Ordering::SeqCst)),
        MAX_READERS
    );
}

#[test]
fn the_waits_of_one_acquisition_share_a_polling_phase_until_a_kernel_wake_up() {
    let mut phase = PollPhase::default();
    assert_eq!(phase.started_at(|| 5), 5, "the first wait starts it");
    phase.after(&WaitOutcome::Ready {
        value: 0,
        blocked: false,
    });
    assert_eq!(phase.started_at(|| 9), 5, "the next wait polls on in it");
    phase.after(&WaitOutcome::Ready {
        value: 0,
        blocked: true,
    });
    assert_eq!(
        phase.started_at(|| 9),
        9,
        "a kernel wake-up starts the next"
    );
}
