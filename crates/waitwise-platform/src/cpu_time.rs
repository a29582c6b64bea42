//! Where the machine's CPU time went during a span, for benchmarks that
//! must tell a disturbed run from the lock's own doing: the CPUs idled,
//! the hypervisor took them (steal), or something ran.
//!
//! [`CpuTicks::now`] reads the first line of `/proc/stat` (all CPUs, in
//! clock ticks, usually 100 per second: a 300 ms run on 2 CPUs is 60
//! ticks, so a share is known to about 2%); [`CpuSplit::between`] turns
//! two readings into shares of the span. [`process_cpu_secs`] is this
//! process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`), to set against the
//! CPUs' time (`CPUs x seconds`).
//!
//! Where the hypervisor does not report steal time, a vCPU it took shows
//! as time the guest did not account to this process (the threads' share
//! falls) with neither idle nor steal rising. Reading `/proc/stat` costs a
//! few µs: call it around a run, never inside one.

/// The machine's CPU time so far, all CPUs, in clock ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Running anything: user, nice, system, hard and soft interrupts.
    pub busy: u64,
    /// Idle, or idle waiting for I/O.
    pub idle: u64,
    /// Taken by the hypervisor for other guests (0 where it says nothing).
    pub steal: u64,
}

impl CpuTicks {
    /// The ticks so far; `None` where `/proc/stat` cannot be read.
    pub fn now() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Self::parse(stat.lines().next()?)
    }

    /// Parses the aggregate line of `/proc/stat`
    /// (`cpu  user nice system idle iowait irq softirq steal ...`).
    pub fn parse(line: &str) -> Option<Self> {
        let fields = line.strip_prefix("cpu ")?;
        let v: Vec<u64> = fields
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        let at = |i: usize| v.get(i).copied();
        Some(Self {
            busy: at(0)? + at(1)? + at(2)? + at(5)? + at(6)?,
            idle: at(3)? + at(4)?,
            steal: at(7).unwrap_or(0),
        })
    }

    /// The ticks from `before` to `self` (0 for a counter that went back).
    pub fn since(self, before: Self) -> Self {
        Self {
            busy: self.busy.saturating_sub(before.busy),
            idle: self.idle.saturating_sub(before.idle),
            steal: self.steal.saturating_sub(before.steal),
        }
    }
}

/// What the machine's CPUs did during a span, as shares of their time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuSplit {
    /// Idle (or waiting for I/O).
    pub idle: f64,
    /// Taken by the hypervisor.
    pub steal: f64,
}

impl CpuSplit {
    /// The split between two readings; `None` when either is missing or
    /// no tick passed.
    pub fn between(before: Option<CpuTicks>, after: Option<CpuTicks>) -> Option<Self> {
        let d = after?.since(before?);
        let total = (d.busy + d.idle + d.steal) as f64;
        (total > 0.0).then(|| Self {
            idle: d.idle as f64 / total,
            steal: d.steal as f64 / total,
        })
    }

    /// The share left for others (other processes, interrupts) when this
    /// process's threads had `own` of the CPUs' time.
    pub fn others(&self, own: f64) -> f64 {
        (1.0 - own - self.idle - self.steal).max(0.0)
    }
}

/// Where the CPUs' time went during a span in which this process (or the
/// threads measured) had `own` of it, in words for a report: `the CPUs
/// were idle 2%, stolen by the hypervisor 1%, running others 10%`.
pub fn describe_split(split: Option<CpuSplit>, own: f64) -> String {
    split.map_or_else(
        || "the machine's split is not known".to_string(),
        |m| {
            format!(
                "the CPUs were idle {:.0}%, stolen by the hypervisor {:.0}%, running others {:.0}%",
                m.idle * 100.0,
                m.steal * 100.0,
                m.others(own) * 100.0
            )
        },
    )
}

/// The CPU time of this process's waited-for children so far (their own
/// waited-for children included), seconds: `getrusage(RUSAGE_CHILDREN)`.
pub fn children_cpu_secs() -> f64 {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The machine's busy CPU time so far that was not this process's nor its
/// waited-for children's, read together: compare two readings to learn
/// what other programs used during a span.
#[derive(Clone, Copy, Debug)]
pub struct OthersCpu {
    /// The machine's busy ticks.
    ticks: CpuTicks,
    /// This process's and its children's CPU time, seconds.
    own_secs: f64,
    /// When read.
    at: std::time::Instant,
}

impl OthersCpu {
    /// A reading now; `None` where `/proc/stat` cannot be read.
    pub fn now() -> Option<Self> {
        Some(Self {
            ticks: CpuTicks::now()?,
            own_secs: process_cpu_secs() + children_cpu_secs(),
            at: std::time::Instant::now(),
        })
    }

    /// How many CPUs other programs kept busy on average since `before`
    /// (busy ticks at the kernel's `USER_HZ`, less this process's and its
    /// children's CPU time, over the wall time); `None` for an empty span.
    pub fn average_cpus_since(&self, before: &Self) -> Option<f64> {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let wall = self.at.duration_since(before.at).as_secs_f64();
        if hz <= 0 || wall <= 0.0 {
            return None;
        }
        let busy = self.ticks.since(before.ticks).busy as f64 / hz as f64;
        let own = self.own_secs - before.own_secs;
        Some(((busy - own) / wall).max(0.0))
    }
}

/// This process's CPU time so far, all its threads, seconds.
pub fn process_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_work_is_not_counted_as_others() {
        let before = OthersCpu::now().unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(300) {
            x = x.wrapping_mul(31).wrapping_add(1);
        }
        std::hint::black_box(x);
        let others = OthersCpu::now()
            .unwrap()
            .average_cpus_since(&before)
            .unwrap();
        // Whatever else runs, this process's 300 ms of spinning is not
        // in the figure: it stays within the machine's CPUs.
        assert!(others >= 0.0);
        assert!(others <= std::thread::available_parallelism().unwrap().get() as f64 + 0.2);
    }

    #[test]
    fn the_aggregate_line_splits_into_busy_idle_and_steal() {
        let t = CpuTicks::parse("cpu  10 1 5 100 4 2 3 7 0 0").unwrap();
        assert_eq!(
            t,
            CpuTicks {
                busy: 21,
                idle: 104,
                steal: 7
            }
        );
    }

    #[test]
    fn a_kernel_without_steal_counts_none() {
        let t = CpuTicks::parse("cpu 1 2 3 4 5 6 7").unwrap();
        assert_eq!(t.steal, 0);
        assert_eq!(t.busy, 1 + 2 + 3 + 6 + 7);
    }

    #[test]
    fn a_per_cpu_or_short_line_is_refused() {
        assert_eq!(CpuTicks::parse("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(CpuTicks::parse("cpu 1 2 3"), None);
        assert_eq!(CpuTicks::parse("cpu 1 x 3 4 5 6 7 8"), None);
    }

    #[test]
    fn the_split_is_shares_of_the_span() {
        let before = CpuTicks {
            busy: 100,
            idle: 50,
            steal: 0,
        };
        let after = CpuTicks {
            busy: 160,
            idle: 80,
            steal: 10,
        };
        let s = CpuSplit::between(Some(before), Some(after)).unwrap();
        assert_eq!(s.idle, 0.3);
        assert_eq!(s.steal, 0.1);
        assert!((s.others(0.5) - 0.1).abs() < 1e-12);
        assert_eq!(s.others(0.9), 0.0, "never below zero");
        assert_eq!(CpuSplit::between(Some(after), Some(after)), None);
        assert_eq!(CpuSplit::between(None, Some(after)), None);
    }

    #[test]
    fn the_split_is_described_in_words() {
        let s = CpuSplit {
            idle: 0.02,
            steal: 0.01,
        };
        assert_eq!(
            describe_split(Some(s), 0.87),
            "the CPUs were idle 2%, stolen by the hypervisor 1%, running others 10%"
        );
        assert_eq!(
            describe_split(None, 0.5),
            "the machine's split is not known"
        );
    }

    #[test]
    fn this_machine_and_process_are_read() {
        if std::path::Path::new("/proc/stat").exists() {
            assert!(CpuTicks::now().is_some());
        }
        let t = process_cpu_secs();
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(process_cpu_secs() >= t);
    }
}
