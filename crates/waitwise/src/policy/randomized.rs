//! The randomized two-phase policy (Karlin et al., cited in Lim & Agarwal
//! section 7): each wait draws its poll limit from the density
//! `e^(x/B) / (B (e - 1))` on `[0, B]`, which bounds the expected cost by
//! `e/(e-1)` times the offline optimum for *every* wait time, with no
//! assumption on the distribution.
//!
//! Inverse-CDF sampling: `F(x) = (e^(x/B) - 1) / (e - 1)`, so for `u`
//! uniform in `[0, 1)`, `x = B ln(1 + u (e - 1))`.

use std::cell::Cell;

/// The poll limit for a uniform draw `u` in `[0, 1)` and block cost `b`
/// (pure, so the distribution is testable).
#[inline]
pub fn poll_limit_from_uniform(u: f64, b: f64) -> f64 {
    b * (u * (std::f64::consts::E - 1.0)).ln_1p()
}

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    // Any per-thread value works; mixing the thread-local's address with
    // the clock keeps threads from sharing a sequence.
    let local = 0u8;
    let addr = &local as *const u8 as u64;
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    (addr ^ t.rotate_left(32)) | 1
}

/// A uniform draw in `[0, 1)` from a per-thread xorshift64* generator (a
/// dozen lines, not worth a crate; quality needs are modest).
#[inline]
pub fn next_uniform() -> f64 {
    STATE.with(|s| {
        let mut x = s.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (r >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// A fresh poll limit in ns for block cost `b_ns`.
#[inline]
pub fn draw_poll_limit(b_ns: f64) -> f64 {
    poll_limit_from_uniform(next_uniform(), b_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_cdf_endpoints() {
        assert_eq!(poll_limit_from_uniform(0.0, 100.0), 0.0);
        assert!((poll_limit_from_uniform(1.0, 100.0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn draws_follow_the_density() {
        // Mean of e^(x/B)/(B(e-1)) on [0,B] is B/(e-1) = 0.582 B.
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| draw_poll_limit(1.0)).sum::<f64>() / n as f64;
        let expected = 1.0 / (std::f64::consts::E - 1.0);
        assert!((mean - expected).abs() < 0.005, "mean {mean} vs {expected}");
        // And every draw lies in [0, B].
        assert!((0..10_000)
            .map(|_| draw_poll_limit(1.0))
            .all(|x| (0.0..=1.0).contains(&x)));
    }
}
