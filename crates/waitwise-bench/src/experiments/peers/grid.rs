//! The operating points of `waitwise peers`: which primitive, and where on
//! each axis (critical section, gap between operations, threads, message
//! size, capacity, block cost, co-runner load) one cell runs.
//!
//! Each primitive uses the axes that mean something for it
//! ([`Primitive::axes`]); an axis it does not use stays at `None` in its
//! points. Two designs lay the cells out: [`Design::Star`] (the first value
//! of every axis as the base point, then each other value of one axis at a
//! time: every axis is crossed, in few cells) and [`Design::Cross`] (every
//! combination).

use serde::{Deserialize, Serialize};

/// A primitive and its peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Primitive {
    /// `waitwise::Mutex` against parking_lot and std.
    Mutex,
    /// `waitwise::RwLock` against parking_lot and std.
    #[serde(rename = "rwlock")]
    RwLock,
    /// `waitwise::Condvar` hand-off against parking_lot and std.
    Condvar,
    /// `waitwise::channel::bounded` against crossbeam-channel and std.
    Channel,
    /// `waitwise::barrier::Barrier` against std, pthread and a spin barrier.
    Barrier,
    /// `waitwise::Event` ping-pong against a spin and a futex hand-off.
    Event,
    /// `waitwise::pool::ThreadPool` fork-join against rayon.
    Pool,
}

impl Primitive {
    /// Every primitive, in table order.
    pub const ALL: [Primitive; 7] = [
        Primitive::Mutex,
        Primitive::RwLock,
        Primitive::Condvar,
        Primitive::Channel,
        Primitive::Barrier,
        Primitive::Event,
        Primitive::Pool,
    ];

    /// The name in tables, JSON and `--only`.
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Mutex => "mutex",
            Primitive::RwLock => "rwlock",
            Primitive::Condvar => "condvar",
            Primitive::Channel => "channel",
            Primitive::Barrier => "barrier",
            Primitive::Event => "event",
            Primitive::Pool => "pool",
        }
    }

    /// The axes its cells vary.
    pub fn axes(self) -> &'static [Axis] {
        use Axis::*;
        match self {
            Primitive::Mutex | Primitive::RwLock => &[Cs, Gap, Threads, Block, Load],
            Primitive::Channel => &[MessageWords, Capacity, Gap, Threads, Block, Load],
            Primitive::Condvar | Primitive::Barrier | Primitive::Event => {
                &[Gap, Threads, Block, Load]
            }
            Primitive::Pool => &[Cs, Threads, Block, Load],
        }
    }
}

/// One axis of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Work inside the critical section (a pool task's leaf work).
    Cs,
    /// Work between two operations of a thread.
    Gap,
    /// Threads per CPU.
    Threads,
    /// Words (`u64`) per channel message.
    MessageWords,
    /// Channel capacity.
    Capacity,
    /// The block cost `B` the waitwise objects run with.
    Block,
    /// A busy co-runner on every CPU, or none.
    Load,
}

/// All axes, in the order of [`Point`]'s fields.
const ALL_AXES: [Axis; 7] = [
    Axis::Cs,
    Axis::Gap,
    Axis::Threads,
    Axis::MessageWords,
    Axis::Capacity,
    Axis::Block,
    Axis::Load,
];

/// The `B` a cell's waitwise objects run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSetting {
    /// The process's `B` as it stands: the `waitwise` tool measures and
    /// fixes it before its experiments. Runs in this process.
    Settled,
    /// Forced to [`FORCED_LOW_BLOCK_NS`] (`WAITWISE_BLOCK_NS`, in a child
    /// process).
    Low,
    /// Forced to [`FORCED_HIGH_BLOCK_NS`] (`WAITWISE_BLOCK_NS`, in a child
    /// process).
    High,
    /// Not fixed: learned from the child process's own wake-ups, as a
    /// program that never calls `settle_block_cost` gets it.
    Learned,
}

/// `B` of [`BlockSetting::Low`], ns: the smallest `B` the library accepts
/// from a measurement (`MIN_MEASURED_BLOCK_NS`).
pub const FORCED_LOW_BLOCK_NS: u64 = waitwise::policy::block_cost::MIN_MEASURED_BLOCK_NS as u64;

/// `B` of [`BlockSetting::High`], ns. Guessed: ten times the library's
/// fallback `B`, above the slow wake-up mode of a virtual machine.
pub const FORCED_HIGH_BLOCK_NS: u64 = 10 * waitwise::policy::block_cost::FALLBACK_BLOCK_NS as u64;

impl BlockSetting {
    /// The name in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BlockSetting::Settled => "settled",
            BlockSetting::Low => "low",
            BlockSetting::High => "high",
            BlockSetting::Learned => "learned",
        }
    }

    /// The setting named `name` ([`BlockSetting::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Settled, Self::Low, Self::High, Self::Learned]
            .into_iter()
            .find(|b| b.name() == name)
    }

    /// `WAITWISE_BLOCK_NS` of a child process for this setting (`None`:
    /// unset).
    pub fn env_block_ns(self) -> Option<u64> {
        match self {
            BlockSetting::Low => Some(FORCED_LOW_BLOCK_NS),
            BlockSetting::High => Some(FORCED_HIGH_BLOCK_NS),
            BlockSetting::Settled | BlockSetting::Learned => None,
        }
    }
}

/// The values each axis takes; the first value of each is the base point
/// of [`Design::Star`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axes {
    /// Critical-section lengths, ns (spin-loop hints, calibrated).
    pub cs_ns: Vec<u64>,
    /// Gaps between operations, ns (spin-loop hints, calibrated).
    pub gap_ns: Vec<u64>,
    /// Threads per CPU.
    pub threads_per_cpu: Vec<usize>,
    /// Words per channel message.
    pub message_words: Vec<usize>,
    /// Channel capacities.
    pub capacity: Vec<usize>,
    /// Block costs.
    pub block: Vec<BlockSetting>,
    /// Co-runner load off (`false`) or on.
    pub load: Vec<bool>,
}

impl Axes {
    /// How many values `axis` takes (at least 1: an empty list counts as
    /// one unset value).
    fn len(&self, axis: Axis) -> usize {
        let n = match axis {
            Axis::Cs => self.cs_ns.len(),
            Axis::Gap => self.gap_ns.len(),
            Axis::Threads => self.threads_per_cpu.len(),
            Axis::MessageWords => self.message_words.len(),
            Axis::Capacity => self.capacity.len(),
            Axis::Block => self.block.len(),
            Axis::Load => self.load.len(),
        };
        n.max(1)
    }
}

/// How the cells cover the axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Design {
    /// The base point, then each other value of one axis at a time.
    Star,
    /// Every combination.
    Cross,
}

/// One cell's operating point. Axes the primitive does not use are `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Critical section (pool: leaf work), ns.
    pub cs_ns: Option<u64>,
    /// Gap between a thread's operations, ns.
    pub gap_ns: Option<u64>,
    /// Threads per CPU.
    pub threads_per_cpu: usize,
    /// Threads (workers for the pool), `threads_per_cpu x CPUs`.
    pub threads: usize,
    /// Words per channel message.
    pub message_words: Option<usize>,
    /// Channel capacity.
    pub capacity: Option<usize>,
    /// The block cost the waitwise objects run with.
    pub block: BlockSetting,
    /// Whether a busy co-runner ran on every CPU.
    pub load: bool,
}

impl Point {
    /// A short label for heatmap rows and progress lines:
    /// `cs=100ns gap=0ns t=2 B=settled`.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(cs) = self.cs_ns {
            parts.push(format!("cs={}", ns_label(cs)));
        }
        if let Some(gap) = self.gap_ns {
            parts.push(format!("gap={}", ns_label(gap)));
        }
        parts.push(format!("t={}", self.threads));
        if let Some(w) = self.message_words {
            parts.push(format!("msg={w}w"));
        }
        if let Some(c) = self.capacity {
            parts.push(format!("cap={c}"));
        }
        parts.push(format!("B={}", self.block.name()));
        if self.load {
            parts.push("load".into());
        }
        parts.join(" ")
    }
}

/// `ns` as `0`, `100ns`, `1us`, `10us`.
fn ns_label(ns: u64) -> String {
    if ns >= 1_000 && ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// The cells of `primitive` over `axes` in `design`, with `cpus` CPUs.
/// The primitive's unused axes take no part (their points hold `None`, or
/// the first value for threads, block and load).
pub fn cells(primitive: Primitive, axes: &Axes, design: Design, cpus: usize) -> Vec<Point> {
    let used = primitive.axes();
    let lens: Vec<usize> = ALL_AXES
        .iter()
        .map(|a| if used.contains(a) { axes.len(*a) } else { 1 })
        .collect();
    let indices = match design {
        Design::Star => star(&lens),
        Design::Cross => cross(&lens),
    };
    indices
        .iter()
        .map(|idx| point(primitive, axes, idx, cpus))
        .collect()
}

/// The base index tuple (all 0), then each other value of one axis.
fn star(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![0; lens.len()]];
    for (axis, &len) in lens.iter().enumerate() {
        for value in 1..len {
            let mut idx = vec![0; lens.len()];
            idx[axis] = value;
            out.push(idx);
        }
    }
    out
}

/// Every index tuple, the last axis varying fastest.
fn cross(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &len in lens {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..len).map(move |v| {
                    let mut idx = prefix.clone();
                    idx.push(v);
                    idx
                })
            })
            .collect();
    }
    out
}

/// The point at index tuple `idx` (one index per axis of [`ALL_AXES`]).
fn point(primitive: Primitive, axes: &Axes, idx: &[usize], cpus: usize) -> Point {
    let used = primitive.axes();
    let pick = |axis: Axis, i: usize| used.contains(&axis).then_some(i);
    let threads_per_cpu = axes.threads_per_cpu.get(idx[2]).copied().unwrap_or(1);
    Point {
        cs_ns: pick(Axis::Cs, idx[0]).and_then(|i| axes.cs_ns.get(i).copied()),
        gap_ns: pick(Axis::Gap, idx[1]).and_then(|i| axes.gap_ns.get(i).copied()),
        threads_per_cpu,
        threads: threads_per_cpu * cpus.max(1),
        message_words: pick(Axis::MessageWords, idx[3])
            .and_then(|i| axes.message_words.get(i).copied()),
        capacity: pick(Axis::Capacity, idx[4]).and_then(|i| axes.capacity.get(i).copied()),
        block: axes
            .block
            .get(idx[5])
            .copied()
            .unwrap_or(BlockSetting::Settled),
        load: axes.load.get(idx[6]).copied().unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axes() -> Axes {
        Axes {
            cs_ns: vec![100, 0, 1_000],
            gap_ns: vec![0, 1_000],
            threads_per_cpu: vec![1, 4],
            message_words: vec![1, 16],
            capacity: vec![1, 64],
            block: vec![BlockSetting::Settled, BlockSetting::Low],
            load: vec![false, true],
        }
    }

    #[test]
    fn star_varies_one_used_axis_at_a_time() {
        let cells = cells(Primitive::Mutex, &axes(), Design::Star, 2);
        // Base, 2 more cs values, then one more of gap, threads, block, load.
        assert_eq!(cells.len(), 1 + 2 + 1 + 1 + 1 + 1);
        let base = &cells[0];
        assert_eq!(base.cs_ns, Some(100));
        assert_eq!(base.gap_ns, Some(0));
        assert_eq!((base.threads_per_cpu, base.threads), (1, 2));
        assert_eq!((base.message_words, base.capacity), (None, None));
        assert_eq!(base.block, BlockSetting::Settled);
        assert!(!base.load);
        // Every other cell differs from the base on exactly one axis.
        for c in &cells[1..] {
            let differs = [
                c.cs_ns != base.cs_ns,
                c.gap_ns != base.gap_ns,
                c.threads != base.threads,
                c.block != base.block,
                c.load != base.load,
            ];
            assert_eq!(differs.iter().filter(|d| **d).count(), 1, "{c:?}");
        }
        assert!(cells.iter().any(|c| c.threads == 8));
    }

    #[test]
    fn cross_covers_every_combination_of_the_used_axes() {
        let channel = cells(Primitive::Channel, &axes(), Design::Cross, 2);
        // msg 2 x cap 2 x gap 2 x threads 2 x block 2 x load 2.
        assert_eq!(channel.len(), 64);
        assert!(channel.iter().all(|c| c.cs_ns.is_none()));
        let pool = cells(Primitive::Pool, &axes(), Design::Cross, 2);
        assert_eq!(pool.len(), 3 * 2 * 2 * 2);
        assert!(pool
            .iter()
            .all(|c| c.gap_ns.is_none() && c.capacity.is_none()));
        for (i, a) in pool.iter().enumerate() {
            assert!(!pool[i + 1..].contains(a), "duplicate {a:?}");
        }
    }

    #[test]
    fn every_primitive_gets_a_base_point_from_empty_axes() {
        let empty = Axes {
            cs_ns: vec![],
            gap_ns: vec![],
            threads_per_cpu: vec![],
            message_words: vec![],
            capacity: vec![],
            block: vec![],
            load: vec![],
        };
        for p in Primitive::ALL {
            let c = cells(p, &empty, Design::Star, 3);
            assert_eq!(c.len(), 1, "{p:?}");
            assert_eq!(c[0].threads, 3);
        }
    }

    #[test]
    fn labels_and_names_read_back() {
        let p = &cells(Primitive::Channel, &axes(), Design::Star, 2)[0];
        assert_eq!(p.label(), "gap=0ns t=2 msg=1w cap=1 B=settled");
        for p in Primitive::ALL {
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        for b in [
            BlockSetting::Settled,
            BlockSetting::Low,
            BlockSetting::High,
            BlockSetting::Learned,
        ] {
            assert_eq!(BlockSetting::from_name(b.name()), Some(b));
        }
        assert_eq!(ns_label(10_000), "10us");
    }
}
