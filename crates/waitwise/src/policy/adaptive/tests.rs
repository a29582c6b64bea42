//! Tests of the adaptive policy: its arms, its summary, its learned `B`
//! and its draws.

use super::*;

/// Enough wake-ups of `latency_ns` for the object's `B` to settle
/// there (within its range of the process's `process_ns`).
fn settle_block(s: &AdaptiveSummary, latency_ns: f64, process_ns: f64) {
    for _ in 0..60 {
        s.record_wake_up(latency_ns, process_ns);
    }
}

#[test]
fn about_one_polled_wait_in_four_is_sampled_whatever_the_clock_grain() {
    let mask = (1u64 << POLLED_SAMPLE_SHIFT) - 1;
    // A TSC (every value), a µs clock, a 1 ms and a 4 ms tick.
    for grain in [1u64, 1_000, 1_000_000, 4_000_000] {
        let n = 40_000u64;
        let hits = (0..n).filter(|&i| sampled(1_234_567 + i * grain)).count();
        let share = hits as f64 / n as f64;
        assert!((0.2..=0.3).contains(&share), "grain {grain}: {share}");
    }
    // Exactly one in four over an aligned block of consecutive readings.
    let hits = (0..1024u64).filter(|&i| sampled(5 << 20 | i)).count();
    assert_eq!(hits as u64, 1024 / (mask + 1));
}

#[test]
fn a_weighted_record_adds_its_weight_times_the_costs_with_one_decay() {
    let (b, t) = (1000.0, 300.0);
    let one = AdaptiveSummary::new();
    one.record(t, b);
    let four = AdaptiveSummary::new();
    four.record_weighted(t, b, POLLED_SAMPLE_SHIFT);
    let w = f64::from(1u32 << POLLED_SAMPLE_SHIFT);
    for (a, b4) in one.scores().iter().zip(four.scores()) {
        assert!((a * w - b4).abs() < 1e-9, "{a} {b4}");
    }
    // One decay, not four: a second weighted record decays the first by
    // 2^-DECAY_SHIFT only.
    four.record_weighted(t, b, POLLED_SAMPLE_SHIFT);
    let keep = 1.0 - 1.0 / f64::from(1u32 << DECAY_SHIFT);
    for (a, b4) in one.scores().iter().zip(four.scores()) {
        assert!(
            (b4 - a * w * (1.0 + keep)).abs() <= 1.0 / SCORE_UNIT,
            "{a} {b4}"
        );
    }
    // A larger weight counts as the largest.
    let big = AdaptiveSummary::new();
    big.record_weighted(t, b, 30);
    let largest = AdaptiveSummary::new();
    largest.record_weighted(t, b, POLLED_SAMPLE_SHIFT);
    assert_eq!(big.scores(), largest.scores());
}

#[test]
fn the_integer_costs_are_the_costs_in_score_units() {
    // x from 0 to past the flat part, on a grid finer than a score
    // unit near the arms' corners.
    let xs = (0..=4 * 4096).map(|i| f64::from(i) / 4096.0).chain(
        [1.0 / 32.0, 1.0 / 16.0, 0.125, 0.25, 0.5, 1.0, 2.0]
            .into_iter()
            .flat_map(|c| [c - 1e-9, c, c + 1e-9]),
    );
    for x in xs {
        let xq = score_units_up(x.min(FLAT_BEYOND_B));
        for arm in 0..ARMS {
            let exact = arm_cost(arm, x) * SCORE_UNIT;
            let q = f64::from(arm_cost_q(arm, xq));
            // Rounding x up to a unit costs an F(a) at most K(a) units
            // (and one for the product's rounding); a deterministic
            // arm's cost is whole units on either side of its limit.
            let tolerance = match poll_multiple(arm) {
                Some(_) => 1.0,
                None => arm_worst_factor(arm) + 1.0,
            };
            assert!(
                (q - exact).abs() <= tolerance,
                "arm {arm}, x {x}: {q} vs {exact}"
            );
        }
    }
    assert_eq!(score_units_up(1.0), SCORE_UNIT_Q);
    assert_eq!(score_units_up(1.0 + 1e-9), SCORE_UNIT_Q + 1);
    assert_eq!(score_units_up(f64::NAN), 0);
    // Flat past every arm's corner, whatever the wait.
    assert_eq!(arm_cost_q(ARM_POLL_2B, u32::MAX), 3 * SCORE_UNIT_Q);
    assert_eq!(
        u64::from(arm_cost_q(0, u32::MAX)),
        (u64::from(TRUNCATED_CAPS_Q[0]) * u64::from(TRUNCATED_FACTORS_Q16[0])) >> 16
    );
}

#[test]
fn constants_match_their_formulas() {
    for (i, &a) in TRUNCATED_SCALES.iter().enumerate() {
        assert!((TRUNCATED_FACTORS[i] - 1.0 / (1.0 - (-a).exp())).abs() < 1e-12);
        assert!((TRUNCATED_EXPM1[i] - a.exp_m1()).abs() < 1e-12);
    }
    assert_eq!(WORST_CASE_FACTOR, TRUNCATED_FACTORS[0]);
    // Per wait, every arm but /b/0 (bounded by the credit instead).
    let worst = (0..ARMS)
        .filter(|&arm| arm != ARM_BLOCK)
        .map(arm_worst_factor)
        .fold(0.0, f64::max);
    assert_eq!(worst, WORST_CASE_FACTOR);
    assert_eq!(arm_worst_factor(ARM_BLOCK), f64::INFINITY);
    assert_eq!(arm_worst_factor(CREDIT_FALLBACK_ARM), WORST_CASE_FACTOR);
    assert_eq!(arm_name(ARM_BLOCK), "/b/0");
    assert_eq!(arm_name(START_ARM), "rand/b");
    assert_eq!(arm_name(ARM_POLL_B), "s/b/1");
    assert_eq!(arm_name(ARM_POLL_2B), "s/b/2");
    assert_eq!(arm_worst_factor(ARM_POLL_2B), 3.0);
    let longest = (0..ARMS)
        .map(|arm| poll_limit_from_uniform(arm, 0.999_999, 1.0))
        .fold(0.0, f64::max);
    assert_eq!(longest, MAX_LIMIT_IN_B);
    assert_eq!(
        MAX_WAKE_SAMPLE_NS,
        waitwise_platform::wake_latency::MAX_SAMPLE_NS as f64
    );
}

/// The closed-form cost against a midpoint sum over the arm's law.
#[test]
fn arm_cost_is_the_expected_cost_of_its_law() {
    let b = 1.0;
    for arm in 0..ARMS {
        for &t in &[0.0, 0.01, 0.1, 0.2, 0.4, 0.9, 1.0, 1.5, 2.0, 2.5, 7.0] {
            let n = 100_000;
            let mut sum = 0.0;
            for k in 0..n {
                let u = (k as f64 + 0.5) / n as f64;
                let l = poll_limit_from_uniform(arm, u, b);
                assert!((0.0..=MAX_LIMIT_IN_B * b).contains(&l));
                sum += if t <= l { t } else { l + b };
            }
            let mean = sum / n as f64;
            let closed = arm_cost(arm, t / b);
            assert!(
                (mean - closed).abs() < 1e-3,
                "arm {arm} t {t}: {mean} vs {closed}"
            );
            if t > 0.0 {
                assert!(closed / t.min(b) <= arm_worst_factor(arm) + 1e-9);
            }
        }
    }
}

/// Enough waits of one kind that the older ones weigh less than 2%.
const FOUR_WINDOWS: usize = 4 << DECAY_SHIFT;

#[test]
fn short_waits_choose_polling_and_long_ones_blocking() {
    let s = AdaptiveSummary::new();
    assert_eq!(s.arm(), START_ARM);
    for _ in 0..FOUR_WINDOWS {
        s.record(50.0, 1000.0);
    }
    assert_eq!(s.arm(), ARM_POLL_B);
    assert_eq!(s.poll_limit_ns(0.3, 1000.0), 1000.0);
    for _ in 0..FOUR_WINDOWS {
        s.record(20_000.0, 1000.0);
    }
    assert_eq!(s.arm(), ARM_BLOCK);
    assert_eq!(s.poll_limit_ns(0.999, 1000.0), 0.0);
    // Bad input is ignored.
    s.record(f64::NAN, 1000.0);
    s.record(10.0, 0.0);
    assert_eq!(s.arm(), ARM_BLOCK);
}

/// Waits that end between `B` and `2B` as often as below `B`: every
/// arm that blocks by `B` pays `B` on half of them, `s/b/2` polls them
/// through.
#[test]
fn waits_up_to_twice_b_choose_polling_to_2b() {
    let s = AdaptiveSummary::new();
    for i in 0..40 {
        s.record(if i % 2 == 0 { 300.0 } else { 1300.0 }, 1000.0);
    }
    assert_eq!(s.arm(), ARM_POLL_2B);
    assert_eq!(s.poll_limit_ns(0.3, 1000.0), 2000.0);
    // Waits just over 2B leave it.
    for _ in 0..40 {
        s.record(2100.0, 1000.0);
    }
    assert_eq!(s.arm(), ARM_BLOCK);
}

#[test]
fn one_odd_wait_does_not_flip_a_settled_arm() {
    let s = AdaptiveSummary::new();
    for _ in 0..64 {
        s.record(50.0, 1000.0);
    }
    assert_eq!(s.arm(), ARM_POLL_B);
    s.record(30_000.0, 1000.0);
    assert_eq!(s.arm(), ARM_POLL_B);
}

/// `/b/0` leads `F(1/32)` by `B/64` a wait on long waits, so one wait
/// far shorter than `B/32` moves a settled object to `F(1/32)`, the
/// bounded arm closest to it, and long waits bring it back.
#[test]
fn a_tiny_wait_moves_blocking_to_its_bounded_neighbour() {
    let s = AdaptiveSummary::new();
    for _ in 0..64 {
        s.record(30_000.0, 1000.0);
    }
    assert_eq!(s.arm(), ARM_BLOCK);
    s.record(10.0, 1000.0);
    assert_eq!(s.arm(), CREDIT_FALLBACK_ARM);
    for _ in 0..40 {
        s.record(30_000.0, 1000.0);
    }
    assert_eq!(s.arm(), ARM_BLOCK);
}

#[test]
fn credit_earned_is_the_bound_less_the_arms_cost() {
    let r = WORST_CASE_FACTOR;
    assert_eq!(credit_earned(ARM_BLOCK, 5.0), r);
    assert!((credit_earned(ARM_BLOCK, 0.01) - 0.01 * r).abs() < 1e-12);
    let f = credit_earned(CREDIT_FALLBACK_ARM, 5.0);
    assert!((f - (r - arm_cost(CREDIT_FALLBACK_ARM, 5.0))).abs() < 1e-12);
    assert!((credit_earned(ARM_POLL_2B, 2.5) - (r - 3.0)).abs() < 1e-12);
    // Never negative, for every arm and wait.
    for arm in 0..ARMS {
        for i in 0..400 {
            let x = 1e-5 * 1.05f64.powi(i);
            assert!(credit_earned(arm, x) >= 0.0, "{arm} {x}");
        }
    }
    assert_eq!(credit_earned(ARM_BLOCK, f64::NAN), 0.0);
}

#[test]
fn credit_is_spent_a_block_at_a_time_and_capped() {
    let s = AdaptiveSummary::new();
    assert!(!s.take_block_credit(1000.0));
    assert_eq!(s.credit_ns(), 0.0);
    s.earn_credit(2500.0, 1000.0);
    assert!(s.take_block_credit(1000.0));
    assert!(s.take_block_credit(1000.0));
    // 500 left: not a block's worth, and nothing spent.
    assert!(!s.take_block_credit(1000.0));
    assert_eq!(s.credit_ns(), 500.0);
    // Capped at CREDIT_CAP_IN_B blocks; over the cap it stays.
    for _ in 0..100 {
        s.earn_credit(32_000.0, 1000.0);
    }
    assert_eq!(s.credit_ns(), CREDIT_CAP_IN_B * 1000.0);
    s.earn_credit(1000.0, 10.0);
    assert_eq!(s.credit_ns(), CREDIT_CAP_IN_B * 1000.0);
    // Bad input spends or adds nothing.
    s.earn_credit(f64::NAN, 1000.0);
    s.earn_credit(-5.0, 1000.0);
    assert_eq!(s.credit_ns(), CREDIT_CAP_IN_B * 1000.0);
    assert!(!s.take_block_credit(f64::INFINITY));
    assert!(s.take_block_credit(f64::NAN));
    assert_eq!(s.credit_ns(), CREDIT_CAP_IN_B * 1000.0 - 1.0);
    s.reset();
    assert_eq!(s.credit_ns(), 0.0);
}

/// Waits through [`Learning`], each blocked with its release known:
/// long ones until the object runs `/b/0`, then near-instant ones
/// while it does (the adversary of the bound). At every prefix the
/// expected cost of the arms the waits ran stays within
/// [`WORST_CASE_FACTOR`] of the optimum, and `/b/0` did run.
#[test]
fn blocking_waits_spend_only_what_earlier_waits_earned() {
    let b = 10_000.0;
    let s: &'static AdaptiveSummary = Box::leak(Box::new(AdaptiveSummary::new()));
    let (mut cost, mut optimal, mut blocked_at_once) = (0.0, 0.0, 0);
    for i in 0..3000 {
        let (limit, learning) = Learning::begin_on(s, 0, b, 1.0);
        let t = if learning.arm == ARM_BLOCK {
            1.0
        } else {
            5.0 * b
        };
        if learning.arm == ARM_BLOCK {
            assert_eq!(limit, 0.0);
            blocked_at_once += 1;
        }
        cost += arm_cost(learning.arm, t / b) * b;
        optimal += t.min(b);
        learning.learn(t + b, true, false, Some(t), 0);
        assert!(
            cost <= WORST_CASE_FACTOR * optimal,
            "wait {i}: {cost} {optimal}"
        );
    }
    assert!(blocked_at_once > 50, "{blocked_at_once}");
}

#[test]
fn scores_stay_bounded() {
    let s = AdaptiveSummary::new();
    for _ in 0..10_000 {
        s.record(1e12, 1.0);
    }
    let max = (MAX_LIMIT_IN_B + 1.0) * f64::from(1u32 << DECAY_SHIFT);
    assert!(
        s.scores().iter().all(|&v| v <= max + 1e-3),
        "{:?}",
        s.scores()
    );
}

#[test]
fn a_wake_up_moves_the_objects_b_by_an_eighth() {
    // 1/8 of the way from 3 us to 5 us.
    assert_eq!(next_block_ns(3_000.0, 5_000.0, 3_000.0), 3_250.0);
    // A 500 us outlier counts as 2 x 3 us: 3 us + 3 us / 8.
    assert_eq!(next_block_ns(3_000.0, 500_000.0, 3_000.0), 3_375.0);
    // Dropped: no real sleep, a time slice, not a number.
    for bad in [200.0, 2e6, f64::NAN] {
        assert_eq!(next_block_ns(3_000.0, bad, 3_000.0), 3_000.0);
    }
    // Never beyond BLOCK_RANGE of the process's B, nor under the floor.
    assert_eq!(next_block_ns(47_000.0, 60_000.0, 3_000.0), 48_000.0);
    assert_eq!(next_block_ns(1_000.0, 1_000.0, 3_000.0), 1_000.0);
    assert_eq!(next_block_ns(5_000.0, 1_000.0, 160_000.0), 10_000.0);
}

/// An object whose blocks cost ten times the process's `B` learns it
/// within a few dozen wake-ups, and comes back when they get cheap.
#[test]
fn an_object_learns_what_its_blocks_cost() {
    let s = AdaptiveSummary::new();
    assert_eq!(s.block_ns(3_000.0), 3_000.0);
    settle_block(&s, 30_000.0, 3_000.0);
    let b = s.block_ns(3_000.0);
    assert!((29_000.0..=30_000.0).contains(&b), "{b}");
    // Its limits follow: s/b/1 (the arm D) polls the object's B.
    for _ in 0..40 {
        s.record(100.0, b);
    }
    assert_eq!(s.arm(), ARM_POLL_B);
    assert_eq!(s.poll_limit_ns(0.5, s.block_ns(3_000.0)), b);
    settle_block(&s, 3_000.0, 3_000.0);
    assert!((s.block_ns(3_000.0) - 3_000.0).abs() < 100.0);
    // The process's B bounds it when that changes.
    assert_eq!(s.block_ns(100.0), 1_600.0);
}

#[test]
fn a_stale_b_moves_towards_the_processes_from_above_only() {
    let step = 1.0 / f64::from(1u32 << BLOCK_RELAX_SHIFT);
    assert_eq!(
        relaxed_block_ns(30_000.0, 10_000.0, 0),
        30_000.0 - 20_000.0 * step
    );
    // A sampled wait standing for four moves four steps' worth at once.
    assert_eq!(
        relaxed_block_ns(30_000.0, 10_000.0, 2),
        30_000.0 - 80_000.0 * step
    );
    // Never below the process's, never up, nothing on bad input.
    assert_eq!(relaxed_block_ns(5_000.0, 10_000.0, 0), 5_000.0);
    assert_eq!(relaxed_block_ns(10_000.0, 10_000.0, 0), 10_000.0);
    assert_eq!(relaxed_block_ns(30_000.0, f64::NAN, 0), 30_000.0);
    assert_eq!(relaxed_block_ns(30_000.0, 0.0, 0), 30_000.0);
    assert!(relaxed_block_ns(f64::NAN, 10_000.0, 0).is_nan());
    assert_eq!(relaxed_block_ns(30_000.0, 10_000.0, 99), 10_000.0);
}

/// Waits that end while polling leave the object's `B` alone until
/// [`DRIFT_AFTER_WAITS`] of them have gone by without a wake-up
/// sample; then it drifts down to the process's. A sample makes it
/// fresh again.
#[test]
fn a_b_without_wake_ups_goes_stale() {
    const PROCESS: f64 = 10_000.0;
    let s = AdaptiveSummary::new();
    // Never learned: the process's B, and ageing leaves it so.
    for _ in 0..2 * STALE_AFTER_WAITS {
        s.age_block(PROCESS, 0);
    }
    assert_eq!(s.block_ns(PROCESS), PROCESS);
    settle_block(&s, 40_000.0, PROCESS);
    let learned = s.block_ns(PROCESS);
    assert!(learned > 35_000.0, "{learned}");
    // Sampled polled waits of weight 4: unmoved until the count passes
    // DRIFT_AFTER_WAITS (exploring from STALE_AFTER_WAITS on).
    for _ in 0..STALE_AFTER_WAITS / 4 {
        s.age_block(PROCESS, POLLED_SAMPLE_SHIFT);
    }
    assert!(!s.exploring());
    for _ in STALE_AFTER_WAITS / 4..DRIFT_AFTER_WAITS / 4 {
        s.age_block(PROCESS, POLLED_SAMPLE_SHIFT);
    }
    assert!(s.exploring());
    assert_eq!(s.block_ns(PROCESS), learned);
    s.age_block(PROCESS, POLLED_SAMPLE_SHIFT);
    let aged = s.block_ns(PROCESS);
    assert!(aged < learned, "{aged} {learned}");
    for _ in 0..400 {
        s.age_block(PROCESS, POLLED_SAMPLE_SHIFT);
    }
    assert!((s.block_ns(PROCESS) - PROCESS).abs() < 100.0);
    // One wake-up: fresh, its sample counts, and ageing waits again.
    s.record_wake_up(40_000.0, PROCESS);
    let sampled = s.block_ns(PROCESS);
    assert!(sampled > PROCESS);
    assert!(!s.exploring());
    s.age_block(PROCESS, 0);
    assert_eq!(s.block_ns(PROCESS), sampled);
    // A latency that is not a sample (no real sleep) leaves it stale.
    for _ in 0..DRIFT_AFTER_WAITS {
        s.age_block(PROCESS, 0);
    }
    s.record_wake_up(10.0, PROCESS);
    s.age_block(PROCESS, 0);
    assert!(s.block_ns(PROCESS) < sampled);
}

/// The sample that ends an exploration moves `B` half the way down
/// when below it, else as any other sample; a latency that is no
/// sample leaves it.
#[test]
fn an_explored_sample_below_b_moves_it_half_the_way() {
    const PROCESS: f64 = 10_000.0;
    assert_eq!(explored_block_ns(40_000.0, 20_000.0, PROCESS), 30_000.0);
    assert_eq!(
        explored_block_ns(40_000.0, 60_000.0, PROCESS),
        next_block_ns(40_000.0, 60_000.0, PROCESS)
    );
    assert_eq!(explored_block_ns(40_000.0, 10.0, PROCESS), 40_000.0);
    assert_eq!(explored_block_ns(40_000.0, f64::NAN, PROCESS), 40_000.0);
    // Within BLOCK_RANGE of the process's B, as any learned B.
    assert_eq!(
        explored_block_ns(40_000.0, 2_000.0, 400_000.0),
        400_000.0 / BLOCK_RANGE
    );
}

/// A stale object explores: a wait of `D2` runs `D`'s limit (and as
/// `D`, for the credit it earns), the longest limit says so, the
/// first sample below `B` halves the distance, and any sample ends
/// it.
#[test]
fn a_stale_object_runs_d_for_d2_until_a_wait_blocks() {
    const PROCESS: f64 = 10_000.0;
    let s = AdaptiveSummary::new();
    settle_block(&s, 40_000.0, PROCESS);
    let b = s.block_ns(PROCESS);
    for i in 0..FOUR_WINDOWS {
        s.record(if i % 2 == 0 { 0.3 * b } else { 1.3 * b }, b);
    }
    assert_eq!(s.arm(), ARM_POLL_2B);
    let word = 0u32;
    let addr = &word as *const u32 as usize;
    let (limit, learning) = Learning::begin_on(&s, addr, PROCESS, 1.0);
    assert_eq!((limit, learning.arm), (2.0 * b, ARM_POLL_2B));
    for _ in 0..=STALE_AFTER_WAITS {
        s.age_block(PROCESS, 0);
    }
    assert!(s.exploring());
    assert_eq!(s.block_ns(PROCESS), b);
    assert_eq!(s.longest_poll_limit_ns(PROCESS), b);
    let (limit, learning) = Learning::begin_on(&s, addr, PROCESS, 1.0);
    assert_eq!((limit, learning.arm), (b, ARM_POLL_B));
    s.record_wake_up(b / 4.0, PROCESS);
    assert_eq!(s.block_ns(PROCESS), (b - (b - (b / 4.0)) / 2.0).trunc());
    assert!(!s.exploring());
    let b = s.block_ns(PROCESS);
    let (limit, _) = Learning::begin_on(&s, addr, PROCESS, 1.0);
    assert_eq!(limit, 2.0 * b);
}

/// Waits through [`Learning`] that end while polling age the object's
/// `B`; they never raise it.
#[test]
fn polled_waits_through_learning_age_the_objects_b() {
    const PROCESS: f64 = 5_000.0;
    let s = AdaptiveSummary::new();
    settle_block(&s, 40_000.0, PROCESS);
    let learned = s.block_ns(PROCESS);
    let word = 0u32;
    let addr = &word as *const u32 as usize;
    for _ in 0..8 * STALE_AFTER_WAITS {
        let (_, learning) = Learning::begin_on(&s, addr, PROCESS, 1.0);
        learning.finish(false, false);
    }
    let aged = s.block_ns(PROCESS);
    assert!(aged < learned, "{aged} {learned}");
    assert!(aged >= PROCESS);
}

/// The case that made `B` go stale: uniform waits on `[0, 3B]` are
/// best served by blocking at once, but a `B` left at twice its real
/// value makes `s/b/2` (`2B` of polling, beyond every wait) look best,
/// and its waits never block to say otherwise. Once stale, the object
/// explores (`D`'s limit for `D2`), samples, and goes back to `/b/0`.
#[test]
fn an_object_whose_b_was_left_high_goes_back_to_blocking() {
    const REAL_B: f64 = 25_000.0;
    let s = AdaptiveSummary::new();
    settle_block(&s, 2.0 * REAL_B, REAL_B);
    let high = s.block_ns(REAL_B);
    assert!(high > 1.9 * REAL_B, "{high}");
    // Waits uniform on [0, 3 REAL_B], recorded as the library does:
    // one in four polled ones (weight 4), every blocked one, each with
    // the object's B of the moment.
    let mut k = 0u32;
    let mut wait = || {
        k = k.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        3.0 * REAL_B * f64::from(k >> 8) / f64::from(1u32 << 24)
    };
    let mut sampled = 0u32;
    let mut polled_through = 0u32;
    for _ in 0..(4 << DECAY_SHIFT) {
        let t = wait();
        let b = s.block_ns(REAL_B);
        assert!(t <= 2.0 * b);
        sampled += 1;
        if sampled.is_multiple_of(4) {
            s.record_weighted(t, b, POLLED_SAMPLE_SHIFT);
            s.age_block(REAL_B, POLLED_SAMPLE_SHIFT);
        }
    }
    assert_eq!(s.arm(), ARM_POLL_2B, "{:?}", s.scores());
    // The trap, and the way out: the arm polls every wait through
    // (2B beyond them all) until the B is stale; exploring, D's limit
    // (B) makes the waits past it block and sample what a block
    // costs. (The longest limit is each arm's deterministic one, and
    // the highest an F(a) arm can draw.)
    for _ in 0..4 * STALE_AFTER_WAITS {
        let t = wait();
        let b = s.block_ns(REAL_B);
        let limit = s.longest_poll_limit_ns(REAL_B);
        if t <= limit {
            polled_through += 1;
            sampled += 1;
            if sampled.is_multiple_of(4) {
                s.record_weighted(t, b, POLLED_SAMPLE_SHIFT);
                s.age_block(REAL_B, POLLED_SAMPLE_SHIFT);
            }
        } else {
            s.record_wake_up(REAL_B, REAL_B);
            s.record(t, b);
        }
    }
    assert!(polled_through > 0);
    assert_eq!(s.arm(), ARM_BLOCK, "{:?}", s.scores());
    assert!(s.block_ns(REAL_B) < 1.2 * REAL_B);
}

#[test]
fn the_longest_poll_limit_is_the_arms_with_the_objects_b() {
    let s = AdaptiveSummary::new();
    // rand/b, with the process's B before any wake-up.
    assert_eq!(s.longest_poll_limit_ns(1000.0), 1000.0);
    for _ in 0..FOUR_WINDOWS {
        s.record(30_000.0, 1000.0);
    }
    // /b/0 without credit runs F(1/32); with credit it polls not at all.
    assert_eq!(s.arm(), ARM_BLOCK);
    assert_eq!(s.longest_poll_limit_ns(1000.0), 1000.0 / 32.0);
    s.earn_credit(1000.0, 1000.0);
    assert_eq!(s.longest_poll_limit_ns(1000.0), 0.0);
    // No draw of the fallback exceeds it, with the object's own B.
    settle_block(&s, 4000.0, 1000.0);
    let b = s.block_ns(1000.0);
    let longest = s.longest_poll_limit_ns(1000.0);
    assert!((longest - b / 32.0).abs() < 1e-9, "{longest} {b}");
    assert!(poll_limit_from_uniform(CREDIT_FALLBACK_ARM, 0.999_999, b) <= longest);
    for _ in 0..FOUR_WINDOWS {
        s.record(300.0, b);
        s.record(1.3 * b, b);
    }
    assert_eq!(s.arm(), ARM_POLL_2B);
    assert_eq!(s.longest_poll_limit_ns(1000.0), 2.0 * b);
}

#[test]
fn a_reset_summary_is_one_with_no_history() {
    let s = AdaptiveSummary::new();
    for _ in 0..40 {
        s.record(30_000.0, 1000.0);
        s.record_wake_up(30_000.0, 3_000.0);
    }
    assert_ne!(s.arm(), START_ARM);
    assert_ne!(s.block_ns(3_000.0), 3_000.0);
    s.reset();
    assert_eq!(s.arm(), START_ARM);
    assert_eq!(s.scores(), [0.0; ARMS]);
    assert_eq!(s.block_ns(3_000.0), 3_000.0);
}

#[test]
fn observed_waits() {
    let observed = |elapsed, blocked, timed_out, released| {
        observed_wait_ns(elapsed, blocked, timed_out, 500.0, 1000.0, released)
    };
    assert_eq!(observed(300.0, false, false, None), Some(300.0));
    assert_eq!(observed(5000.0, true, false, None), Some(4000.0));
    assert_eq!(observed(1200.0, true, false, None), Some(500.0));
    assert_eq!(observed(200.0, false, true, None), None);
    assert_eq!(observed(2000.0, true, true, None), Some(2000.0));
    // The waker's stamp says when the wait really ended: a wake-up of
    // 40 us after a 700 ns wait is not a long wait.
    assert_eq!(observed(40_700.0, true, false, Some(700.0)), Some(700.0));
    // Still at least the poll limit outlasted, at most what elapsed.
    assert_eq!(observed(40_000.0, true, false, Some(100.0)), Some(500.0));
    assert_eq!(observed(3000.0, true, false, Some(9000.0)), Some(3000.0));
}

/// A blocked wait on a real futex learns the time its waker released
/// it, not that plus the wake-up: a waker that releases after ~2 ms
/// leaves a wait of at most the elapsed time and at least the release
/// time (the learned length is not timed, only bounded).
#[test]
fn a_blocked_wait_learns_its_release_from_the_wakers_stamp() {
    use waitwise_platform::futex::Futex;
    let word = Box::new(Futex::new(0));
    let addr = &*word as *const Futex as usize;
    let b = 1000.0;
    let (_, learning) = Learning::begin(addr, b, 1.0);
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(2));
            word.value().store(1, std::sync::atomic::Ordering::Release);
            word.wake(1);
        });
        while word.value().load(std::sync::atomic::Ordering::Acquire) == 0 {
            word.wait(0, None);
        }
    });
    let stamp = waitwise_platform::wake_latency::last_waking(addr as *const u32);
    learning.finish(true, false);
    // Whatever the summary learned, its arm is valid; the stamp, when
    // it is still this wait's, is not older than the wait.
    assert!(summary_for(addr).arm() < ARMS);
    if let Some(at) = stamp {
        assert!(at >= learning.start_ticks);
    }
}

#[test]
fn switch_spin_beta_is_the_runnable_threads_per_cpu_within_its_range() {
    assert_eq!(switch_spin_beta(None), 1.0);
    assert_eq!(switch_spin_beta(Some(0.5)), 1.0);
    assert_eq!(switch_spin_beta(Some(f64::NAN)), 1.0);
    assert_eq!(switch_spin_beta(Some(2.5)), 2.5);
    assert_eq!(switch_spin_beta(Some(40.0)), MAX_SWITCH_SPIN_BETA);
}

/// Waits of 1.2 B: polled at full cost they teach blocking (`/b/0`
/// costs B, polling to 2 B costs 1.2 B); polled by yielding with
/// 4 runnable threads per CPU they cost 0.3 B, and polling to `B` is
/// cheapest. The limit drawn grows with `beta` likewise.
#[test]
fn a_yield_polled_wait_is_priced_in_switch_spinning_time() {
    let b = 100_000.0;
    // A summary of its own for each run (the static table's slots are
    // shared with the other tests' objects).
    let learn_with = |beta: f64| {
        let summary: &'static AdaptiveSummary = Box::leak(Box::new(AdaptiveSummary::new()));
        for _ in 0..40 {
            let (limit, learning) = Learning::begin_on(summary, 0, b, beta);
            assert!(limit <= beta * MAX_LIMIT_IN_B * b, "{limit}");
            learning.learn(1.2 * b, false, false, None, 0);
        }
        let (limit, _) = Learning::begin_on(summary, 0, b, beta);
        (summary.arm(), limit)
    };
    assert_eq!(learn_with(1.0).0, ARM_BLOCK);
    let (arm, limit) = learn_with(4.0);
    assert_eq!(arm, ARM_POLL_B);
    assert_eq!(limit, 4.0 * b);
}

#[test]
fn slots_spread_nearby_objects() {
    for stride in [4, 64, 128, 4096] {
        let used: std::collections::HashSet<usize> = (0..64)
            .map(|i| slot_of(0x7f00_0000_0000 + i * stride))
            .collect();
        assert!(used.len() > 40, "stride {stride}: {}", used.len());
    }
    assert!((0..1000).all(|i| slot_of(i * 4) < SLOTS));
}
