//! Where Dijkstra's main thread spends its time: a phase clock read at
//! each phase boundary (one cheap cycle-clock read per boundary, its own
//! cost subtracted). The serial run with that clock is
//! [`super::dijkstra::serial_split`].
//!
//! With these figures the helper-threaded scheme has a bound: helpers can
//! take off the main thread only the edge scans of the vertices whose
//! relaxation it keeps. Its heap pops, and the heap pushes of every
//! relaxation (its own and the helpers', which it drains into its heap),
//! stay on the main thread. With `scan` the serial edge-scan share of the
//! time and `kept` the share of settled vertices whose scan the main
//! thread skipped, the speed-up is at most `1 / (1 - scan * kept)`
//! ([`Split::bound`]), before any cost of coordination.

use waitwise_platform::clock::cycle_clock;

/// A phase of the main thread's loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Allocating and initializing the distances and the heap.
    Setup,
    /// Heap pops, stale entries included.
    Pop,
    /// The edge loop of a settled vertex: loads, compares, distance
    /// updates (its heap pushes are [`Phase::Push`]).
    Scan,
    /// Heap pushes of the main thread's own relaxations.
    Push,
    /// Taking the helpers' work: reading a settled vertex's completion
    /// mark, and draining their queued entries into the heap.
    Drain,
    /// Checking the helpers' progress, dealing batches, publishing.
    Coordinate,
    /// Waiting for the helpers when the heap runs empty.
    Wait,
}

impl Phase {
    /// Every phase, in table order.
    pub const ALL: [Phase; 7] = [
        Phase::Setup,
        Phase::Pop,
        Phase::Scan,
        Phase::Push,
        Phase::Drain,
        Phase::Coordinate,
        Phase::Wait,
    ];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "setup",
            Phase::Pop => "pop",
            Phase::Scan => "scan",
            Phase::Push => "push",
            Phase::Drain => "drain",
            Phase::Coordinate => "coordinate",
            Phase::Wait => "wait",
        }
    }
}

/// Receives phase boundaries: `mark(p)` says the time since the previous
/// mark (or since the timer was made) was spent in `p`.
pub trait PhaseTimer {
    /// Whether the marks are recorded: a run may then buffer work so that
    /// its phases are timed apart, which a timer that records nothing
    /// would only slow down.
    const RECORDS: bool = true;

    /// The time since the previous mark was spent in `phase`.
    fn mark(&mut self, phase: Phase);
}

/// Records nothing: the timed runs use it, and it compiles away.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTimer;

impl PhaseTimer for NoTimer {
    const RECORDS: bool = false;

    #[inline(always)]
    fn mark(&mut self, _: Phase) {}
}

/// Nanoseconds per phase, read from the cycle clock at each mark.
#[derive(Clone, Debug)]
pub struct PhaseClock {
    last: u64,
    ns: [u64; Phase::ALL.len()],
    marks: [u64; Phase::ALL.len()],
    started: u64,
}

impl Default for PhaseClock {
    fn default() -> Self {
        Self::start()
    }
}

impl PhaseClock {
    /// Starts the clock now.
    pub fn start() -> Self {
        let now = cycle_clock().now();
        Self {
            last: now,
            ns: [0; Phase::ALL.len()],
            marks: [0; Phase::ALL.len()],
            started: now,
        }
    }

    /// The phases' times, each less one clock read per mark in it.
    pub fn finish(&self) -> Split {
        let total = cycle_clock().now().saturating_sub(self.started);
        let read = read_cost_ns();
        let mut ns = self.ns;
        for (t, &m) in ns.iter_mut().zip(&self.marks) {
            *t = t.saturating_sub((read * m as f64) as u64);
        }
        Split {
            ns,
            total_ns: total,
            marks: self.marks.iter().sum(),
            clock_read_ns: read,
        }
    }
}

impl PhaseTimer for PhaseClock {
    #[inline(always)]
    fn mark(&mut self, phase: Phase) {
        let now = cycle_clock().now();
        self.ns[phase as usize] += now.saturating_sub(self.last);
        self.last = now;
        self.marks[phase as usize] += 1;
    }
}

/// The median cost of one [`cycle_clock`] `now()` read, ns (the median
/// gap between 1001 back-to-back reads).
pub fn read_cost_ns() -> f64 {
    let clock = cycle_clock();
    let mut stamps = [0u64; 1001];
    for s in stamps.iter_mut() {
        *s = clock.now();
    }
    let mut gaps: Vec<u64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    gaps[gaps.len() / 2] as f64
}

/// Where a run's main thread spent its time.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Split {
    /// Nanoseconds per phase, in [`Phase::ALL`] order, each less its
    /// share of the clock reads.
    pub ns: [u64; Phase::ALL.len()],
    /// Wall time from the clock's start to `finish`, ns (clock reads
    /// included).
    pub total_ns: u64,
    /// Clock reads (marks) made.
    pub marks: u64,
    /// The cost of one read subtracted per mark, ns.
    pub clock_read_ns: f64,
}

impl Split {
    /// Time in `phase`, ns.
    pub fn get(&self, phase: Phase) -> u64 {
        self.ns[phase as usize]
    }

    /// The phases' sum, ns (the run without its clock reads).
    pub fn sum(&self) -> u64 {
        self.ns.iter().sum()
    }

    /// `phase`'s share of [`Split::sum`].
    pub fn fraction(&self, phase: Phase) -> f64 {
        let s = self.sum();
        if s == 0 {
            0.0
        } else {
            self.get(phase) as f64 / s as f64
        }
    }

    /// The share of the time in the heap: pops, pushes, drains.
    pub fn heap_fraction(&self) -> f64 {
        self.fraction(Phase::Pop) + self.fraction(Phase::Push) + self.fraction(Phase::Drain)
    }

    /// The speed-up over this (serial) run that helpers could give at
    /// most, if they took the edge scans of `kept` of the settled
    /// vertices off the main thread at no cost: `1 / (1 - scan * kept)`
    /// (module doc).
    pub fn bound(&self, kept: f64) -> f64 {
        1.0 / (1.0 - self.fraction(Phase::Scan) * kept.clamp(0.0, 1.0))
    }
}

/// Why a helper-threaded run was as fast as it was, in the figures of
/// [`Split`]: what the serial run spends where, what share of it helpers
/// could take, and what the main thread spent instead. `Display` writes it
/// as one sentence for the report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Account {
    /// The serial run.
    pub serial: Split,
    /// The main thread with helpers.
    pub main: Split,
    /// Share of settled vertices whose scan the main thread skipped.
    pub kept: f64,
    /// Vertices settled.
    pub settled: u64,
    /// Measured speed-up (median of the timed runs), if any.
    pub speedup: Option<f64>,
    /// Fraction of the helpers' time spent waiting, if known.
    pub helper_wait: Option<f64>,
}

impl Account {
    /// Main-thread time with helpers in `phase` over the serial run's
    /// whole time.
    pub fn main_share(&self, phase: Phase) -> f64 {
        self.main.get(phase) as f64 / self.serial.sum().max(1) as f64
    }

    /// The part of the serial time helpers could save at most: its scan
    /// share times the share kept.
    pub fn saveable(&self) -> f64 {
        self.serial.fraction(Phase::Scan) * self.kept.clamp(0.0, 1.0)
    }

    /// What the main thread spent on the helpers, over the serial time:
    /// taking their work (marks, entries) beyond the serial pushes, coordinating,
    /// waiting, and pops slower than serial.
    pub fn overhead(&self) -> f64 {
        let serial = |p| self.serial.get(p) as f64;
        let main = |p| self.main.get(p) as f64;
        let extra = main(Phase::Drain) + main(Phase::Push) - serial(Phase::Push)
            + main(Phase::Coordinate)
            + main(Phase::Wait)
            + (main(Phase::Pop) - serial(Phase::Pop)).max(0.0);
        extra / self.serial.sum().max(1) as f64
    }
}

/// What an [`Account`] says about a speed-up target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// The bound is below the target: out of reach even if handing work
    /// over cost nothing.
    AboveBound {
        /// The target.
        target: f64,
        /// [`Split::bound`] at the kept share.
        bound: f64,
    },
    /// The bound allows the target if handing work over costs the main
    /// thread at most `allowed` of the serial time; it cost `spent`.
    Reachable {
        /// The target.
        target: f64,
        /// Overhead the target leaves room for, share of the serial time.
        allowed: f64,
        /// Overhead measured ([`Account::overhead`]).
        spent: f64,
    },
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Verdict::AboveBound { target, bound } => write!(
                f,
                "{target}x is above the bound {bound:.2}x: out of reach at this kept share even if handing \
                 work over cost nothing"
            ),
            Verdict::Reachable {
                target,
                allowed,
                spent,
            } => write!(
                f,
                "the bound allows {target}x if handing work over costs the main thread at most {:.0}% of the \
                 serial time; it cost {:.0}%",
                100.0 * allowed,
                100.0 * spent
            ),
        }
    }
}

impl Account {
    /// Whether `target` is within the bound, and if so how much overhead
    /// it leaves room for: the main thread must finish in `1 / target` of
    /// the serial time, so it may spend `saveable - (1 - 1 / target)` on
    /// the helpers.
    pub fn verdict(&self, target: f64) -> Verdict {
        let bound = 1.0 / (1.0 - self.saveable());
        if bound < target {
            Verdict::AboveBound { target, bound }
        } else {
            Verdict::Reachable {
                target,
                allowed: self.saveable() - (1.0 - 1.0 / target),
                spent: self.overhead(),
            }
        }
    }
}

impl std::fmt::Display for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |x: f64| 100.0 * x;
        let s = &self.serial;
        let per_vertex = |ns: f64| ns / self.settled.max(1) as f64;
        write!(
            f,
            "the serial run spends {:.0}% of its time in the heap (pops {:.0}%, pushes {:.0}%) and {:.0}% \
             scanning edges ({:.0} ns per settled vertex of {:.0}); helpers took the scans of {:.0}% of the \
             settled vertices, so at most {:.0}% of the time can leave the main thread, a bound of {:.2}x. \
             With helpers the main thread spends, against the serial time, {:.0}% taking the helpers' work \
             (completion marks, their heap entries; the serial pushes: {:.0}%), {:.0}% coordinating, {:.0}% waiting, {:.0}% in pops \
             (serial {:.0}%; more where the distances it checks were written on the helpers' cores, or \
             where other programs share its CPU) and {:.0}% in its own scans: {:.0}% of the serial time spent on the helpers, {:.0} ns per kept vertex against \
             the {:.0} ns its scan saves",
            pct(s.heap_fraction()),
            pct(s.fraction(Phase::Pop)),
            pct(s.fraction(Phase::Push)),
            pct(s.fraction(Phase::Scan)),
            per_vertex(s.get(Phase::Scan) as f64),
            per_vertex(s.sum() as f64),
            pct(self.kept),
            pct(self.saveable()),
            1.0 / (1.0 - self.saveable()),
            pct(self.main_share(Phase::Drain)),
            pct(s.fraction(Phase::Push)),
            pct(self.main_share(Phase::Coordinate)),
            pct(self.main_share(Phase::Wait)),
            pct(self.main_share(Phase::Pop)),
            pct(s.fraction(Phase::Pop)),
            pct(self.main_share(Phase::Scan)),
            pct(self.overhead()),
            self.overhead() * s.sum() as f64 / (self.kept * self.settled as f64).max(1.0),
            per_vertex(s.get(Phase::Scan) as f64),
        )?;
        if let Some(sp) = self.speedup {
            write!(f, "; measured speed-up {sp:.3}x")?;
        }
        if let Some(w) = self.helper_wait {
            write!(f, ", the helpers waiting {:.0}% of their time", pct(w))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_follows_the_scan_share_kept() {
        let s = Split {
            ns: [0, 300, 500, 200, 0, 0, 0],
            total_ns: 1000,
            marks: 3,
            clock_read_ns: 0.0,
        };
        assert_eq!(s.fraction(Phase::Scan), 0.5);
        assert_eq!(s.heap_fraction(), 0.5);
        assert_eq!(s.bound(0.0), 1.0);
        assert_eq!(s.bound(1.0), 2.0);
        assert!((s.bound(0.8) - 1.0 / 0.6).abs() < 1e-12);
        assert_eq!(Split::default().fraction(Phase::Pop), 0.0);
    }

    #[test]
    fn the_account_weighs_overhead_against_the_scans_saved() {
        // Serial: pop 500, scan 400, push 100.
        let serial = Split {
            ns: [0, 500, 400, 100, 0, 0, 0],
            ..Split::default()
        };
        // With helpers: pops 600, own scans 100, own pushes 25, drains
        // 200, coordination 100.
        let main = Split {
            ns: [0, 600, 100, 25, 200, 100, 0],
            ..Split::default()
        };
        let a = Account {
            serial,
            main,
            kept: 0.75,
            settled: 10,
            speedup: Some(1000.0 / 1025.0),
            helper_wait: Some(0.5),
        };
        assert!((a.saveable() - 0.3).abs() < 1e-12);
        // Drain 200 + push 25 - 100, coordinate 100, pops +100: 325.
        assert!((a.overhead() - 0.325).abs() < 1e-12);
        let text = a.to_string();
        assert!(text.contains("60% of its time in the heap"), "{text}");
        assert!(text.contains("a bound of 1.43x"), "{text}");
        assert!(text.contains("(40 ns per settled vertex of 100)"), "{text}");
        assert!(
            text.contains("32% of the serial time spent on the helpers"),
            "{text}"
        );
        assert!(text.contains("measured speed-up 0.976x"), "{text}");
        match a.verdict(1.15) {
            Verdict::Reachable { allowed, spent, .. } => {
                // 0.3 saveable - (1 - 1/1.15) = 0.1696.
                assert!((allowed - (0.3 - 0.15 / 1.15)).abs() < 1e-12);
                assert_eq!(spent, a.overhead());
            }
            v => panic!("{v:?}"),
        }
        assert!(a
            .verdict(1.5)
            .to_string()
            .contains("1.5x is above the bound 1.43x"));
        // 325 ns over 7.5 kept vertices.
        assert!(
            text.contains("43 ns per kept vertex against the 40 ns"),
            "{text}"
        );
    }
}
