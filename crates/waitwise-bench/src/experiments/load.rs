//! Other processes' load on the machine during a run: the 1-minute load
//! average before and after, and the note the experiments add when it was
//! high enough to matter.

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
