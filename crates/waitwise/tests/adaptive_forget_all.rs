//! `waitwise::policy::adaptive::forget_all`: every summary of the static
//! table starts again with no history. Its own test binary: the reset is
//! process-wide, and a test waiting under `adapt/b` beside it would see
//! its summaries reset under it.
#![cfg(not(loom))]

use waitwise::policy::adaptive::{forget_all, summary_for, ARMS, START_ARM};
use waitwise::wait_word::WaitWord;

#[test]
fn forget_all_leaves_every_object_with_no_history() {
    const PROCESS_B: f64 = 3_000.0;
    let words: Vec<WaitWord> = (0..8).map(WaitWord::new).collect();
    let summaries: Vec<_> = words
        .iter()
        .map(|w| summary_for(w.futex() as *const _ as usize))
        .collect();
    // Long waits and dear wake-ups: every summary leaves its start.
    for s in &summaries {
        for _ in 0..40 {
            s.record(30_000.0, PROCESS_B);
            s.record_wake_up(30_000.0, PROCESS_B);
        }
        assert_ne!(s.arm(), START_ARM);
        assert!(s.block_ns(PROCESS_B) > PROCESS_B);
    }
    forget_all();
    for s in &summaries {
        assert_eq!(s.arm(), START_ARM);
        assert_eq!(s.scores(), [0.0; ARMS]);
        assert_eq!(s.block_ns(PROCESS_B), PROCESS_B);
    }
}
