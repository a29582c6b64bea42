//! Weighted directed graphs in CSR form and the three families the
//! helper-threaded Dijkstra runs on: grids with random weights (road-like:
//! low degree, long shortest-path trees), uniform random graphs, and R-MAT
//! power-law graphs (Chakrabarti, Zhan & Faloutsos, SDM 2004). Every
//! generator is deterministic in its seed ([`Rng`]).

use waitwise_model::rng::Rng;

/// A directed graph with `u32` weights, adjacency in CSR form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// `offsets[v]..offsets[v + 1]` index `v`'s edges; `n + 1` entries.
    offsets: Vec<usize>,
    /// Edge targets.
    targets: Vec<u32>,
    /// Edge weights.
    weights: Vec<u32>,
}

/// A graph family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// A square grid, both directions of each edge weighted 1..=100
    /// independently.
    Grid,
    /// `8 n` edges between uniformly drawn ends, weights 1..=1000.
    Random,
    /// R-MAT (a, b, c, d) = (0.57, 0.19, 0.19, 0.05), `8 n` edges,
    /// weights 1..=1000; `n` rounded up to a power of two.
    Rmat,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 3] = [Family::Grid, Family::Random, Family::Rmat];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Grid => "grid",
            Family::Random => "random",
            Family::Rmat => "rmat",
        }
    }

    /// A graph of this family with about `n` vertices.
    pub fn generate(self, n: usize, seed: u64) -> Graph {
        match self {
            Family::Grid => {
                let side = ((n as f64).sqrt().ceil() as usize).max(1);
                Graph::grid(side, side, seed)
            }
            Family::Random => Graph::random(n.max(1), 8 * n.max(1), 1000, seed),
            Family::Rmat => {
                let scale = n.max(2).next_power_of_two().trailing_zeros();
                Graph::rmat(scale, 8, seed)
            }
        }
    }
}

/// Average degree of [`Family::Random`] and [`Family::Rmat`].
pub const EDGE_FACTOR: usize = 8;

impl Graph {
    /// A graph with `n` vertices from an edge list `(from, to, weight)`.
    /// Edges whose ends are not below `n` are dropped.
    pub fn from_edges(n: usize, edges: &[(u32, u32, u32)]) -> Self {
        let in_range = |&&(a, b, _): &&(u32, u32, u32)| (a as usize) < n && (b as usize) < n;
        let mut offsets = vec![0usize; n + 1];
        for &(a, _, _) in edges.iter().filter(in_range) {
            offsets[a as usize + 1] += 1;
        }
        for v in 0..n {
            offsets[v + 1] += offsets[v];
        }
        let m = offsets[n];
        let mut next = offsets.clone();
        let mut targets = vec![0u32; m];
        let mut weights = vec![0u32; m];
        for &(a, b, w) in edges.iter().filter(in_range) {
            let slot = &mut next[a as usize];
            targets[*slot] = b;
            weights[*slot] = w;
            *slot += 1;
        }
        Self {
            offsets,
            targets,
            weights,
        }
    }

    /// A `rows x cols` grid, each vertex linked both ways to its right and
    /// lower neighbours, every directed edge weighted 1..=100 at random.
    pub fn grid(rows: usize, cols: usize, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let mut w = || 1 + rng.below(100) as u32;
        let id = |r: usize, c: usize| (r * cols + c) as u32;
        let mut edges = Vec::with_capacity(4 * rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                if c + 1 < cols {
                    edges.push((id(r, c), id(r, c + 1), w()));
                    edges.push((id(r, c + 1), id(r, c), w()));
                }
                if r + 1 < rows {
                    edges.push((id(r, c), id(r + 1, c), w()));
                    edges.push((id(r + 1, c), id(r, c), w()));
                }
            }
        }
        Self::from_edges(rows * cols, &edges)
    }

    /// `m` edges with uniformly drawn ends among `n` vertices, weights
    /// 1..=`max_weight`.
    pub fn random(n: usize, m: usize, max_weight: u32, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let edges: Vec<_> = (0..m)
            .map(|_| {
                (
                    rng.below(n as u64) as u32,
                    rng.below(n as u64) as u32,
                    1 + rng.below(u64::from(max_weight.max(1))) as u32,
                )
            })
            .collect();
        Self::from_edges(n, &edges)
    }

    /// An R-MAT graph of `2^scale` vertices and `edge_factor * 2^scale`
    /// edges, weights 1..=1000.
    pub fn rmat(scale: u32, edge_factor: usize, seed: u64) -> Self {
        const A: f64 = 0.57;
        const B: f64 = 0.19;
        const C: f64 = 0.19;
        let n = 1usize << scale;
        let mut rng = Rng::new(seed);
        let edges: Vec<_> = (0..edge_factor * n)
            .map(|_| {
                let (mut a, mut b) = (0u32, 0u32);
                for bit in (0..scale).rev() {
                    let r = rng.next_f64();
                    let (i, j) = if r < A {
                        (0, 0)
                    } else if r < A + B {
                        (0, 1)
                    } else if r < A + B + C {
                        (1, 0)
                    } else {
                        (1, 1)
                    };
                    a |= i << bit;
                    b |= j << bit;
                }
                (a, b, 1 + rng.below(1000) as u32)
            })
            .collect();
        Self::from_edges(n, &edges)
    }

    /// Number of vertices.
    pub fn vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of edges.
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// The lightest edge weight; 0 without edges.
    pub fn min_weight(&self) -> u64 {
        self.weights.iter().min().map_or(0, |&w| u64::from(w))
    }

    /// `v`'s edges as `(target, weight)`.
    #[inline]
    pub fn neighbours(&self, v: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
        let r = self.offsets[v]..self.offsets[v + 1];
        self.targets[r.clone()]
            .iter()
            .zip(&self.weights[r])
            .map(|(&t, &w)| (t as usize, u64::from(w)))
    }

    /// Bytes the graph takes.
    pub fn bytes(&self) -> usize {
        self.offsets.len() * std::mem::size_of::<usize>() + self.targets.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_keeps_every_edge_of_its_source() {
        let g = Graph::from_edges(3, &[(0, 1, 5), (2, 0, 1), (0, 2, 7), (9, 0, 1)]);
        assert_eq!((g.vertices(), g.edges()), (3, 3));
        let mut e: Vec<_> = g.neighbours(0).collect();
        e.sort_unstable();
        assert_eq!(e, vec![(1, 5), (2, 7)]);
        assert_eq!(g.neighbours(1).count(), 0);
    }

    #[test]
    fn generators_have_the_stated_shapes_and_are_deterministic() {
        let g = Graph::grid(3, 4, 1);
        assert_eq!(g.vertices(), 12);
        assert_eq!(g.edges(), 2 * (3 * 3 + 2 * 4));
        assert_eq!(g, Graph::grid(3, 4, 1));
        let r = Family::Rmat.generate(1000, 2);
        assert_eq!(r.vertices(), 1024);
        assert_eq!(r.edges(), EDGE_FACTOR * 1024);
        assert_eq!(Family::Random.generate(100, 3).edges(), 800);
        assert!(g.neighbours(0).all(|(_, w)| (1..=100).contains(&w)));
        assert_eq!(
            Graph::from_edges(3, &[(0, 1, 7), (1, 2, 4)]).min_weight(),
            4
        );
        assert_eq!(Graph::from_edges(3, &[]).min_weight(), 0);
    }
}
