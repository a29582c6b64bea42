//! Tests of the calibration experiment: its accounting, its cells' `B`,
//! its findings and tiny runs.

use super::accounting::*;
use super::cells::*;
use super::config::*;
use super::findings::*;
use super::measurement::*;
use super::ordering::*;
use super::result::*;
use super::run::*;
use super::sample::*;
use super::summary::*;
use super::tracked_cost::*;
use crate::experiments::ExperimentOutput;
use waitwise_model::adaptive;
use waitwise_model::algorithm::WaitingAlgorithm;
use waitwise_model::cost;
use waitwise_model::distribution::WaitDistribution;
use waitwise_model::rng::Rng;

/// The report runs calibrate beside experiments that read the real
/// idle-CPU signal: it pins the model's regime for the run only, and
/// a run outside it says so.
#[test]
fn the_model_regime_pins_the_signal_busy_and_puts_it_back() {
    use waitwise::policy::idle_extension::forced_demand;
    let mut cfg = Config::tiny();
    cfg.dists = vec![CalibrationDist::Exponential];
    cfg.scales = vec![1.0];
    cfg.policies = vec!["adapt/b".into()];
    let before = forced_demand();
    let res = run_in_model_regime(&cfg);
    assert_eq!(res.idle_signal, "busy");
    assert_eq!(forced_demand(), before);
    let outside = |res: &CalibrationResult| {
        res.notes()
            .iter()
            .any(|n| n.starts_with("Departure: adapt/b's idle-CPU signal was"))
    };
    assert!(!outside(&res));
    let mut auto = res.clone();
    auto.idle_signal = "auto".into();
    assert!(outside(&auto));
    assert_eq!(serde_json::to_value(&auto).unwrap()["idle_signal"], "auto");
}

#[test]
fn tiny_run_fills_the_table() {
    let mut cfg = Config::tiny();
    cfg.dists = vec![CalibrationDist::Exponential];
    cfg.policies.push("bogus".into());
    let res = run(&cfg);
    assert_eq!(res.rows.len(), cfg.scales.len() * cfg.policies.len());
    assert!(res.block_cost.ns > 0.0);
    let tables = res.tables();
    assert_eq!(tables.len(), 2);
    for t in &tables {
        crate::export::agreement::assert_exports_agree(t);
    }
    let keys = tables[0].header_keys();
    for key in [
        "dist",
        "scale",
        "policy",
        "measured_factor",
        "predicted_factor",
        "ratio",
    ] {
        assert!(keys.iter().any(|k| k == key), "{key} not in {keys:?}");
    }
    assert_eq!(tables[0].rows.len(), res.rows.len());
    assert_eq!(tables[1].rows.len(), cfg.scales.len());
    for r in &res.rows {
        if r.policy == "bogus" {
            assert!(r.not_available.is_some() && r.measured_factor.is_none());
        } else {
            assert!(r.rounds >= MIN_ROUNDS, "{r:?}");
            let m = r.measured_factor.unwrap();
            assert!(m.is_finite() && m > 0.0, "{r:?}");
            assert!(r.predicted_factor.unwrap() >= 1.0 - 1e-9);
        }
    }
    let always_block = res
        .rows
        .iter()
        .find(|r| r.policy == "/b/0" && r.scale == 0.3)
        .unwrap();
    assert!(always_block.block_fraction > 0.5, "{always_block:?}");
    let spin = res.rows.iter().find(|r| r.policy == "s//inf").unwrap();
    assert_eq!(spin.block_fraction, 0.0);
    let json = serde_json::to_value(&res).unwrap();
    for key in ["config", "block_cost", "rows", "ordering", "block_cpu_ns"] {
        assert!(json.get(key).is_some(), "{key}");
    }
    assert_eq!(res.charts().len(), 1);
    assert!(res.notes().iter().any(|n| n.starts_with("Ordering:")));
}

#[test]
fn a_cell_whose_blocks_cost_more_is_judged_at_its_real_scale() {
    let mut cfg = Config::tiny();
    cfg.dists = vec![CalibrationDist::Exponential];
    cfg.scales = vec![0.3];
    cfg.policies = vec!["/b/0".into(), "adapt/b".into()];
    let mut res = run(&cfg);
    let b = res.block_cost.ns;
    // The floor is the law the waits were drawn from (in units of the
    // B the cell's references cost as it ran, never under the
    // process's) with the B measured beside the cell.
    for r in res.rows.iter().filter(|r| r.rounds > 0) {
        assert!(r.wait_block_ns >= b, "{r:?}");
        let drawn = CalibrationDist::Exponential
            .law(0.3, r.wait_block_ns)
            .unwrap();
        let want = cost::online_floor(&drawn, r.cell_block_ns).unwrap();
        assert_eq!(r.online_floor, Some(want), "{r:?}");
    }
    let law = CalibrationDist::Exponential.law(0.3, b).unwrap();
    let adaptive_note = |res: &CalibrationResult| {
        res.notes()
            .into_iter()
            .find(|n| n.starts_with("Adaptive:"))
            .unwrap()
    };
    // Blocks at the process's B: lambda*B is 0.3, where adapt/b's
    // model (1.19) allows the target.
    for r in &mut res.rows {
        r.rounds = r.rounds.max(1);
        r.measured_factor = Some(1.2);
        r.cell_block_ns = b;
        r.wait_block_ns = b;
    }
    assert!(res.adaptive_with_cell_b(&res.rows[1]).unwrap() < STATIONARY_TARGET);
    let note = adaptive_note(&res);
    assert!(note.contains("is beyond 1.25: none here"), "{note}");
    assert!(
        note.contains("allows 1.25 1.200 (exponential lambda*B=0.3; within 1.25; floor "),
        "{note}"
    );
    // Beside it, the best any static policy measured in that cell.
    assert!(
        note.contains(", the cell's best static policy /b/0 measured 1.200)"),
        "{note}"
    );
    // Blocks at 3.72 times the B the waits were drawn with (a VM's
    // sleeps can cost that much more): the real lambda*B is 1.1, whose
    // floor no on-line policy beats is 1.487.
    for r in &mut res.rows {
        r.cell_block_ns = 3.72 * b;
        r.online_floor = cost::online_floor(&law, r.cell_block_ns).ok();
    }
    let floor = res.rows[1].online_floor.unwrap();
    assert!((floor - 1.487).abs() < 0.001, "{floor}");
    let note = adaptive_note(&res);
    assert!(
        note.contains(
            "beyond 1.25: exponential lambda*B=0.3 (its B 3.72x the B its waits were drawn with: floor 1.487"
        ),
        "{note}"
    );
    assert!(note.contains("allows 1.25 none"), "{note}");
}

/// A cell whose static policies measured more than 10% off their model
/// on the same waits (median) is not judged (the measurement failed
/// there: on the VM's fast wake-up mode, a polled cell's waits of
/// ~160 ns), and the note says so.
#[test]
fn a_cell_whose_static_policies_miss_the_model_is_not_judged() {
    let mut res = exponential_rows(&[0.3, 10.0], &["/b/0", "s//inf", "s/b/1", "adapt/b"]);
    let b = res.block_cost.ns;
    for r in &mut res.rows {
        r.cell_block_ns = b;
        r.wait_block_ns = b;
        r.ratio = Some(1.0);
        r.measured_factor = Some(1.2);
        r.mean_wait_ns = 164.0;
        if r.scale == 10.0 && r.policy != "adapt/b" {
            r.ratio = Some(if r.policy == "s//inf" { 1.33 } else { 1.15 });
        }
        if r.scale == 10.0 && r.policy == "adapt/b" {
            r.measured_factor = Some(1.4);
        }
    }
    let note = res
        .notes()
        .into_iter()
        .find(|n| n.starts_with("Adaptive:"))
        .unwrap();
    assert!(
        note.contains("allows 1.25 1.200 (exponential lambda*B=0.3; within 1.25"),
        "{note}"
    );
    assert!(
        note.contains(
            "Cells not judged, where the static policies measured more than 10% off the model on the same waits (the measurement fails there, not a policy; adapt/b's own work per wait is in the departures below): exponential lambda*B=10 (mean wait 164 ns; the static policies +15% off the model, median)."
        ),
        "{note}"
    );
    // One static policy off on its own does not void a cell.
    for r in res
        .rows
        .iter_mut()
        .filter(|r| r.scale == 10.0 && r.policy != "s//inf")
    {
        r.ratio = Some(1.0);
    }
    let note = res
        .notes()
        .into_iter()
        .find(|n| n.starts_with("Adaptive:"))
        .unwrap();
    assert!(!note.contains("Cells not judged"), "{note}");
    assert!(
        note.contains("allows 1.25 1.400 (exponential lambda*B=10; NOT within 1.25"),
        "{note}"
    );
    // Its factor is still the worst stationary one reported.
    assert!(note.contains("Its worst stationary cell 1.400"), "{note}");
}

/// A tiny run of exponential cells at `scales` with `policies`, every
/// row then marked measured (at least one round, available), for
/// tests that set the rows' figures by hand.
fn exponential_rows(scales: &[f64], policies: &[&str]) -> CalibrationResult {
    let mut cfg = Config::tiny();
    cfg.dists = vec![CalibrationDist::Exponential];
    cfg.scales = scales.to_vec();
    cfg.policies = policies.iter().map(|&p| p.into()).collect();
    let mut res = run(&cfg);
    for r in &mut res.rows {
        r.rounds = r.rounds.max(1);
        r.not_available = None;
    }
    res
}

/// Where adapt/b and s//inf both polled every wait, adapt/b's extra
/// CPU per wait is its bookkeeping; the note gives it and what the
/// mean factor would be without it.
#[test]
fn adapt_b_bookkeeping_is_read_from_the_cells_where_both_polled() {
    let mut res = exponential_rows(&[3.0, 10.0], &["s//inf", "adapt/b"]);
    for r in &mut res.rows {
        r.block_fraction = 0.0;
        r.mean_wait_ns = 400.0;
        let extra = if r.policy == "adapt/b" {
            if r.scale == 3.0 {
                90.0
            } else {
                110.0
            }
        } else {
            0.0
        };
        r.mean_poll_cpu_ns = 410.0 + extra;
        r.mean_cost_ns = r.mean_poll_cpu_ns;
        r.measured_factor = Some(r.mean_cost_ns / 400.0);
    }
    let k = res.adaptive_bookkeeping().unwrap();
    assert_eq!(k.cells, 2);
    assert_eq!((k.lo_ns, k.hi_ns), (90.0, 110.0));
    // The median of two is the upper one here.
    assert_eq!(k.per_wait_ns, 110.0);
    // (500 - 110) / 400 and (520 - 110) / 400.
    assert!((k.mean_factor_without - (0.975 + 1.025) / 2.0).abs() < 1e-9);
    let note = res
        .notes()
        .into_iter()
        .find(|n| n.starts_with("Departure: adapt/b's own work"))
        .unwrap();
    assert!(note.contains("In the 2 cell(s)"), "{note}");
    assert!(note.contains("110 ns more per wait"), "{note}");
    // A cell where adapt/b blocked teaches nothing about it.
    for r in &mut res.rows {
        if r.policy == "adapt/b" {
            r.block_fraction = 0.5;
        }
    }
    assert!(res.adaptive_bookkeeping().is_none());
}

/// Where adapt/b and /b/0 both blocked nearly every wait, adapt/b's
/// cost beyond its model, less /b/0's beyond its own, is its work
/// around the block; the note gives it and each cell's factor without
/// it.
#[test]
fn adapt_b_departure_is_read_from_the_cells_where_both_blocked() {
    let mut res = exponential_rows(&[0.1, 0.3], &["/b/0", "adapt/b"]);
    for r in &mut res.rows {
        r.block_fraction = 0.99;
        r.mean_optimal_ns = 1000.0;
        let (model, beyond) = match (r.policy.as_str(), r.scale == 0.1) {
            ("adapt/b", true) => (1.05, 200.0),
            ("adapt/b", false) => (1.15, 300.0),
            _ => (1.0, 10.0),
        };
        r.predicted_sample_factor = Some(model);
        r.mean_cost_ns = model * 1000.0 + beyond;
        r.measured_factor = Some(r.mean_cost_ns / 1000.0);
        r.ratio = Some(r.mean_cost_ns / (model * 1000.0));
    }
    let k = res.adaptive_blocked_departure().unwrap();
    assert_eq!(k.cells.len(), 2);
    assert_eq!((k.lo_ns, k.hi_ns), (190.0, 290.0));
    // The median of two is the upper one here.
    assert_eq!(k.per_wait_ns, 290.0);
    // lambda*B = 0.1: 1.25 less 0.99 x 290 ns on 1000 ns of optimum.
    let (name, f, without) = &k.cells[0];
    assert_eq!(name, "exponential lambda*B=0.1");
    assert!((f - 1.25).abs() < 1e-9 && (without - (1.25 - 0.2871)).abs() < 1e-9);
    let note = res
        .notes()
        .into_iter()
        .find(|n| n.starts_with("Departure: where blocking"))
        .unwrap();
    assert!(note.contains("In the 2 cell(s)"), "{note}");
    assert!(note.contains("by 290 ns (median; 190 to 290)"), "{note}");
    assert!(
        note.contains("exponential lambda*B=0.3 1.450 -> 1.163"),
        "{note}"
    );
    // A cell where adapt/b polled teaches nothing about it.
    for r in &mut res.rows {
        if r.policy == "adapt/b" {
            r.block_fraction = 0.5;
        }
    }
    assert!(res.adaptive_blocked_departure().is_none());
}

/// Where a static policy's mean is ahead of adapt/b's, the note sets
/// it beside the mean of the cells' on-line floors, and says when it
/// is at the floor (nothing left for any on-line policy to win).
#[test]
fn a_static_policy_ahead_of_adapt_b_is_set_beside_the_mean_floor() {
    let mut res = exponential_rows(&[3.0, 10.0], &["s//inf", "s/b/1", "adapt/b"]);
    for r in &mut res.rows {
        r.online_floor = Some(if r.scale == 3.0 { 1.02 } else { 1.04 });
        r.measured_factor = Some(match r.policy.as_str() {
            "s//inf" => 1.05,
            "s/b/1" => 1.4,
            _ => 1.2,
        });
    }
    let adaptive = |res: &CalibrationResult| {
        res.notes()
            .into_iter()
            .find(|n| n.starts_with("Adaptive:"))
            .unwrap()
    };
    let note = adaptive(&res);
    assert!(note.contains("NOT below"), "{note}");
    assert!(
        note.contains("Ahead of it: s//inf 1.050 (+0.020 from the mean floor)"),
        "{note}"
    );
    assert!(note.contains("floors is 1.030"), "{note}");
    assert!(note.contains("such a policy is at it"), "{note}");
    assert!(!note.contains("s/b/1 1.400 ("), "{note}");
    // Ahead but well above the floor: no "at it".
    for r in &mut res.rows {
        if r.policy == "s//inf" {
            r.measured_factor = Some(1.15);
        }
    }
    let note = adaptive(&res);
    assert!(note.contains("(+0.120 from the mean floor)"), "{note}");
    assert!(!note.contains("such a policy is at it"), "{note}");
    // Nobody ahead: no comparison; a cell without a floor: none either.
    for r in &mut res.rows {
        if r.policy == "s//inf" {
            r.measured_factor = Some(1.3);
        }
    }
    assert!(!adaptive(&res).contains("Ahead of it"));
    res.rows[0].online_floor = None;
    assert!(res.mean_online_floor().is_some());
    let adapt_row = res.rows.iter().position(|r| r.policy == "adapt/b").unwrap();
    res.rows[adapt_row].online_floor = None;
    assert!(res.mean_online_floor().is_none());
}

#[test]
fn switching_cell_runs_adapt_b_beside_rand_b() {
    let mut cfg = Config::tiny();
    cfg.dists = vec![CalibrationDist::Switching];
    cfg.policies = vec!["rand/b".into(), "adapt/b".into()];
    let res = run(&cfg);
    assert_eq!(res.rows.len(), 2);
    for r in &res.rows {
        assert_eq!(r.dist, CalibrationDist::Switching);
        assert_eq!(r.scale, SWITCHING_PERIOD as f64);
        assert!(r.measured_factor.is_some(), "{r:?}");
    }
    let predicted = |p: &str| {
        res.rows
            .iter()
            .find(|r| r.policy == p)
            .and_then(|r| r.predicted_factor)
            .unwrap()
    };
    // The model: rand/b e/(e-1) on any law; adapt/b about 1.19.
    assert!((predicted("rand/b") - 1.582).abs() < 0.01);
    assert!(predicted("adapt/b") < 1.3, "{}", predicted("adapt/b"));
    let factors = res.policy_factors();
    assert_eq!(factors.len(), 2);
    assert!(factors
        .iter()
        .all(|f| f.switching.is_some() && f.worst_stationary.is_none()));
    assert!(res.notes().iter().any(|n| n.starts_with("Adaptive:")));
    // Its floor: each phase's law with the B its blocks cost.
    for r in &res.rows {
        let floor = r.online_floor.expect("the switching cell has a floor");
        assert!(floor >= 1.0, "{r:?}");
    }
    assert!(res.notes().iter().any(|n| n.contains("floor")));
    assert!(res.charts().is_empty());
}

/// The model's adapt/b is the library's: same menu, same costs, same
/// decisions on the same waits.
#[test]
fn the_model_and_the_library_learn_alike() {
    use waitwise::policy::adaptive as lib;
    assert_eq!(lib::ARMS, adaptive::ARMS);
    assert_eq!(lib::TRUNCATED_SCALES, adaptive::SCALES);
    assert_eq!(lib::DECAY_SHIFT, adaptive::DECAY_SHIFT);
    assert_eq!(lib::START_ARM, adaptive::START_ARM);
    assert_eq!(lib::ARM_POLL_B, adaptive::ARM_POLL_B);
    assert_eq!(lib::ARM_POLL_2B, adaptive::ARM_POLL_2B);
    assert_eq!(lib::WORST_CASE_FACTOR, adaptive::WORST_CASE_FACTOR);
    assert_eq!(lib::ARM_BLOCK, adaptive::ARM_BLOCK);
    assert_eq!(lib::CREDIT_FALLBACK_ARM, adaptive::CREDIT_FALLBACK_ARM);
    assert_eq!(lib::CREDIT_CAP_IN_B, adaptive::CREDIT_CAP_IN_B);
    for arm in 0..lib::ARMS {
        for x in [1e-6, 0.01, 0.5, 1.0, 1.7, 3.0] {
            let l = lib::credit_earned(arm, x);
            assert!(
                (l - adaptive::credit_earned(arm, x)).abs() < 1e-12,
                "{arm} {x}"
            );
        }
    }
    for arm in 0..lib::ARMS {
        for t in [
            0.0, 30.0, 200.0, 700.0, 1000.0, 1500.0, 2000.0, 2500.0, 5000.0,
        ] {
            let l = lib::arm_cost(arm, t / 1000.0) * 1000.0;
            assert!((l - adaptive::arm_cost(arm, t, 1000.0)).abs() < 1e-9);
        }
    }
    let summary = lib::AdaptiveSummary::new();
    let mut learner = adaptive::Learner::new();
    let mut rng = Rng::new(3);
    for i in 0..2000 {
        let t = [50.0, 20_000.0, 2_400.0][(i / 100) % 3] * rng.next_f64();
        summary.record(t, 1000.0);
        learner.record(t, 1000.0);
        if i % 100 == 99 {
            assert_eq!(summary.arm(), learner.arm(), "after wait {i}");
        }
    }
}

#[test]
fn a_static_policy_switching_is_its_laws_in_equal_parts() {
    let laws = [
        WaitDistribution::exponential(10.0).unwrap(),
        WaitDistribution::exponential(0.1).unwrap(),
    ];
    let alg = WaitingAlgorithm::AlwaysBlock;
    // /b/0 costs B per wait; the optimum E[min(t, B)] = (1 - e^-x)/lambda.
    let opt = (1.0 - (-10f64).exp()) / 10.0 + (1.0 - (-0.1f64).exp()) / 0.1;
    let f = switching_factor(&alg, &laws, 200, 1.0, 1).unwrap();
    assert!((f - 2.0 / opt).abs() < 1e-9, "{f}");
}

/// The accounting of a cell with `B` = 1 µs (process and cell) whose
/// references burned 2 µs of kernel CPU per block (99th percentile 3
/// µs) and `hand_off` (median, 99th percentile) per hand-off.
fn accounting_1us(hand_off: (f64, f64)) -> CellPrices {
    CellPrices {
        b: 1_000.0,
        b_cell: 1_000.0,
        clock_overhead: 0.0,
        block_cpu: BlockCpu {
            mean_ns: 2_000.0,
            median_ns: 2_000.0,
            cap_ns: 3_000.0,
        },
        hand_off: HandOffCpu {
            median_ns: hand_off.0,
            cap_ns: hand_off.1,
        },
    }
}

fn sample(cpu_ns: f64, wait_ns: f64, blocked: bool) -> Sample {
    Sample {
        wait_ns,
        drawn_ns: wait_ns,
        wait_b_ns: 1_000.0,
        cpu_ns,
        blocked,
        wake_latency_ns: 0.0,
        phase: 0,
        poll_cap_ns: None,
    }
}

/// The `B` a cell's waits follow: the `/b/0` references' wake-up
/// latency less the at-once ones', a plain mean with the pilot's `B`
/// at first, a moving one past `TRACKING_SPAN` references.
#[test]
fn a_cells_tracked_b_follows_its_references() {
    let mut t = TrackedBlockCost::new(20_000.0, 2_000.0, 64_000.0);
    assert_eq!(t.b(), 20_000.0);
    // The first hand-off does not move B: the start was a B already.
    t.hand_off(500.0);
    assert!((t.b() - 20_000.0).abs() < 1e-9, "{}", t.b());
    // Blocks that cost 30 us (latency 30.5 us): at first the plain
    // mean of the pilot's and theirs, so the cell's level is found
    // within a few references.
    for _ in 0..15 {
        t.block(30_500.0);
        t.hand_off(500.0);
    }
    let want = (20_000.0 + 15.0 * 30_000.0) / 16.0;
    assert!((t.b() - want).abs() < 1e-6, "{} {want}", t.b());
    for _ in 15..1_500 {
        t.block(30_500.0);
        t.hand_off(500.0);
    }
    assert!((t.b() - 30_000.0).abs() < 10.0, "{}", t.b());
    // Past the span, one reference, a host stall too, moves B by at
    // most 1/TRACKING_SPAN of TRACKING_OUTLIER times the mean.
    let before = t.b();
    t.block(1e9);
    let most = before + (TRACKING_OUTLIER - 1.0) * 30_500.0 / f64::from(TRACKING_SPAN);
    assert!(t.b() > before && t.b() <= most + 1.0, "{} {most}", t.b());
    // Within its bounds whatever the references say.
    for _ in 0..5_000 {
        t.block(1e6);
    }
    assert_eq!(t.b(), 64_000.0);
    for _ in 0..5_000 {
        t.block(100.0);
    }
    assert_eq!(t.b(), 2_000.0);
    // Bad bounds or latencies: no panic.
    let mut t = TrackedBlockCost::new(f64::NAN, 5.0, 1.0);
    t.block(f64::INFINITY);
    t.hand_off(-1.0);
    let _ = t.b();
}

/// The `B` of each law's drawn waits, for its floor: the mean of what
/// its measured cycles followed, or where it started without one.
#[test]
fn a_cells_drawn_b_is_the_mean_its_cycles_followed() {
    let at = |wait_b_ns: f64, phase: usize| Sample {
        wait_b_ns,
        phase,
        ..sample(0.0, 0.0, true)
    };
    let samples = [at(10_000.0, 0), at(20_000.0, 0), at(40_000.0, 1)];
    assert_eq!(
        followed_block_costs(&samples, &[1.0, 2.0, 3.0]),
        [15_000.0, 40_000.0, 3.0]
    );
    // The waits of a cycle are its drawn ones in units of its tracked B.
    let waits = CellWaits::new(&[3_000.0, 6_000.0], &[1_000.0, 2_000.0], 1, 1_000.0);
    assert_eq!((waits.least_b_ns, waits.most_b_ns), (1_000.0, 32_000.0));
    assert_eq!((waits.phase(0), waits.phase(1), waits.phase(2)), (0, 1, 0));
    assert_eq!((waits.drawn_b(1), waits.drawn_b(5)), (2_000.0, 2_000.0));
}

#[test]
fn cell_block_cost_is_the_sleeping_wake_up_less_the_polling_one() {
    let woke = |latency: f64, blocked: bool| Sample {
        wake_latency_ns: latency,
        ..sample(0.0, 0.0, blocked)
    };
    let sleeps = [woke(30_000.0, true), woke(34_000.0, true), woke(1.0, false)];
    let polls = [woke(100.0, false), woke(200.0, false), woke(9_000.0, false)];
    // mean 32 us (the 99th percentile of two is the first: 30 us caps
    // 34 us) less the polling median 200 ns.
    assert_eq!(cell_block_cost_ns(&sleeps, &polls), Some(30_000.0 - 200.0));
    assert_eq!(cell_block_cost_ns(&[woke(5.0, false)], &polls), None);
}

#[test]
fn a_policy_tuned_for_one_b_is_priced_with_the_cells() {
    // s/b/0.5 tuned for B = 1000 polls 500 ns; with blocks costing 2000
    // it is s/b/0.25 there: a 600 ns wait costs 500 + 2000.
    let alg: WaitingAlgorithm = "s/b/0.5".parse().unwrap();
    assert_eq!(
        cost_in_cell(&alg, 600.0, 1_000.0, 2_000.0).unwrap(),
        2_500.0
    );
    assert_eq!(cost_in_cell(&alg, 400.0, 1_000.0, 2_000.0).unwrap(), 400.0);
    // With the same B the cell's price is the model's.
    let rand = WaitingAlgorithm::Randomized;
    let same = cost_in_cell(&rand, 300.0, 1_000.0, 1_000.0).unwrap();
    assert!((same - cost::cost_for_wait(&rand, 300.0, 1_000.0).unwrap()).abs() < 1e-9);
}

/// adapt/b's objects learn the B their blocks cost: where blocks cost
/// ten times the process's B, 5 us waits are short ones (x = 0.5 of
/// the cell's B), and the model's adapt/b on them polls, as the
/// library's does once it has learned; priced with the process's B it
/// would block them (x = 5) and predict three times the optimum.
#[test]
fn adapt_b_is_predicted_with_the_cells_b() {
    let alg = WaitingAlgorithm::Adaptive;
    let law = WaitDistribution::uniform(10_000.0).unwrap();
    let acc = CellPrices {
        b: 1_000.0,
        b_cell: 10_000.0,
        clock_overhead: 0.0,
        block_cpu: BlockCpu {
            mean_ns: 0.0,
            median_ns: 0.0,
            cap_ns: 0.0,
        },
        hand_off: HandOffCpu {
            median_ns: 0.0,
            cap_ns: 0.0,
        },
    };
    let samples: Vec<Sample> = (0..400).map(|_| sample(5_000.0, 5_000.0, false)).collect();
    let mut row = Row::unmeasured(CalibrationDist::Uniform, 10.0, "adapt/b");
    summarize(&mut row, &samples, &alg, &law, &law, &[acc]);
    assert_eq!(row.measured_factor, Some(1.0));
    let predicted = row.predicted_sample_factor.unwrap();
    assert!((1.0..1.1).contains(&predicted), "{predicted}");
}

#[test]
fn block_cpu_caps_the_top_percent() {
    // 99 blocks of 10 us and one of 1 ms: the outlier counts at the
    // 99th percentile (10 us), not at 1 ms.
    let mut refs: Vec<Sample> = (0..99).map(|_| sample(10_100.0, 0.0, true)).collect();
    refs.push(sample(1_000_100.0, 0.0, true));
    refs.push(sample(50.0, 0.0, false)); // did not block: ignored
    let b = block_cpu_ns(&refs, 100.0);
    assert_eq!(b.cap_ns, 10_000.0);
    assert_eq!(b.mean_ns, 10_000.0);
    assert_eq!(b.median_ns, 10_000.0);
}

#[test]
fn hand_off_cpu_is_the_cpu_beyond_the_wait() {
    let refs = [
        sample(700.0, 100.0, false),
        sample(800.0, 100.0, false),
        sample(90_000.0, 100.0, false), // an interrupt: not fixed
    ];
    let h = hand_off_cpu_ns(&refs, 200.0);
    assert_eq!(h.median_ns, 500.0);
    assert_eq!(h.cap_ns, 500.0); // 99th percentile of 3: the middle one
    assert_eq!(
        hand_off_cpu_ns(&[sample(100.0, 500.0, false)], 0.0).median_ns,
        0.0
    );
}

#[test]
fn blocked_waits_count_at_most_their_poll_limit_plus_the_cap() {
    let alg: WaitingAlgorithm = "s/b/0.5".parse().unwrap();
    let law = WaitDistribution::uniform(10_000.0).unwrap();
    let mut row = Row::unmeasured(CalibrationDist::Uniform, 1.0, "s/b/0.5");
    // B = 1000: a blocked wait polls at most 500 ns. One normal block
    // (500 + 2000 of CPU), one outlier (1 ms), one polled wait of 300 ns
    // and one polled wait charged 50 us.
    let samples = [
        sample(2_500.0, 5_000.0, true),
        sample(1_000_000.0, 5_000.0, true),
        sample(400.0, 300.0, false),
        sample(50_000.0, 300.0, false),
    ];
    let acc = accounting_1us((100.0, 200.0));
    summarize(&mut row, &samples, &alg, &law, &law, &[acc]);
    assert_eq!(row.outliers, 2);
    assert_eq!(row.hand_off_cpu_ns, 100.0);
    // polls: 500, min(1e6, 500 + 3000) - 2000 = 1500, 400 - 100 = 300,
    // min(50000, 300 + 200) - 100 = 400.
    let polls = 500.0 + 1_500.0 + 300.0 + 400.0;
    assert!((row.mean_poll_cpu_ns - polls / 4.0).abs() < 1e-9);
    assert!((row.mean_cost_ns - (polls + 2_000.0) / 4.0).abs() < 1e-9);
}

/// `adapt/b`'s blocked waits are capped at the longest limit the arm
/// they ran could draw (`Sample::poll_cap_ns`), not at its longest arm
/// with the largest object `B` (32 B): a kernel-path outlier counts
/// as much as in a static policy's cell.
#[test]
fn adapt_b_blocks_count_at_most_their_arms_limit_plus_the_cap() {
    let alg = WaitingAlgorithm::Adaptive;
    let law = WaitDistribution::uniform(10_000.0).unwrap();
    let acc = accounting_1us((100.0, 200.0));
    let blocked = |cpu: f64, cap: Option<f64>| Sample {
        poll_cap_ns: cap,
        ..sample(cpu, 5_000.0, true)
    };
    // F(1/32) with B = 1000: at most 31.25 ns of polling. A normal
    // block (2,020 ns of CPU) and an outlier (1 ms).
    let mut row = Row::unmeasured(CalibrationDist::Uniform, 10.0, "adapt/b");
    let samples = [
        blocked(2_020.0, Some(31.25)),
        blocked(1_000_000.0, Some(31.25)),
    ];
    summarize(&mut row, &samples, &alg, &law, &law, &[acc]);
    assert_eq!(row.outliers, 1);
    // polls: 20, min(1e6, 31.25 + 3000) - 2000 = 1031.25.
    assert!((row.mean_poll_cpu_ns - (20.0 + 1_031.25) / 2.0).abs() < 1e-9);
    // Without the arm's limit: 32 B + the cap.
    let mut row = Row::unmeasured(CalibrationDist::Uniform, 10.0, "adapt/b");
    let samples = [blocked(2_020.0, None), blocked(1_000_000.0, None)];
    summarize(&mut row, &samples, &alg, &law, &law, &[acc]);
    assert!((row.mean_poll_cpu_ns - (20.0 + 33_000.0) / 2.0).abs() < 1e-9);
}

/// A cell's laws scaled each with its own `B`: the waits of one stream
/// are those of the process's `B` stretched by the ratio, so the
/// policies see the same waits in units of `B` whatever the pilot
/// found.
#[test]
fn a_cells_waits_are_drawn_in_units_of_its_pilots_b() {
    let (laws, period) = dist_laws_scaled(CalibrationDist::Uniform, 3.0, &[1_000.0]).unwrap();
    let base = draw_waits(&laws, period, 50, 7, 3);
    let (laws, _) = dist_laws_scaled(CalibrationDist::Uniform, 3.0, &[2_500.0]).unwrap();
    let stretched = draw_waits(&laws, period, 50, 7, 3);
    for (a, b) in base.iter().zip(&stretched) {
        assert!((b - 2.5 * a).abs() < 1e-6 * b.max(1.0), "{a} {b}");
        assert!(*a <= 3_000.0);
    }
    // The switching cell: each law with its phase's B.
    let (laws, period) =
        dist_laws_scaled(CalibrationDist::Switching, 200.0, &[1_000.0, 4_000.0]).unwrap();
    assert_eq!(period, SWITCHING_PERIOD);
    let mean = |l: &WaitDistribution| {
        let mut rng = Rng::new(5);
        (0..20_000).map(|_| l.sample(&mut rng)).sum::<f64>() / 20_000.0
    };
    // lambda*B = 10 with B = 1 us, 0.1 with B = 4 us: means 100 ns, 40 us.
    assert!((mean(&laws[0]) / 100.0 - 1.0).abs() < 0.05);
    assert!((mean(&laws[1]) / 40_000.0 - 1.0).abs() < 0.05);
    // Past the B given, the last one.
    let (laws, _) = dist_laws_scaled(CalibrationDist::Switching, 200.0, &[1_000.0]).unwrap();
    assert!((mean(&laws[1]) / 10_000.0 - 1.0).abs() < 0.05);
    let mut m = vec![Measured {
        samples: vec![sample(1.0, 1.0, false); 5],
        lost_producer: false,
    }];
    assign_phases(&mut m, 1, 2, 2);
    let phases: Vec<usize> = m[0].samples.iter().map(|s| s.phase).collect();
    assert_eq!(phases, [0, 1, 1, 0, 0]);
}

/// A block's kernel CPU varies; a cell that blocks exactly like its
/// references polls nothing on average, even when single blocks burn
/// more or less than the references' mean.
#[test]
fn blocked_waits_are_not_floored_one_by_one() {
    let alg = WaitingAlgorithm::AlwaysBlock;
    let law = WaitDistribution::uniform(10_000.0).unwrap();
    let acc = accounting_1us((0.0, 0.0));
    let mut row = Row::unmeasured(CalibrationDist::Uniform, 1.0, "/b/0");
    let samples = [
        sample(1_000.0, 5_000.0, true),
        sample(3_000.0, 5_000.0, true),
    ];
    summarize(&mut row, &samples, &alg, &law, &law, &[acc]);
    assert_eq!(row.mean_poll_cpu_ns, 0.0);
    assert_eq!(row.measured_factor, Some(1.0));
    // A cell whose blocks all burn less than the mean polls nothing,
    // never a negative amount.
    let cheap = [sample(1_000.0, 5_000.0, true)];
    summarize(&mut row, &cheap, &alg, &law, &law, &[acc]);
    assert_eq!(row.mean_poll_cpu_ns, 0.0);
    assert_eq!(row.mean_cost_ns, 1_000.0);
}

/// The switching cell prices each phase with that phase's references:
/// cheap short-phase blocks do not lower what a long-phase block is
/// charged.
#[test]
fn each_phase_is_priced_with_its_own_references() {
    let alg = WaitingAlgorithm::AlwaysBlock;
    let law = WaitDistribution::exponential(1e-3).unwrap();
    let acc = |block_cpu: f64| CellPrices {
        b: 1_000.0,
        b_cell: 1_000.0,
        clock_overhead: 0.0,
        block_cpu: BlockCpu {
            mean_ns: block_cpu,
            median_ns: block_cpu,
            cap_ns: 2.0 * block_cpu,
        },
        hand_off: HandOffCpu {
            median_ns: 0.0,
            cap_ns: 0.0,
        },
    };
    let in_phase = |cpu: f64, phase: usize| Sample {
        phase,
        ..sample(cpu, 5_000.0, true)
    };
    let samples = [in_phase(500.0, 0), in_phase(3_000.0, 1)];
    let mut row = Row::unmeasured(CalibrationDist::Switching, 200.0, "/b/0");
    summarize(
        &mut row,
        &samples,
        &alg,
        &law,
        &law,
        &[acc(500.0), acc(3_000.0)],
    );
    assert_eq!(row.mean_poll_cpu_ns, 0.0);
    assert_eq!(row.cell_block_ns, 1_000.0);
    // One accounting for both (their mean, 1750): the long phase's
    // block looks like 1250 ns of polling, the short one's like -1250.
    summarize(&mut row, &samples, &alg, &law, &law, &[acc(1_750.0)]);
    assert_eq!(row.mean_poll_cpu_ns, 0.0);
}

#[test]
fn ordering_check_ignores_near_ties_and_reports_reversals() {
    let row = |policy: &str, predicted: f64, measured: f64| Row {
        rounds: 1,
        measured_factor: Some(measured),
        predicted_factor: Some(predicted),
        predicted_sample_factor: Some(predicted),
        ratio: Some(measured / predicted),
        ..Row::unmeasured(CalibrationDist::Uniform, 1.0, policy)
    };
    let rows = [row("a", 1.0, 1.2), row("b", 1.05, 1.1), row("c", 2.0, 1.5)];
    let refs: Vec<&Row> = rows.iter().collect();
    let c = ordering_check(CalibrationDist::Uniform, 1.0, &refs);
    // a-b is a near-tie; a-c agrees; b-c agrees.
    assert_eq!((c.decided_pairs, c.concordant_pairs), (2, 2));
    assert_eq!(c.predicted_order, ["a", "b", "c"]);
    assert_eq!(c.measured_order, ["b", "a", "c"]);
    let rows = [row("a", 1.0, 3.0), row("c", 2.0, 1.15)];
    let refs: Vec<&Row> = rows.iter().collect();
    let c = ordering_check(CalibrationDist::Uniform, 1.0, &refs);
    assert_eq!(
        (c.decided_pairs, c.concordant_pairs, c.violations.len()),
        (1, 0, 1)
    );
    // The same reversal with standard errors of 1 each: 1.85 apart is
    // under 2 x 1.41, a tie within noise.
    let noisy = |policy: &str, predicted: f64, measured: f64| Row {
        measured_factor_se: Some(1.0),
        ..row(policy, predicted, measured)
    };
    let rows = [noisy("a", 1.0, 3.0), noisy("c", 2.0, 1.15)];
    let refs: Vec<&Row> = rows.iter().collect();
    let c = ordering_check(CalibrationDist::Uniform, 1.0, &refs);
    assert_eq!((c.concordant_pairs, c.violations.len()), (1, 0));
    assert_eq!(c.ties_within_noise.len(), 1);
}

#[test]
fn ratio_standard_error_by_hand() {
    // x = 2y exactly: no spread, no error.
    let exact = [(2.0, 1.0), (4.0, 2.0), (6.0, 3.0)];
    assert_eq!(ratio_standard_error(&exact, 2.0), Some(0.0));
    // Residuals x - 1*y = -1, +1: sd sqrt(2), / sqrt(2) = 1, / mean y 2.
    let spread = [(1.0, 2.0), (3.0, 2.0)];
    let se = ratio_standard_error(&spread, 1.0).unwrap();
    assert!((se - 0.5).abs() < 1e-12, "{se}");
    assert_eq!(ratio_standard_error(&[(1.0, 1.0)], 1.0), None);
}
