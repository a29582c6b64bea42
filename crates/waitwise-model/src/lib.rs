//! # waitwise-model
//!
//! Lim & Agarwal's analysis of two-phase waiting made executable: expected waiting
//! costs, competitive factors, the optimal static polling limit, and a discrete-event
//! simulator of a large multithreaded machine. Pure code: no threads, no I/O, no clock
//! except the simulator's optional throughput figure.
//!
//! | module | what it gives |
//! |---|---|
//! | [`algorithm`] | waiting algorithms and their names (`s//inf`, `/b/0`, `s/b/0.54`, `Ss/b/0.54`, `rand/b`); `ALPHA_EXPONENTIAL`, `ALPHA_UNIFORM` |
//! | [`distribution`] | wait-time laws: exponential, uniform, Erlang, barrier mixture (Eq. 8-10), M/M/1//M mutex (Eq. 11-13), recorded log2 histograms |
//! | [`cost`] | expected costs (Eq. 1-2, closed forms Eq. 4-7 and Appendix B), competitive factors |
//! | [`randomized`] | Karlin et al.'s randomized policy: cost for a fixed wait, ratio `e/(e-1)` |
//! | [`adaptive`] | `adapt/b`: its menu of bounded laws, the learner, exact sequence costs, stationary and switching factors |
//! | [`minimax`] | the alpha minimizing the worst-case factor for a family of laws (Theorems 3-4 and beyond) |
//! | [`curves`] | the data of the paper's Figures 2 and 3 |
//! | [`fit`] | exponential and uniform fits to a recorded wait profile (Appendix A) and the alpha they recommend |
//! | [`simulator`] | seeded discrete-event simulation of P processors x C contexts (Tables 2-5) |
//! | [`integrate`], [`rng`] | adaptive Simpson quadrature and a seeded PRNG, both self-contained |
//! | [`error`] | [`ModelError`]: every bad input is an error, never a panic |
//!
//! Units: costs and wait times share whatever unit the block cost `B` is given in
//! (cycles in the paper, nanoseconds for recorded profiles).
//!
//! ## References
//! * B.-H. Lim and A. Agarwal, "Waiting Algorithms for Synchronization in Large-Scale
//!   Multiprocessors", ACM TOCS 11(3), 1993 (`shared/seeds/lim-agarwal-1993-waiting-algorithms.txt`).
//! * A. Karlin, M. Manasse, L. McGeoch, S. Owicki, "Competitive Randomized Algorithms for
//!   Non-Uniform Problems", SODA 1990 (the randomized policy).
//! * D. Blackman and S. Vigna, "Scrambled Linear Pseudorandom Number Generators", 2018
//!   (xoshiro256**).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod adaptive;
pub mod algorithm;
pub mod cost;
pub mod curves;
pub mod distribution;
pub mod error;
pub mod fit;
pub mod integrate;
pub mod minimax;
pub mod randomized;
pub mod rng;
pub mod simulator;
mod special;

pub use algorithm::{WaitingAlgorithm, ALPHA_EXPONENTIAL, ALPHA_UNIFORM};
pub use distribution::WaitDistribution;
pub use error::ModelError;
