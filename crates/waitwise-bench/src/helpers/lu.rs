//! Blocked LU decomposition (right-looking, no pivoting, in place) with
//! speculative precomputation (seed 000 section 4.4: 2048 x 2048, 10 x 10
//! blocks). The work is a list of phases: for each diagonal block, one
//! panel phase (factor the column panel, solve the row panel), then one
//! phase per block row of the trailing matrix (its rank-`b` update). A
//! helper one phase ahead issues prefetch hints ([`Prefetcher`]) for the
//! rows the next phase updates; it reads nothing, so the worker runs the
//! same arithmetic in the same order and the factors are bit-for-bit those
//! of the serial version.
//!
//! Matrices are generated diagonally dominant, so no pivoting is needed;
//! the tests check `L U = A` within `LU_TOLERANCE`.

use super::prefetch::{run_with_prefetching_helper, Prefetcher};
use super::HelperWork;
use waitwise::helper::{HelperConfig, Pinning, RunReport};
use waitwise_model::rng::Rng;

/// `max |(L U - A)_ij| <= LU_TOLERANCE * n * max |A_ij|`: backward error
/// of Gaussian elimination without pivoting on a diagonally dominant
/// matrix is a small multiple of `n` times the unit round-off (Higham,
/// *Accuracy and Stability of Numerical Algorithms*, Thm. 9.3); 1e-13 is
/// ~500 times the round-off.
pub const LU_TOLERANCE: f64 = 1e-13;

/// One phase of the blocked factorization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    /// Factor columns `k..k+b` below the diagonal and solve rows
    /// `k..k+b` right of it.
    Panel { k: usize },
    /// Update rows `i..i+b` of the trailing matrix with panel `k`.
    Update { k: usize, i: usize },
}

/// An `n x n` row-major matrix and the block size of its factorization.
#[derive(Clone, Debug, PartialEq)]
pub struct Lu {
    /// Order.
    pub n: usize,
    /// Block size.
    pub block: usize,
}

impl Lu {
    /// The phases, in order.
    fn tasks(&self) -> Vec<Task> {
        let (n, b) = (self.n, self.block.max(1));
        let mut t = Vec::new();
        for k in (0..n).step_by(b) {
            t.push(Task::Panel { k });
            for i in (k + b..n).step_by(b) {
                t.push(Task::Update { k, i });
            }
        }
        t
    }

    /// A diagonally dominant `n x n` matrix, deterministic in `seed`.
    pub fn matrix(&self, seed: u64) -> Vec<f64> {
        let n = self.n;
        let mut rng = Rng::new(seed);
        let mut a: Vec<f64> = (0..n * n).map(|_| rng.next_f64() - 0.5).collect();
        for i in 0..n {
            a[i * n + i] += n as f64;
        }
        a
    }

    /// Runs one phase on `a`.
    fn run_task(&self, a: &mut [f64], task: Task) {
        let (n, b) = (self.n, self.block.max(1));
        match task {
            Task::Panel { k } => {
                let ke = (k + b).min(n);
                for p in k..ke {
                    let pivot = a[p * n + p];
                    for i in p + 1..n {
                        let l = a[i * n + p] / pivot;
                        a[i * n + p] = l;
                        for j in p + 1..ke {
                            a[i * n + j] -= l * a[p * n + j];
                        }
                    }
                }
                for i in k..ke {
                    for p in k..i {
                        let l = a[i * n + p];
                        let (upper, lower) = a.split_at_mut(i * n);
                        let row_p = &upper[p * n + ke..p * n + n];
                        for (x, &u) in lower[ke..n].iter_mut().zip(row_p) {
                            *x -= l * u;
                        }
                    }
                }
            }
            Task::Update { k, i } => {
                let ke = (k + b).min(n);
                let ie = (i + b).min(n);
                let (upper, lower) = a.split_at_mut(i * n);
                for r in i..ie {
                    let row = &mut lower[(r - i) * n..(r - i) * n + n];
                    for p in k..ke {
                        let l = row[p];
                        let row_p = &upper[p * n + ke..p * n + n];
                        for (x, &u) in row[ke..n].iter_mut().zip(row_p) {
                            *x -= l * u;
                        }
                    }
                }
            }
        }
    }

    /// Prefetch hints for what `task` will update.
    fn prefetch_task(&self, pf: &Prefetcher, task: Task) {
        let (n, b) = (self.n, self.block.max(1));
        match task {
            Task::Panel { k } => {
                let ke = (k + b).min(n);
                for r in k..n {
                    pf.range(r * n + k..r * n + ke);
                }
                for r in k..ke {
                    pf.range(r * n + ke..r * n + n);
                }
            }
            Task::Update { k, i } => {
                for r in i..(i + b).min(n) {
                    pf.range(r * n + k..r * n + n);
                }
            }
        }
    }

    /// Factors `a` (`n * n` entries) in place, serially: `L` (unit
    /// diagonal) below, `U` on and above the diagonal.
    pub fn serial(&self, a: &mut [f64]) {
        assert_eq!(a.len(), self.n * self.n, "matrix size");
        for task in self.tasks() {
            self.run_task(a, task);
        }
    }

    /// [`Lu::serial`] with a helper prefetching up to `config.distance`
    /// phases ahead (or, with [`HelperWork::Idle`], only following).
    pub fn with_helper(
        &self,
        work: HelperWork,
        a: &mut [f64],
        config: &HelperConfig,
        pinning: Pinning,
    ) -> RunReport {
        assert_eq!(a.len(), self.n * self.n, "matrix size");
        let tasks = self.tasks();
        let pf = Prefetcher::new(a);
        run_with_prefetching_helper(
            &tasks,
            work,
            config,
            pinning,
            |t| self.prefetch_task(&pf, t),
            |t| self.run_task(a, t),
        )
    }

    /// `max |(L U - A)_ij| / (n max |A_ij|)` for factors `lu` of `a`.
    pub fn relative_residual(&self, a: &[f64], lu: &[f64]) -> f64 {
        let n = self.n;
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs())) * n as f64;
        let mut worst = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                let mut s = 0.0;
                for p in 0..=i.min(j) {
                    let l = if p == i { 1.0 } else { lu[i * n + p] };
                    s += l * lu[p * n + j];
                }
                worst = worst.max((s - a[i * n + j]).abs());
            }
        }
        worst / scale.max(f64::MIN_POSITIVE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use waitwise::Policy;

    #[test]
    fn serial_factors_within_tolerance_for_every_block_size() {
        for (n, b) in [(1, 1), (7, 3), (40, 10), (64, 16), (50, 64)] {
            let lu = Lu { n, block: b };
            let a = lu.matrix(n as u64);
            let mut f = a.clone();
            lu.serial(&mut f);
            let r = lu.relative_residual(&a, &f);
            assert!(r <= LU_TOLERANCE, "n {n}, b {b}: {r}");
        }
    }

    #[test]
    fn the_helper_version_gives_the_same_bits() {
        for (n, b, policy) in [
            (120, 10, Policy::always_block()),
            (96, 16, Policy::two_phase(0.5)),
            (64, 10, Policy::always_spin()),
        ] {
            let lu = Lu { n, block: b };
            let a = lu.matrix(3);
            let mut s = a.clone();
            lu.serial(&mut s);
            let mut h = a.clone();
            let config = HelperConfig {
                distance: 1,
                policy,
            };
            lu.with_helper(HelperWork::Precompute, &mut h, &config, Pinning::Auto);
            assert_eq!(h, s, "n {n}, b {b}");
            assert!(lu.relative_residual(&a, &h) <= LU_TOLERANCE);
        }
    }
}
