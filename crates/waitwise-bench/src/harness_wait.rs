//! How the measurement harness waits for its own partner threads between
//! measured steps (never a measured wait): [`spin_until`] polls, yielding
//! now and then so that a partner descheduled on a shared CPU cannot stall
//! the poller for a whole time slice.

/// Polls `done` until it returns true: a spin hint between polls, and a
/// `sched_yield` instead once every `yield_every` polls (a power of two
/// keeps the check a mask). Each caller picks `yield_every` against what
/// it measures: rarely enough that a yield does not land inside the short
/// hand-offs it times, often enough that a descheduled partner gets the
/// CPU back.
#[inline]
pub fn spin_until(yield_every: u32, mut done: impl FnMut() -> bool) {
    let mut polls = 0u32;
    while !done() {
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(yield_every) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}
