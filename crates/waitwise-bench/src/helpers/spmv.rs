//! Sparse matrix-vector multiplication `y = A x` (CSR) with speculative
//! precomputation (seed 000 section 4.4): the rows are cut into blocks, one
//! block per phase; while the worker multiplies block `p`, a helper one
//! phase ahead loads the `x` entries that block `p + 1` will read (the
//! delinquent loads: `x` is indexed through the column array, so hardware
//! prefetchers cannot guess them). The worker's arithmetic is the same in
//! both versions, so `y` is bit-for-bit the same.
//!
//! Generated matrices: banded (columns near the row's diagonal position,
//! good locality) and power-law (row lengths drawn from a Zipf-like law,
//! columns uniform: poor locality), at the seed's shape (9648 x 77137,
//! about 260,000 non-zeros) or any other.

use super::HelperWork;
use waitwise::helper::{self, HelperConfig, Pinning, RunReport, Step};
use waitwise_model::rng::Rng;

/// Rows per phase: the `x` entries of a block of this many rows of the
/// seed's matrix (~27 non-zeros a row) take ~55 KiB, under half a 512 KiB
/// L2 as seed 001 asks of a prefetching span (guessed for other shapes).
pub const ROWS_PER_PHASE: usize = 256;

/// A sparse matrix in CSR form.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    /// Number of columns.
    pub cols: usize,
    /// `offsets[r]..offsets[r + 1]` index row `r`'s entries.
    pub offsets: Vec<usize>,
    /// Column of each entry.
    pub columns: Vec<u32>,
    /// Value of each entry.
    pub values: Vec<f64>,
}

/// How generated rows place their entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Equal row lengths, columns within a band around the diagonal.
    Banded,
    /// Zipf-like row lengths, uniform columns.
    PowerLaw,
}

impl Shape {
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Banded => "banded",
            Shape::PowerLaw => "power-law",
        }
    }
}

impl Csr {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of non-zeros.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// A `rows x cols` matrix with about `nnz` entries of `shape`,
    /// deterministic in `seed`. Every row has at least one entry.
    pub fn generate(rows: usize, cols: usize, nnz: usize, shape: Shape, seed: u64) -> Self {
        let rows = rows.max(1);
        let cols = cols.max(1);
        let mut rng = Rng::new(seed);
        let per_row = (nnz / rows).max(1);
        let lengths: Vec<usize> = match shape {
            Shape::Banded => vec![per_row; rows],
            Shape::PowerLaw => {
                // Pareto(alpha = 2) lengths with mean per_row, capped at cols.
                (0..rows)
                    .map(|_| {
                        let u = 1.0 - rng.next_f64();
                        let l = (per_row as f64 / 2.0) / u.sqrt();
                        (l as usize).clamp(1, cols)
                    })
                    .collect()
            }
        };
        let band = (4 * per_row).min(cols);
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        let mut columns = Vec::new();
        let mut values = Vec::new();
        for (r, &len) in lengths.iter().enumerate() {
            let centre = r * cols / rows;
            let start = centre.saturating_sub(band / 2).min(cols - band);
            for _ in 0..len {
                let c = match shape {
                    Shape::Banded => start + rng.below(band as u64) as usize,
                    Shape::PowerLaw => rng.below(cols as u64) as usize,
                };
                columns.push(c as u32);
                values.push(rng.next_f64() - 0.5);
            }
            offsets.push(columns.len());
        }
        Self {
            cols,
            offsets,
            columns,
            values,
        }
    }

    /// Number of phases ([`ROWS_PER_PHASE`] rows each) of one multiply.
    pub fn phases(&self) -> usize {
        self.rows().div_ceil(ROWS_PER_PHASE)
    }

    /// Rows of phase `p` of a multiply.
    fn block(&self, p: usize) -> std::ops::Range<usize> {
        let start = (p * ROWS_PER_PHASE).min(self.rows());
        start..(start + ROWS_PER_PHASE).min(self.rows())
    }

    /// `y[rows] = A[rows] x`.
    #[inline]
    fn multiply_rows(&self, rows: std::ops::Range<usize>, x: &[f64], y: &mut [f64]) {
        for r in rows {
            let e = self.offsets[r]..self.offsets[r + 1];
            y[r] = self.columns[e.clone()]
                .iter()
                .zip(&self.values[e])
                .map(|(&c, &v)| v * x[c as usize])
                .sum();
        }
    }

    /// Loads the `x` entries that rows `rows` read; returns their sum so
    /// that the loads are not optimized away.
    fn touch_rows(&self, rows: std::ops::Range<usize>, x: &[f64]) -> f64 {
        let e = self.offsets[rows.start]..self.offsets[rows.end];
        self.columns[e].iter().map(|&c| x[c as usize]).sum()
    }
}

/// `repeats` multiplies `y = A x`, serially. `x` must have `a.cols`
/// entries.
pub fn serial(a: &Csr, x: &[f64], repeats: usize) -> Vec<f64> {
    assert_eq!(
        x.len(),
        a.cols,
        "x has {} entries for {} columns",
        x.len(),
        a.cols
    );
    let mut y = vec![0.0; a.rows()];
    for _ in 0..repeats {
        for p in 0..a.phases() {
            a.multiply_rows(a.block(p), x, &mut y);
        }
    }
    y
}

/// [`serial`] with a helper (seed 000's SPR): phase `k * phases + p` is
/// block `p` of multiply `k`; the helper loads the `x` entries of the
/// blocks up to `config.distance` ahead (or, with [`HelperWork::Idle`],
/// only follows).
pub fn with_helper(
    a: &Csr,
    x: &[f64],
    repeats: usize,
    config: &HelperConfig,
    pinning: Pinning,
    work: HelperWork,
) -> (Vec<f64>, RunReport) {
    assert_eq!(
        x.len(),
        a.cols,
        "x has {} entries for {} columns",
        x.len(),
        a.cols
    );
    let phases = a.phases();
    let total = phases * repeats;
    let prefetch = |step: &Step<'_>| {
        let p = step.phase() as usize;
        if p < total && work == HelperWork::Precompute {
            std::hint::black_box(a.touch_rows(a.block(p % phases), x));
        }
    };
    helper::run(config, pinning, vec![prefetch], |worker| {
        let mut y = vec![0.0; a.rows()];
        for k in 0..repeats {
            for p in 0..phases {
                worker.publish((k * phases + p).min(helper::LAST_PHASE as usize) as u32);
                a.multiply_rows(a.block(p), x, &mut y);
            }
        }
        y
    })
}

/// A deterministic `x` for `a`.
pub fn vector(a: &Csr, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..a.cols).map(|_| rng.next_f64()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use waitwise::Policy;

    #[test]
    fn generated_matrices_have_the_asked_shape() {
        let a = Csr::generate(9648, 77137, 260_785, Shape::Banded, 1);
        assert_eq!((a.rows(), a.cols), (9648, 77137));
        assert_eq!(a.nnz(), 9648 * 27);
        assert!(a.columns.iter().all(|&c| (c as usize) < a.cols));
        let p = Csr::generate(9648, 77137, 260_785, Shape::PowerLaw, 1);
        assert!(p.nnz() > 150_000 && p.nnz() < 400_000, "{}", p.nnz());
        assert!((0..p.rows()).all(|r| p.offsets[r + 1] > p.offsets[r]));
    }

    #[test]
    fn serial_multiplies() {
        // [[1, 2], [0, 3]] x [1, 1] = [3, 3].
        let a = Csr {
            cols: 2,
            offsets: vec![0, 2, 3],
            columns: vec![0, 1, 1],
            values: vec![1.0, 2.0, 3.0],
        };
        assert_eq!(serial(&a, &[1.0, 1.0], 2), vec![3.0, 3.0]);
    }

    #[test]
    fn the_helper_version_gives_the_same_bits() {
        for (shape, policy) in [
            (Shape::Banded, Policy::always_block()),
            (Shape::PowerLaw, Policy::two_phase(0.5)),
            (Shape::PowerLaw, Policy::always_spin()),
        ] {
            let a = Csr::generate(3000, 20_000, 60_000, shape, 7);
            let x = vector(&a, 8);
            let config = HelperConfig {
                distance: 1,
                policy,
            };
            let (y, report) =
                with_helper(&a, &x, 3, &config, Pinning::Auto, HelperWork::Precompute);
            assert_eq!(y, serial(&a, &x, 3), "{}", shape.name());
            assert_eq!(report.helpers.len(), 1);
        }
    }
}
