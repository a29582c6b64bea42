//! Architectures without the x86 wait instructions: a spin hint and a
//! monotonic clock stand in; the hardware waits must never be called (the
//! feature checks report them unavailable), and they only spin if they are.

/// Spin-loop hint.
#[inline(always)]
pub fn pause() {
    core::hint::spin_loop();
}

/// No time-stamp counter: monotonic nanoseconds instead.
#[inline]
pub fn read_tsc_start() -> u64 {
    monotonic_ns()
}

/// No time-stamp counter: monotonic nanoseconds instead.
#[inline]
pub fn read_tsc_end() -> u64 {
    monotonic_ns()
}

/// No time-stamp counter: monotonic nanoseconds instead.
#[inline]
pub fn read_tsc() -> u64 {
    monotonic_ns()
}

fn monotonic_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Not available on this architecture.
///
/// # Safety
/// Never call: there is no such instruction here.
pub unsafe fn umonitor(_addr: *const u8) {}

/// Not available on this architecture.
///
/// # Safety
/// Never call: there is no such instruction here.
pub unsafe fn umwait(_control: u32, _deadline: u64) -> bool {
    true
}

/// Not available on this architecture.
///
/// # Safety
/// Never call: there is no such instruction here.
pub unsafe fn tpause(_control: u32, _deadline: u64) -> bool {
    true
}

/// Not available on this architecture.
///
/// # Safety
/// Never call: there is no such instruction here.
pub unsafe fn monitorx(_addr: *const u8) {}

/// Not available on this architecture.
///
/// # Safety
/// Never call: there is no such instruction here.
pub unsafe fn mwaitx(_timer_ticks: u32) {}

/// `word += delta`, then `step = mark`; returns the word's previous value.
/// Here a signal between the two is not recognized ([`add_then_mark_gap`]
/// matches no instruction).
#[inline]
pub fn add_then_mark(
    word: &core::sync::atomic::AtomicU32,
    delta: u32,
    step: &core::sync::atomic::AtomicU8,
    mark: u8,
) -> u32 {
    use core::sync::atomic::Ordering;
    let previous = word.fetch_add(delta, Ordering::SeqCst);
    // Relaxed: only this thread's cleanup routine reads it.
    step.store(mark, Ordering::Relaxed);
    previous
}

/// No instruction pointer is in the gap on this architecture.
#[inline]
pub fn add_then_mark_gap() -> usize {
    usize::MAX
}

/// Unused here (no gap).
pub const ADD_THEN_MARK_STEP_REGISTER: i32 = -1;
/// Unused here (no gap).
pub const ADD_THEN_MARK_MARK_REGISTER: i32 = -1;
