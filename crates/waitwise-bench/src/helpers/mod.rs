//! Applications of helper threads ([`waitwise::helper`]), each with a
//! serial version and a helper version whose results are tested equal:
//!
//! | module | application | seed |
//! | --- | --- | --- |
//! | [`graph`] | graph families: grids, random, R-MAT | |
//! | [`dijkstra`] | helper-threaded Dijkstra (fetch-min instead of transactional memory) | 001 part II |
//! | [`spmv`] | CSR sparse matrix-vector multiply, helper loads `x` ahead | 000 section 4.4 |
//! | [`lu`] | blocked LU decomposition, helper prefetches the next block row | 000 section 4.4 |
//! | [`closure`] | transitive closure by blocked Warshall, helper prefetches the next block row | 000 section 4.4 |
//! | [`phases`] | where Dijkstra's main thread spends its time, and the bound that sets on helpers | |
//! | [`experiment`] | `waitwise helpers`: all of them under each helper wait, and the report section | |
//! | [`prefetch`] | prefetch hints for memory the worker writes | |
//!
//! NAS BT (seed 000's fourth SPR benchmark) is out of scope: it is a
//! Fortran code base of its own, and porting it would measure the port.

pub mod closure;
pub mod dijkstra;
pub mod experiment;
pub mod graph;
pub mod lu;
pub mod phases;
pub mod prefetch;
pub mod spmv;

/// What a helper does in its phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HelperWork {
    /// Its precomputation (prefetching, speculative relaxation).
    Precompute,
    /// Nothing: it only follows the worker and waits as configured, so the
    /// worker's slowdown against serial is the waiting's interference
    /// (and the publishing's cost), without any benefit.
    Idle,
}
