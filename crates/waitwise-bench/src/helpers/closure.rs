//! Transitive closure of a dense directed graph by blocked Warshall
//! (Venkataraman, Sahni & Mukhopadhyaya's blocked Floyd-Warshall on the
//! boolean semiring) with speculative precomputation (seed 000 section
//! 4.4: 1600 vertices, 25,000 edges, 16 x 16 blocks).
//!
//! The adjacency matrix is one byte per pair (0 or 1), row-major. Round
//! `K` (a block of `b` intermediate vertices) is one phase for the
//! diagonal block, its block row and its block column, then one phase per
//! other block row `I`: `A[i][j] |= A[i][k] & A[k][j]` for `i` in `I`, `k`
//! in `K`, `j` outside `K`. Using values already updated in the round is
//! safe because the semiring is idempotent: every bit set is a real path,
//! and each bit Warshall sets is set here too. A helper one phase ahead
//! issues prefetch hints for the block row the next phase updates; the
//! result is identical to the serial version's.

use super::prefetch::{run_with_prefetching_helper, Prefetcher};
use super::HelperWork;
use waitwise::helper::{HelperConfig, Pinning, RunReport};
use waitwise_model::rng::Rng;

/// One phase of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Task {
    /// The diagonal block `K`, its row and its column.
    Cross { k: usize },
    /// Block row `I` (not `K`) with round `K`.
    Row { k: usize, i: usize },
}

/// Blocked Warshall on `n` vertices with `block`-vertex blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Closure {
    /// Vertices.
    pub n: usize,
    /// Block size.
    pub block: usize,
}

impl Closure {
    /// A matrix with `edges` directed edges drawn uniformly (self-loops
    /// and repeats included), deterministic in `seed`.
    pub fn random_graph(&self, edges: usize, seed: u64) -> Vec<u8> {
        let n = self.n;
        let mut a = vec![0u8; n * n];
        if n == 0 {
            return a;
        }
        let mut rng = Rng::new(seed);
        for _ in 0..edges {
            let (i, j) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            a[i * n + j] = 1;
        }
        a
    }

    fn tasks(&self) -> Vec<Task> {
        let (n, b) = (self.n, self.block.max(1));
        let mut t = Vec::new();
        for k in (0..n).step_by(b) {
            t.push(Task::Cross { k });
            t.extend(
                (0..n)
                    .step_by(b)
                    .filter(|&i| i != k)
                    .map(|i| Task::Row { k, i }),
            );
        }
        t
    }

    /// Row `i` |= row `p` over columns outside `k..ke` (`i != p`).
    #[inline]
    fn or_row_outside(a: &mut [u8], n: usize, i: usize, p: usize, k: usize, ke: usize) {
        debug_assert_ne!(i, p);
        let (dst, src) = if i < p {
            let (lo, hi) = a.split_at_mut(p * n);
            (&mut lo[i * n..i * n + n], &hi[..n])
        } else {
            let (lo, hi) = a.split_at_mut(i * n);
            (&mut hi[..n], &lo[p * n..p * n + n])
        };
        for (d, s) in dst[..k].iter_mut().zip(&src[..k]) {
            *d |= *s;
        }
        for (d, s) in dst[ke..].iter_mut().zip(&src[ke..]) {
            *d |= *s;
        }
    }

    fn run_task(&self, a: &mut [u8], task: Task) {
        let (n, b) = (self.n, self.block.max(1));
        match task {
            Task::Cross { k } => {
                let ke = (k + b).min(n);
                // Diagonal block, then its row (j outside K), then its
                // column (i outside K, j inside K), each k in order.
                for p in k..ke {
                    for i in k..ke {
                        if a[i * n + p] != 0 {
                            for j in k..ke {
                                a[i * n + j] |= a[p * n + j];
                            }
                        }
                    }
                }
                for p in k..ke {
                    for i in k..ke {
                        if i != p && a[i * n + p] != 0 {
                            Self::or_row_outside(a, n, i, p, k, ke);
                        }
                    }
                }
                for p in k..ke {
                    for i in (0..n).filter(|i| !(k..ke).contains(i)) {
                        if a[i * n + p] != 0 {
                            for j in k..ke {
                                a[i * n + j] |= a[p * n + j];
                            }
                        }
                    }
                }
            }
            Task::Row { k, i } => {
                let ke = (k + b).min(n);
                for r in i..(i + b).min(n) {
                    for p in k..ke {
                        if a[r * n + p] != 0 {
                            Self::or_row_outside(a, n, r, p, k, ke);
                        }
                    }
                }
            }
        }
    }

    fn prefetch_task(&self, pf: &Prefetcher, task: Task) {
        let (n, b) = (self.n, self.block.max(1));
        let rows = match task {
            Task::Cross { k } => k..(k + b).min(n),
            Task::Row { i, .. } => i..(i + b).min(n),
        };
        for r in rows {
            pf.range(r * n..r * n + n);
        }
    }

    /// The closure of `a` (`n * n` bytes, 0 or 1) in place, serially.
    pub fn serial(&self, a: &mut [u8]) {
        assert_eq!(a.len(), self.n * self.n, "matrix size");
        for t in self.tasks() {
            self.run_task(a, t);
        }
    }

    /// [`Closure::serial`] with a helper prefetching up to
    /// `config.distance` phases ahead (or, with [`HelperWork::Idle`], only
    /// following).
    pub fn with_helper(
        &self,
        work: HelperWork,
        a: &mut [u8],
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
}

/// Plain Warshall, the reference: `for k, i, j: a[i][j] |= a[i][k] & a[k][j]`.
pub fn warshall(n: usize, a: &mut [u8]) {
    for k in 0..n {
        for i in 0..n {
            if a[i * n + k] != 0 {
                for j in 0..n {
                    a[i * n + j] |= a[k * n + j];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use waitwise::Policy;

    #[test]
    fn blocked_equals_plain_warshall() {
        for (n, b, e) in [
            (1, 1, 1),
            (5, 2, 6),
            (37, 16, 60),
            (64, 16, 90),
            (50, 7, 400),
        ] {
            let c = Closure { n, block: b };
            let a = c.random_graph(e, n as u64);
            let mut expected = a.clone();
            warshall(n, &mut expected);
            let mut got = a;
            c.serial(&mut got);
            assert_eq!(got, expected, "n {n}, b {b}, {e} edges");
        }
    }

    #[test]
    fn the_helper_version_gives_the_same_closure() {
        for (n, b, policy) in [
            (100, 16, Policy::always_block()),
            (80, 10, Policy::two_phase(0.5)),
            (64, 16, Policy::always_spin()),
        ] {
            let c = Closure { n, block: b };
            let a = c.random_graph(2 * n, 5);
            let mut s = a.clone();
            c.serial(&mut s);
            let mut h = a;
            let config = HelperConfig {
                distance: 1,
                policy,
            };
            c.with_helper(HelperWork::Precompute, &mut h, &config, Pinning::Auto);
            assert_eq!(h, s, "n {n}, b {b}");
        }
    }
}
