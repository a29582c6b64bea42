//! `WAITWISE_PROFILE`: a wait-time histogram per object, written as JSON
//! when the program exits, to `PATH` for `WAITWISE_PROFILE=PATH` and to
//! `waitwise-profile-%p.json` in the working directory for
//! `WAITWISE_PROFILE=1` (the meaning [`waitwise::env::Profiling`] gives the
//! variable everywhere; unset, empty or `0` is off):
//!
//! ```json
//! { "objects": [ { "kind": "mutex", "address": "0x7ffd...", "buckets": [0, 3, ...],
//!                  "total_waits": 3, "blocks": 1 } ],
//!   "block_cost_ns": 21990, "block_start_ns": 10000, "block_start_source": "fallback",
//!   "block_learned_ns": 21990, "block_learned_samples": 412 }
//! ```
//!
//! `buckets[i]` counts waits that lasted `[2^i, 2^(i+1))` ns, as in
//! [`waitwise::profile`]; `waitwise model fit PATH` and `waitwise profile
//! PATH` read the file, and use its `block_cost_ns`: the `B` in force at
//! exit (learned from the process's wake-ups if enough were sampled, else
//! the one it started from: `WAITWISE_BLOCK_NS`, the machine profile or
//! the default; `block_start_*` and `block_learned_*` record both). A `%p` in `PATH` is replaced by the process
//! id, for programs that fork or exec more programs. Without it a forked
//! child writes nothing, and the processes that share `PATH` (a wrapper
//! such as `timeout` and the program it runs, jobs started in parallel)
//! each replace the file whole when they exit (written beside it, then
//! renamed: never a mix of two), except one that recorded no wait, which
//! leaves an existing file alone; the last to exit with waits wins. A
//! symlink at `PATH` is followed (its target is replaced, the link stays),
//! and anything but a regular file there (a FIFO, `/dev/null`) is written
//! into, never replaced ([`write_profile`]).
//!
//! Each object also carries `total_ns` (the time its waits took, summed),
//! `max_ns` (the longest) and `call_site`: the return addresses of the
//! first frames of the program's stack (the interposer's own frames left
//! out) at the object's first recorded wait, each as the file of the
//! module it lies in and its offset from that module's load bias, the
//! address the module's symbol table and debug information use (`waitwise
//! run --profile` symbolises them). The stack is taken with glibc's
//! `backtrace`, which loads the unwinder (libgcc_s) on its first call;
//! [`load`] makes that call, so that no capture loads a library: a load
//! allocates, and a capture runs in a thread that may hold the
//! allocator's own lock (the wait it records was for that lock).
//!
//! `kind` is the object's type: `mutex`, `rwlock` (read and write locks
//! alike), `cond`, `barrier`, `sem` or `spin`.
//!
//! A *wait* is a call that could not complete at once: a contended lock, a
//! condition wait, a barrier arrival that is not the last, a semaphore
//! decrement that found zero.
//!
//! A mutex's entry also counts, from its first wait on, its `acquisitions`,
//! its `owner_changes` (acquisitions by another thread than the previous
//! holder) and `hold_ns` (the time it was held, summed, measured on one
//! acquisition in [`HOLD_SAMPLE`] and scaled up): mutrace's figures.
//! Before its first wait a mutex has no entry, and its lock and unlock
//! look it up and find none.
//!
//! Off, nothing is recorded: the mutex's lock and unlock pay one
//! predictable branch, and so do the waiting paths. On, the
//! histograms live in a fixed open-addressing table keyed by the object's
//! address and kind, allocated once at load time and updated with relaxed
//! atomics only (no lock, no allocation while the program runs). When the
//! table is full, further objects are pooled into one entry per kind with
//! `address` `"other"`.

use serde::Serialize;
use std::cell::Cell;
use std::ffi::OsString;
use std::ffi::{c_int, c_void};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::OnceLock;
use waitwise::platform::clock::cycle_clock;
use waitwise::profile::{bucket_of, WaitProfile, BUCKETS};

/// Objects tracked individually. Guessed: programs rarely wait on more
/// distinct objects; 4096 entries take 1.4 MB.
pub const SLOTS: usize = 4096;
/// Linear-probe length before an object goes to its kind's pooled entry.
const MAX_PROBE: usize = 64;
/// Frames of the program's stack kept per call site. Guessed: enough for a
/// flame graph to tell the callers of a small wrapper apart.
pub const CALL_SITE_FRAMES: usize = 8;
/// Frames taken by `backtrace`: the interposer's own (the capture, the
/// recording, the entry point and what inlining left between them) and
/// then [`CALL_SITE_FRAMES`] of the program's.
const CAPTURED_FRAMES: usize = CALL_SITE_FRAMES + 12;

/// A mutex's hold time is measured on one acquisition in this many (and
/// scaled up at exit): two clock reads inside every critical section would
/// lengthen short ones enough to change how contended the lock is. Guessed.
const HOLD_SAMPLE: u64 = 8;

/// A slot's call site: not taken yet.
const SITE_NONE: u8 = 0;
/// A thread is taking it.
const SITE_TAKING: u8 = 1;
/// Taken: `frames` holds it (zero-padded).
const SITE_TAKEN: u8 = 2;

/// The kind of object a wait was on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    /// `pthread_mutex_t`
    Mutex = 1,
    /// `pthread_cond_t`
    Cond = 2,
    /// `pthread_barrier_t`
    Barrier = 3,
    /// `sem_t`
    Sem = 4,
    /// `pthread_spinlock_t`
    Spin = 5,
    /// `pthread_rwlock_t` (read and write locks alike)
    Rwlock = 6,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Mutex,
        Kind::Cond,
        Kind::Barrier,
        Kind::Sem,
        Kind::Spin,
        Kind::Rwlock,
    ];

    /// The name in the profile file.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Mutex => "mutex",
            Kind::Cond => "cond",
            Kind::Barrier => "barrier",
            Kind::Sem => "sem",
            Kind::Spin => "spin",
            Kind::Rwlock => "rwlock",
        }
    }

    fn from_key(key: usize) -> Kind {
        Kind::ALL
            .into_iter()
            .find(|k| *k as usize == key & 7)
            .unwrap_or(Kind::Mutex)
    }
}

/// One object's histogram. `key` is `address << 3 | kind` (user-space
/// addresses have 47 bits), 0 while the slot is free.
struct Slot {
    key: AtomicUsize,
    buckets: [AtomicU64; BUCKETS],
    blocks: AtomicU64,
    /// The waits' durations summed, in ns.
    total_ns: AtomicU64,
    /// The longest wait, in ns.
    max_ns: AtomicU64,
    /// `SITE_NONE` => `SITE_TAKING` (one thread) => `SITE_TAKEN`.
    site: AtomicU8,
    /// Return addresses, outermost last; valid once `site` is `SITE_TAKEN`.
    frames: [AtomicUsize; CAPTURED_FRAMES],
    /// A mutex's: the cycle-clock stamp of its current holder's
    /// acquisition, 0 while it is free.
    held_since: AtomicU64,
    /// A mutex's: the time it was held in the sampled acquisitions
    /// ([`HOLD_SAMPLE`]), summed, in ns, and how many were sampled.
    hold_ns: AtomicU64,
    hold_samples: AtomicU64,
    /// A mutex's: acquisitions, and those by another thread than the
    /// previous holder.
    acquisitions: AtomicU64,
    owner_changes: AtomicU64,
    /// A mutex's: the thread id of its last holder.
    last_owner: AtomicU32,
}

impl Slot {
    fn new() -> Self {
        Self {
            key: AtomicUsize::new(0),
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            blocks: AtomicU64::new(0),
            total_ns: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
            site: AtomicU8::new(SITE_NONE),
            frames: std::array::from_fn(|_| AtomicUsize::new(0)),
            held_since: AtomicU64::new(0),
            hold_ns: AtomicU64::new(0),
            hold_samples: AtomicU64::new(0),
            acquisitions: AtomicU64::new(0),
            owner_changes: AtomicU64::new(0),
            last_owner: AtomicU32::new(0),
        }
    }

    fn record(&self, ns: u64, blocked: bool) {
        // Relaxed: statistics; nothing else depends on them.
        self.buckets[bucket_of(ns)].fetch_add(1, Ordering::Relaxed);
        self.total_ns.fetch_add(ns, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
        if blocked {
            self.blocks.fetch_add(1, Ordering::Relaxed);
        }
        // Relaxed: a hint; the CAS in `take_call_site` decides.
        if self.site.load(Ordering::Relaxed) == SITE_NONE {
            self.take_call_site();
        }
    }

    /// Stores the calling thread's stack as the slot's call site, if no
    /// thread has yet. A capture that waits on an object itself (the
    /// unwinder may take the loader's lock) takes no second one.
    #[cold]
    #[inline(never)]
    fn take_call_site(&self) {
        if TAKING_CALL_SITE.with(|t| t.replace(true)) {
            return;
        }
        // SITE_NONE => SITE_TAKING: this thread takes it. Relaxed: the
        // frames are published by the Release store of SITE_TAKEN.
        if self
            .site
            .compare_exchange(SITE_NONE, SITE_TAKING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            let mut frames = [std::ptr::null_mut::<c_void>(); CAPTURED_FRAMES];
            // SAFETY: `frames` has room for CAPTURED_FRAMES pointers.
            let n = unsafe { backtrace(frames.as_mut_ptr(), CAPTURED_FRAMES as c_int) };
            for (slot, frame) in self.frames.iter().zip(&frames[..n.max(0) as usize]) {
                // Relaxed: published by the Release store below.
                slot.store(*frame as usize, Ordering::Relaxed);
            }
            // SITE_TAKING => SITE_TAKEN. Release: pairs with the Acquire
            // load in `call_site`, publishing the frames.
            self.site.store(SITE_TAKEN, Ordering::Release);
        }
        TAKING_CALL_SITE.with(|t| t.set(false));
    }

    /// A mutex's time held since its first wait: the sampled acquisitions'
    /// hold time scaled to all of them.
    fn estimated_hold_ns(&self) -> u64 {
        // Relaxed: statistics read at exit.
        let sampled = self.hold_ns.load(Ordering::Relaxed) as f64;
        let samples = self.hold_samples.load(Ordering::Relaxed);
        let acquisitions = self.acquisitions.load(Ordering::Relaxed);
        if samples == 0 {
            return 0;
        }
        (sampled * acquisitions as f64 / samples as f64) as u64
    }

    /// The call site's return addresses, the interposer's own frames
    /// first; empty if none was taken.
    fn call_site(&self) -> Vec<usize> {
        // Acquire: pairs with the Release store of SITE_TAKEN.
        if self.site.load(Ordering::Acquire) != SITE_TAKEN {
            return Vec::new();
        }
        self.frames
            .iter()
            // Relaxed: published by the Acquire load above.
            .map(|f| f.load(Ordering::Relaxed))
            .take_while(|&f| f != 0)
            .collect()
    }

    fn snapshot(&self, kind: Kind) -> WaitProfile {
        // Relaxed: statistics, read at exit; a count still being bumped by
        // a running thread may be missed, which no reader depends on.
        let buckets: Vec<u64> = self
            .buckets
            .iter()
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        WaitProfile {
            kind: kind.name().to_string(),
            total_waits: buckets.iter().sum(),
            blocks: self.blocks.load(Ordering::Relaxed),
            buckets,
        }
    }
}

extern "C" {
    /// glibc's `<execinfo.h>`: stores up to `size` return addresses of the
    /// calling thread's stack, innermost first, and returns how many.
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
}

thread_local! {
    /// Whether this thread is taking a call site now.
    static TAKING_CALL_SITE: Cell<bool> = const { Cell::new(false) };
}

/// The table: `SLOTS` individual entries, then one pooled entry per kind.
struct Table {
    slots: Box<[Slot]>,
    /// The file, before `%p` is replaced; `None` when only
    /// `WAITWISE_STATS` asked for the table.
    path: Option<PathBuf>,
    pid: libc::pid_t,
}

static ON: AtomicBool = AtomicBool::new(false);
static TABLE: AtomicPtr<Table> = AtomicPtr::new(std::ptr::null_mut());

/// Reads `WAITWISE_PROFILE` (at load time, through [`waitwise::env`]) and,
/// when profiling is on or `for_totals` (`WAITWISE_STATS` asks for the
/// totals), allocates the table.
pub fn load(for_totals: bool) {
    let path = waitwise::env::profiling().file().map(|p| p.to_path_buf());
    if path.is_none() && !for_totals {
        return;
    }
    let table = Box::new(Table {
        slots: (0..SLOTS + Kind::ALL.len()).map(|_| Slot::new()).collect(),
        path,
        // SAFETY: getpid has no preconditions.
        pid: unsafe { libc::getpid() },
    });
    // Release: publishes the table's initialization to `record` and
    // `write_at_exit`, which load TABLE with Acquire. (This runs before any
    // other thread exists, so thread creation orders it too.)
    TABLE.store(Box::into_raw(table), Ordering::Release);
    load_unwinder();
    // Release: not needed by `on` (Relaxed, a hint only): `record`
    // re-checks TABLE with Acquire.
    ON.store(true, Ordering::Release);
}

/// Has glibc load the unwinder (libgcc_s) now, on the only thread, rather
/// than in the first call site's capture: that capture runs right after a
/// wait, often with the lock it waited for held, and loading a library
/// allocates. When the lock is the allocator's own (jemalloc's arena
/// locks are pthread mutexes), the allocation locks it again and the
/// thread waits on itself forever.
fn load_unwinder() {
    let mut frame = [std::ptr::null_mut::<c_void>(); 1];
    // SAFETY: `frame` has room for the one pointer asked for.
    unsafe { backtrace(frame.as_mut_ptr(), 1) };
}

/// Whether profiling is on.
#[inline(always)]
pub fn on() -> bool {
    // Relaxed: only decides whether to stamp the time; `record` reaches the
    // table through TABLE's Acquire load, never through this flag.
    ON.load(Ordering::Relaxed)
}

/// A started measurement: the cycle-clock stamp, when profiling is on.
#[derive(Clone, Copy, Debug)]
pub struct Start(Option<u64>);

/// Call before a wait. One predictable branch when profiling is off.
#[inline(always)]
pub fn start() -> Start {
    if on() {
        Start(Some(cycle_clock().now()))
    } else {
        Start(None)
    }
}

/// Call after the wait on the object at `addr`.
#[inline(always)]
pub fn finish<T>(start: Start, kind: Kind, addr: *const T, blocked: bool) {
    if let Some(t0) = start.0 {
        record(t0, kind, addr as usize, blocked);
    }
}

#[cold]
fn record(t0: u64, kind: Kind, addr: usize, blocked: bool) {
    let clock = cycle_clock();
    let ns = clock.ticks_to_ns(clock.now().saturating_sub(t0)) as u64;
    // Acquire: pairs with the Release store in `load`.
    let table = TABLE.load(Ordering::Acquire);
    if table.is_null() {
        return;
    }
    // SAFETY: the table is leaked at load time and never freed.
    let table = unsafe { &*table };
    slot_for(table, kind, addr).record(ns, blocked);
}

/// A mutex at `addr` was just acquired by the calling thread. Once the mutex has been waited on (it has a slot), its
/// acquisitions, owner changes and hold time are counted; before, nothing.
#[inline(always)]
pub fn acquired<T>(addr: *const T) {
    if on() {
        mutex_acquired(addr as usize);
    }
}

/// The calling thread is releasing the mutex at `addr` (call before the
/// release).
#[inline(always)]
pub fn releasing<T>(addr: *const T) {
    if on() {
        mutex_releasing(addr as usize);
    }
}

#[cold]
fn mutex_acquired(addr: usize) {
    let Some(slot) = existing_slot(Kind::Mutex, addr) else {
        return;
    };
    let id = crate::thread_id::current();
    // Relaxed, and loads and stores rather than read-modify-writes: only
    // the mutex's holder writes these words, and the mutex orders each
    // holder's accesses before the next one's (a count read at exit, while
    // a thread still runs, may be one behind).
    let acquisitions = slot.acquisitions.load(Ordering::Relaxed);
    slot.acquisitions.store(acquisitions + 1, Ordering::Relaxed);
    if acquisitions % HOLD_SAMPLE == 0 {
        slot.held_since
            .store(cycle_clock().now().max(1), Ordering::Relaxed);
    }
    if slot.last_owner.load(Ordering::Relaxed) != id {
        slot.last_owner.store(id, Ordering::Relaxed);
        let changes = slot.owner_changes.load(Ordering::Relaxed);
        slot.owner_changes.store(changes + 1, Ordering::Relaxed);
    }
}

#[cold]
fn mutex_releasing(addr: usize) {
    let Some(slot) = existing_slot(Kind::Mutex, addr) else {
        return;
    };
    // Relaxed loads and stores: only the holder writes these words
    // (`mutex_acquired`).
    let since = slot.held_since.load(Ordering::Relaxed);
    if since != 0 {
        slot.held_since.store(0, Ordering::Relaxed);
        let clock = cycle_clock();
        let ns = clock.ticks_to_ns(clock.now().saturating_sub(since)) as u64;
        let held = slot.hold_ns.load(Ordering::Relaxed);
        slot.hold_ns.store(held + ns, Ordering::Relaxed);
        let samples = slot.hold_samples.load(Ordering::Relaxed);
        slot.hold_samples.store(samples + 1, Ordering::Relaxed);
    }
}

/// The slot of the object at `addr`, if it has one; never claims one.
fn existing_slot(kind: Kind, addr: usize) -> Option<&'static Slot> {
    // Acquire: pairs with the Release store in `load`.
    let table = TABLE.load(Ordering::Acquire);
    if table.is_null() {
        return None;
    }
    // SAFETY: the table is leaked at load time and never freed.
    let table: &'static Table = unsafe { &*table };
    let key = (addr << 3) | kind as usize;
    let hash = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52; // 12 bits
    for i in 0..MAX_PROBE {
        let slot = &table.slots[(hash as usize + i) % SLOTS];
        // Relaxed: the key only names the slot.
        match slot.key.load(Ordering::Relaxed) {
            k if k == key => return Some(slot),
            0 => return None,
            _ => {}
        }
    }
    None
}

fn slot_for(table: &Table, kind: Kind, addr: usize) -> &Slot {
    let key = (addr << 3) | kind as usize;
    let hash = (key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52; // 12 bits
    for i in 0..MAX_PROBE {
        let slot = &table.slots[(hash as usize + i) % SLOTS];
        // Relaxed: the key only names the slot; the counts are statistics.
        let k = slot.key.load(Ordering::Relaxed);
        if k == key {
            return slot;
        }
        if k == 0 {
            // free => ours, unless another thread claimed it just now.
            match slot
                .key
                .compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return slot,
                Err(now) if now == key => return slot,
                Err(_) => {}
            }
        }
    }
    &table.slots[SLOTS + kind as usize - 1]
}

/// One object in the file.
#[derive(Serialize)]
struct ObjectEntry {
    #[serde(flatten)]
    profile: WaitProfile,
    /// `0x...`, or `other` for the pooled entries.
    address: String,
    /// The waits' durations summed, in ns.
    total_ns: u64,
    /// The longest wait, in ns.
    max_ns: u64,
    /// The program's frames at the first recorded wait, innermost first.
    call_site: Vec<crate::modules::Frame>,
    /// Mutexes: acquisitions since the first wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    acquisitions: Option<u64>,
    /// Mutexes: acquisitions since the first wait by another thread than
    /// the previous holder.
    #[serde(skip_serializing_if = "Option::is_none")]
    owner_changes: Option<u64>,
    /// Mutexes: the time held since the first wait, summed, in ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    hold_ns: Option<u64>,
}

/// The slots with at least one wait: each with its kind and its address
/// (`0x...`, or `other` for the pooled entries).
fn waited_objects(table: &Table) -> impl Iterator<Item = (&Slot, Kind, String)> {
    table.slots.iter().enumerate().filter_map(|(i, slot)| {
        let (kind, address) = if i < SLOTS {
            // Relaxed: the key only names the slot; a slot claimed by a
            // still-running thread just now may be missed, like its counts.
            let key = slot.key.load(Ordering::Relaxed);
            if key == 0 {
                return None;
            }
            (Kind::from_key(key), format!("{:#x}", key >> 3))
        } else {
            (Kind::ALL[i - SLOTS], "other".to_string())
        };
        // Relaxed: statistics read at exit (`Slot::snapshot`).
        let waited = slot.buckets.iter().any(|b| b.load(Ordering::Relaxed) > 0);
        waited.then_some((slot, kind, address))
    })
}

/// The totals over every object, for the `WAITWISE_STATS` line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Objects with at least one wait.
    pub objects: u64,
    /// Waits.
    pub waits: u64,
    /// Waits that slept in the kernel at least once.
    pub blocks: u64,
    /// The waits' durations summed, in ns.
    pub wait_ns: u64,
}

/// The totals so far; all zero when the table was never allocated.
pub fn totals() -> Totals {
    // Acquire: pairs with the Release store in `load`.
    let table = TABLE.load(Ordering::Acquire);
    if table.is_null() {
        return Totals::default();
    }
    // SAFETY: leaked at load time, never freed.
    let table = unsafe { &*table };
    let mut totals = Totals::default();
    for (slot, kind, _) in waited_objects(table) {
        let profile = slot.snapshot(kind);
        totals.objects += 1;
        totals.waits += profile.total_waits;
        totals.blocks += profile.blocks;
        // Relaxed: statistics read at exit.
        totals.wait_ns += slot.total_ns.load(Ordering::Relaxed);
    }
    totals
}

/// The file.
#[derive(Serialize)]
struct ProfileFile {
    objects: Vec<ObjectEntry>,
    /// The `B` in force at exit: learned, else the starting one.
    block_cost_ns: u64,
    /// The `B` the process started from, and where it came from.
    block_start_ns: u64,
    block_start_source: &'static str,
    /// The `B` learned from the process's own wake-ups, if enough were
    /// sampled, and how many were.
    #[serde(skip_serializing_if = "Option::is_none")]
    block_learned_ns: Option<u64>,
    block_learned_samples: u64,
}

/// Writes the profile (called once, at exit; also safe to call twice).
pub fn write_at_exit() {
    static WRITTEN: OnceLock<()> = OnceLock::new();
    // Acquire: pairs with the Release store in `load`.
    let table = TABLE.load(Ordering::Acquire);
    if table.is_null() || WRITTEN.set(()).is_err() {
        return;
    }
    // SAFETY: leaked at load time, never freed.
    let table = unsafe { &*table };
    let Some(table_path) = &table.path else {
        return;
    };
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let (path, shared) = match with_pid(table_path, pid) {
        Some(path) => (path, false),
        None if pid == table.pid => (table_path.clone(), true),
        None => return, // a forked child: leave the parent's file alone
    };
    let modules = crate::modules::loaded();
    let this_object = modules.containing(write_at_exit as fn() as usize);
    let objects = waited_objects(table)
        .map(|(slot, kind, address)| {
            let frames = slot.call_site();
            let program_frames = frames
                .iter()
                .skip_while(|&&f| this_object.is_some() && modules.containing(f) == this_object)
                .take(CALL_SITE_FRAMES);
            ObjectEntry {
                profile: slot.snapshot(kind),
                address,
                total_ns: slot.total_ns.load(Ordering::Relaxed),
                max_ns: slot.max_ns.load(Ordering::Relaxed),
                call_site: program_frames.map(|&f| modules.frame(f)).collect(),
                acquisitions: (kind == Kind::Mutex)
                    .then(|| slot.acquisitions.load(Ordering::Relaxed)),
                owner_changes: (kind == Kind::Mutex)
                    .then(|| slot.owner_changes.load(Ordering::Relaxed)),
                hold_ns: (kind == Kind::Mutex).then(|| slot.estimated_hold_ns()),
            }
        })
        .collect::<Vec<_>>();
    if shared && objects.is_empty() && path.exists() {
        // A process that waited for nothing (a wrapper such as `timeout`,
        // a helper it ran) leaves a shared PATH to the ones that did.
        return;
    }
    let start = waitwise::policy::starting_block_cost();
    let learned = waitwise::policy::block_cost::learned_block_cost();
    let file = ProfileFile {
        objects,
        block_cost_ns: crate::config::block_ns(),
        block_start_ns: start.ns as u64,
        block_start_source: start.source.name(),
        block_learned_ns: learned.as_ref().map(|b| b.ns as u64),
        block_learned_samples: match learned.map(|b| b.source) {
            Some(waitwise::policy::BlockCostSource::Learned { samples }) => samples,
            _ => 0,
        },
    };
    let result = serde_json::to_vec_pretty(&file)
        .map_err(std::io::Error::other)
        .and_then(|json| write_profile(&path, &json, pid));
    if let Err(e) = result {
        eprintln!(
            "waitwise: cannot write the profile to {}: {e}",
            path.display()
        );
    }
}

/// Writes the profile `bytes` to `path` as a user who names a path
/// expects:
/// - a regular file, or nothing: replaced whole ([`write_replacing`]);
/// - a symlink: followed, so its target is replaced whole (or created)
///   and the link stays;
/// - anything else (a FIFO, `/dev/null`, a terminal): written into, never
///   replaced or truncated ([`write_into`]).
fn write_profile(path: &std::path::Path, bytes: &[u8], pid: libc::pid_t) -> std::io::Result<()> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => write_into(path, bytes),
        Ok(_) if is_link => write_replacing(&std::fs::canonicalize(path)?, bytes, pid),
        // A dangling symlink: its target is created.
        Err(e) if is_link && e.kind() == std::io::ErrorKind::NotFound => write_into(path, bytes),
        _ => write_replacing(path, bytes, pid),
    }
}

/// Writes `bytes` into the existing `path` (following a symlink, and
/// creating a missing target of one) without replacing or truncating it.
/// The open does not block: a FIFO with no reader is an error ("no
/// reader") instead of a process that never exits; the writes then block
/// as usual while a reader drains the FIFO.
fn write_into(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => std::io::Error::other("a FIFO with no reader"),
            _ => e,
        })?;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open descriptor `file` owns; F_GETFL/F_SETFL
    // only read and set its status flags.
    let cleared = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
    };
    if !cleared {
        return Err(std::io::Error::last_os_error());
    }
    file.write_all(bytes)
}

/// Writes `bytes` to `path` whole or not at all: to a file of its own
/// beside it (named with `pid`), then renamed over `path`, so that
/// processes exiting together with the same `PATH` leave one complete
/// profile (the last one renamed), never a mix of two.
fn write_replacing(path: &std::path::Path, bytes: &[u8], pid: libc::pid_t) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".{pid}.tmp"));
    let tmp = PathBuf::from(tmp);
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `path` with every `%p` replaced by `pid`; `None` when it has no `%p`.
/// Works on the bytes: a path need not be UTF-8.
fn with_pid(path: &std::path::Path, pid: libc::pid_t) -> Option<PathBuf> {
    let bytes = path.as_os_str().as_bytes();
    if !bytes.windows(2).any(|w| w == b"%p") {
        return None;
    }
    let pid = pid.to_string();
    let mut out = Vec::with_capacity(bytes.len() + pid.len());
    let mut rest = bytes;
    while let Some(i) = rest.windows(2).position(|w| w == b"%p") {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(pid.as_bytes());
        rest = &rest[i + 2..];
    }
    out.extend_from_slice(rest);
    Some(PathBuf::from(OsString::from_vec(out)))
}
