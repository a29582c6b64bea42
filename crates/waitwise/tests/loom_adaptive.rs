//! Loom models of the `adapt/b` summary ([`waitwise::policy::adaptive`]):
//! one object's summary recorded into by two waiters at once while a third
//! thread draws poll limits from it. The scores, the arm and the learned
//! `B` are touched with `Relaxed` loads and stores (no read-modify-write),
//! so a concurrent record may be lost; these models check that nothing
//! worse happens: the arm is always one of the menu's, every drawn limit
//! lies in `[0, 2B]`, and each score ends as the result of some subset of
//! the records applied in some order; likewise the object's learned `B`
//! under concurrent wake-ups, and a stale `B` ageing while a wake-up
//! freshens it. The credit that pays for `/b/0` changes by
//! compare-and-swap only: its model checks that two spends and an
//! earning at once lose nothing and never overdraw it.
//! Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 CARGO_TARGET_DIR=target/loom cargo test -p waitwise --release --test loom_adaptive`
//! (about ten minutes on 2 vCPUs, nearly all of it
//! `concurrent_records_keep_the_summary_valid`, whose two records of nine
//! scores each interleave in the most ways).
#![cfg(loom)]

use loom::thread;
use waitwise::policy::adaptive::{
    explored_block_ns, next_block_ns, relaxed_block_ns, AdaptiveSummary, ARMS, ARM_BLOCK,
    DRIFT_AFTER_WAITS, MAX_LIMIT_IN_B, POLLED_SAMPLE_SHIFT,
};
use waitwise_platform::shim::Arc;

const B: f64 = 1000.0;

/// The scores after recording `waits` in order into a fresh summary.
fn sequential(waits: &[f64]) -> [f64; ARMS] {
    let s = AdaptiveSummary::new();
    for &t in waits {
        s.record(t, B);
    }
    s.scores()
}

/// Every score one of the results of recording a subset of `waits` (in
/// any order) into a fresh summary.
fn assert_some_subset(scores: [f64; ARMS], waits: [f64; 2]) {
    let outcomes = [
        sequential(&[]),
        sequential(&[waits[0]]),
        sequential(&[waits[1]]),
        sequential(&waits),
        sequential(&[waits[1], waits[0]]),
    ];
    for (i, score) in scores.iter().enumerate() {
        assert!(
            outcomes.iter().any(|o| o[i] == *score),
            "arm {i}: {score} not in {outcomes:?}"
        );
    }
}

/// A short and a long wait recorded at once: each score is one of the
/// serial outcomes (or one record lost), the arm valid throughout.
#[test]
fn concurrent_records_keep_the_summary_valid() {
    loom::model(|| {
        let s = Arc::new(AdaptiveSummary::new());
        let waits = [50.0, 20_000.0];
        let handles: Vec<_> = waits
            .iter()
            .map(|&t| {
                let s = s.clone();
                thread::spawn(move || s.record(t, B))
            })
            .collect();
        let limit = s.poll_limit_ns(0.999, B);
        assert!((0.0..=MAX_LIMIT_IN_B * B).contains(&limit), "{limit}");
        assert!(s.arm() < ARMS);
        for h in handles {
            h.join().unwrap();
        }
        assert!(s.arm() < ARMS);
        assert_some_subset(s.scores(), waits);
    });
}

/// A record racing draws: a reader sees either arm, never a torn one, and
/// after the join the summary holds the record.
#[test]
fn a_reader_sees_a_valid_arm_while_a_waiter_records() {
    loom::model(|| {
        let s = Arc::new(AdaptiveSummary::new());
        let writer = {
            let s = s.clone();
            thread::spawn(move || {
                s.record(20_000.0, B);
                s.record(20_000.0, B);
            })
        };
        for u in [0.0, 0.5] {
            let limit = s.poll_limit_ns(u, B);
            assert!((0.0..=MAX_LIMIT_IN_B * B).contains(&limit), "{limit}");
        }
        writer.join().unwrap();
        assert_eq!(s.scores(), sequential(&[20_000.0, 20_000.0]));
        assert_eq!(s.arm(), ARM_BLOCK);
    });
}

/// Two wake-ups (a cheap and a dear one) move one object's `B` at once
/// while a third thread draws with it: the reader sees the process's `B`
/// or a value some wake-ups led to, every limit within it, and the end
/// value is that of a subset of the wake-ups applied in some order.
#[test]
fn concurrent_wake_ups_keep_the_objects_b_valid() {
    loom::model(|| {
        let s = Arc::new(AdaptiveSummary::new());
        let latencies = [2_000.0, 30_000.0];
        // The summary keeps whole ns.
        let step = |old: f64, l: f64| next_block_ns(old, l, B).trunc();
        let (a, b) = (latencies[0], latencies[1]);
        let outcomes = [
            B,
            step(B, a),
            step(B, b),
            step(step(B, a), b),
            step(step(B, b), a),
        ];
        let handles: Vec<_> = latencies
            .iter()
            .map(|&l| {
                let s = s.clone();
                thread::spawn(move || s.record_wake_up(l, B))
            })
            .collect();
        let seen = s.block_ns(B);
        assert!(outcomes.contains(&seen), "{seen} not in {outcomes:?}");
        let limit = s.poll_limit_ns(0.999, seen);
        assert!((0.0..=MAX_LIMIT_IN_B * seen).contains(&limit), "{limit}");
        for h in handles {
            h.join().unwrap();
        }
        let end = s.block_ns(B);
        assert!(outcomes.contains(&end), "{end} not in {outcomes:?}");
    });
}

/// A polled wait ages a stale `B` while a blocked one brings a wake-up
/// sample (below `B`, so an exploring object's: half the way down): the
/// end value is the wake-up's alone, the ageing's alone, or both in
/// either order (the ageing may also see the sample's reset and leave it
/// be), and a reader sees the old value or one of those.
#[test]
fn ageing_and_a_wake_up_at_once_keep_the_objects_b_valid() {
    loom::model(|| {
        let s = Arc::new(AdaptiveSummary::new());
        // Learned: 8 B (one sample moves it 1/8 of the way, capped at 2x).
        for _ in 0..40 {
            s.record_wake_up(8.0 * B, B);
        }
        let old = s.block_ns(B);
        // Stale: DRIFT_AFTER_WAITS polled waits without a sample, as
        // sampled ones of weight 4 (exploring, not yet aged: only the waits
        // past that count move it). Fewer calls keep loom's branch count
        // within its limit.
        for _ in 0..DRIFT_AFTER_WAITS / 4 {
            s.age_block(B, POLLED_SAMPLE_SHIFT);
        }
        assert!(s.exploring());
        assert_eq!(s.block_ns(B), old);
        let latency = 2.0 * B;
        let sample = |b: f64| explored_block_ns(b, latency, B).trunc();
        let age = |b: f64| relaxed_block_ns(b, B, 0).trunc();
        let outcomes = [
            old,
            age(old),
            sample(old),
            sample(age(old)),
            age(sample(old)),
        ];
        let ager = {
            let s = s.clone();
            thread::spawn(move || s.age_block(B, 0))
        };
        let waker = {
            let s = s.clone();
            thread::spawn(move || s.record_wake_up(latency, B))
        };
        let seen = s.block_ns(B);
        assert!(outcomes.contains(&seen), "{seen} not in {outcomes:?}");
        ager.join().unwrap();
        waker.join().unwrap();
        let end = s.block_ns(B);
        assert!(outcomes[1..].contains(&end), "{end} not in {outcomes:?}");
    });
}

/// Two waits spend a block of credit each while a third thread earns:
/// with 1.5 blocks to start, the first spend always succeeds, the second
/// only after the earning (2.2 blocks in all), and the end credit is the
/// start plus the earning less exactly the spends that succeeded.
#[test]
fn concurrent_spends_and_an_earning_keep_the_credit_exact() {
    loom::model(|| {
        let s = Arc::new(AdaptiveSummary::new());
        s.earn_credit(1_500.0, B);
        let spenders: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || s.take_block_credit(B))
            })
            .collect();
        s.earn_credit(700.0, B);
        let spent = spenders
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|&ok| ok)
            .count();
        assert!(spent >= 1);
        assert_eq!(s.credit_ns(), 2_200.0 - B * spent as f64);
    });
}
