//! The worker's fixed floating-point kernel: an `n x n` matrix multiply, as in
//! seed 000 (512 x 512 for Table 1, 10 x 10 as the unit of work of Fig. 4).

use std::hint::black_box;

/// Square matrices for one worker thread (allocated once, reused).
pub struct MatMul {
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl MatMul {
    /// Matrices of size `n x n` (`n` at least 1).
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        let a = (0..n * n).map(|i| (i % 7) as f64 * 0.5 + 1.0).collect();
        let b = (0..n * n).map(|i| (i % 5) as f64 * 0.25 + 1.0).collect();
        Self {
            n,
            a,
            b,
            c: vec![0.0; n * n],
        }
    }

    /// Side length.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `c = a * b` once (i-k-j loop order), returning a checksum so the
    /// work cannot be optimized away.
    pub fn run(&mut self) -> f64 {
        let n = self.n;
        self.c.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..n {
            for k in 0..n {
                let aik = self.a[i * n + k];
                let (brow, crow) = (&self.b[k * n..(k + 1) * n], &mut self.c[i * n..(i + 1) * n]);
                for (c, b) in crow.iter_mut().zip(brow) {
                    *c += aik * b;
                }
            }
        }
        black_box(self.c[n * n / 2])
    }

    /// Runs the multiply `units` times.
    pub fn run_units(&mut self, units: u32) -> f64 {
        (0..units).map(|_| self.run()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiply_is_correct_for_2x2() {
        let mut m = MatMul::new(2);
        // a = [[1, 1.5], [2, 2.5]], b = [[1, 1.25], [1.5, 1.75]]
        m.run();
        assert_eq!(m.c, vec![1.0 + 2.25, 1.25 + 2.625, 2.0 + 3.75, 2.5 + 4.375]);
        assert_eq!(MatMul::new(0).n(), 1);
    }
}
