//! Load on the machine during a run: other processes' (the 1-minute load
//! average before and after, and the note the experiments add when it was
//! high enough to matter), and the busy co-runners an experiment adds on
//! purpose ([`BusyLoad`]).

use std::time::Duration;

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

/// Busy co-runners: processes that spin until stopped, unpinned, at
/// normal priority, so the scheduler shares every CPU between them and the
/// measured threads: another program using the CPUs, as on a busy machine.
/// Processes, not threads of the measuring process: a waiter that asks
/// whether its own process is the one using the CPUs
/// (`waitwise::mechanism::yield_guard`) sees them as the other program
/// they stand for.
pub struct BusyLoad {
    children: Vec<libc::pid_t>,
}

impl BusyLoad {
    /// Starts `processes` co-runners (one per CPU puts a busy co-runner on
    /// every CPU). A co-runner that cannot be forked is left out.
    pub fn start(processes: usize) -> Self {
        let children = (0..processes).filter_map(|_| fork_spinner()).collect();
        Self { children }
    }

    /// Stops and reaps the co-runners; returns the CPU time they used.
    pub fn stop(self) -> Duration {
        self.children.iter().map(|&pid| kill_and_reap(pid)).sum()
    }
}

/// Forks a child that spins until killed; its pid, or `None` if `fork`
/// failed.
fn fork_spinner() -> Option<libc::pid_t> {
    // SAFETY: the child runs only a loop of spin-loop hints (no allocation,
    // no lock, nothing another thread of the parent could hold) until the
    // parent kills it, so forking a multi-threaded process is sound here.
    match unsafe { libc::fork() } {
        0 => loop {
            std::hint::spin_loop();
        },
        pid if pid > 0 => Some(pid),
        _ => None,
    }
}

/// Kills co-runner `pid` and waits for it; the CPU time it used.
fn kill_and_reap(pid: libc::pid_t) -> Duration {
    // SAFETY: `pid` is a child of this process that has not been reaped, so
    // the signal reaches that child and no other process.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid, writable locals.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc == pid {
            break;
        }
        if rc < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Duration::ZERO;
        }
    }
    let secs = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1_000);
    secs(usage.ru_utime) + secs(usage.ru_stime)
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
