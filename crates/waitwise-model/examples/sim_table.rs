//! Prints the default 64 x 4 Table-2-5-like grid and the simulator's speed.
//!
//! `cargo run -p waitwise-model --release --example sim_table`
use waitwise_model::algorithm::WaitingAlgorithm;
use waitwise_model::simulator::{benchmark, table, SimConfig, SyncKind, TableConfig};

fn main() {
    let start = std::time::Instant::now();
    let rows = table(&TableConfig::default()).expect("valid default table");
    println!(
        "{:<18} {:<9} {:>4} {:<10} {:>12} {:>6} {:>6} {:>8} {:>6}",
        "workload", "", "thr", "algorithm", "runtime", "norm", "wait%", "blocks", "t/o"
    );
    for r in &rows {
        let s = &r.report;
        println!(
            "{:<18} {:<9} {:>4} {:<10} {:>12.0} {:>6.2} {:>5.1}% {:>8} {:>6}{}",
            r.workload,
            if r.matched { "matched" } else { "unmatched" },
            r.threads,
            s.algorithm,
            s.runtime_cycles,
            s.normalized_runtime,
            100.0 * s.waiting_overhead,
            s.blocks,
            s.timeouts,
            if s.completed { "" } else { "  INCOMPLETE" }
        );
    }
    println!("table: {:.2?}", start.elapsed());
    for kind in [
        SyncKind::Barrier,
        SyncKind::ProducerConsumer,
        SyncKind::Mutex,
    ] {
        let mut cfg = SimConfig::paper_like(kind, 1, WaitingAlgorithm::TwoPhase { alpha: 1.0 });
        cfg.machine.processors = 256;
        cfg.threads = 1024;
        cfg.workload.iterations = 1000;
        let (report, t) = benchmark(&cfg).expect("valid");
        println!(
            "{:<18} 1024 threads s/b/1: {} sync events, {} events in {:.3} s = {:.2} M sync events/s (completed {})",
            kind.name(),
            t.sync_events,
            t.events,
            t.wall_seconds,
            t.sync_events_per_second / 1e6,
            report.completed
        );
    }
}
