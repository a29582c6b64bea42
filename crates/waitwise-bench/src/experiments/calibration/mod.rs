//! `waitwise model calibrate`: Lim & Agarwal's cost model checked against
//! this machine.
//!
//! | file | what |
//! | --- | --- |
//! | `config.rs` | [`Config`], the laws ([`CalibrationDist`]) and the policies a run measures |
//! | `cells.rs` | a cell's waits: drawn in units of a `B`, and the `B` they followed |
//! | `tracked_cost.rs` | the `B` a cell's blocks cost, followed cycle by cycle |
//! | `pilot.rs` | the pilot passes that find a cell's `B` before it runs |
//! | `measurement.rs` | one cell's producer and consumer, and the samples they record |
//! | `sample.rs` | one measured wait, one event's waits |
//! | `accounting.rs` | what a wait's CPU time is corrected by: clock reads, a block's and a hand-off's CPU, the cell's `B` |
//! | `summary.rs` | a cell's measured and modelled factors |
//! | `ordering.rs` | the policies' measured order against the model's |
//! | `result.rs` | [`Row`], [`OrderingCheck`], [`CalibrationResult`] and their queries |
//! | `findings.rs` | [`CalibrationFinding`]: what a run found, with its wording |
//! | `tables.rs` | the tables, charts and notes of the report |
//! | `run.rs` | [`run`], [`run_in_model_regime`] |
//!
//! A producer releases a consumer through a [`waitwise::Event`] after a wait
//! `t` drawn from a known law: exponential with `lambda * B` in
//! [`Config::scales`], or uniform on `[0, U]` with `U / B` in the same
//! scales (`B` = what the cell's blocks cost, measured by a pilot run of
//! the cell just before it, and never less than the process's measured
//! [`block_ns`](waitwise::policy::block_ns): see "The scale of a cell"
//! below). For each policy the consumer's waiting cost is measured as the
//! model defines it:
//!
//! `cost = CPU time burned polling + blocks x B`
//!
//! * **CPU time burned polling**: the consumer's thread CPU time across the
//!   wait (`waitwise_platform::thread::thread_cpu_time`), less the clock's own cost (two reads,
//!   measured once: hyperfine's `time_overhead()`), less, for a wait that
//!   did not block, the fixed CPU of a hand-off ([`Row::hand_off_cpu_ns`]:
//!   at-once `s//inf` references), and, for a wait that
//!   blocked, the CPU the kernel spends putting the thread to sleep and
//!   waking it ([`Row::block_cpu_ns`]: reference `/b/0` waits interleaved
//!   with the cells, see below). That part is already inside `B`, which is
//!   measured as a hand-off latency, so it must not be counted twice. A
//!   blocked wait is charged at most the longest poll limit it could
//!   have drawn plus the references' 99th percentile of a block's CPU
//!   (beyond that, a kernel-path outlier the references had capped too):
//!   for `adapt/b`, the longest limit of the arm its event's summary held
//!   ([`waitwise::Event::adaptive_summary`], read after the event's
//!   previous wait, when its line is warm from the record anyway).
//! * **blocks**: from the event's wait profile (`WaitProfile::blocks`,
//!   waits that slept in the kernel).
//! * **B**: measured beside each cell ([`Row::cell_block_ns`]): the wake-up
//!   latency of its `/b/0` references less that of its at-once references,
//!   the block-cost definition of `waitwise::policy::block_cost`. The
//!   process's `B` set the static policies' poll limits (`adapt/b`'s
//!   objects start from it and learn their own from their wake-ups,
//!   `waitwise::policy::adaptive`), and on a VM a block's cost drifts
//!   between the host's wake-up modes during a run, so each cell is
//!   priced, and predicted, with the `B` of its own stretch of time and the
//!   poll limits that ran (`cost_in_cell`).
//!
//! The off-line optimum for a wait of known length `t` is `min(t, B)`; the
//! measured competitive factor of a cell is `sum(cost) / sum(min(t, B))` over
//! its rounds, with `t` the wait that really happened (consumer's stamp
//! before `wait` to the producer's stamp before `notify`, on the invariant
//! cycle clock). The model's prediction is given twice:
//!
//! * `predicted_factor`: [`waitwise_model::cost::competitive_factor`] of the
//!   law itself (what the theory promises);
//! * `predicted_sample_factor`: the model's per-wait cost for the policy as
//!   it ran, with the cell's `B` (`cost_in_cell`), applied to the same
//!   waits the measurement saw, over the same optimum. This removes sampling
//!   noise, so `ratio = measured / predicted_sample` isolates what the model
//!   leaves out (wake-up paths, preemption, clock cost).
//!
//! Beside them, `online_floor`: the least factor any on-line policy can
//! expect on the cell's law with the cell's `B`
//! ([`waitwise_model::cost::online_floor`]; for the switching cell
//! [`waitwise_model::cost::switching_online_floor`], a policy told each
//! wait's phase, with each phase's `B`).
//!
//! # The scale of a cell
//!
//! The process's `B` is measured with back-to-back hand-offs, whose
//! sleeps are short; a cell sleeps as long as its law says, and on a VM a
//! longer sleep wakes slower (the halted vCPU is no longer polled), so a
//! cell drawn with the process's `B` runs at a smaller real `U/B` (or
//! `lambda*B`) than its label, where no policy can do as well. So each cell first runs a pilot (`Group::pilot_block_costs`: a few
//! passes of its whole cycle, each drawn with the `B` the last one
//! measured) and draws its waits in units of the `B` the pilot found
//! ([`Row::wait_block_ns`]), never less than the process's: where the
//! pilot's blocks cost less, the waits are short enough that the wake-up
//! arrives while the waiter is still going to sleep, and scaling them down
//! would only make them shorter still. The policies' poll limits still
//! follow the process's `B` (the static ones are tuned to it, as in a
//! program; `adapt/b`'s objects learn their own). A cell's blocks keep
//! drifting from its pilot's while it runs (the host adapts its halt
//! polling to the sleeps), so the cell follows them: each
//! cycle's wait is its drawn wait stretched to the `B` its references
//! cost over the last few hundred cycles (`TrackedBlockCost`), the same
//! for every policy of the cycle. [`Row::wait_block_ns`] is the mean `B`
//! its waits followed; its floor and its accounting use the `B`
//! measured beside it, and `cell_block_ns / wait_block_ns` says how far
//! the two still differ.
//!
//! Each group's events are new, and an event's `adapt/b` waits learn in
//! its own summary, so `adapt/b` starts every (law, scale) with no
//! history, like the model's learner it is compared with.
//!
//! Every policy sees the same drawn waits for a given law and scale (one
//! seed per cell), so the policies are compared on identical inputs. They
//! also see the same machine: the policies of one (law, scale) take turns
//! wait by wait, each cycle ending with the reference `/b/0` wait, because
//! on a VM the kernel's CPU per block drifts between the host's modes, and
//! a block-CPU figure measured once at the start would misprice whole
//! cells.

mod accounting;
mod cells;
mod config;
mod findings;
mod measurement;
mod ordering;
mod pilot;
mod result;
mod run;
mod sample;
mod summary;
mod tables;
#[cfg(test)]
mod tests;
mod tracked_cost;

pub use self::config::{CalibrationDist, Config, POLICIES, SWITCHING_PERIOD, SWITCHING_SCALES};
pub use self::findings::{
    AdaptiveBlockedDeparture, AdaptiveBookkeeping, AdaptiveFinding, BeyondTarget,
    CalibrationFinding, NotJudged, WorstAllowed, STATIONARY_TARGET, SWITCHING_TARGET,
};
pub use self::ordering::REVERSAL_Z;
pub use self::result::{
    CalibrationResult, OrderingCheck, PolicyFactors, Row, AGREEMENT_TOLERANCE,
    MEASUREMENT_TOLERANCE,
};
pub use self::run::{run, run_in_model_regime};
