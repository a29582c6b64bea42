//! The adaptive two-phase policy `adapt/b`: each object learns which of a
//! few *bounded* poll-limit laws costs least on its own recent waits, and
//! follows that one.
//!
//! # The menu (arms)
//!
//! Every arm is a law for the poll limit `L` on `[0, 2B]`; all but one
//! cost within a fixed factor of the off-line optimum `min(t, B)` for
//! *every* wait `t` (`B` = the block cost, [`block_ns`](super::block_ns)),
//! and that one, `/b/0`, runs only while the object's credit pays for it
//! (next section):
//!
//! | arm | poll limit `L` | expected cost of a wait `t` | worst factor |
//! |---|---|---|---|
//! | `F(a)`, `a` in [`TRUNCATED_SCALES`] | density `e^(x/B) / (B (e^a - 1))` on `[0, aB]` | `K(a) min(t, aB)`, `K(a) = 1/(1 - e^-a)` | `K(a)` |
//! | `D` | `B` (`s/b/1`) | `t` if `t <= B`, else `2B` | 2 |
//! | `D2` | `2B` (`s/b/2`) | `t` if `t <= 2B`, else `3B` | 3 |
//! | `/b/0` | 0 (always-block) | `B` | none per wait (credit) |
//!
//! `F(1)` is Karlin et al.'s `rand/b` (`K(1) = e/(e-1)`). A smaller `a`
//! leans towards blocking: `F(1/32)` costs at most `1.016 B` on a long
//! wait (always-block's `B` plus a little), where `rand/b` costs `1.58 B`;
//! `D` leans towards polling: a wait shorter than `B` costs exactly its
//! length. `D2` leans further: a wait shorter than `2B` costs exactly its
//! length, for waits that mostly end between `B` and `2B` (there every
//! other arm blocks and pays the wait's head plus `B`); its factor is 3,
//! reached by a wait just over `2B` (polls `2B`, blocks `B`, against the
//! optimum `B`), and between `B` and `2B` its ratio `t / B` is below 2.
//! `/b/0` is always-block: on long waits it saves the `B/64` that
//! `F(1/32)` pays, and its wait skips the draw and the polling phase.
//!
//! The cost of `F(a)`: for `t <= aB`, polling succeeds when `L > t` and a
//! blocked wait pays `x + B`, so `E = t P(L > t) + int_0^t (x + B) p(x) dx
//! = t (e^a - e^(t/B))/(e^a - 1) + t e^(t/B)/(e^a - 1) = t K(a)`; for
//! `t >= aB` every wait blocks and `E = aB K(a)`. With `a <= 1` the ratio
//! to `min(t, B)` is `K(a)` up to `t = aB` and falls after it.
//!
//! # The bound (any sequence, adversarial and switching)
//!
//! Let `R = max(K(1/32), 2, 3) = 1/(1 - e^(-1/32)) ≈ 32.5`
//! ([`WORST_CASE_FACTOR`]). Whatever the summary holds when a wait starts
//! (an adversary may even choose each wait knowing it), a wait that runs
//! any arm but `/b/0` has expected cost, given everything before it, at
//! most `R min(t, B)`. A wait that runs `/b/0` costs `B` whatever `t` is,
//! so each object keeps a *credit* `C` (ns, [`AdaptiveSummary::credit_ns`]):
//!
//! - a wait whose summary says `/b/0` first spends `B` of `C`, and runs
//!   `/b/0` only if `C` held that much; otherwise it spends nothing and
//!   runs `F(1/32)` ([`CREDIT_FALLBACK_ARM`]);
//! - a wait that blocked, and whose release its waker stamped (so `t` is
//!   known), earns `R min(t, B)` less its arm's expected cost on `t`
//!   ([`credit_earned`]; a `/b/0` wait earns the whole `R min(t, B)`, its
//!   block being paid already); every other arm's share is at least 0;
//! - `C` stays below [`CREDIT_CAP_IN_B`] blocks: what passes the cap is
//!   dropped.
//!
//! Let `Phi_n = sum over the first n waits of (R min(t_i, B_i) - E[cost_i
//! | past])`. Each wait adds to `C` at most what it adds to `Phi`: a
//! `/b/0` wait exactly that (`- B` at its start, `+ R min(t, B)` after), any
//! other wait either that or nothing (it polled, timed out, had no stamp,
//! or met the cap), and that is never negative. `C` starts at 0 with
//! `Phi`, so `C <= Phi` after every wait; `C` never goes below 0 (a spend
//! needs `C >= B`), so neither does `Phi`. That is: after any number of
//! waits, the expected total cost is at most `R` times the off-line
//! optimum, for *any* wait sequence (chosen adversarially, even knowing
//! the summary), at every prefix, with no additive term. Spends round up
//! and credits round down, and both are a compare-and-swap, so no spend
//! is lost to a concurrent one. The `t` credited is the release the waker
//! stamped, as the summary records it.
//!
//! For comparison `s/b/0.54` is 2.85-competitive, `s/b/1` 2, `s/b/2` 3,
//! and always-block and always-spin are unbounded. `R` is the price of leaning
//! towards blocking: the Pareto frontier of randomized ski rental (Purohit,
//! Svitkina and Kumar, NeurIPS 2018; Wei and Zhang, 2020) says that no law
//! costing `a K(a) B` on long waits can do better than `K(a)` on short
//! ones, so a menu whose best long-wait arm is close to always-block must
//! accept a large worst case; the credit lets `/b/0` itself run, its price
//! paid from what the object's earlier waits saved against `R`. In
//! steady long waits one `/b/0` wait earns about `R - 1` blocks, so the
//! credit is never short there; an adversary that answers `/b/0` with
//! near-zero waits spends a block each and moves the summary to
//! `F(1/32)` within a wait or two. The model crate checks the bound with
//! adversarial, switching and credit-draining sequences
//! (`waitwise_model::adaptive`, its property test).
//!
//! The bound is the contended regime's, where every poll costs its time.
//! Past its limit a wait may poll on while no other thread wants its
//! CPU ([`idle_extension`](super::idle_extension), at most
//! 200 µs): those polls cost no other thread anything, so in the
//! two-regime model (a poll costs its time only while a runnable thread
//! could use the CPU) a wait costs at most what it costs without the
//! extension, and the factor above holds in both regimes (a wait whose
//! limit is 0, `/b/0`'s, blocks at once and is not extended); a stale signal
//! adds at most the signal's age plus one slice per misjudged wait
//! (`idle_extension`'s module docs; `waitwise_model::adaptive`,
//! `extended_arm_cost`).
//!
//! # Polling by yielding (switch-spinning)
//!
//! A wait that polls with `sched_yield` (the [`Yield`](crate::Mechanism::Yield)
//! mechanism: the TTAS mutex, an oversubscribed barrier) hands its CPU to
//! another runnable thread at every poll, so while `beta` threads are
//! runnable per CPU it burns about `1/beta` of the time it polls: Lim &
//! Agarwal's switch-spinning, whose poll of length `t` costs `t / beta`
//! and whose optimum is `min(t / beta, B)` (their Eq. 1-2). Such a wait
//! runs the same arms in time divided by `beta`: its limit is the arm's
//! draw times `beta`, and it records its length (and its limit, and its
//! release) divided by `beta`, so that the summary prices polling at what
//! it costs. `beta` is the machine's runnable threads per CPU when the
//! wait begins ([`switch_spin_beta`], the idle-CPU signal's cached read),
//! at least 1 and at most [`MAX_SWITCH_SPIN_BETA`]; waits that poll any
//! other way use 1. The bound below holds against the switch-spinning
//! optimum in the time so scaled.
//!
//! # The summary (per object)
//!
//! The summary of an object's recent waits is, for each arm, the
//! exponentially decayed sum of what that arm *would have* cost on them
//! (window [`DECAY_SHIFT`]: the last ~32 waits weigh most): a sufficient
//! statistic for "the poll limit minimizing expected cost under the recent
//! wait-time distribution", since each arm's cost is linear in the
//! empirical law. Every arm's cost is known for every wait, whichever arm
//! ran (full information: no exploration needed). A wait that ended while
//! polling knows its length. A wait that blocked reads when it was
//! released from its waker's stamp (the one the learned `B` is sampled
//! with, `waitwise_platform::wake_latency::last_waking`), else counts
//! `max(L, elapsed - B)`: its own clock after the wake-up would count the
//! wake-up latency as waiting, and where that latency exceeds `B` (a
//! loaded or oversubscribed machine) every blocked wait would look longer
//! than it was and keep the summary on the arms that block. One that
//! timed out counts only when it lasted at least `B` (then every arm's
//! cost is saturated).
//!
//! Waits that ended while polling are sampled: one in
//! `2^`[`POLLED_SAMPLE_SHIFT`] (4) is recorded, with that many times the
//! weight ([`sampled`], low bits of the wait's start on the cycle clock),
//! so each score's expected increment is what recording all of them would
//! add; the others skip the clock read and the update, the whole of what
//! learning costs a short wait beyond a static policy. Waits that blocked
//! or timed out are all recorded (they also teach the object's `B`).
//! Sampling slows the learning of a change towards short waits (about four
//! times fewer updates while the waits poll) and adds variance to the
//! scores; the bound above does not depend on the scores at all (polled
//! waits earn no credit, sampled or not).
//!
//! # `B`, per object
//!
//! The arms' limits and the summary's costs are in units of `B`, and an
//! object's waits use the `B` its own blocks cost
//! ([`AdaptiveSummary::block_ns`]), not only the process's
//! ([`block_ns`](super::block_ns)): a blocked wait whose waker's stamp is
//! its own reads its wake-up latency (stamp to the clock read after the
//! wake-up), and each such sample moves the object's `B` by
//! `2^-BLOCK_SHIFT` of the difference ([`BLOCK_SHIFT`], a decayed mean:
//! the expected cost of a block is what the arms' costs speak of).
//! Why: a block's cost depends on where and how long the object sleeps
//! (on a VM, whether the host still polls the halted vCPU; on a loaded
//! machine, whether the woken thread finds its CPU free), so the process's
//! `B` measured by back-to-back hand-offs can be several times off for one
//! object's waits, and then the summary prices every arm with the wrong
//! `B` and follows the wrong one. A sample counts at most
//! [`BLOCK_SAMPLE_CAP`] times the current value (a preempted wake-up moves
//! it by at most 1/8), samples under
//! [`MIN_MEASURED_BLOCK_NS`](super::block_cost::MIN_MEASURED_BLOCK_NS) or
//! over a millisecond are dropped (no real sleep; a time slice), and the
//! learned value stays within [`BLOCK_RANGE`] times the process's `B`
//! either way. Only a wait that blocks teaches it, so a `B` that a burst
//! of slow wake-ups left high could stay high for good: the arms then
//! price polling too cheaply, `D2`'s limit (`2B`) outlasts every wait,
//! no wait blocks, and no wake-up comes to correct it (in `waitwise model
//! calibrate`'s `U/B = 3` cell such objects stay well above `/b/0` for the
//! rest of the cell). So a `B` goes
//! stale: once an object's recorded waits have gone [`STALE_AFTER_WAITS`]
//! without a wake-up sample, the object *explores*
//! ([`AdaptiveSummary::exploring`]): a wait whose arm is `D2` runs `D` (a
//! limit of `B`, not `2B`), so the first wait longer than `B` blocks and
//! samples what a block costs; that sample, when below `B`, moves it half
//! the way down ([`EXPLORED_BLOCK_SHIFT`]), and any sample ends the
//! exploring. Running `D` for `D2` keeps every wait within `D`'s factor,
//! and the wait earns credit as the `D` it ran. An object whose waits
//! never outlast its `B` cannot sample it that way: once its waits have
//! gone [`DRIFT_AFTER_WAITS`] without a sample, each further one moves its
//! `B`, when above the process's, `2^-`[`BLOCK_RELAX_SHIFT`] of the way
//! down to it ([`AdaptiveSummary::age_block`]), until a wait blocks again
//! and its sample takes over. An object that blocks at least once per
//! [`STALE_AFTER_WAITS`] waits keeps exactly the `B` its blocks teach
//! (pulling every polled wait's `B` down would bias the objects that both
//! poll and block, where blocks cost more than the process's `B`, towards
//! blocking too often exactly where polling pays). The price: an object
//! that polls with `D2` rightly blocks about one wait per
//! [`STALE_AFTER_WAITS`] to learn its `B` again (at most `D`'s `2B`
//! against `D2`'s `t`), and one low sample there may leave its `B` low for
//! a few blocks; one that polls all its waits with a `B` well above the
//! process's drifts down past [`DRIFT_AFTER_WAITS`] and blocks a few waits
//! to learn its `B` again. Why explore before drifting: where the
//! process's `B` is far below the object's blocks (a VM's fast wake-up
//! mode can measure a tenth of what `calibrate`'s cells' blocks cost), a
//! drift towards it takes an object that rightly polls well below
//! its `B` before one of its waits blocks, and every arm is priced with
//! that low `B` until blocks have taught it again. A [`crate::WaitWord`]'s
//! summary starts with no history with the word; experiments that compare
//! objects learning in the static table against a learner with no history
//! reset the table ([`forget_all`]). A sample is the waiter's whole
//! latency: where threads outnumber CPUs it includes the woken thread's
//! wait for a CPU (which the process's learned `B` leaves out by taking a
//! lower quartile), so an oversubscribed object's `B` runs high; its long
//! waits still choose the arms that block, whose polls grow with `B / 32`.
//! The bound above holds for the `B` each wait draws with: the expected
//! total cost is at most `R` times the sum of `min(t, B_object)` (a `/b/0`
//! wait spends and earns credit in its own `B`).
//!
//! Cost per wait: choosing reads one word (the current arm) and the
//! object's `B` (one more; `D2` also reads the count of waits without a
//! wake-up sample, to know whether it explores), and an `F(a)` arm draws
//! like `rand/b` (a random number and a logarithm; `D`, `D2` and `/b/0`
//! need neither; `/b/0` spends its credit with one compare-and-swap);
//! recording (every blocked wait, one in four polled ones) is one clock
//! read, one division (`t / B`) and, per arm, integer work (a compare or a
//! multiply, a load, a shift, a subtract, an add and a store), then a
//! 9-way minimum, and for a blocked wait one load and store of the
//! object's `B` (and one load of that count, and its store when the sample
//! resets it) and, with its release stamped, one compare-and-swap of the
//! credit; for a recorded polled wait, one load and store of the count of
//! waits without a wake-up sample (and once drifting, one load and store
//! of the object's `B`); a wait that polls by yielding divides its times
//! by `beta` and also reads the idle-CPU signal's cache (a clock read and
//! four loads, and one `/proc/loadavg` read per process every 100 µs at
//! most). No allocation, no lock, and no read-modify-write on a wait that
//! does not block (but the cache's refresh claim, one CAS per period); the
//! credit's two are made by waits that block anyway.
//!
//! Where the summary lives: a [`crate::WaitWord`] carries its own, in the
//! cache line of its futex word (its 128-byte alignment leaves the room),
//! so a wait on it reads and writes no line and no page its word did not
//! (a blocked wait starts and ends with cold caches, and on a VM each
//! other line, and each other page's translation, costs a miss). Waits on
//! words that live elsewhere ([`crate::WaitWordRef::new`], the mutexes,
//! the semaphore) use a static table of [`SLOTS`] cache-line-sized
//! summaries indexed by a hash of the word's address (parking_lot hashes
//! addresses to its queues the same way). Two objects that share a slot
//! share one summary; the bound above holds regardless, only the learning
//! is shared. A record writes the word's line once, as its wait ends:
//! another waiter of the same word that polls it by a hardware monitor
//! sees that store as a change and looks again (one false wake-up per
//! recorded wait of a sibling).
//!
//! # Which waits learn
//!
//! Every wait through the engine ([`crate::WaitWord`] and
//! [`crate::WaitWordRef`]: events, barriers, condition variables, the
//! RwLock, the ticket and MCS locks), every contended acquisition of the
//! TTAS mutex (the default [`crate::Mutex`]) and of the
//! [`Semaphore`](crate::semaphore::Semaphore) draws its limit from its
//! object's summary and records itself there
//! ([`crate::Policy::begin_wait_in`] with a word's own summary,
//! [`crate::Policy::begin_wait`] with the table's).
//! The channel, which waits through hooks of its own, draws from
//! [`START_ARM`] (`rand/b`) and does not learn. The MCS lock waits
//! on per-acquisition queue nodes on the waiter's stack, so its summaries
//! are keyed by those nodes: it learns per thread and call depth, not per
//! lock.
//!
//! # Memory ordering
//!
//! All accesses are `Relaxed`: the summary publishes no other memory, and
//! each word is a self-contained number. Two threads recording at once may
//! lose one sample (load, load, store, store), and a reader may see the
//! arm of an older summary; both only delay the learning, and the bound
//! does not depend on them. The credit, which the bound does depend on,
//! changes only by compare-and-swap: no spend or earning is lost.

use waitwise_platform::shim::{AtomicU32, Ordering};

/// The `a` of the truncated-exponential arms `F(a)`, smallest first.
/// Chosen from the model (`waitwise_model::adaptive`): `1/32` costs
/// `1.016 B` on a long wait, within 1.6% of always-block (exponential
/// `lambda B = 0.3`: always-block 1.157, `F(1/32)` 1.170; uniform
/// `U/B = 3`: 1.200 and 1.213), and it is the arm that runs in place of
/// `/b/0` when the credit is short. Its price is the worst case: 32.5,
/// where `1/16` gave 16.5. The others
/// fill the range up to `rand/b` (`a = 1`) in factors of two (`1/16` is
/// kept for mixed laws: without it a mix of very short and long waits
/// cost up to 1.3% more).
pub const TRUNCATED_SCALES: [f64; 6] = [0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0];

/// `K(a) = 1/(1 - e^-a)` for [`TRUNCATED_SCALES`] (derived).
const TRUNCATED_FACTORS: [f64; 6] = [
    32.502_604_124_282_18,
    16.505_207_994_280_667,
    8.510_413_955_001_844,
    4.520_811_664_187_799,
    2.541_494_082_536_798,
    1.581_976_706_869_326_5,
];

/// `e^a - 1` for [`TRUNCATED_SCALES`] (derived).
const TRUNCATED_EXPM1: [f64; 6] = [
    0.031_743_407_499_102_67,
    0.064_494_458_917_859_43,
    0.133_148_453_066_826_32,
    0.284_025_416_687_741_5,
    0.648_721_270_700_128_2,
    1.718_281_828_459_045,
];

/// Number of arms: the six `F(a)`, `D`, `D2` and `/b/0`.
pub const ARMS: usize = 9;

/// Index of the deterministic arm `D` (poll for `B`).
pub const ARM_POLL_B: usize = 6;

/// Index of the deterministic arm `D2` (poll for `2B`). Chosen from
/// `waitwise model calibrate`: in its uniform cells whose waits end
/// between `B` and `2B` (blocks after long sleeps cost more than the
/// process's `B`), every arm blocking at `B` cost 1.4-1.5 times the
/// optimum where always-spin cost 1.1-1.2.
pub const ARM_POLL_2B: usize = 7;

/// Index of the arm `/b/0` (block at once), which a wait runs only with a
/// block's worth of the object's credit, else it runs
/// [`CREDIT_FALLBACK_ARM`] (module docs, "The bound").
pub const ARM_BLOCK: usize = 8;

/// The arm a wait runs when its object's arm is `/b/0` and its credit is
/// short of one block: `F(1/32)`, the arm closest to blocking at once
/// whose cost is bounded per wait.
pub const CREDIT_FALLBACK_ARM: usize = 0;

/// An object's credit stays below this many times the `B` of the wait that
/// earns it. Guessed: one long wait under `/b/0` earns about
/// [`WORST_CASE_FACTOR`] - 1 blocks' worth, so the cap is two such waits;
/// a burst of short waits spends it one block per wait, and the summary
/// leaves `/b/0` after one or two of them (each adds `B` to its score,
/// next to at most `K(1/32) t` to `F(1/32)`'s), so a larger cap would
/// buy nothing and a smaller one would make `/b/0` fall back after a few
/// such bursts. The bound holds for any cap.
pub const CREDIT_CAP_IN_B: f64 = 64.0;

/// The longest poll limit of any arm, in units of `B` (`D2`'s): every
/// drawn limit lies in `[0, MAX_LIMIT_IN_B * B]`.
pub const MAX_LIMIT_IN_B: f64 = 2.0;

/// Index of `rand/b` (`F(1)`), the arm of an object with no history: the
/// best worst case of the menu.
pub const START_ARM: usize = 5;

/// The worst-case factor of `adapt/b` against the off-line optimum, per
/// wait and so for any sequence: `K(1/32) = 1/(1 - e^(-1/32))` (derived,
/// module docs).
pub const WORST_CASE_FACTOR: f64 = 32.502_604_124_282_18;

/// Each recorded wait keeps `1 - 2^-DECAY_SHIFT` of the old scores: a
/// window of about 32 waits. Chosen: long enough that the arm does not
/// flip on one odd wait, short enough that a switch between short and long
/// waits is followed within a few dozen waits. Compared in `waitwise
/// model calibrate` with a window of 16: a shorter window follows the
/// switching cell a little better, and costs more where blocking at once
/// is best, where the arms that poll first are nearly tied with `/b/0` and
/// a short window picks them after a few short waits.
pub const DECAY_SHIFT: u32 = 5;

/// A wait that ended while polling is recorded with probability
/// `2^-POLLED_SAMPLE_SHIFT`, with `2^POLLED_SAMPLE_SHIFT` times the weight
/// (module docs, "The summary"): the scores' expected increments are those
/// of recording every such wait, and three in four of them skip the clock
/// read and the update. Chosen: a recorded polled wait costs a clock read
/// and an update more than a static policy's, which weighs where waits
/// last a few hundred ns (`model calibrate`'s `U/B = 0.1` cell); in the
/// model (`waitwise_model::adaptive`'s learner with this sampling) 1 in 4
/// leaves the stationary cells' factors as they were and costs the
/// switching cell a little, 1 in 8 more.
pub const POLLED_SAMPLE_SHIFT: u32 = 2;

/// Each wake-up sample moves an object's learned `B` by `2^-BLOCK_SHIFT`
/// of its difference from it: a decayed mean over about the last 8 blocked
/// waits. Guessed: after a mode change `B` grows by up to 1/8 per block
/// (with [`BLOCK_SAMPLE_CAP`]), so a tenfold rise is followed within about
/// 20 blocks, a fall within about 8.
pub const BLOCK_SHIFT: u32 = 3;

/// A wake-up sample counts at most this many times the object's current
/// `B`. Chosen: a host preemption or a time slice lost to another thread
/// (hundreds of µs) moves `B` by at most 1/8 instead of multiplying it,
/// and the decayed mean has a fixed point as long as fewer than half the
/// samples are such outliers (with a cap `c`, fewer than `1/c`: a larger
/// cap lets the learned `B` of long-wait cells on a loaded machine drift
/// to several times what their blocks cost on average).
pub const BLOCK_SAMPLE_CAP: f64 = 2.0;

/// An object's learned `B` stays within the process's `B` divided or
/// multiplied by this. Guessed, from `waitwise model calibrate` on a VM:
/// blocks can cost an order of magnitude more than the `B` the process
/// measured with back-to-back hand-offs, in the host's fast wake-up mode
/// and with other programs running.
pub const BLOCK_RANGE: f64 = 16.0;

/// An object whose recorded waits went this many waits without a wake-up
/// sample has a stale `B`, and explores ([`AdaptiveSummary::exploring`]).
/// Chosen: eight windows ([`DECAY_SHIFT`]); an object that blocks at least
/// that often keeps the `B` its own blocks teach, untouched, and one whose
/// polls would serve it better blocks about once per that many waits to
/// learn its `B` again.
pub const STALE_AFTER_WAITS: u32 = 8 << DECAY_SHIFT;

/// An object whose recorded waits went this many waits without a wake-up
/// sample, exploring included, lets its `B` drift down
/// ([`AdaptiveSummary::age_block`]): none of its waits outlasted `B`, so
/// exploring could not sample it. Chosen: one more [`STALE_AFTER_WAITS`].
pub const DRIFT_AFTER_WAITS: u32 = 2 * STALE_AFTER_WAITS;

/// A wake-up sample below an exploring object's `B`
/// ([`AdaptiveSummary::exploring`]) moves it `2^-EXPLORED_BLOCK_SHIFT` of
/// the way down ([`explored_block_ns`]). Guessed: each exploration halves
/// the excess of a `B` that a burst of slow wake-ups left high (one left
/// at twice its value is within 1.25 times it after two), while one low
/// sample of a `B` that was right moves it at most half the way to that
/// sample, which the object's next blocks correct by `2^-BLOCK_SHIFT`
/// each. Samples above `B` take the usual weight: a larger one would let
/// one host stall raise a `B` by half.
pub const EXPLORED_BLOCK_SHIFT: u32 = 1;

/// Each wait past [`DRIFT_AFTER_WAITS`] moves a stale `B` that is above
/// the process's `2^-BLOCK_RELAX_SHIFT` of the way down to it (module
/// docs, "`B`, per object"). Chosen: a `B` that a burst of slow wake-ups
/// left at twice what the object's blocks cost, with the process's `B`
/// near the latter, is back within reach of blocking about 100 waits after
/// it starts to drift; faster drifts make objects that rightly poll block
/// more often to relearn their `B`.
pub const BLOCK_RELAX_SHIFT: u32 = 6;

/// Wake-up samples longer than this are dropped, ns: a time slice, not a
/// wake-up (the limit of `waitwise_platform::wake_latency::MAX_SAMPLE_NS`,
/// a test checks that they agree).
const MAX_WAKE_SAMPLE_NS: f64 = 1_000_000.0;

/// Fixed-point unit of a score: one `B` of cost. A wait adds at most `3B`
/// (`D2` on a long wait) times its weight (at most
/// `2^POLLED_SAMPLE_SHIFT`), so a score stays below `3 * SCORE_UNIT *
/// 2^(DECAY_SHIFT + POLLED_SAMPLE_SHIFT)`, far from `u32::MAX`.
const SCORE_UNIT: f64 = 4096.0;

/// [`SCORE_UNIT`] as an integer: a wait's `x = t / B` in score units.
const SCORE_UNIT_Q: u32 = SCORE_UNIT as u32;

/// Past this many `B` every arm's cost is flat (`D2`'s limit): the wait's
/// `x` is saturated here before it becomes an integer.
const FLAT_BEYOND_B: f64 = MAX_LIMIT_IN_B + 1.0;

/// `aB` of each `F(a)` in score units (derived): where its cost stops
/// growing.
const TRUNCATED_CAPS_Q: [u32; 6] = {
    let mut q = [0u32; 6];
    let mut i = 0;
    while i < 6 {
        q[i] = (TRUNCATED_SCALES[i] * SCORE_UNIT) as u32;
        i += 1;
    }
    q
};

/// `K(a) * 2^16` for each `F(a)` (derived): its cost per unit of `x`, in
/// 16-bit fixed point.
const TRUNCATED_FACTORS_Q16: [u32; 6] = {
    let mut q = [0u32; 6];
    let mut i = 0;
    while i < 6 {
        q[i] = (TRUNCATED_FACTORS[i] * 65536.0 + 0.5) as u32;
        i += 1;
    }
    q
};

/// `x` (at most [`FLAT_BEYOND_B`]) in score units, rounded up: a wait
/// just past a deterministic arm's limit stays past it (`x <= c` exactly
/// when the result is at most `c` units, `c` whole), so only the `F(a)`
/// costs move, by at most `K(a)` units. Without `roundsd`, which the
/// x86-64 baseline lacks.
#[inline(always)]
fn score_units_up(x: f64) -> u32 {
    let y = x * SCORE_UNIT;
    // Saturating: a NaN gives 0 (callers exclude it anyway).
    let down = y as u32;
    down + u32::from(f64::from(down) < y)
}

/// [`arm_cost`] in score units for a wait of `xq = x * SCORE_UNIT`
/// (integers only: the summary's update runs on every wait). With `xq`
/// from [`score_units_up`], within `K(a) + 1` score units (of 4096 per
/// `B`) of [`arm_cost`], and exact for the deterministic arms.
#[inline(always)]
fn arm_cost_q(arm: usize, xq: u32) -> u32 {
    match arm {
        ARM_BLOCK => {
            if xq == 0 {
                0
            } else {
                SCORE_UNIT_Q
            }
        }
        ARM_POLL_B => {
            if xq <= SCORE_UNIT_Q {
                xq
            } else {
                2 * SCORE_UNIT_Q
            }
        }
        ARM_POLL_2B => {
            if xq <= 2 * SCORE_UNIT_Q {
                xq
            } else {
                3 * SCORE_UNIT_Q
            }
        }
        _ => {
            let x = u64::from(xq.min(TRUNCATED_CAPS_Q[arm]));
            ((x * u64::from(TRUNCATED_FACTORS_Q16[arm])) >> 16) as u32
        }
    }
}

/// The largest switch-spinning efficiency a yield-polling wait assumes
/// (module docs, "Polling by yielding"). Guessed: `waitwise oversub`'s
/// most oversubscribed runs have 4 threads per CPU; past that a yielding
/// poller still pays its own `sched_yield` calls, which the ratio does not
/// shrink.
pub const MAX_SWITCH_SPIN_BETA: f64 = 4.0;

/// The switch-spinning efficiency of a yield-polling wait when the machine
/// runs `runnable_per_cpu` runnable threads per CPU (`None`: not known):
/// that ratio, within `[1, MAX_SWITCH_SPIN_BETA]`, or 1 (module docs,
/// "Polling by yielding"). Pure, so the rule is testable.
#[inline]
pub fn switch_spin_beta(runnable_per_cpu: Option<f64>) -> f64 {
    match runnable_per_cpu {
        // A NaN fails the guard and gives 1 (no clamp, no panic).
        Some(x) if x > 1.0 => x.min(MAX_SWITCH_SPIN_BETA),
        _ => 1.0,
    }
}

/// Number of summaries in the static table (a power of two).
pub const SLOTS: usize = 128;

/// The poll limit of a deterministic arm in units of `B` (1 for `D`, 2
/// for `D2`, 0 for `/b/0`), `None` for an `F(a)`.
#[inline]
pub fn poll_multiple(arm: usize) -> Option<f64> {
    match arm {
        ARM_BLOCK => Some(0.0),
        ARM_POLL_B => Some(1.0),
        ARM_POLL_2B => Some(MAX_LIMIT_IN_B),
        _ => None,
    }
}

/// The expected cost of arm `arm` on a wait of `x = t / B`, in units of
/// `B` (module docs, the table).
///
/// # Panics
///
/// When `arm >= ARMS`.
#[inline]
pub fn arm_cost(arm: usize, x: f64) -> f64 {
    if let Some(c) = poll_multiple(arm) {
        if x <= c {
            x
        } else {
            c + 1.0
        }
    } else {
        TRUNCATED_FACTORS[arm] * x.min(TRUNCATED_SCALES[arm])
    }
}

/// The worst ratio of arm `arm`'s expected cost to `min(t, B)` over all
/// waits: `K(a)` for `F(a)`, `c + 1` for a deterministic arm polling
/// `cB` (2 for `D`, 3 for `D2`), unbounded for `/b/0` (a wait of `t`
/// near 0 costs `B`; its waits are bounded by the object's credit
/// instead, module docs, "The bound").
pub fn arm_worst_factor(arm: usize) -> f64 {
    if arm == ARM_BLOCK {
        f64::INFINITY
    } else if let Some(c) = poll_multiple(arm) {
        c + 1.0
    } else {
        TRUNCATED_FACTORS[arm]
    }
}

/// The poll limit of arm `arm` for a uniform draw `u` in `[0, 1)` and
/// block cost `b`: inverse CDF `B ln(1 + u (e^a - 1))` for `F(a)`, `B` for
/// `D`, `2B` for `D2` (pure, so the laws are testable).
#[inline]
pub fn poll_limit_from_uniform(arm: usize, u: f64, b: f64) -> f64 {
    if let Some(c) = poll_multiple(arm) {
        c * b
    } else {
        b * (u * TRUNCATED_EXPM1[arm]).ln_1p()
    }
}

/// A short name for arm `arm` (`F(1/32)`, ..., `rand/b`, `s/b/1`,
/// `s/b/2`, `/b/0`).
pub fn arm_name(arm: usize) -> &'static str {
    [
        "F(1/32)", "F(1/16)", "F(1/8)", "F(1/4)", "F(1/2)", "rand/b", "s/b/1", "s/b/2", "/b/0",
    ][arm]
}

/// The credit a wait of `x = t / B` that blocked earns its object, in
/// units of `B` (module docs, "The bound"): `R min(x, 1)` less the
/// expected cost of the arm it ran, except for `/b/0`, whose block was
/// paid for when the wait began. Never negative: every other arm costs at
/// most `R min(x, 1)`. Pure, so the rule is testable.
#[inline]
pub fn credit_earned(ran_arm: usize, x: f64) -> f64 {
    // A NaN (or a wait of 0) earns nothing.
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    let budget = WORST_CASE_FACTOR * x.min(1.0);
    if ran_arm == ARM_BLOCK {
        budget
    } else {
        (budget - arm_cost(ran_arm, x)).max(0.0)
    }
}

/// The wait length a finished wait counts as, ns, or `None` when it
/// teaches nothing: `elapsed_ns` for a wait that ended while polling; for
/// one that blocked, `released_ns` (when its waker stamped the release,
/// from the wait's start) if known, else `elapsed - B` (its sleep less one
/// wake-up), at least the poll limit it outlasted and at most
/// `elapsed_ns`; `elapsed_ns` for a timed-out wait that lasted at least
/// `B` (every arm's cost is saturated there), `None` for a shorter one
/// (its real length is unknown).
#[inline]
pub fn observed_wait_ns(
    elapsed_ns: f64,
    blocked: bool,
    timed_out: bool,
    limit_ns: f64,
    b_ns: f64,
    released_ns: Option<f64>,
) -> Option<f64> {
    if timed_out {
        return (elapsed_ns >= b_ns).then_some(elapsed_ns);
    }
    if blocked {
        let t = released_ns.unwrap_or(elapsed_ns - b_ns);
        Some(t.max(limit_ns).min(elapsed_ns).max(0.0))
    } else {
        Some(elapsed_ns.max(0.0))
    }
}

/// Whether a wake-up latency is a sample of a block's cost: at least
/// [`MIN_MEASURED_BLOCK_NS`](super::block_cost::MIN_MEASURED_BLOCK_NS) (a
/// real sleep) and at most a millisecond (not a time slice); a NaN is not.
#[inline]
fn is_wake_sample(latency_ns: f64) -> bool {
    (super::block_cost::MIN_MEASURED_BLOCK_NS..=MAX_WAKE_SAMPLE_NS).contains(&latency_ns)
}

/// The object's `B` after one wake-up of `latency_ns` (module docs, "`B`,
/// per object"): `old_ns` moved by `2^-BLOCK_SHIFT` of the difference,
/// the sample capped at [`BLOCK_SAMPLE_CAP`] `x old_ns`, the result within
/// [`BLOCK_RANGE`] of `process_ns`; `old_ns` itself when the sample is
/// dropped (under
/// [`MIN_MEASURED_BLOCK_NS`](super::block_cost::MIN_MEASURED_BLOCK_NS),
/// over a millisecond, or not a number). Pure, so the update is testable.
pub fn next_block_ns(old_ns: f64, latency_ns: f64, process_ns: f64) -> f64 {
    if !is_wake_sample(latency_ns) {
        return old_ns;
    }
    let sample = latency_ns.min(BLOCK_SAMPLE_CAP * old_ns);
    moved_towards(old_ns, sample, BLOCK_SHIFT, process_ns)
}

/// `old_ns` moved `2^-shift` of the way to `sample_ns`, kept within
/// [`BLOCK_RANGE`] of `process_ns` and at least
/// [`MIN_MEASURED_BLOCK_NS`](super::block_cost::MIN_MEASURED_BLOCK_NS):
/// the step of every learned `B`.
fn moved_towards(old_ns: f64, sample_ns: f64, shift: u32, process_ns: f64) -> f64 {
    let next = old_ns + (sample_ns - old_ns) / f64::from(1u32 << shift);
    // max then min, not clamp: no panic on a bad `process_ns`.
    next.max(process_ns / BLOCK_RANGE)
        .min(process_ns * BLOCK_RANGE)
        .max(super::block_cost::MIN_MEASURED_BLOCK_NS)
}

/// An exploring object's `B` after one wake-up of `latency_ns`
/// ([`AdaptiveSummary::exploring`]): a sample below `old_ns` moves it
/// `2^-EXPLORED_BLOCK_SHIFT` of the way down (what wake-ups taught long
/// ago gives way), any other as [`next_block_ns`] moves it. Pure, so the
/// update is testable.
pub fn explored_block_ns(old_ns: f64, latency_ns: f64, process_ns: f64) -> f64 {
    if !(is_wake_sample(latency_ns) && latency_ns < old_ns) {
        return next_block_ns(old_ns, latency_ns, process_ns);
    }
    moved_towards(old_ns, latency_ns, EXPLORED_BLOCK_SHIFT, process_ns)
}

/// A stale object's `B` after one more wait without a wake-up sample
/// standing for `2^weight_shift` waits ([`AdaptiveSummary::age_block`]):
/// `old_ns` moved `2^(weight_shift - BLOCK_RELAX_SHIFT)` of the way down to
/// the process's `process_ns`; unchanged when not above it (or either is
/// not a positive number). Pure, so the rule is testable.
pub fn relaxed_block_ns(old_ns: f64, process_ns: f64, weight_shift: u32) -> f64 {
    if !(process_ns > 0.0 && old_ns > process_ns && old_ns.is_finite()) {
        return old_ns;
    }
    let step = f64::from(1u32 << weight_shift.min(BLOCK_RELAX_SHIFT))
        / f64::from(1u32 << BLOCK_RELAX_SHIFT);
    old_ns - (old_ns - process_ns) * step
}

/// One object's summary: per arm, the decayed sum of its cost on recent
/// waits, the arm with the least, and the object's learned `B` (module
/// docs).
#[derive(Debug)]
pub struct AdaptiveSummary {
    /// Decayed cost of each arm, in `SCORE_UNIT`s per `B`.
    scores: [AtomicU32; ARMS],
    /// The arm with the least score (as of the last record), `< ARMS`.
    arm: AtomicU32,
    /// The object's learned `B`, whole ns; 0 until its first wake-up.
    block: AtomicU32,
    /// What the object's waits may still spend on `/b/0`, whole ns
    /// (module docs, "The bound").
    credit: AtomicU32,
    /// Recorded waits since the object's last wake-up sample (saturating).
    unsampled: AtomicU32,
}

impl AdaptiveSummary {
    crate::loom_const::const_unless_loom! {
        /// A summary with no history: it runs [`START_ARM`].
        pub fn new() -> Self {
            Self {
                scores: [
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                    AtomicU32::new(0),
                ],
                arm: AtomicU32::new(START_ARM as u32),
                block: AtomicU32::new(0),
                credit: AtomicU32::new(0),
                unsampled: AtomicU32::new(0),
            }
        }
    }

    /// The arm the next wait runs (always `< ARMS`).
    #[inline]
    pub fn arm(&self) -> usize {
        // Relaxed: a number on its own (module docs).
        let a = self.arm.load(Ordering::Relaxed) as usize;
        if a < ARMS {
            a
        } else {
            panic!("adaptive summary holds arm {a}")
        }
    }

    /// The decayed score of each arm, in units of `B`.
    pub fn scores(&self) -> [f64; ARMS] {
        // Relaxed: a snapshot of numbers (module docs).
        std::array::from_fn(|i| f64::from(self.scores[i].load(Ordering::Relaxed)) / SCORE_UNIT)
    }

    /// Adds one wait of `t_ns` with block cost `b_ns`: every score decays
    /// by `2^-DECAY_SHIFT` and gains its arm's cost, and the arm becomes
    /// the one with the least score (the current one on a tie).
    #[inline]
    pub fn record(&self, t_ns: f64, b_ns: f64) {
        self.record_weighted(t_ns, b_ns, 0);
    }

    /// [`AdaptiveSummary::record`] for a wait that stands for
    /// `2^weight_shift` waits (a sampled one, [`POLLED_SAMPLE_SHIFT`]):
    /// every score decays once and gains that many times its arm's cost.
    /// A `weight_shift` over [`POLLED_SAMPLE_SHIFT`] counts as that.
    #[inline]
    pub fn record_weighted(&self, t_ns: f64, b_ns: f64, weight_shift: u32) {
        if !(b_ns > 0.0 && b_ns.is_finite() && t_ns >= 0.0) {
            return;
        }
        let weight_shift = weight_shift.min(POLLED_SAMPLE_SHIFT);
        let xq = score_units_up((t_ns / b_ns).min(FLAT_BEYOND_B));
        let current = self.arm();
        let mut best = current;
        let mut best_score = u32::MAX;
        for (i, slot) in self.scores.iter().enumerate() {
            let add = arm_cost_q(i, xq) << weight_shift;
            // Relaxed load and store, not a read-modify-write: a sample
            // lost to a concurrent record only slows the learning.
            let old = slot.load(Ordering::Relaxed);
            let new = old - (old >> DECAY_SHIFT) + add;
            slot.store(new, Ordering::Relaxed);
            if new < best_score || (new == best_score && i == current) {
                best = i;
                best_score = new;
            }
        }
        if best != current {
            self.arm.store(best as u32, Ordering::Relaxed);
        }
    }

    /// The `B` this object's waits use, ns: the one learned from its
    /// wake-ups ([`AdaptiveSummary::record_wake_up`]) within
    /// [`BLOCK_RANGE`] of the process's `process_ns`, or `process_ns`
    /// before the first.
    #[inline]
    pub fn block_ns(&self, process_ns: f64) -> f64 {
        // Relaxed: a number on its own (module docs).
        match self.block.load(Ordering::Relaxed) {
            0 => process_ns,
            b => f64::from(b)
                .max(process_ns / BLOCK_RANGE)
                .min(process_ns * BLOCK_RANGE),
        }
    }

    /// One blocked wait of this object woke `latency_ns` after its waker's
    /// stamp: moves the object's `B` ([`next_block_ns`], or
    /// [`explored_block_ns`] while it explores).
    #[inline]
    pub fn record_wake_up(&self, latency_ns: f64, process_ns: f64) {
        let old = self.block_ns(process_ns);
        // Relaxed: a number on its own (module docs); one load serves the
        // rule and the reset below.
        let waits = self.unsampled.load(Ordering::Relaxed);
        let next = if waits > STALE_AFTER_WAITS {
            explored_block_ns(old, latency_ns, process_ns)
        } else {
            next_block_ns(old, latency_ns, process_ns)
        };
        if next != old {
            // Relaxed load above and store here, not a read-modify-write:
            // a sample lost to a concurrent one only slows the learning.
            self.block.store(
                next.min(f64::from(u32::MAX)).max(1.0) as u32,
                Ordering::Relaxed,
            );
        }
        // A sample (one next_block_ns takes): the object's B is fresh.
        // Relaxed: as above; stored only when it changes.
        if is_wake_sample(latency_ns) && waits != 0 {
            self.unsampled.store(0, Ordering::Relaxed);
        }
    }

    /// One recorded wait that gave no wake-up sample (it ended while
    /// polling), standing for `2^weight_shift` waits (as in
    /// [`AdaptiveSummary::record_weighted`]): counts towards
    /// [`STALE_AFTER_WAITS`] (exploring) and, past [`DRIFT_AFTER_WAITS`]
    /// such waits in a row, moves the object's `B` towards the process's
    /// `process_ns` when above it ([`relaxed_block_ns`]). Without it an
    /// object whose `B` was left high, and whose waits all end before it,
    /// would keep polling every wait through and never block again to
    /// learn that blocks are cheaper.
    #[inline]
    pub fn age_block(&self, process_ns: f64, weight_shift: u32) {
        let weight_shift = weight_shift.min(POLLED_SAMPLE_SHIFT);
        // Relaxed load and store, not a read-modify-write: a count lost
        // to a concurrent record only delays the ageing.
        let waits = self.unsampled.load(Ordering::Relaxed);
        let waits = waits.saturating_add(1 << weight_shift);
        self.unsampled.store(waits, Ordering::Relaxed);
        if waits <= DRIFT_AFTER_WAITS {
            return;
        }
        let raw = self.block.load(Ordering::Relaxed);
        if raw == 0 {
            // Still the process's.
            return;
        }
        let old = f64::from(raw);
        let next = relaxed_block_ns(old, process_ns, weight_shift);
        if next < old {
            // Relaxed: as in record_wake_up.
            self.block.store(next.max(1.0) as u32, Ordering::Relaxed);
        }
    }

    /// Whether the object's `B` is stale: its recorded waits went more than
    /// [`STALE_AFTER_WAITS`] without a wake-up sample. Then a wait whose
    /// arm is `D2` runs `D` instead (a limit of `B`, not `2B`), so that a
    /// wait longer than `B` blocks and samples what a block costs, and a
    /// sample below `B` moves it further ([`explored_block_ns`]).
    #[inline]
    pub fn exploring(&self) -> bool {
        // Relaxed: a number on its own (module docs).
        self.unsampled.load(Ordering::Relaxed) > STALE_AFTER_WAITS
    }

    /// The arm a wait runs for `arm`: `D` for `D2` while the object
    /// explores ([`AdaptiveSummary::exploring`]), else `arm` itself.
    #[inline]
    fn explored(&self, arm: usize) -> usize {
        if arm == ARM_POLL_2B && self.exploring() {
            ARM_POLL_B
        } else {
            arm
        }
    }

    /// Forgets everything: the summary of an object with no history
    /// ([`AdaptiveSummary::new`]).
    pub fn reset(&self) {
        // Relaxed: numbers on their own (module docs); a record racing
        // with the reset may leave one of its words, as two records may.
        for s in &self.scores {
            s.store(0, Ordering::Relaxed);
        }
        self.arm.store(START_ARM as u32, Ordering::Relaxed);
        self.block.store(0, Ordering::Relaxed);
        self.credit.store(0, Ordering::Relaxed);
        self.unsampled.store(0, Ordering::Relaxed);
    }

    /// The credit the object's waits may still spend on `/b/0`, ns.
    pub fn credit_ns(&self) -> f64 {
        // Relaxed: a number on its own (module docs).
        f64::from(self.credit.load(Ordering::Relaxed))
    }

    /// Spends one block's worth of credit (`b_ns`, rounded up) for a wait
    /// about to run `/b/0`, if the object has it; `false` (and nothing
    /// spent) if not.
    #[inline]
    pub fn take_block_credit(&self, b_ns: f64) -> bool {
        // Saturating: a NaN asks for 0, an infinity for everything; at
        // least 1 ns, so that a spend is never free.
        let need = (b_ns.ceil() as u32).max(1);
        // Relaxed: the credit publishes no other memory. A compare-and-
        // swap, unlike the scores' load and store: two waits spending at
        // once must both be counted, or the object could spend what it
        // does not have and the bound would not hold.
        self.credit
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |have| {
                have.checked_sub(need)
            })
            .is_ok()
    }

    /// Adds `ns` of credit (rounded down), up to [`CREDIT_CAP_IN_B`] times
    /// `b_ns` in all; credit already over that stays.
    #[inline]
    pub fn earn_credit(&self, ns: f64, b_ns: f64) {
        // Saturating casts: a NaN adds nothing.
        let add = ns as u32;
        let cap = (CREDIT_CAP_IN_B * b_ns) as u32;
        if add == 0 {
            return;
        }
        // Relaxed: as in take_block_credit; a compare-and-swap so that no
        // concurrent spend is overwritten. Err: at the cap, nothing to add.
        let _ = self
            .credit
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |have| {
                (have < cap).then(|| have.saturating_add(add).min(cap))
            });
    }

    /// The longest poll limit the next wait can draw, ns, with the
    /// process's `B` `process_ns`: its arm's largest (`aB` for `F(a)`, `B`
    /// for `D`, `2B` for `D2`, `B` for `D2` while the object explores) with
    /// the object's `B`
    /// ([`AdaptiveSummary::block_ns`]), for a wait that polls at full cost
    /// (one that polls by yielding draws `beta` times as long). For
    /// measurements that bound what a wait could have polled.
    pub fn longest_poll_limit_ns(&self, process_ns: f64) -> f64 {
        let b_ns = self.block_ns(process_ns);
        let mut arm = self.arm();
        if arm == ARM_BLOCK && self.credit_ns() < b_ns.ceil() {
            arm = CREDIT_FALLBACK_ARM;
        }
        let arm = self.explored(arm);
        poll_multiple(arm).unwrap_or_else(|| TRUNCATED_SCALES[arm]) * b_ns
    }

    /// A poll limit for the next wait, ns, drawn from the current arm with
    /// the uniform `u` in `[0, 1)`.
    #[inline]
    pub fn poll_limit_ns(&self, u: f64, b_ns: f64) -> f64 {
        poll_limit_from_uniform(self.arm(), u, b_ns)
    }

    /// The arm the next wait runs and its poll limit, ns: the current arm,
    /// but `/b/0` only with a block's worth of credit, which it spends
    /// ([`AdaptiveSummary::take_block_credit`]), else
    /// [`CREDIT_FALLBACK_ARM`], and `D` for `D2` while the object explores
    /// ([`AdaptiveSummary::exploring`]); `u` drawn from the calling thread's
    /// generator only when that arm is random (a deterministic arm's limit
    /// needs none).
    #[cfg(not(loom))]
    #[inline]
    fn draw_poll_limit_ns(&self, b_ns: f64) -> (usize, f64) {
        let mut arm = self.arm();
        if arm == ARM_BLOCK {
            if self.take_block_credit(b_ns) {
                return (ARM_BLOCK, 0.0);
            }
            arm = CREDIT_FALLBACK_ARM;
        }
        let arm = self.explored(arm);
        let limit = match poll_multiple(arm) {
            Some(c) => c * b_ns,
            None => poll_limit_from_uniform(arm, super::randomized::next_uniform(), b_ns),
        };
        (arm, limit)
    }
}

impl Default for AdaptiveSummary {
    fn default() -> Self {
        Self::new()
    }
}

/// One summary of the static table, on a cache line of its own: two
/// objects' records never write the same line.
#[cfg(not(loom))]
#[repr(align(64))]
struct Slot(AdaptiveSummary);

/// The static table of summaries (module docs).
#[cfg(not(loom))]
static SUMMARIES: [Slot; SLOTS] = [const { Slot(AdaptiveSummary::new()) }; SLOTS];

/// Forgets what the static table learned: each of its summaries starts
/// again from [`START_ARM`] and the process's `B`. For experiments that
/// compare objects against a learner with no history: an object that
/// learns in the table, allocated where an earlier one lived or hashed to
/// its slot, otherwise starts from that one's summary. A
/// [`crate::WaitWord`]'s own summary is new with the word and not touched
/// here.
#[cfg(not(loom))]
pub fn forget_all() {
    for s in &SUMMARIES {
        s.0.reset();
    }
}

/// The slot of a wait word at `addr`: two rounds of Fibonacci hashing
/// (multiply, fold the high half down, multiply) of the address without
/// its two low bits, top bits kept, so that objects at any common stride
/// (4 bytes in an array, 128 for a `WaitWord`) spread like random ones.
#[inline]
pub fn slot_of(addr: usize) -> usize {
    const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = ((addr >> 2) as u64).wrapping_mul(GOLDEN);
    h ^= h >> 32;
    h = h.wrapping_mul(GOLDEN);
    (h >> (64 - SLOTS.trailing_zeros())) as usize
}

/// The summary of the object whose wait word is at `addr`.
#[cfg(not(loom))]
#[inline]
pub fn summary_for(addr: usize) -> &'static AdaptiveSummary {
    &SUMMARIES[slot_of(addr)].0
}

/// One wait of an object under `adapt/b`, from its poll limit to its
/// record: [`Learning::begin`] draws the limit from the object's summary
/// and reads the cycle clock; [`Learning::finish`] reads it again and
/// records the wait.
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug)]
pub struct Learning<'a> {
    summary: &'a AdaptiveSummary,
    /// The wait word's address (where its wakers stamp their wakes).
    addr: usize,
    start_ticks: u64,
    limit_ns: f64,
    /// The arm this wait runs (`/b/0` only when it spent the credit).
    arm: usize,
    /// The `B` this wait drew with (the object's).
    b_ns: f64,
    /// The process's `B`, which bounds the object's.
    process_b_ns: f64,
    /// The switch-spinning efficiency this wait polls with (1 unless it
    /// polls by yielding: module docs, "Polling by yielding").
    beta: f64,
}

#[cfg(not(loom))]
impl Learning<'static> {
    /// Starts a wait on the word at `addr` in a process whose block cost
    /// is `process_b_ns`, polling with switch-spinning efficiency `beta`
    /// ([`switch_spin_beta`]; 1 for a wait that does not poll by yielding),
    /// learning in the static table's summary of `addr` ([`summary_for`]);
    /// draws with the object's own `B` ([`AdaptiveSummary::block_ns`]) and
    /// returns the poll limit, ns, and the handle to finish with.
    #[inline]
    pub fn begin(addr: usize, process_b_ns: f64, beta: f64) -> (f64, Self) {
        Self::begin_on(summary_for(addr), addr, process_b_ns, beta)
    }
}

#[cfg(not(loom))]
impl<'a> Learning<'a> {
    /// [`Learning::begin`] learning in `summary` (an object's own, such as
    /// a [`crate::WaitWord`]'s), for the word at `addr` (where its wakers
    /// stamp their wakes).
    #[inline]
    pub fn begin_on(
        summary: &'a AdaptiveSummary,
        addr: usize,
        process_b_ns: f64,
        beta: f64,
    ) -> (f64, Self) {
        let b_ns = summary.block_ns(process_b_ns);
        // At least 1 (a NaN gives 1); the wait path passes
        // switch_spin_beta's value, already within its range.
        let beta = beta.max(1.0);
        let (arm, limit_ns) = summary.draw_poll_limit_ns(b_ns);
        let limit_ns = beta * limit_ns;
        let start_ticks = waitwise_platform::clock::cycle_clock().now();
        (
            limit_ns,
            Self {
                summary,
                addr,
                start_ticks,
                limit_ns,
                arm,
                b_ns,
                process_b_ns,
                beta,
            },
        )
    }

    /// When the wait began, on the cycle clock: where its polling phase
    /// starts, so the phase's deadline needs no clock read of its own.
    #[inline]
    pub(crate) fn start_ticks(&self) -> Option<u64> {
        Some(self.start_ticks)
    }

    /// Records the wait that began here, as [`observed_wait_ns`] counts it
    /// (a blocked wait with its waker's stamp, when that is of this wait,
    /// which also gives one sample of the object's `B`: the stamp to now,
    /// and earns the object credit, [`credit_earned`]).
    #[inline]
    pub fn finish(self, blocked: bool, timed_out: bool) {
        let polled = !blocked && !timed_out;
        if polled && !sampled(self.start_ticks) {
            return;
        }
        let clock = waitwise_platform::clock::cycle_clock();
        let now = clock.now();
        let elapsed = clock.ticks_to_ns(now.saturating_sub(self.start_ticks));
        let stamp = if blocked && !timed_out {
            waitwise_platform::wake_latency::last_waking(self.addr as *const u32)
                .filter(|&at| at >= self.start_ticks && at <= now)
        } else {
            None
        };
        if let Some(at) = stamp {
            self.summary
                .record_wake_up(clock.ticks_to_ns(now - at), self.process_b_ns);
        }
        let released = stamp.map(|at| clock.ticks_to_ns(at - self.start_ticks));
        let weight_shift = if polled { POLLED_SAMPLE_SHIFT } else { 0 };
        self.learn(elapsed, blocked, timed_out, released, weight_shift);
    }

    /// Records a wait that lasted `elapsed_ns` (its waker released it
    /// `released_ns` after it began, when known) with weight
    /// `2^weight_shift`, as [`Learning::observed_ns`] counts it; a blocked
    /// wait with its release known earns the object credit
    /// ([`credit_earned`]).
    #[inline]
    fn learn(
        self,
        elapsed_ns: f64,
        blocked: bool,
        timed_out: bool,
        released_ns: Option<f64>,
        weight_shift: u32,
    ) {
        if let Some(t) = self.observed_ns(elapsed_ns, blocked, timed_out, released_ns) {
            self.summary.record_weighted(t, self.b_ns, weight_shift);
            if !blocked && !timed_out {
                self.summary.age_block(self.process_b_ns, weight_shift);
            }
            // Only a release the waker stamped tells how long a blocked
            // wait was; one without it earns nothing.
            if blocked && !timed_out && released_ns.is_some() {
                let earned = credit_earned(self.arm, t / self.b_ns);
                self.summary.earn_credit(earned * self.b_ns, self.b_ns);
            }
        }
    }

    /// The wait length this wait teaches ([`observed_wait_ns`]) in
    /// switch-spinning time (module docs, "Polling by yielding"): every
    /// time divided by the wait's `beta`. The wake-up sample
    /// [`Learning::finish`] took is a block's real cost and is not scaled.
    #[inline]
    fn observed_ns(
        self,
        elapsed_ns: f64,
        blocked: bool,
        timed_out: bool,
        released_ns: Option<f64>,
    ) -> Option<f64> {
        // Most waits poll at full cost (beta 1): no division for them (the
        // scaled path is a call, so the compiler cannot compute both and
        // select).
        if self.beta != 1.0 {
            return self.observed_switch_spinning_ns(elapsed_ns, blocked, timed_out, released_ns);
        }
        observed_wait_ns(
            elapsed_ns,
            blocked,
            timed_out,
            self.limit_ns,
            self.b_ns,
            released_ns,
        )
    }

    /// [`Learning::observed_ns`] for a wait that polled by yielding with
    /// `beta > 1`.
    #[cold]
    #[inline(never)]
    fn observed_switch_spinning_ns(
        self,
        elapsed_ns: f64,
        blocked: bool,
        timed_out: bool,
        released_ns: Option<f64>,
    ) -> Option<f64> {
        let beta = self.beta;
        observed_wait_ns(
            elapsed_ns / beta,
            blocked,
            timed_out,
            self.limit_ns / beta,
            self.b_ns,
            released_ns.map(|ns| ns / beta),
        )
    }
}

/// Whether a wait that began at cycle-clock reading `start_ticks` and
/// ended while polling is recorded ([`POLLED_SAMPLE_SHIFT`]): low bits of
/// the reading, folded with higher ones so that a clock whose lowest bits
/// do not move (a coarse source) still samples. Pure, so the rule is
/// testable.
#[inline]
pub fn sampled(start_ticks: u64) -> bool {
    let mask = (1u64 << POLLED_SAMPLE_SHIFT) - 1;
    (start_ticks ^ (start_ticks >> 10) ^ (start_ticks >> 20)) & mask == 0
}

/// Under loom no wait learns (the table is static, loom's atomics are
/// not): the handle exists so that callers compile the same.
#[cfg(loom)]
#[derive(Clone, Copy, Debug)]
pub struct Learning<'a>(std::marker::PhantomData<&'a AdaptiveSummary>);

#[cfg(loom)]
impl Learning<'_> {
    /// Nothing under loom.
    #[inline]
    pub fn finish(self, _blocked: bool, _timed_out: bool) {}

    /// No start under loom (no wait polls there).
    #[inline]
    pub(crate) fn start_ticks(&self) -> Option<u64> {
        None
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
