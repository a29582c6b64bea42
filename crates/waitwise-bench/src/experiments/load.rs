//! Load on the machine during a run: other processes' (the 1-minute load
//! average before and after, and the note the experiments add when it was
//! high enough to matter), and the busy co-runners an experiment adds on
//! purpose ([`BusyLoad`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use waitwise_platform::thread::thread_cpu_time;

/// The 1-minute load average (`/proc/loadavg`), where the OS has one.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// A note when other processes loaded the machine during a run: the load
/// averages before and after, against the CPUs.
pub fn load_note(before: Option<f64>, after: Option<f64>, cpus: usize) -> Option<String> {
    let worst = before.into_iter().chain(after).fold(f64::NAN, f64::max);
    (worst > 0.5).then(|| {
        format!(
            "Other processes were running: 1-minute load average {} before and {} after, on {cpus} CPUs; every figure includes their interference.",
            before.map_or("unknown".into(), |l| format!("{l:.2}")),
            after.map_or("unknown".into(), |l| format!("{l:.2}")),
        )
    })
}

/// Busy co-runners: threads that spin on a spin-loop hint until stopped,
/// unpinned, at normal priority, so the scheduler shares every CPU between
/// them and the measured threads.
pub struct BusyLoad {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<Duration>>,
}

impl BusyLoad {
    /// Starts `threads` co-runners (one per CPU puts a busy co-runner on
    /// every CPU).
    pub fn start(threads: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..threads)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let start = thread_cpu_time();
                    // Relaxed: the flag carries no data; the join orders the
                    // rest.
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                    thread_cpu_time().saturating_sub(start)
                })
            })
            .collect();
        Self { stop, threads }
    }

    /// Stops and joins the co-runners; returns the CPU time they used.
    pub fn stop(self) -> Duration {
        // Relaxed: see `start`.
        self.stop.store(true, Ordering::Relaxed);
        self.threads
            .into_iter()
            .map(|t| t.join().unwrap_or_default())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_load_burns_cpu_until_stopped() {
        let load = BusyLoad::start(1);
        std::thread::sleep(Duration::from_millis(20));
        assert!(load.stop() > Duration::ZERO);
        assert_eq!(BusyLoad::start(0).stop(), Duration::ZERO);
    }
}
