//! [`CpuTurns`]: turns between the CPUs of a contended [`RawTtasMutex`]
//! (`ttas.rs`), ended by count, so that threads on a slower CPU are not
//! passed over; and of a contended [`RawRwLock`](super::RawRwLock)
//! (`rwlock.rs`, "Turns between CPUs"), so that a lock taken back to back
//! on two CPUs stays on one at a time.
//!
//! # Why
//!
//! Contended by threads that outnumber the CPUs, the default mutex's
//! waiters poll by `yield` and win the lock back within their polling
//! phase: almost none sleeps, so its hand-offs (`ttas.rs`, "Bounded
//! unfairness"), which go to sleepers, never act. Who gets the lock is
//! decided by races between the CPUs: the holder re-acquires from its own
//! cache until a waiter on another CPU catches the lock free between two
//! of its acquisitions. When one virtual CPU runs slower than the other (a
//! busy host), its threads run fewer acquisitions while they hold the lock
//! and catch it free less often, and their share falls further than their
//! speed (`examples/mutex_starvation.rs --detail`).
//!
//! # How
//!
//! While threads of another CPU wait, the holder's releases keep the lock
//! for its own CPU's threads until the turn has had its releases (as many
//! as the lock makes in [`TURN_TARGET_NS`] at its fastest recent pace,
//! from [`TURN_ACQUISITIONS`] on a crowded machine, or
//! [`TURN_ACQUISITIONS_ALONE`] while the lock's threads fit on the CPUs,
//! up to [`MAX_TURN_ACQUISITIONS`]), then keep
//! it for the next CPU that waits, so every CPU gets the same number of
//! acquisitions per turn, whatever its speed (lock cohorting, Dice,
//! Marathe and Shavit, PPoPP 2012, with the CPUs as cohorts and the turn
//! ended by count, not time).
//! A turn is a hint beside the lock, never a state of its word: the
//! word's protocol, its loom models and its wake-ups are those of
//! `ttas.rs`. What the hint changes is only who *tries*:
//!
//! - an arriving thread whose CPU's turn it is not skips the fast path;
//! - a polling waiter whose CPU's turn it is not registers its CPU as
//!   waiting and, instead of watching the lock word, yields between looks
//!   at the hint, spinning only when the turn is about to end
//!   ([`turn_ending`], [`ENDING_BOOKKEEPINGS`]) so that the next CPU takes
//!   the lock at once;
//! - such a waiter waits on past its polling limit while the turn moves,
//!   instead of sleeping on the lock word: a waiter asleep there would
//!   make every release of the turn a `futex_wake` (a reader-writer
//!   lock's waiter sleeps on the hint instead, below, "Sleeping through a
//!   turn").
//!
//! The mutex's turns start only after long runs, a thread's bookkeeping
//! interval with at most [`RUN_CHANGES`] releases that followed one on
//! another CPU ([`HolderCpu`], [`TurnStart::AfterLongRuns`]): a mutex that
//! changes CPU every few releases has no long runs on one CPU for turns
//! to even out. The reader-writer lock's start after an interval with at
//! least [`CONTENDED_TO_START`] contended acquisitions
//! ([`TurnStart::WhenContended`]): it is the lock that changes CPU at
//! almost every acquisition that turns keep on one CPU at a time. Both
//! are kept only while the lock is saturated: its bookkeepings come at
//! most a stall apart ([`turn_stall_for`]: longer while the lock's
//! threads fit on the CPUs than on a crowded machine, where threads with
//! CPU-mates would wait out many turns); the waiters of a sparsely used
//! lock would wait out turns for a lock that is mostly free. A mutex
//! held through critical sections of a µs or more, whose
//! [`BOOKKEEPING_EVERY`] releases take longer than that stall, keeps
//! *slow turns*: its stall is two of its fastest recent bookkeeping
//! intervals instead, up to [`PACED_STALL_MAX_NS`] (two threads that take
//! it back to back keep it busy all the same), while its threads fit on
//! the CPUs and no other program wants them.
//!
//! A CPU counts as waiting from a registration of one of its threads to
//! the holder's next bookkeeping, which takes the registrations: waiters
//! out of turn register again each time they see the hint move, and a
//! CPU whose threads stopped waiting drops out; with no other CPU
//! waiting, the turns end.
//!
//! Turns hold only where the waiters out of turn look at the hint more
//! often than the holder does its bookkeeping. In a loop of a few ns per
//! release, the bookkeepings come about every µs, and a waiter that
//! yields to a CPU-mate looks less often: its CPU's registration is taken
//! before it registers again, and the turn ends at its next bookkeeping,
//! having evened nothing out. Such turns still cost the lock a start and
//! an end each, so after a turn that ended at its first bookkeepings, no
//! turn starts for a pause of bookkeepings that doubles with each such
//! turn, up to [`MAX_START_PAUSE`]; a turn that runs to its change
//! resets it.
//!
//! Nothing waits on the hint alone. A waiter waits past its polling limit
//! only while the hint moves, at least once per stall, and never past its
//! deadline; a turn kept for a CPU whose threads do not come (they
//! stopped using the lock) stops moving, and the waiters'
//! test-and-set probe takes the lock as always. The probe after a polling
//! phase, a woken sleeper and `try_lock` ignore turns; a release by a
//! thread that took the lock out of its CPU's turn gives the turn to the
//! next waiting CPU at once (or ends the turns).
//!
//! # Sleeping through a turn
//!
//! A waiter out of turn that yields with no other thread to run gets its
//! CPU straight back: while the lock's threads fit on the CPUs it burns
//! that CPU for the whole turn, yielding or spinning, where a lock whose
//! waiters park (parking_lot's) leaves it idle. So a waiter of a lock
//! whose turns start when contended (the reader-writer lock's,
//! [`TurnStart::sleeps_out_of_turn`]), or of a mutex's slow turns, sleeps
//! on the hint instead while the lock's threads fit on the CPUs (and, for
//! slow turns, no other program wants them: a busy CPU would run the
//! woken waiter late), and the holder wakes it in time for its turn:
//!
//! - the waiter sets its CPU's bit in a mask of sleeping CPUs, then
//!   sleeps on the hint word (a futex) while the hint is the one it read,
//!   at most until its stall or deadline;
//! - a CPU in that mask counts as waiting at every bookkeeping, as if its
//!   thread had registered;
//! - a bookkeeping that gives the turn to another CPU, ends the turns, or
//!   leaves fewer releases than a bookkeeping interval plus the wake-up's
//!   lead (`B`, at least [`TURN_WAKE_LEAD_MIN_NS`]) before the change
//!   ([`wakes_before`]) has the sleepers woken; the holder does that after
//!   its release ([`CpuTurns::after_bookkeeping`]), and only if the mask
//!   is not empty: one `futex_wake` per turn, or two when the woken
//!   waiter has not left its sleep by the change;
//! - a waiter never sleeps at a hint whose bookkeeping would have woken
//!   it: it polls as above through the end of the turn.
//!
//! The sleep is a hint's, like the turns: a wake-up that comes late (or
//! never) costs the waiter at most its stall, after which it probes the
//! lock as always. Turns of such a lock last [`SLEEPING_TURN_TARGET_NS`]
//! while its threads fit on the CPUs, and slow turns
//! [`SLOW_TURN_ACQUISITIONS`] releases at least, so that the sleep is
//! most of the waiter's turn. On a crowded machine the waiters yield, as
//! a sleeping waiter's CPU-mates would run anyway.
//!
//! # Starving waiters
//!
//! A reader-writer lock's turns start when its holder's acquisitions are
//! mostly contended. A holder that locks again at once, through critical
//! sections of a µs or more, is hardly ever contended: it wins almost
//! every race against the waiter, which polls through its phase in vain
//! and sleeps in the lock's own protocol, again and again, while the
//! holder runs alone. So a waiter about to sleep there registers its CPU
//! and marks the lock *starving* ([`CpuTurns::register_starving`]), and
//! the holder's next bookkeeping starts turns for it while the lock's
//! threads fit on the CPUs, the first turn the starving waiter's CPU's.
//! A reader woken from that sleep in another CPU's turn then waits for its
//! own on the hint, as an arriving one does. Such a lock's
//! [`BOOKKEEPING_EVERY`] releases may take longer than the stall, so turns
//! kept for a starving waiter stall for two of the lock's fastest recent
//! bookkeeping intervals at least, for [`STARVING_TURNS`] changes of turn;
//! then the usual stall judges the lock again, and the turns of a lock
//! whose bookkeepings come further apart end until a waiter starves
//! again. A lock that is mostly free, whose waiter starved because its
//! holder was preempted, thus keeps turns for a few changes only.
//!
//! # Cost
//!
//! Uncontended: a load of the hint in `lock`, and of the hint and the
//! waiting CPUs in `unlock`. Contended across CPUs, per release: the
//! thread's cached CPU number and a count of its releases, both
//! thread-local, and a look at the [`HolderCpu`] beside the word (a store
//! when the lock moved CPU); every [`BOOKKEEPING_EVERY`] releases of a
//! thread, the bookkeeping (its CPU looked up with `sched_getcpu`, the
//! clock read, the registrations taken, the turn's count and the hint
//! stored). The hint lives on its own cache line, away from the lock
//! word and the value (`RawTtasMutex` puts it first and the word last):
//! the off-turn waiters' looks then never take the word's line from the
//! holder, and they see the hint's line change only at a bookkeeping. A
//! lock whose waiters sleep through turns adds, at each bookkeeping, a
//! load of the hint and a store of the wake-up flag; after it, outside
//! the critical section, a fence and a look at the sleeping CPUs, and the
//! `futex_wake` when some sleep.
//!
//! # Memory ordering
//!
//! All `Relaxed`: the hint publishes no data (the lock word's own
//! acquire/release pairs order the critical sections), and a stale hint
//! only makes a thread try, or hold back, once more. The holder writes the
//! turn before it releases the word, so only a holder ever writes the
//! count and the hint. One exception: a waiter about to sleep on the hint
//! and the releaser that wakes the sleepers form a store-buffering pair
//! (the waiter's bit in the sleeping CPUs then the kernel's look at the
//! hint; the holder's hint store then its look at the bits), with a
//! `SeqCst` fence on each side, so that either the sleep is refused or
//! the releaser sees the bit and wakes it; a wake-up lost anyway would
//! cost the waiter its stall, not the lock its progress.

use std::time::Duration;
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{spin_hint, yield_now, AtomicBool, AtomicU32, AtomicU64, Ordering};

/// Releases per turn at least on a crowded machine ([`least_turn_for`]; a
/// multiple of [`BOOKKEEPING_EVERY`]): a turn lasts about
/// [`TURN_TARGET_NS`] at the lock's pace, from this many to
/// [`MAX_TURN_ACQUISITIONS`] releases. Under loom, 2: the models reach a
/// change of turn.
pub const TURN_ACQUISITIONS: u32 = if cfg!(loom) { 2 } else { 1024 };

/// Releases closer than this, ns, at a lock's fastest recent pace make it
/// a lock whose holder's runs are worth more than its waiters' early
/// catches ([`CpuTurns::releases_come_fast`]): about one cache-line
/// transfer between CPUs (a spin ping-pong's round trip is ~80 ns on this
/// project's 2-vCPU guest). Measured there with the `waitwise peers` mutex
/// workload at empty critical sections (its loop, with a clock read per
/// acquisition, released about every 50 ns) against parking_lot in the same
/// process: 1.2-1.9x its throughput with 32 ns, 0.9-1.4x with 64 ns; a
/// loop of ~16 ns per release skips the looks at either.
pub const FAST_RELEASE_NS: u64 = 32;

/// Releases per turn at most.
pub const MAX_TURN_ACQUISITIONS: u32 = if cfg!(loom) { 2 } else { 8192 };

/// How long a turn lasts, in ns at the fastest recent pace of the lock's
/// releases (so that every CPU gets the same number of releases per turn,
/// whatever its speed), within [`TURN_ACQUISITIONS`] and
/// [`MAX_TURN_ACQUISITIONS`].
///
/// Each change of turn costs the lock the time the next CPU's waiter takes
/// to see it, and the thread that takes a CPU's turn is the one running
/// on it when the turn comes, so a thread whose CPU-mates run at each of
/// its CPU's turns waits many turns: short turns cost throughput, long
/// ones stretch the longest wait. Measured against parking_lot with
/// `examples/mutex_bench.rs` (throughput at 4 and 8 threads) and
/// `examples/mutex_starvation.rs` (longest wait): turns counted in
/// releases suit one loop and not the other (a release costs several
/// times more in the second), so turns are timed; the shortest time that
/// kept `mutex_bench` at parking_lot's throughput kept the longest waits
/// of `mutex_starvation` near parking_lot's too.
pub const TURN_TARGET_NS: u64 = 48_000;

/// How long a turn lasts, in ns as [`TURN_TARGET_NS`], while the lock's
/// threads fit on the CPUs and its waiters out of turn sleep through it
/// ([`TurnStart::sleeps_out_of_turn`]): long enough for the sleep to be
/// most of the turn, as the waiter is woken a bookkeeping interval and
/// `B` before its end ([`wakes_before`]). Two threads taking a
/// reader-writer lock back to back through ~100 ns critical sections on 2
/// vCPUs, with `B` at 20-30 µs, then wait ~100 µs for their turn
/// (parking_lot's and std's longest waits there: 0.2-12 ms).
pub const SLEEPING_TURN_TARGET_NS: u64 = 96_000;

/// The target length of a turn (pure): [`SLEEPING_TURN_TARGET_NS`] for a
/// lock whose waiters out of turn sleep, while its threads fit on the
/// CPUs (not `crowded`), else [`TURN_TARGET_NS`].
pub fn turn_target_ns(start: TurnStart, crowded: bool) -> u64 {
    if start.sleeps_out_of_turn() && !crowded {
        SLEEPING_TURN_TARGET_NS
    } else {
        TURN_TARGET_NS
    }
}

/// A thread does the turns' bookkeeping at every this many of its
/// releases of a lock with CPUs waiting (its own count, thread-local):
/// its CPU looked up, the turn's count moved on, the hint stored. Measured
/// as [`TURN_ACQUISITIONS`]: with the hint stored every few releases, the
/// off-turn waiters' looks take the hint's line from the holder often
/// enough to cost `mutex_bench` throughput at 4 and 8 threads; every 128
/// costs nothing measurable. Under loom, every release.
pub const BOOKKEEPING_EVERY: u32 = if cfg!(loom) { 1 } else { 128 };

/// Bookkeepings before the end of a turn during which the waiters out of
/// turn spin (PAUSE) instead of yielding between looks at the hint, so
/// that the next CPU takes the lock as soon as its turn comes. A waiter
/// with a CPU-mate to switch to looks once per context switch. Measured
/// with `examples/mutex_bench.rs` at 4 and 8 threads on 2 CPUs: spinning
/// for the last bookkeeping only often misses the change, a few more
/// catch it, and more gain nothing.
pub const ENDING_BOOKKEEPINGS: u32 = 2;

/// How long the hint may stand still, ns, while the lock's threads fit on
/// the CPUs ([`turn_stall_for`]): a waiter out of its CPU's turn waits past
/// its polling limit while the hint moves at least this often (then it
/// probes, and sleeps as always), and a lock whose bookkeepings come
/// further apart is not saturated. Above the bookkeeping interval of two
/// threads taking turns through a critical section of ~100 ns
/// ([`BOOKKEEPING_EVERY`] releases, ~25 µs on 2 vCPUs), with room for a
/// host's preemption of the holder. A stall a few times a futex
/// wake-up's cost (12 µs at the ~3 µs of one of a hypervisor's wake-up
/// modes) ended such turns at every bookkeeping: the waiter slept, and
/// every release of the turn paid its `futex_wake`
/// (`waitwise peers --only mutex`, 2 threads: 0.7-0.8 of the best peer's
/// throughput, 1.3x its CPU per acquisition, against 1.4-1.8 and 0.6-0.9
/// with this stall, in both wake-up modes). The price: the longest wait is
/// about one turn, 150-200 µs there, against 15-40 µs for std's and
/// parking_lot's mutexes, which hand the lock over far more often.
pub const TURN_STALL_ALONE_NS: u64 = 64_000;

/// How long the hint may stand still, ns, while the machine is crowded
/// ([`turn_stall_for`]). A thread with CPU-mates is off its CPU for most of
/// its own CPU's turns, and waits for a turn it is running at: a long
/// stall keeps such turns going, and let one of 8 threads on 2 CPUs wait
/// 10-30 ms for the lock (`waitwise peers --only mutex` with `B` at 20 µs,
/// whose stall was then 80 µs) where parking_lot's waits stayed under
/// 0.3 ms. 12 µs ends such turns soon and keeps the longest wait near
/// parking_lot's (2-3x) in both wake-up modes.
pub const TURN_STALL_CROWDED_NS: u64 = 12_000;

/// The longest stall, ns, of a mutex's slow turns (its bookkeeping
/// intervals longer than [`TURN_STALL_ALONE_NS`]), while its threads fit on
/// the CPUs and no other program wants them: two of its fastest recent
/// intervals, up to this. Two threads taking the default mutex back to
/// back through ~1 µs critical sections on 2 vCPUs make a bookkeeping
/// every ~140 µs. Without turns, the holder re-acquired from its cache
/// and the waiter, after polling 20-40 µs, caught the lock every few
/// dozen releases: both CPUs stayed busy, at 1.2-1.3x parking_lot's CPU
/// time per acquisition, whose waiter sleeps (`waitwise peers --full
/// --only mutex`). With turns held through this stall, the waiter sleeps
/// through the other CPU's turn ("Sleeping through a turn"). A mutex held
/// through ~10 µs critical sections (bookkeepings ~1.3 ms apart) keeps no
/// turns: its waiter would wait out milliseconds.
pub const PACED_STALL_MAX_NS: u64 = 400_000;

/// Releases per turn at least of a mutex's slow turns (bookkeepings
/// further apart than [`TURN_STALL_ALONE_NS`]), while its threads fit on
/// the CPUs: four bookkeepings. Its sleepers are woken a bookkeeping
/// interval and the lead before the change ([`wakes_before`]), so a
/// waiter sleeps through about the first three quarters of such a turn,
/// where a turn of [`TURN_ACQUISITIONS_ALONE`] would leave it half.
pub const SLOW_TURN_ACQUISITIONS: u32 = 4 * BOOKKEEPING_EVERY;

/// Releases per turn at least while the lock's threads fit on the CPUs
/// ([`least_turn_for`]): two bookkeepings, the fewest a turn can run to
/// its change with (a turn that ends at its first bookkeeping did not
/// hold, [`MAX_START_PAUSE`]). Two threads taking turns through a
/// critical section of ~100 ns on 2 vCPUs then wait ~50 µs for their
/// turn, where [`TURN_ACQUISITIONS`] made them wait ~200 µs, 5-7x the
/// longest wait of std's and parking_lot's mutexes
/// (`waitwise peers --only mutex`), at the same throughput.
pub const TURN_ACQUISITIONS_ALONE: u32 = if cfg!(loom) { 2 } else { 2 * BOOKKEEPING_EVERY };

/// Whether the machine counts as crowded for the turns (pure): at least
/// [`crowding::CROWDED_RUNNABLE_PER_CPU`] runnable threads per CPU
/// (`runnable_per_cpu`), or not known. Neither the stall nor the turn's
/// least length follows `B`, which a hypervisor's wake-up modes move by
/// several times between processes.
///
/// [`crowding::CROWDED_RUNNABLE_PER_CPU`]: crate::policy::crowding::CROWDED_RUNNABLE_PER_CPU
pub fn crowded_for_turns(runnable_per_cpu: Option<f64>) -> bool {
    runnable_per_cpu.is_none_or(|r| r >= crate::policy::crowding::CROWDED_RUNNABLE_PER_CPU)
}

/// The stall (pure): [`TURN_STALL_CROWDED_NS`] on a `crowded` machine
/// ([`crowded_for_turns`]), else [`TURN_STALL_ALONE_NS`].
pub fn turn_stall_for(crowded: bool) -> u64 {
    if crowded {
        TURN_STALL_CROWDED_NS
    } else {
        TURN_STALL_ALONE_NS
    }
}

/// The least releases of a turn (pure): [`TURN_ACQUISITIONS`] on a
/// `crowded` machine ([`crowded_for_turns`]), else
/// [`TURN_ACQUISITIONS_ALONE`].
pub fn least_turn_for(crowded: bool) -> u32 {
    if crowded {
        TURN_ACQUISITIONS
    } else {
        TURN_ACQUISITIONS_ALONE
    }
}

/// Whether the machine is crowded now: [`crowded_for_turns`] with the
/// machine's runnable threads per CPU, as the demand cache last read them.
/// The holder's bookkeeping asks while others wait for the lock, so it
/// never reads the machine itself (a few µs, at most bookkeepings where
/// the cache was read every 100 µs); the releaser reads it after the
/// release ([`CpuTurns::after_bookkeeping`]), and waiters out of turn
/// before they wait ([`CpuTurns::wait_for_turn`]), as other waits do at
/// their polling limit. Under loom, yes (the models read no clocks).
fn machine_crowded() -> bool {
    #[cfg(not(loom))]
    {
        crowded_for_turns(crate::policy::idle_extension::last_runnable_per_cpu())
    }
    #[cfg(loom)]
    {
        true
    }
}

/// Whether other programs want the CPUs: more threads were runnable than
/// CPUs at the demand cache's last read (or it is not known), and the
/// process itself did not use most of its CPUs lately. Under loom, no.
fn other_programs_want_cpus() -> bool {
    #[cfg(not(loom))]
    {
        use crate::policy::idle_extension::{last_runnable_per_cpu, process_uses_most_cpus};
        last_runnable_per_cpu().is_none_or(|r| r > 1.0) && !process_uses_most_cpus()
    }
    #[cfg(loom)]
    {
        false
    }
}

/// Turns start after a thread's bookkeeping interval in which at most
/// this many of its releases followed a release on another CPU (runs of
/// about [`BOOKKEEPING_EVERY`] / this releases on one CPU or longer).
/// Measured on 2 vCPUs: in a tight loop of 2 to 8 threads, the default
/// mutex without turns changes CPU every 80-250 releases. Two threads
/// pinned to the two CPUs, each spinning 200 ns between acquisitions,
/// change it far more often; turns started on any registration there cost
/// a fifth of the acquisitions (3.6 against 4.5 M/s, one run), and with
/// this rule none were lost.
pub const RUN_CHANGES: u32 = 8;

/// Bookkeepings at most during which no turn starts after turns that did
/// not hold (ended at their first bookkeepings): the pause doubles with
/// each such turn, from 1, and a turn that runs to its change resets it.
/// In a loop of a few ns per release, a bookkeeping comes every ~1 µs,
/// sooner than waiters that yield to a CPU-mate look at the hint again;
/// their CPU's registration is gone at the next bookkeeping and the turn
/// ends there. Counted on 2 vCPUs in `examples/mutex_bench.rs`'s loop at
/// 4 and 8 threads, without pauses: 100-120 thousand turns started per
/// second, about 100 of them reached their change (in
/// `examples/mutex_starvation.rs`'s loop, with two clock reads per call,
/// about 16 thousand turns per second ran to their change). Chosen by
/// alternating runs with and without pauses of `mutex_bench` (throughput
/// against parking_lot at 4 and 8 threads) and `mutex_starvation` (its
/// fairness targets): the pauses raised the throughput and left the
/// fairness targets met as often, its longest waits a little longer. Under
/// loom no start pauses (the models
/// explore turns that start at once).
pub const MAX_START_PAUSE: u32 = 16;

/// CPU slots the waiting mask tells apart (a CPU number counts modulo
/// this: CPUs that share a slot share turns).
const SLOTS: u32 = 64;

/// Bits of the hint that hold the CPU slot plus one (0: no turn).
const SLOT_BITS: u32 = 7;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;

/// The turns of one lock. See the module docs.
#[derive(Debug)]
pub struct CpuTurns {
    /// 0 when no turn is kept; else the slot the turn is kept for, plus
    /// one, in the low [`SLOT_BITS`] bits, and the turn's releases to go
    /// at its last bookkeeping above them (so that a waiter sees the turn
    /// move, and its end come).
    kept_for: AtomicU32,
    /// Releases in the current turn, counted at each bookkeeping. Only a
    /// holder touches it.
    released: AtomicU32,
    /// Bit `s`: a thread of CPU slot `s` registered as waiting since the
    /// last bookkeeping, which clears the bits.
    waiting: AtomicU64,
    /// Bit `s`: a thread of CPU slot `s` sleeps on the hint through another
    /// CPU's turn ("Sleeping through a turn"); its CPU counts as waiting
    /// at every bookkeeping meanwhile.
    sleeping: AtomicU64,
    /// Set by a bookkeeping after which the sleepers must be woken, once
    /// the lock is released ([`CpuTurns::after_bookkeeping`]).
    wake_due: AtomicBool,
    /// Set by a waiter about to sleep in the lock's own protocol
    /// ([`CpuTurns::register_starving`]); taken by the next bookkeeping,
    /// which it lets start turns ("Starving waiters"). A std atomic, as
    /// `starving_turns`: hints that the loom models, which never starve a
    /// waiter, need not explore.
    starving: std::sync::atomic::AtomicBool,
    /// Changes of turn left in turns kept for a starving waiter
    /// ([`STARVING_TURNS`]); 0 when the turns are not such turns. Only a
    /// holder writes it.
    starving_turns: std::sync::atomic::AtomicU32,
    /// Cycle-clock ns of the last bookkeeping (0: none yet). Only a
    /// holder touches it.
    bookkept_ns: AtomicU64,
    /// The fastest recent interval between two bookkeepings of one thread
    /// (its [`BOOKKEEPING_EVERY`] releases), ns (0: none yet), drifting up
    /// by 1/64 at each. Only a holder touches it.
    fastest_ns: AtomicU64,
    /// The thread of the last bookkeeping ([`thread_mark`]). Only a
    /// holder touches it.
    bookkept_by: AtomicU64,
    /// The current turn's length, releases. Only a holder touches it.
    turn_length: AtomicU32,
    /// Bookkeepings during which no turn starts ([`MAX_START_PAUSE`]).
    /// Only a holder touches it.
    start_pause: AtomicU32,
    /// The pause after the next turn that does not hold. Only a holder
    /// touches it.
    next_start_pause: AtomicU32,
    /// What starts turns.
    start: TurnStart,
}

/// What starts a lock's turns (with another CPU waiting, on a saturated
/// lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnStart {
    /// Long runs on one CPU ([`RUN_CHANGES`]): turns even them out.
    AfterLongRuns,
    /// A holder whose acquisitions were mostly contended
    /// ([`CONTENDED_TO_START`]): the lock moves between CPUs at almost
    /// every acquisition, and turns keep it on one CPU at a time.
    WhenContended,
}

impl TurnStart {
    /// Whether a bookkeeping interval of the holder's, in which
    /// `cpu_changes` of its releases followed one on another CPU and
    /// `contended` of its acquisitions were contended, starts turns (pure).
    pub fn starts(self, cpu_changes: u32, contended: u32) -> bool {
        match self {
            TurnStart::AfterLongRuns => cpu_changes <= RUN_CHANGES,
            TurnStart::WhenContended => contended >= CONTENDED_TO_START,
        }
    }

    /// Whether the lock's waiters out of turn sleep through a turn while
    /// its threads fit on the CPUs (module docs, "Sleeping through a
    /// turn"): those of the locks whose turns start when contended.
    pub fn sleeps_out_of_turn(self) -> bool {
        self == TurnStart::WhenContended
    }
}

/// Turns of a [`TurnStart::WhenContended`] lock start after a thread's
/// bookkeeping interval in which at least this many of its acquisitions
/// were contended (the lock notes them): half of them. Counted on 2 vCPUs
/// without turns, a writer and a reader taking the lock back to back
/// through ~100 ns critical sections contend at ~90% of their
/// acquisitions, through ~1 µs ones at ~40%, and spinning ~1 µs between
/// ~100 ns acquisitions at 10-25%: a lock mostly free, whose waiters
/// turns would only hold back.
pub const CONTENDED_TO_START: u32 = BOOKKEEPING_EVERY.div_ceil(2);

/// Changes of turn that turns kept for a starving waiter last ("Starving
/// waiters"): two rounds of turns between two CPUs. Then the stall is the
/// usual one again, and turns of a lock whose bookkeepings come further
/// apart than that end, until a waiter starves again; a lock that is
/// mostly free, whose waiter starved once (its holder preempted), keeps
/// them no longer.
pub const STARVING_TURNS: u32 = 4;

/// The CPU of the lock's last release while turns are considered, kept
/// beside the lock word (whose cache line the holder owns): the holder
/// reads it at each such release and writes it when the lock moved CPU.
#[derive(Debug)]
pub struct HolderCpu(AtomicU32);

impl HolderCpu {
    crate::loom_const::const_unless_loom! {
        /// No release seen.
        pub fn new() -> Self {
            Self(AtomicU32::new(u32::MAX))
        }
    }

    /// Records a release on CPU `cpu`; `true` if the last one was on
    /// another CPU.
    #[inline]
    fn moved_to(&self, cpu: u32) -> bool {
        // Relaxed: a hint; only holders touch it.
        if self.0.load(Ordering::Relaxed) == cpu {
            return false;
        }
        self.0.store(cpu, Ordering::Relaxed);
        true
    }
}

impl Default for HolderCpu {
    fn default() -> Self {
        Self::new()
    }
}

/// How the turn stands for a thread of one CPU slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnFor {
    /// No turn is kept, or it is this CPU's: take a free lock.
    Mine,
    /// Another CPU's turn, as the hint was when read (compare two reads to
    /// see it move; [`turn_ending`] says whether it is about to end).
    Other(u32),
}

impl CpuTurns {
    crate::loom_const::const_unless_loom! {
        /// No turn kept, no CPU waiting.
        pub fn new() -> Self {
            Self {
                kept_for: AtomicU32::new(0),
                released: AtomicU32::new(0),
                waiting: AtomicU64::new(0),
                sleeping: AtomicU64::new(0),
                wake_due: AtomicBool::new(false),
                starving: std::sync::atomic::AtomicBool::new(false),
                starving_turns: std::sync::atomic::AtomicU32::new(0),
                bookkept_ns: AtomicU64::new(0),
                fastest_ns: AtomicU64::new(0),
                bookkept_by: AtomicU64::new(0),
                turn_length: AtomicU32::new(0),
                start_pause: AtomicU32::new(0),
                next_start_pause: AtomicU32::new(1),
                start: TurnStart::AfterLongRuns,
            }
        }

        /// No turn kept, no CPU waiting; turns start as `start` says.
        pub fn starting(start: TurnStart) -> Self {
            Self {
                start,
                ..Self::new()
            }
        }
    }

    /// Whether a turn is kept (arrivals look whose it is before taking
    /// the fast path).
    #[inline(always)]
    pub fn kept(&self) -> bool {
        // Relaxed: a hint (module docs, "Memory ordering").
        self.kept_for.load(Ordering::Relaxed) != 0
    }

    /// Whether the calling thread may take the fast path: no turn is
    /// kept, or the kept one is its CPU's (one load of the hint when none
    /// is kept).
    #[inline(always)]
    pub fn in_turn(&self) -> bool {
        !self.kept() || self.turn_for(cpu_slot()) == TurnFor::Mine
    }

    /// How the turn stands for a thread of `slot`.
    #[inline]
    pub fn turn_for(&self, slot: u32) -> TurnFor {
        // Relaxed: a hint.
        let kept = self.kept_for.load(Ordering::Relaxed);
        if kept == 0 || kept_by(kept, slot) {
            TurnFor::Mine
        } else {
            TurnFor::Other(kept)
        }
    }

    /// A waiter of `slot` registers its CPU as waiting (one load when it
    /// is already registered).
    #[inline]
    pub fn register_waiting(&self, slot: u32) {
        let bit = 1u64 << (slot % SLOTS);
        // Relaxed: a hint.
        if self.waiting.load(Ordering::Relaxed) & bit == 0 {
            self.waiting.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// A waiter of `slot` about to sleep in the lock's own protocol (its
    /// polling phase passed without the lock): registers the CPU as
    /// waiting, and lets the next bookkeeping start turns whatever the
    /// holder's contention ("Starving waiters"). One load when both are
    /// set already.
    #[inline]
    pub fn register_starving(&self, slot: u32) {
        if !self.sleeps_out_of_turn() {
            return;
        }
        self.register_waiting(slot);
        // Relaxed: a hint.
        if !self.starving.load(Ordering::Relaxed) {
            self.starving.store(true, Ordering::Relaxed);
        }
    }

    /// How long the hint may stand still now ([`turn_stall_for`]), ns.
    /// While the lock's threads fit on the CPUs, for turns kept for a
    /// starving waiter (`for_starving`) and for a mutex's turns, at least
    /// two of the lock's fastest recent bookkeeping intervals, so that
    /// turns hold on a lock held through long critical sections too
    /// (whose [`BOOKKEEPING_EVERY`] releases take longer than
    /// [`TURN_STALL_ALONE_NS`]); a mutex's up to [`PACED_STALL_MAX_NS`].
    fn stall_ns(&self, crowded: bool, for_starving: bool) -> u64 {
        let stall = turn_stall_for(crowded);
        if crowded {
            return stall;
        }
        // Relaxed: a hint; only a holder writes it.
        let paced = self.fastest_ns.load(Ordering::Relaxed).saturating_mul(2);
        if for_starving {
            stall.max(paced)
        } else if self.start == TurnStart::AfterLongRuns {
            stall.max(paced.min(PACED_STALL_MAX_NS))
        } else {
            stall
        }
    }

    /// Whether the turns are kept for a starving waiter
    /// ([`STARVING_TURNS`]).
    #[inline]
    fn for_starving(&self) -> bool {
        // Relaxed: a hint; only a holder writes it.
        self.starving_turns.load(Ordering::Relaxed) != 0
    }

    /// A waiter of `slot` in another CPU's turn: registers the CPU as
    /// waiting and waits for the turn to be this CPU's (`true`), yielding
    /// between looks at the hint (spinning while the turn is about to
    /// end, [`turn_ending`]), unless the hint stands still for a stall
    /// ([`TURN_STALL_ALONE_NS`], [`TURN_STALL_CROWDED_NS`]) or `deadline`
    /// passes (`false`). Under loom, one look (the models explore the
    /// lock word's protocol).
    #[cold]
    pub fn wait_for_turn(&self, slot: u32, deadline: Deadline) -> bool {
        self.register_waiting(slot);
        if cfg!(loom) {
            return self.turn_for(slot) == TurnFor::Mine;
        }
        // Off the lock's critical path: the holder's bookkeeping reads the
        // machine's crowding as last cached (`machine_crowded`).
        #[cfg(not(loom))]
        crate::policy::idle_extension::refresh_stale_demand();
        let stall = Duration::from_nanos(self.stall_ns(self.crowded_now(), self.for_starving()));
        let mut seen = None;
        let mut stall_end = Deadline::NEVER;
        loop {
            let TurnFor::Other(now) = self.turn_for(slot) else {
                return true;
            };
            if seen != Some(now) {
                // The turn moved: this CPU still waits (registrations last
                // until the holder's next bookkeeping).
                seen = Some(now);
                self.register_waiting(slot);
                stall_end = deadline.min(Deadline::after(stall));
            }
            if stall_end.has_passed() {
                return false;
            }
            if self.sleeps_through(now) {
                self.sleep_on_hint(slot, now, stall_end);
            } else if turn_ending(now) {
                spin_hint();
            } else {
                yield_now();
            }
        }
    }

    /// Whether the lock's releases come less than [`FAST_RELEASE_NS`]
    /// apart at its fastest recent pace (unknown: no): a holder that takes
    /// such a lock back at once makes a run of acquisitions from its own
    /// cache that a waiter on another CPU should not break (`ttas.rs`,
    /// "Early looks").
    #[inline]
    pub fn releases_come_fast(&self) -> bool {
        // Relaxed: a hint; only a holder writes it.
        let fastest = self.fastest_ns.load(Ordering::Relaxed);
        fastest != 0 && fastest < u64::from(BOOKKEEPING_EVERY) * FAST_RELEASE_NS
    }

    /// Whether the lock's waiters out of turn sleep through a turn now
    /// ("Sleeping through a turn"): its turns are such (the reader-writer
    /// lock's, or a mutex's slow turns), and the machine is not crowded
    /// for them. Under loom, no.
    #[inline]
    pub fn sleeps_out_of_turn(&self) -> bool {
        self.sleeps_in_turns() && !self.crowded_now()
    }

    /// Whether the lock's waiters out of turn sleep through turns while its
    /// threads fit on the CPUs: those of a lock whose turns start when
    /// contended, and those of a mutex that keeps slow turns
    /// ([`CpuTurns::keeps_slow_turns`]).
    #[inline]
    fn sleeps_in_turns(&self) -> bool {
        self.start.sleeps_out_of_turn() || self.keeps_slow_turns()
    }

    /// Whether the lock is a mutex ([`TurnStart::AfterLongRuns`]) whose
    /// bookkeeping intervals take longer than the usual stall
    /// ([`TURN_STALL_ALONE_NS`]) at its fastest recent pace: held through
    /// critical sections of a µs or more, its turns hold only through the
    /// paced stall ([`PACED_STALL_MAX_NS`]), and its waiters out of turn
    /// sleep through them ("Sleeping through a turn").
    #[inline]
    fn keeps_slow_turns(&self) -> bool {
        // Relaxed: a hint; only a holder writes it.
        self.start == TurnStart::AfterLongRuns
            && self.fastest_ns.load(Ordering::Relaxed) > TURN_STALL_ALONE_NS
    }

    /// Whether the machine counts as crowded for this lock's turns now:
    /// [`machine_crowded`], or, for a lock that keeps slow turns
    /// ([`CpuTurns::keeps_slow_turns`]), other programs want the CPUs
    /// ([`other_programs_want_cpus`]). A waiter asleep through such a turn
    /// is woken a lead before its turn, and a busy CPU runs it late.
    #[inline]
    fn crowded_now(&self) -> bool {
        machine_crowded() || (self.keeps_slow_turns() && other_programs_want_cpus())
    }

    /// Whether a waiter out of turn that sees the hint `kept` sleeps on it
    /// ("Sleeping through a turn"): while the lock's threads fit on the
    /// CPUs, until the holder's bookkeeping that wakes the sleepers.
    #[inline]
    fn sleeps_through(&self, kept: u32) -> bool {
        !cfg!(loom) && self.sleeps_out_of_turn() && !self.wakes_sleepers_at(kept)
    }

    /// Whether a bookkeeping that stores the hint `kept` wakes the
    /// sleepers: the turn will change within its next bookkeeping, or
    /// within the lead ([`wake_lead_ns`]), at the lock's fastest recent
    /// pace (unknown: at once).
    #[inline]
    fn wakes_sleepers_at(&self, kept: u32) -> bool {
        // Relaxed: a hint; only a holder writes it.
        let fastest = self.fastest_ns.load(Ordering::Relaxed);
        fastest == 0 || wakes_before(kept >> SLOT_BITS, fastest, wake_lead_ns())
    }

    /// Sleeps on the hint while it reads `seen`, at most until `until`,
    /// with this CPU counted as waiting meanwhile ("Sleeping through a
    /// turn"). Under loom, a `yield` (the models never sleep here).
    fn sleep_on_hint(&self, slot: u32, seen: u32, until: Deadline) {
        #[cfg(not(loom))]
        {
            let bit = 1u64 << (slot % SLOTS);
            // SeqCst, and the fence: the store-buffering pair with the
            // holder's hint store and its fence before it reads `sleeping`
            // (`after_bookkeeping`): either the holder sees this bit and
            // wakes, or the kernel's comparison sees the new hint.
            self.sleeping.fetch_or(bit, Ordering::SeqCst);
            waitwise_platform::shim::fence(Ordering::SeqCst);
            let hint = waitwise_platform::futex::Futex::from_atomic(&self.kept_for);
            let _ = hint.wait(seen, until.remaining());
            // Relaxed: a hint (another sleeper of this slot may lose its
            // bit; it then waits at most until `until`).
            self.sleeping.fetch_and(!bit, Ordering::Relaxed);
        }
        #[cfg(loom)]
        {
            let _ = (slot, seen, until);
            yield_now();
        }
    }

    /// The holder, before it releases the lock: keeps the lock for its
    /// CPU while another CPU waits, and gives the turn to the next waiting
    /// CPU after the turn's releases (as many as the lock makes in
    /// [`TURN_TARGET_NS`]).
    ///
    /// `holder_cpu` is the lock's [`HolderCpu`], beside its word. Returns
    /// whether it did the bookkeeping: then the caller, once it has
    /// released the lock, calls [`CpuTurns::after_bookkeeping`].
    #[inline]
    #[must_use]
    pub fn before_release(&self, holder_cpu: &HolderCpu) -> bool {
        // Relaxed: a hint.
        let kept = self.kept_for.load(Ordering::Relaxed);
        if kept == 0 && self.waiting.load(Ordering::Relaxed) == 0 {
            return false;
        }
        let me = cpu_slot();
        if holder_cpu.moved_to(me) && kept == 0 {
            note_cpu_change();
        }
        // A release out of the kept turn is accounted at once.
        if count_release() || (kept != 0 && !kept_by(kept, me)) {
            self.keep_turn(kept);
            return true;
        }
        false
    }

    /// The bookkeeping of a holder's release, with the hint `kept`. Turns
    /// start as the lock's [`TurnStart`] says, from the thread's
    /// bookkeeping interval, or, while the lock's threads fit on the CPUs,
    /// for a starving waiter ("Starving waiters").
    #[cold]
    fn keep_turn(&self, kept: u32) {
        let crowded = self.crowded_now();
        // Relaxed: a hint, taken at every bookkeeping.
        let starving = self.starving.load(Ordering::Relaxed)
            && self.starving.swap(false, Ordering::Relaxed)
            && !crowded;
        let starts = self.start.starts(take_cpu_changes(), take_contended());
        let saturated = self.saturated(crowded, starving || self.for_starving());
        let me = refresh_cpu_slot() % SLOTS;
        let keeps = saturated && (kept != 0 || starts || starving);
        self.account(me, kept, keeps, starving && !starts, crowded);
    }

    /// Whether the lock's releases come fast enough for turns: the
    /// bookkeeping before this one was at most a stall ([`turn_stall_for`])
    /// ago, the longest a waiter out of turn waits for the hint to move.
    /// A lock used more sparsely is not saturated, and its waiters do
    /// better racing (and sleeping) as without turns than waiting for
    /// slow turns. Under loom, always (the models do not read clocks).
    fn saturated(&self, crowded: bool, for_starving: bool) -> bool {
        if cfg!(loom) {
            return true;
        }
        let now = waitwise_platform::clock::cycle_clock().now();
        self.saturated_at(now, crowded, for_starving)
    }

    /// [`CpuTurns::saturated`] for a bookkeeping at cycle-clock `now`: the
    /// pace noted, then the interval held against the stall
    /// ([`CpuTurns::stall_ns`]).
    fn saturated_at(&self, now: u64, crowded: bool, for_starving: bool) -> bool {
        // Relaxed: only a holder touches it.
        let last = self.bookkept_ns.swap(now, Ordering::Relaxed);
        let interval = now.saturating_sub(last);
        // Relaxed: only a holder touches it.
        let mark = thread_mark();
        let same_thread = self.bookkept_by.swap(mark, Ordering::Relaxed) == mark;
        if last == 0 {
            return false;
        }
        if same_thread {
            // This thread's releases alone: the lock's pace.
            let fastest = match self.fastest_ns.load(Ordering::Relaxed) {
                0 => interval,
                f => interval.min(f + f / 64),
            };
            self.fastest_ns.store(fastest, Ordering::Relaxed);
        }
        interval <= self.stall_ns(crowded, for_starving)
    }

    /// The length of a turn that starts now: [`turn_target_ns`] at the
    /// fastest recent pace, a multiple of [`BOOKKEEPING_EVERY`].
    fn next_turn_length(&self, crowded: bool) -> u32 {
        // Relaxed: only a holder touches it.
        let fastest = self.fastest_ns.load(Ordering::Relaxed);
        let slow = !crowded && self.keeps_slow_turns();
        let least = if slow {
            SLOW_TURN_ACQUISITIONS
        } else {
            least_turn_for(crowded)
        };
        if cfg!(loom) || fastest == 0 {
            return least;
        }
        let n = turn_target_ns(self.start, crowded) * u64::from(BOOKKEEPING_EVERY) / fastest;
        let n = n.clamp(u64::from(least), u64::from(MAX_TURN_ACQUISITIONS)) as u32;
        n / BOOKKEEPING_EVERY * BOOKKEEPING_EVERY
    }

    /// [`CpuTurns::keep_turn`] for a holder on CPU slot `me`. The CPUs
    /// that registered since the last bookkeeping are the waiting ones;
    /// their registrations are taken, so that a CPU whose threads stopped
    /// waiting drops out at the next bookkeeping (and with no other CPU
    /// waiting, or a lock not `saturated`, the turns end). Turns that
    /// start here start with this CPU's, or with the next waiting CPU's
    /// when `for_starving` (a waiter there slept).
    fn account(&self, me: u32, kept: u32, saturated: bool, for_starving: bool, crowded: bool) {
        // Relaxed: a hint. A CPU whose thread sleeps through the turn
        // waits on.
        let waiting = self.waiting.swap(0, Ordering::Relaxed) | self.sleeping_cpus();
        let others = waiting & !(1u64 << me);
        if others == 0 || !saturated {
            // Only this CPU's threads wait, or none, or the lock is used
            // too sparsely: no turns.
            if kept != 0 {
                self.turns_end();
            }
            return;
        }
        if kept == 0 {
            if self.pausing_starts() {
                return;
            }
            // Relaxed: only a holder touches it.
            self.starving_turns.store(
                if for_starving { STARVING_TURNS } else { 0 },
                Ordering::Relaxed,
            );
            if for_starving {
                // A waiter of another CPU slept in the lock's protocol:
                // the first turn is its CPU's.
                self.give_turn(next_slot(others, me), crowded);
                return;
            }
            // The first turn is this CPU's: it had the long run.
            self.give_turn(me, crowded);
        } else if !kept_by(kept, me) {
            // Released out of the kept turn: the turn moves on.
            self.give_turn(next_slot(others, me), crowded);
            return;
        }
        // Relaxed: only a holder touches the counts.
        let n = self.released.load(Ordering::Relaxed) + BOOKKEEPING_EVERY;
        let length = self.turn_length.load(Ordering::Relaxed);
        if n >= length {
            // The turn held to its change: turns start at once again.
            // Relaxed: only a holder touches them.
            self.next_start_pause.store(1, Ordering::Relaxed);
            let starving_turns = self.starving_turns.load(Ordering::Relaxed);
            self.starving_turns
                .store(starving_turns.saturating_sub(1), Ordering::Relaxed);
            self.give_turn(next_slot(others, me), crowded);
        } else {
            self.released.store(n, Ordering::Relaxed);
            self.set_hint(hint(me, length - n));
        }
    }

    /// The bookkeeping of [`BOOKKEEPING_EVERY`] releases by a holder on
    /// CPU slot `me`, for the tests.
    #[cfg(all(test, not(loom)))]
    fn bookkeeping_on(&self, me: u32) {
        self.account(
            me % SLOTS,
            self.kept_for.load(Ordering::Relaxed),
            true,
            false,
            true,
        );
    }

    /// Ends the turns. A turn that ended at its first bookkeepings did not
    /// hold: no turn starts for the next pause of bookkeepings, which
    /// doubles, up to [`MAX_START_PAUSE`].
    fn turns_end(&self) {
        self.set_hint(0);
        // Relaxed: only a holder touches it.
        self.starving_turns.store(0, Ordering::Relaxed);
        // Relaxed: a hint; only a holder touches the counts.
        if self.released.load(Ordering::Relaxed) <= BOOKKEEPING_EVERY {
            let pause = self.next_start_pause.load(Ordering::Relaxed);
            self.start_pause.store(pause, Ordering::Relaxed);
            self.next_start_pause
                .store((pause * 2).min(MAX_START_PAUSE), Ordering::Relaxed);
        }
    }

    /// Whether turn starts pause (after turns that did not hold), counting
    /// this bookkeeping.
    fn pausing_starts(&self) -> bool {
        if cfg!(loom) {
            return false;
        }
        // Relaxed: only a holder touches it.
        let pause = self.start_pause.load(Ordering::Relaxed);
        if pause == 0 {
            return false;
        }
        self.start_pause.store(pause - 1, Ordering::Relaxed);
        true
    }

    /// Keeps the lock for the threads of `slot` from now on.
    fn give_turn(&self, slot: u32, crowded: bool) {
        let length = self.next_turn_length(crowded);
        // Relaxed: a hint; only a holder gives turns.
        self.turn_length.store(length, Ordering::Relaxed);
        self.released.store(0, Ordering::Relaxed);
        self.set_hint(hint(slot, length));
    }

    /// Stores the hint `new` (a holder, at a bookkeeping), and, for a lock
    /// whose waiters sleep through turns, has the sleepers woken after the
    /// release ([`CpuTurns::after_bookkeeping`]) when the turn changes CPU
    /// or ends, or its change comes within their wake-up's lead
    /// ([`CpuTurns::wakes_sleepers_at`]).
    fn set_hint(&self, new: u32) {
        // Relaxed: a hint; only a holder writes it.
        // A lock whose turns stopped being slow may still have a sleeper.
        if cfg!(loom) || (!self.sleeps_in_turns() && self.sleeping_cpus() == 0) {
            self.kept_for.store(new, Ordering::Relaxed);
            return;
        }
        let old = self.kept_for.load(Ordering::Relaxed);
        self.kept_for.store(new, Ordering::Relaxed);
        if new == 0 || new & SLOT_MASK != old & SLOT_MASK || self.wakes_sleepers_at(new) {
            // Relaxed: read by the releaser's `after_bookkeeping`, whose
            // fence orders the hint before its look at the sleepers.
            self.wake_due.store(true, Ordering::Relaxed);
        }
    }

    /// The CPU slots whose threads sleep through the turn (none under
    /// loom).
    #[inline]
    fn sleeping_cpus(&self) -> u64 {
        if cfg!(loom) {
            return 0;
        }
        // Relaxed: a hint.
        self.sleeping.load(Ordering::Relaxed)
    }

    /// After a release whose [`CpuTurns::before_release`] did the
    /// bookkeeping, outside the critical section: wakes the threads that
    /// sleep through the turn if the bookkeeping said so, and reads the
    /// machine's demand again if the cache is stale, so that the
    /// bookkeepings' crowding (`machine_crowded`) follows the machine
    /// while turns are considered. Under loom, nothing.
    #[inline]
    pub fn after_bookkeeping(&self) {
        #[cfg(not(loom))]
        {
            // Relaxed: see `set_hint`.
            if self.wake_due.load(Ordering::Relaxed) {
                self.wake_due.store(false, Ordering::Relaxed);
                // The store-buffering pair with `sleep_on_hint`.
                waitwise_platform::shim::fence(Ordering::SeqCst);
                if self.sleeping.load(Ordering::Relaxed) != 0 {
                    waitwise_platform::futex::Futex::from_atomic(&self.kept_for).wake_all();
                }
            }
            crate::policy::idle_extension::refresh_stale_demand();
        }
    }
}

/// The least lead, ns, with which a holder wakes the threads that sleep
/// through a turn before it changes ([`wakes_before`]): a floor under `B`,
/// the process's block cost, which a hypervisor's wake-up modes move
/// between processes and which may be set low for a process whose
/// wake-ups are not.
pub const TURN_WAKE_LEAD_MIN_NS: u64 = 20_000;

/// The lead with which the sleepers are woken before their turn: `B`, the
/// process's block cost (a sleep and a wake-up), at least
/// [`TURN_WAKE_LEAD_MIN_NS`].
fn wake_lead_ns() -> u64 {
    (crate::policy::block_ns() as u64).max(TURN_WAKE_LEAD_MIN_NS)
}

/// Whether a bookkeeping that leaves `left` releases in the turn wakes the
/// threads that sleep through it (pure): the change comes within the next
/// bookkeeping interval, or the releases left after the next bookkeeping
/// take less than `lead_ns` at `fastest_ns` per [`BOOKKEEPING_EVERY`]
/// releases (that bookkeeping would wake them too late).
pub fn wakes_before(left: u32, fastest_ns: u64, lead_ns: u64) -> bool {
    left <= BOOKKEEPING_EVERY
        || u64::from(left - BOOKKEEPING_EVERY).saturating_mul(fastest_ns)
            < lead_ns.saturating_mul(u64::from(BOOKKEEPING_EVERY))
}

/// Whether the turn of `hint` (read from [`TurnFor::Other`]) is about to
/// end: its count is within its last [`ENDING_BOOKKEEPINGS`] bookkeepings
/// before the change of turn.
#[inline]
pub fn turn_ending(hint: u32) -> bool {
    hint >> SLOT_BITS <= ENDING_BOOKKEEPINGS * BOOKKEEPING_EVERY
}

/// Whether the hint `kept` (not 0) keeps the lock for `slot`.
#[inline]
fn kept_by(kept: u32, slot: u32) -> bool {
    kept & SLOT_MASK == slot % SLOTS + 1
}

impl Default for CpuTurns {
    fn default() -> Self {
        Self::new()
    }
}

/// The hint of a turn kept for `slot` with `left` releases to go.
#[inline]
fn hint(slot: u32, left: u32) -> u32 {
    (slot + 1) | (left << SLOT_BITS)
}

/// The first slot of `others` after `me`, cyclically (`others` not empty).
#[inline]
fn next_slot(others: u64, me: u32) -> u32 {
    let after = others.rotate_right((me + 1) % SLOTS);
    (me + 1 + after.trailing_zeros()) % SLOTS
}

#[cfg(not(loom))]
mod current {
    use std::cell::Cell;

    /// No CPU looked up yet.
    const UNKNOWN: u32 = u32::MAX;

    /// A thread's side of the turns.
    #[derive(Clone, Copy)]
    struct ThreadTurns {
        /// The CPU this thread ran on when it last looked.
        cpu: u32,
        /// Its releases left before its next bookkeeping.
        left: u32,
        /// How many of its releases since its last bookkeeping followed a
        /// release on another CPU.
        moved: u32,
        /// How many of its acquisitions since its last bookkeeping were
        /// contended.
        contended: u32,
    }

    std::thread_local! {
        static THREAD: Cell<ThreadTurns> = const {
            Cell::new(ThreadTurns { cpu: UNKNOWN, left: 0, moved: 0, contended: 0 })
        };
    }

    /// The CPU the calling thread ran on when it last looked (it looks at
    /// its first call and at each bookkeeping).
    #[inline]
    pub fn cpu_slot() -> u32 {
        match THREAD.with(|t| t.get().cpu) {
            UNKNOWN => refresh_cpu_slot(),
            cpu => cpu,
        }
    }

    /// Looks the calling thread's CPU up.
    #[inline]
    pub fn refresh_cpu_slot() -> u32 {
        let cpu = waitwise_platform::affinity::current_cpu().unwrap_or(0) as u32;
        THREAD.with(|t| t.set(ThreadTurns { cpu, ..t.get() }));
        cpu
    }

    /// Counts a release with CPUs waiting; `true` at every
    /// [`super::BOOKKEEPING_EVERY`]th.
    #[inline]
    pub fn count_release() -> bool {
        update(|t| {
            let due = t.left == 0;
            t.left = t
                .left
                .checked_sub(1)
                .unwrap_or(super::BOOKKEEPING_EVERY - 1);
            due
        })
    }

    /// Updates the calling thread's side with `f`, returning what it does.
    #[inline]
    fn update<R>(f: impl FnOnce(&mut ThreadTurns) -> R) -> R {
        THREAD.with(|t| {
            let mut now = t.get();
            let out = f(&mut now);
            t.set(now);
            out
        })
    }

    /// Notes a release that followed one on another CPU.
    #[inline]
    pub fn note_cpu_change() {
        update(|t| t.moved = t.moved.saturating_add(1));
    }

    /// A number that tells the calling thread from the others alive (the
    /// address of its thread-local).
    #[inline]
    pub fn thread_mark() -> u64 {
        THREAD.with(|t| t as *const _ as u64)
    }

    /// How many releases [`note_cpu_change`] noted since the last call.
    #[inline]
    pub fn take_cpu_changes() -> u32 {
        update(|t| std::mem::take(&mut t.moved))
    }

    /// Notes a contended acquisition.
    #[inline]
    pub fn note_contended() {
        update(|t| t.contended = t.contended.saturating_add(1));
    }

    /// How many acquisitions [`note_contended`] noted since the last call.
    #[inline]
    pub fn take_contended() -> u32 {
        update(|t| std::mem::take(&mut t.contended))
    }
}

#[cfg(loom)]
mod current {
    use loom::cell::Cell;

    loom::thread_local! {
        static CPU: Cell<u32> = Cell::new(0);
    }

    /// The model CPU of the calling thread ([`set_model_cpu`]).
    pub fn cpu_slot() -> u32 {
        CPU.with(|c| c.get())
    }

    /// As [`cpu_slot`]: model threads do not move.
    pub fn refresh_cpu_slot() -> u32 {
        cpu_slot()
    }

    /// Every release does the bookkeeping under loom.
    pub fn count_release() -> bool {
        true
    }

    /// Runs are not tracked under loom.
    pub fn note_cpu_change() {}

    /// Paces are not measured under loom.
    pub fn thread_mark() -> u64 {
        0
    }

    /// Under loom, every run counts as long.
    pub fn take_cpu_changes() -> u32 {
        0
    }

    /// Contention is not tracked under loom.
    pub fn note_contended() {}

    /// Under loom, every acquisition counts as contended (turns start at
    /// the first bookkeeping).
    pub fn take_contended() -> u32 {
        u32::MAX
    }

    /// Puts the calling model thread on model CPU `slot`.
    pub fn set_model_cpu(slot: u32) {
        CPU.with(|c| c.set(slot));
    }
}

pub use current::*;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Bookkeepings in one turn.
    const PER_TURN: u32 = TURN_ACQUISITIONS / BOOKKEEPING_EVERY;

    /// Turns after one bookkeeping by a holder on CPU `holder` while a
    /// thread of CPU `waiting` waits: the holder's CPU keeps the turn.
    fn turn_kept_by(holder: u32, waiting: u32) -> CpuTurns {
        let t = CpuTurns::new();
        t.register_waiting(waiting);
        t.bookkeeping_on(holder);
        t
    }

    #[test]
    fn turns_are_shorter_and_stall_longer_while_the_threads_fit() {
        assert!(!crowded_for_turns(Some(1.0)));
        assert!(!crowded_for_turns(Some(1.5)));
        assert!(crowded_for_turns(Some(2.0)));
        assert!(crowded_for_turns(Some(4.0)));
        assert!(crowded_for_turns(None), "not known");
        assert_eq!(turn_stall_for(false), TURN_STALL_ALONE_NS);
        assert_eq!(turn_stall_for(true), TURN_STALL_CROWDED_NS);
        assert_eq!(least_turn_for(false), TURN_ACQUISITIONS_ALONE);
        assert_eq!(least_turn_for(true), TURN_ACQUISITIONS);
        // Above the bookkeeping interval of a two-thread loop (~25 µs).
        const { assert!(TURN_STALL_CROWDED_NS < TURN_STALL_ALONE_NS) };
        const { assert!(TURN_STALL_ALONE_NS > 2 * 25_000) };
        // A turn that ends at its first bookkeeping did not hold.
        const { assert!(TURN_ACQUISITIONS_ALONE > BOOKKEEPING_EVERY) };
        const { assert!(TURN_ACQUISITIONS_ALONE.is_multiple_of(BOOKKEEPING_EVERY)) };
    }

    #[test]
    fn mutex_turns_start_after_long_runs_and_rwlock_turns_when_contended() {
        let start = TurnStart::AfterLongRuns;
        assert!(start.starts(RUN_CHANGES, 0));
        assert!(!start.starts(RUN_CHANGES + 1, BOOKKEEPING_EVERY));
        let start = TurnStart::WhenContended;
        assert!(start.starts(BOOKKEEPING_EVERY, CONTENDED_TO_START));
        assert!(!start.starts(0, CONTENDED_TO_START - 1));
    }

    #[test]
    fn no_turn_while_nobody_waits() {
        let t = CpuTurns::new();
        for _ in 0..3 * PER_TURN {
            t.bookkeeping_on(0);
        }
        assert!(!t.kept());
        assert_eq!(t.turn_for(1), TurnFor::Mine);
    }

    #[test]
    fn no_turn_while_only_the_holders_cpu_waits() {
        let t = CpuTurns::new();
        t.register_waiting(0);
        t.bookkeeping_on(0);
        assert!(!t.kept());
    }

    #[test]
    fn a_waiting_cpu_gets_the_turn_after_the_count() {
        let t = turn_kept_by(0, 1);
        assert!(t.kept());
        assert_eq!(t.turn_for(0), TurnFor::Mine);
        let TurnFor::Other(first) = t.turn_for(1) else {
            panic!("CPU 1 waits while CPU 0 keeps the turn");
        };
        assert!(!turn_ending(first));
        // CPU 1's waiters register again when they see the turn move.
        t.register_waiting(1);
        t.bookkeeping_on(0);
        assert_ne!(
            t.turn_for(1),
            TurnFor::Other(first),
            "each bookkeeping moves the hint"
        );
        for _ in 2..PER_TURN - 1 {
            assert!(matches!(t.turn_for(1), TurnFor::Other(_)));
            t.register_waiting(1);
            t.bookkeeping_on(0);
        }
        let TurnFor::Other(last) = t.turn_for(1) else {
            panic!("CPU 0's turn lasts {TURN_ACQUISITIONS} releases");
        };
        assert!(turn_ending(last), "the last bookkeeping before the change");
        t.register_waiting(1);
        t.bookkeeping_on(0);
        assert_eq!(t.turn_for(1), TurnFor::Mine, "CPU 1's turn");
        let TurnFor::Other(fresh) = t.turn_for(0) else {
            panic!("CPU 0 waits out CPU 1's turn");
        };
        assert!(!turn_ending(fresh), "a new turn is not ending");
        // CPU 0's threads wait on: they register, and the turn goes on.
        t.register_waiting(0);
        t.bookkeeping_on(1);
        assert!(matches!(t.turn_for(0), TurnFor::Other(_)));
        // They stopped waiting: at CPU 1's next bookkeeping the turns end.
        t.bookkeeping_on(1);
        assert!(!t.kept());
    }

    #[test]
    fn a_cpu_that_stops_waiting_drops_out_at_the_next_bookkeeping() {
        let t = turn_kept_by(0, 1);
        assert!(t.kept(), "CPU 0 keeps the turn while CPU 1 waits");
        t.bookkeeping_on(0);
        assert!(!t.kept(), "CPU 1 did not register again: no turns");
        assert_eq!(t.turn_for(1), TurnFor::Mine);
    }

    #[test]
    fn turns_that_do_not_hold_pause_the_next_starts() {
        let t = turn_kept_by(0, 1);
        // CPU 1 did not register again: the turn ends at its next
        // bookkeeping, which is a turn that did not hold.
        t.bookkeeping_on(0);
        assert!(!t.kept());
        t.register_waiting(1);
        t.bookkeeping_on(0);
        assert!(!t.kept(), "one bookkeeping without a start");
        t.register_waiting(1);
        t.bookkeeping_on(0);
        assert!(t.kept(), "then turns start again");
        // A second turn that does not hold pauses twice as long.
        t.bookkeeping_on(0);
        for _ in 0..2 {
            t.register_waiting(1);
            t.bookkeeping_on(0);
            assert!(!t.kept());
        }
        t.register_waiting(1);
        t.bookkeeping_on(0);
        assert!(t.kept());
    }

    #[test]
    fn the_pause_is_capped_and_a_turn_that_holds_resets_it() {
        let t = CpuTurns::new();
        let mut pauses = Vec::new();
        for _ in 0..10 {
            // Start a turn (after the pause), and let it end at once.
            let mut paused = 0;
            loop {
                t.register_waiting(1);
                t.bookkeeping_on(0);
                if t.kept() {
                    break;
                }
                paused += 1;
            }
            pauses.push(paused);
            t.bookkeeping_on(0);
            assert!(!t.kept());
        }
        assert_eq!(pauses[..4], [0, 1, 2, 4]);
        assert_eq!(*pauses.last().unwrap(), MAX_START_PAUSE);
        // Wait out the pause, then a turn that runs to its change.
        for _ in 0..=MAX_START_PAUSE {
            t.register_waiting(1);
            t.bookkeeping_on(0);
        }
        assert!(t.kept());
        for _ in 1..PER_TURN {
            t.register_waiting(1);
            t.bookkeeping_on(0);
        }
        assert_eq!(t.turn_for(1), TurnFor::Mine, "CPU 1's turn");
        // CPU 0 stops waiting: CPU 1's turn ends at its next bookkeeping,
        // and the pause starts from 1 again.
        t.bookkeeping_on(1);
        t.bookkeeping_on(1);
        assert!(!t.kept());
        t.register_waiting(0);
        t.bookkeeping_on(1);
        assert!(!t.kept(), "a pause of one");
        t.register_waiting(0);
        t.bookkeeping_on(1);
        assert!(t.kept());
    }

    #[test]
    fn a_sparsely_used_lock_keeps_no_turns() {
        let t = turn_kept_by(0, 1);
        assert!(t.kept());
        t.register_waiting(1);
        t.account(0, t.kept_for.load(Ordering::Relaxed), false, false, true);
        assert!(!t.kept(), "the releases came too slowly: no turns");
    }

    #[test]
    fn saturation_is_judged_from_the_second_bookkeeping() {
        // Explicit times: two calls in a row could be a stall apart on a
        // loaded machine.
        let t = CpuTurns::new();
        let stall = TURN_STALL_CROWDED_NS;
        assert!(!t.saturated_at(1_000, true, false), "no bookkeeping before");
        assert!(t.saturated_at(1_500, true, false), "500 ns later");
        assert_eq!(t.fastest_ns.load(Ordering::Relaxed), 500, "the pace");
        assert!(
            !t.saturated_at(1_500 + stall + 1, true, false),
            "a stall later"
        );
        // The fastest pace drifts up by 1/64 at each bookkeeping only.
        let drifted = 500 + 500 / 64;
        assert_eq!(t.fastest_ns.load(Ordering::Relaxed), drifted);
        assert!(t.saturated_at(2_101 + stall, true, false), "600 ns later");
        assert_eq!(t.fastest_ns.load(Ordering::Relaxed), drifted + drifted / 64);
    }

    #[test]
    fn turns_for_a_starving_waiter_stall_for_two_bookkeeping_intervals() {
        // A lock held through long critical sections: its bookkeepings
        // come 100 µs apart, further than the stall alone.
        let t = CpuTurns::starting(TurnStart::WhenContended);
        let interval = TURN_STALL_ALONE_NS + 36_000;
        assert!(!t.saturated_at(1_000, false, true), "no bookkeeping before");
        assert!(
            t.saturated_at(1_000 + interval, false, true),
            "the threads fit"
        );
        assert_eq!(t.stall_ns(false, true), 2 * interval);
        assert!(
            !t.saturated_at(1_000 + 2 * interval + TURN_STALL_CROWDED_NS + 1, true, true),
            "on a crowded machine the stall is the crowded one"
        );
        // Other turns of the reader-writer lock keep the stall alone.
        assert_eq!(t.stall_ns(false, false), TURN_STALL_ALONE_NS);
        assert!(!t.saturated_at(1_000 + 3 * interval, false, false));
    }

    #[test]
    fn a_mutex_whose_bookkeepings_come_slowly_stalls_for_two_intervals_up_to_the_cap() {
        // Two threads taking a mutex back to back through ~1 µs critical
        // sections: 128 releases take ~140 µs, more than the stall alone.
        let t = CpuTurns::new();
        let interval = 140_000;
        assert!(
            !t.saturated_at(1_000, false, false),
            "no bookkeeping before"
        );
        assert!(t.saturated_at(1_000 + interval, false, false));
        assert_eq!(t.stall_ns(false, false), 2 * interval);
        assert!(
            t.saturated_at(1_000 + 3 * interval, false, false),
            "two intervals later"
        );
        assert!(!t.saturated_at(1_000 + 6 * interval, false, false));
        assert_eq!(
            t.stall_ns(true, false),
            TURN_STALL_CROWDED_NS,
            "on a crowded machine the stall is the crowded one"
        );
        // A lock held through ~10 µs: the cap ends its turns.
        t.fastest_ns.store(1_300_000, Ordering::Relaxed);
        assert_eq!(t.stall_ns(false, false), PACED_STALL_MAX_NS);
        // A fast lock keeps the stall alone.
        t.fastest_ns.store(25_000, Ordering::Relaxed);
        assert_eq!(t.stall_ns(false, false), TURN_STALL_ALONE_NS);
    }

    #[test]
    fn turns_for_a_starving_waiter_start_with_its_cpu_and_end_after_their_rounds() {
        let t = CpuTurns::starting(TurnStart::WhenContended);
        // CPU 1's waiter slept in the lock's protocol (registered, and the
        // bookkeeping found the lock marked starving).
        t.register_waiting(1);
        t.account(0, 0, true, true, false);
        assert_eq!(t.turn_for(1), TurnFor::Mine, "the first turn is CPU 1's");
        assert!(t.for_starving());
        // Each turn runs to its change, both CPUs waiting.
        let mut changes = 0;
        while t.for_starving() {
            let holder = if t.turn_for(0) == TurnFor::Mine { 0 } else { 1 };
            t.register_waiting(1 - holder);
            t.account(
                holder,
                t.kept_for.load(Ordering::Relaxed),
                true,
                false,
                false,
            );
            changes += u32::from(t.turn_for(holder) != TurnFor::Mine);
            assert!(changes <= STARVING_TURNS, "the count ends them");
        }
        assert_eq!(changes, STARVING_TURNS);
        assert!(t.kept(), "kept on while the lock stays saturated");
        // A bookkeeping that finds the lock not saturated ends them.
        t.register_waiting(0);
        t.account(1, t.kept_for.load(Ordering::Relaxed), false, false, false);
        assert!(!t.kept());
    }

    #[test]
    fn a_release_out_of_the_kept_turn_moves_it_on() {
        let t = turn_kept_by(1, 2);
        assert_eq!(t.turn_for(1), TurnFor::Mine, "CPU 1's turn");
        // A thread of CPU 0 took the lock out of turn (a woken sleeper);
        // CPUs 1 and 2 wait.
        t.register_waiting(1);
        t.register_waiting(2);
        t.bookkeeping_on(0);
        assert_eq!(t.turn_for(1), TurnFor::Mine, "the next CPU after 0");
        assert!(matches!(t.turn_for(2), TurnFor::Other(_)));
        assert!(matches!(t.turn_for(0), TurnFor::Other(_)));
        // Again with nobody else waiting: the turns end.
        t.bookkeeping_on(0);
        assert!(!t.kept());
    }

    #[test]
    fn releases_come_fast_below_the_fast_release_interval_at_the_fastest_pace() {
        let t = CpuTurns::new();
        assert!(!t.releases_come_fast(), "no pace yet");
        let at = u64::from(BOOKKEEPING_EVERY) * FAST_RELEASE_NS;
        t.fastest_ns.store(at - 1, Ordering::Relaxed);
        assert!(t.releases_come_fast());
        t.fastest_ns.store(at, Ordering::Relaxed);
        assert!(!t.releases_come_fast());
    }

    #[test]
    fn a_turn_lasts_the_target_time_at_the_fastest_pace() {
        let t = CpuTurns::new();
        assert_eq!(t.next_turn_length(true), TURN_ACQUISITIONS, "no pace yet");
        // 128 releases in 1 µs: 8 ns each.
        t.fastest_ns.store(1000, Ordering::Relaxed);
        let want = TURN_TARGET_NS as u32 * BOOKKEEPING_EVERY / 1000;
        let want = want.clamp(TURN_ACQUISITIONS, MAX_TURN_ACQUISITIONS);
        assert_eq!(
            t.next_turn_length(true),
            want / BOOKKEEPING_EVERY * BOOKKEEPING_EVERY
        );
        t.fastest_ns.store(1, Ordering::Relaxed);
        assert_eq!(t.next_turn_length(true), MAX_TURN_ACQUISITIONS);
        t.fastest_ns.store(u64::MAX / 2, Ordering::Relaxed);
        assert_eq!(t.next_turn_length(true), TURN_ACQUISITIONS);
    }

    #[test]
    fn mutex_turns_sleep_and_last_longer_while_its_releases_come_slowly() {
        let t = CpuTurns::new();
        assert!(!t.sleeps_in_turns(), "no pace yet");
        t.fastest_ns.store(TURN_STALL_ALONE_NS, Ordering::Relaxed);
        assert!(!t.sleeps_in_turns(), "bookkeepings within the stall alone");
        assert_eq!(t.next_turn_length(false), TURN_ACQUISITIONS_ALONE);
        t.fastest_ns.store(140_000, Ordering::Relaxed);
        assert!(t.keeps_slow_turns());
        assert!(t.sleeps_in_turns());
        let rw = CpuTurns::starting(TurnStart::WhenContended);
        rw.fastest_ns.store(140_000, Ordering::Relaxed);
        assert!(
            !rw.keeps_slow_turns(),
            "the reader-writer lock's turns are not slow turns"
        );
        assert_eq!(t.next_turn_length(false), SLOW_TURN_ACQUISITIONS);
        assert_eq!(
            t.next_turn_length(true),
            TURN_ACQUISITIONS,
            "crowded: as any lock"
        );
        // The sleepers are not woken at the first bookkeeping of a turn.
        assert!(!wakes_before(
            SLOW_TURN_ACQUISITIONS - BOOKKEEPING_EVERY,
            140_000,
            TURN_WAKE_LEAD_MIN_NS
        ));
        const { assert!(SLOW_TURN_ACQUISITIONS > TURN_ACQUISITIONS_ALONE) };
        const { assert!(SLOW_TURN_ACQUISITIONS.is_multiple_of(BOOKKEEPING_EVERY)) };
    }

    #[test]
    fn reader_writer_turns_sleep_and_last_longer_while_the_threads_fit() {
        assert!(TurnStart::WhenContended.sleeps_out_of_turn());
        assert!(!TurnStart::AfterLongRuns.sleeps_out_of_turn());
        let (rw, mutex) = (TurnStart::WhenContended, TurnStart::AfterLongRuns);
        assert_eq!(turn_target_ns(rw, false), SLEEPING_TURN_TARGET_NS);
        assert_eq!(turn_target_ns(rw, true), TURN_TARGET_NS);
        assert_eq!(turn_target_ns(mutex, false), TURN_TARGET_NS);
        assert_eq!(turn_target_ns(mutex, true), TURN_TARGET_NS);
        let t = CpuTurns::starting(rw);
        t.fastest_ns.store(3_000, Ordering::Relaxed);
        let want = SLEEPING_TURN_TARGET_NS * u64::from(BOOKKEEPING_EVERY) / 3_000;
        let want = want as u32 / BOOKKEEPING_EVERY * BOOKKEEPING_EVERY;
        assert_eq!(t.next_turn_length(false), want);
        assert!(t.next_turn_length(true) < want);
    }

    #[test]
    fn sleepers_are_woken_a_bookkeeping_and_the_lead_before_the_change() {
        // Within the next bookkeeping interval: always.
        assert!(wakes_before(BOOKKEEPING_EVERY, 1, 1));
        assert!(wakes_before(1, u64::MAX / 4, 0));
        // 128 releases in 15 µs, a lead of 28 µs: with 768 left, 640 are
        // left after the next bookkeeping, 75 µs; with 384, 30 µs; with
        // 256, 15 µs.
        assert!(!wakes_before(768, 15_000, 28_000));
        assert!(!wakes_before(384, 15_000, 28_000));
        assert!(wakes_before(256, 15_000, 28_000));
        // A slow lock (1 µs per release): only the last interval wakes.
        assert!(!wakes_before(256, 128_000, 28_000));
        assert!(wakes_before(128, 128_000, 28_000));
        assert!(!wakes_before(MAX_TURN_ACQUISITIONS, u64::MAX, 28_000));
        const { assert!(TURN_WAKE_LEAD_MIN_NS >= 3_000) };
    }

    #[test]
    fn a_sleeping_cpu_counts_as_waiting_at_every_bookkeeping() {
        let t = CpuTurns::starting(TurnStart::WhenContended);
        t.register_waiting(1);
        t.bookkeeping_on(0);
        assert_eq!(
            t.turn_for(1),
            TurnFor::Other(t.kept_for.load(Ordering::Relaxed))
        );
        // Slot 1's thread sleeps through the turn: it never registers
        // again, and the turn still holds to its change.
        t.sleeping.fetch_or(1 << 1, Ordering::Relaxed);
        let length = t.turn_length.load(Ordering::Relaxed);
        // The first bookkeeping counted one interval of the turn.
        for _ in 0..length / BOOKKEEPING_EVERY - 2 {
            t.bookkeeping_on(0);
            assert!(matches!(t.turn_for(1), TurnFor::Other(_)));
        }
        t.bookkeeping_on(0);
        assert_eq!(t.turn_for(1), TurnFor::Mine, "the sleeping CPU's turn");
        // Once nobody sleeps or registers, the turns end.
        t.sleeping.store(0, Ordering::Relaxed);
        t.bookkeeping_on(1);
        assert_eq!(t.kept_for.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_change_of_turn_wakes_the_sleepers_after_the_release() {
        let t = CpuTurns::starting(TurnStart::WhenContended);
        t.register_waiting(1);
        t.bookkeeping_on(0);
        // A turn for slot 0: a thread of slot 1 sleeps through it.
        let seen = t.kept_for.load(Ordering::Relaxed);
        t.wake_due.store(false, Ordering::Relaxed);
        let until = Deadline::after(Duration::from_secs(60));
        std::thread::scope(|s| {
            let sleeper = s.spawn(|| t.sleep_on_hint(1, seen, until));
            // (A spurious return ends the sleep before its bit is seen.)
            while t.sleeping.load(Ordering::SeqCst) == 0 && !sleeper.is_finished() {
                std::thread::yield_now();
            }
            // The holder gives the turn to slot 1 (its last bookkeeping
            // wakes the sleepers whatever the pace), then releases.
            while t.turn_for(1) != TurnFor::Mine {
                t.bookkeeping_on(0);
            }
            assert!(t.wake_due.load(Ordering::Relaxed));
            t.after_bookkeeping();
            assert!(!t.wake_due.load(Ordering::Relaxed));
            sleeper.join().unwrap();
        });
        assert!(!until.has_passed(), "woken, not timed out");
        assert_eq!(t.sleeping.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_holder_cpu_notes_a_move_once() {
        let h = HolderCpu::new();
        assert!(h.moved_to(0), "the first release");
        assert!(!h.moved_to(0));
        assert!(h.moved_to(1));
        assert!(!h.moved_to(1));
    }

    #[test]
    fn changes_of_cpu_are_counted_per_thread() {
        std::thread::spawn(|| {
            assert_eq!(take_cpu_changes(), 0);
            note_cpu_change();
            note_cpu_change();
            assert_eq!(take_cpu_changes(), 2);
            assert_eq!(take_cpu_changes(), 0, "taken");
            let mark = thread_mark();
            let other = std::thread::spawn(thread_mark).join().unwrap();
            assert_eq!(thread_mark(), mark);
            assert_ne!(other, mark);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn every_bookkeeping_every_releases_of_a_thread_is_counted() {
        std::thread::spawn(|| {
            let due = (0..3 * BOOKKEEPING_EVERY)
                .filter(|_| count_release())
                .count();
            assert_eq!(due, 3);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn turns_go_round_the_waiting_cpus() {
        assert_eq!(next_slot(0b1010, 1), 3);
        assert_eq!(next_slot(0b1010, 3), 1);
        assert_eq!(next_slot(1 << 63, 5), 63);
        assert_eq!(next_slot(1, 63), 0);
    }

    #[test]
    fn cpus_beyond_the_slots_share_them() {
        let t = turn_kept_by(0, SLOTS + 1);
        assert!(matches!(t.turn_for(1), TurnFor::Other(_)));
        assert!(matches!(t.turn_for(SLOTS + 1), TurnFor::Other(_)));
        assert_eq!(t.turn_for(SLOTS), TurnFor::Mine);
    }

    #[test]
    fn the_cached_cpu_is_one_this_process_may_use() {
        let cpu = cpu_slot() as usize;
        assert_eq!(refresh_cpu_slot() as usize, cpu_slot() as usize);
        if let Ok(allowed) = waitwise_platform::affinity::allowed_cpus() {
            assert!(allowed.contains(&cpu), "{cpu} not in {allowed:?}");
        }
    }
}
