//! `WAITWISE_STATS=1`: one line on stderr when the program exits, to tell
//! whether the interposer is active and what it saw:
//!
//! ```text
//! waitwise: pid 1234, policy two-phase: 3 objects waited on, 5120 waits, 12.5% blocked, 0.412 s waited
//! ```
//!
//! Unset, empty or `0` is off. On, the waits are recorded in
//! [`crate::profile`]'s table (without writing a profile unless
//! `WAITWISE_PROFILE` asks for one), so they cost what profiling costs.

use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

/// Reads `WAITWISE_STATS` (at load time).
pub fn load() {
    let on = std::env::var_os("WAITWISE_STATS").is_some_and(|v| !v.is_empty() && v != "0");
    // Relaxed: set before any other thread exists; read at exit.
    ON.store(on, Ordering::Relaxed);
}

/// Whether `WAITWISE_STATS` asks for the line.
pub fn on() -> bool {
    // Relaxed: written once at load, before any other thread existed.
    ON.load(Ordering::Relaxed)
}

/// Prints the line, when asked for (at exit).
pub fn print_at_exit() {
    if on() {
        eprintln!(
            "{}",
            line(
                std::process::id(),
                crate::config::choice().name(),
                crate::profile::totals()
            )
        );
    }
}

/// The line for `totals`.
pub fn line(pid: u32, policy: &str, totals: crate::profile::Totals) -> String {
    let blocked = if totals.waits == 0 {
        0.0
    } else {
        100.0 * totals.blocks as f64 / totals.waits as f64
    };
    format!(
        "waitwise: pid {pid}, policy {policy}: {} objects waited on, {} waits, {blocked:.1}% blocked, {:.3} s waited",
        totals.objects,
        totals.waits,
        totals.wait_ns as f64 / 1e9
    )
}
