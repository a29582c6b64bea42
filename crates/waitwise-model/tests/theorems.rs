//! Lim & Agarwal's Theorems 1-4 and Karlin et al.'s randomized bound as property tests
//! over parameter grids.

use waitwise_model::algorithm::{
    WaitingAlgorithm, ALPHA_EXPONENTIAL, ALPHA_UNIFORM, E_OVER_E_MINUS_1, GOLDEN_RATIO,
};
use waitwise_model::cost::{competitive_factor, expected_cost};
use waitwise_model::distribution::WaitDistribution;
use waitwise_model::minimax::{optimal_alpha, worst_case, MinimaxModel};
use waitwise_model::randomized::ratio_for_wait;

const B: f64 = 500.0;

/// `n` log-spaced values from `lo` to `hi`.
fn log_grid(lo: f64, hi: f64, n: u32) -> Vec<f64> {
    (0..n)
        .map(|i| lo * (hi / lo).powf(f64::from(i) / f64::from(n - 1)))
        .collect()
}

fn ss(alpha: f64, beta: f64) -> WaitingAlgorithm {
    WaitingAlgorithm::switch_spin_two_phase(alpha, beta).unwrap()
}

/// Theorem 1: `E[/b/0] <= E[Ss/b/alpha] <= E[Ss//inf]` when `lambda beta B <= 1`,
/// reversed when `>= 1`.
#[test]
fn theorem_1_two_phase_lies_between_block_and_spin() {
    let tol = 1e-9 * B;
    for beta in [1.0, 2.0, 4.0] {
        for x in log_grid(1e-3, 1e3, 121) {
            let d = WaitDistribution::exponential(x / (beta * B)).unwrap();
            let block = expected_cost(&WaitingAlgorithm::AlwaysBlock, &d, B).unwrap();
            let spin = expected_cost(&ss(f64::INFINITY, beta), &d, B).unwrap();
            for alpha in [
                0.01,
                0.1,
                0.3,
                ALPHA_EXPONENTIAL,
                ALPHA_UNIFORM,
                1.0,
                2.0,
                5.0,
                20.0,
            ] {
                let two = expected_cost(&ss(alpha, beta), &d, B).unwrap();
                if x <= 1.0 {
                    assert!(
                        block <= two + tol && two <= spin + tol,
                        "x={x} a={alpha}: {block} {two} {spin}"
                    );
                }
                if x >= 1.0 {
                    assert!(
                        block + tol >= two && two + tol >= spin,
                        "x={x} a={alpha}: {block} {two} {spin}"
                    );
                }
            }
        }
    }
}

/// Theorem 2: at `lambda beta B = 1` every alpha has competitive factor `e/(e-1)`.
#[test]
fn theorem_2_curves_meet_at_e_over_e_minus_1() {
    for beta in [1.0, 3.0] {
        let d = WaitDistribution::exponential(1.0 / (beta * B)).unwrap();
        for alpha in [0.0, 0.2, ALPHA_EXPONENTIAL, 1.0, 3.0, f64::INFINITY] {
            let f = competitive_factor(&ss(alpha, beta), &d, B).unwrap();
            assert!((f - E_OVER_E_MINUS_1).abs() < 1e-12, "alpha={alpha}: {f}");
        }
    }
}

/// Theorem 3: `alpha = ln(e-1)` never exceeds `e/(e-1)`, whatever lambda.
#[test]
fn theorem_3_optimal_exponential_alpha_is_bounded() {
    let alg = WaitingAlgorithm::two_phase(ALPHA_EXPONENTIAL).unwrap();
    for lambda_b in log_grid(1e-4, 1e4, 801) {
        let d = WaitDistribution::exponential(lambda_b / B).unwrap();
        let f = competitive_factor(&alg, &d, B).unwrap();
        assert!(f <= E_OVER_E_MINUS_1 + 1e-12, "lambda B = {lambda_b}: {f}");
    }
}

/// Theorem 4: `alpha = (sqrt5-1)/2` keeps the uniform factor at or below the golden
/// ratio, and any other alpha exceeds it for some U.
#[test]
fn theorem_4_golden_alpha_is_optimal_for_uniform_waits() {
    let golden = WaitingAlgorithm::two_phase(ALPHA_UNIFORM).unwrap();
    for u_over_b in log_grid(1e-4, 1e4, 801) {
        let d = WaitDistribution::uniform(u_over_b * B).unwrap();
        let f = competitive_factor(&golden, &d, B).unwrap();
        assert!(f <= GOLDEN_RATIO + 1e-12, "U/B = {u_over_b}: {f}");
    }
    let mut alpha = 0.0;
    while alpha <= 3.0 {
        if (alpha - ALPHA_UNIFORM).abs() > 1e-3 {
            let alg = WaitingAlgorithm::two_phase(alpha).unwrap();
            let worst = log_grid(1e-3, 1e7, 401)
                .into_iter()
                .map(|u| {
                    competitive_factor(&alg, &WaitDistribution::uniform(u * B).unwrap(), B).unwrap()
                })
                .fold(0.0, f64::max);
            assert!(worst > GOLDEN_RATIO, "alpha={alpha}: worst {worst}");
        }
        alpha += 0.01;
    }
}

/// The minimax search recovers Theorems 3 and 4 to 3 decimals.
#[test]
fn minimax_finds_the_paper_alphas() {
    let e = optimal_alpha(&MinimaxModel::Exponential).unwrap();
    assert_eq!(format!("{:.3}", e.alpha), "0.541", "{e:?}");
    assert!((e.alpha - 0.5413).abs() < 1e-3);
    let u = optimal_alpha(&MinimaxModel::Uniform).unwrap();
    assert_eq!(format!("{:.3}", u.alpha), "0.618", "{u:?}");
    assert!((u.alpha - 0.6180).abs() < 1e-3);
    // And the static defaults' worst cases are the theorems' bounds.
    assert!(
        (worst_case(&MinimaxModel::Exponential, ALPHA_EXPONENTIAL)
            .unwrap()
            .factor
            - E_OVER_E_MINUS_1)
            .abs()
            < 1e-9
    );
    assert!(
        (worst_case(&MinimaxModel::Uniform, ALPHA_UNIFORM)
            .unwrap()
            .factor
            - GOLDEN_RATIO)
            .abs()
            < 1e-6
    );
}

/// Karlin et al.: the randomized policy's expected ratio is `e/(e-1)` for every t in (0, B].
#[test]
fn randomized_ratio_is_e_over_e_minus_1_for_every_wait() {
    for t in log_grid(1e-6 * B, B, 200)
        .into_iter()
        .chain((1..=100).map(|i| B * f64::from(i) / 100.0))
    {
        let r = ratio_for_wait(t, B).unwrap();
        assert!((r - E_OVER_E_MINUS_1).abs() < 1e-3, "t = {t}: {r}");
    }
}
