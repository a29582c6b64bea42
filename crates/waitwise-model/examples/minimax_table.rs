//! Prints the minimax table documented in `src/minimax.rs`.
//!
//! `cargo run -p waitwise-model --release --example minimax_table`
use waitwise_model::{algorithm::*, minimax::*};
fn main() {
    let models = [
        MinimaxModel::Exponential,
        MinimaxModel::Uniform,
        MinimaxModel::BarrierMixture { participants: 64 },
        MinimaxModel::BarrierMixture { participants: 16 },
        MinimaxModel::BarrierMixture { participants: 1024 },
        MinimaxModel::Mm1mMutex {
            requesters: 16,
            load: None,
        },
        MinimaxModel::Mm1mMutex {
            requesters: 16,
            load: Some(0.01),
        },
        MinimaxModel::Mm1mMutex {
            requesters: 16,
            load: Some(0.1),
        },
        MinimaxModel::Mm1mMutex {
            requesters: 16,
            load: Some(1.0),
        },
        MinimaxModel::Mm1mMutex {
            requesters: 16,
            load: Some(10.0),
        },
        MinimaxModel::Erlang { order: 2 },
    ];
    for m in models {
        let t = std::time::Instant::now();
        let r = optimal_alpha(&m).unwrap();
        let we = worst_case(&m, ALPHA_EXPONENTIAL).unwrap();
        let wu = worst_case(&m, ALPHA_UNIFORM).unwrap();
        let w1 = worst_case(&m, 1.0).unwrap();
        println!("{m:?}: alpha {:.4} worst {:.4} | exp-alpha {:.4} unif-alpha {:.4} alpha1 {:.4}  ({:?})", r.alpha, r.worst_case_factor, we.factor, wu.factor, w1.factor, t.elapsed());
    }
}
