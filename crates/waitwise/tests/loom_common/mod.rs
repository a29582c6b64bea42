//! Helpers shared by the loom models (`tests/loom_*.rs`, each its own
//! crate, built only with `--cfg loom`).

#[macro_use]
pub mod fifo;
pub mod locks;

/// Runs the model `f` and checks that its executions reached both outcomes
/// it reports, so that it cannot pass by never taking one branch. Loom 0.7
/// remembers only the last access to each atomic for its choice of
/// interleavings: a thread that loads a word and then writes it hides from
/// it another thread's earlier load, and an interleaving that needs that
/// load moved after the write may never run (a `try_acquire` on the main
/// thread before a spawned `release` never succeeded, for instance).
pub fn model_reaching_both(what: &'static str, f: impl Fn() -> bool + Send + Sync + 'static) {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let seen = std::sync::Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let counts = seen.clone();
    loom::model(move || {
        counts[usize::from(f())].fetch_add(1, Relaxed);
    });
    let (no, yes) = (seen[0].load(Relaxed), seen[1].load(Relaxed));
    assert!(
        no > 0 && yes > 0,
        "{what}: only one outcome explored (false {no}, true {yes} times)"
    );
}
