//! What a contended wait sets up the first time (the interposer's first
//! wait) may run while the allocator's own lock is held, or be for it:
//! detecting the CPU's features and counting the CPUs the process may use
//! (the affinity masks and the cgroup's CPU quota) must not allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use waitwise_platform::affinity::process_cpu_count;
use waitwise_platform::cgroup_quota::cpu_limit;
use waitwise_platform::cpuid::HardwareCpuid;
use waitwise_platform::features::decode;

/// The system allocator, counting the calling thread's allocations.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to `System` unchanged; the count is a
// thread-local with a const initializer, which does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `f`'s value and how many allocations the calling thread made in it.
fn counting<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOCATIONS.with(Cell::get);
    let value = f();
    (value, ALLOCATIONS.with(Cell::get) - before)
}

#[test]
fn decoding_this_cpus_features_allocates_nothing() {
    let (features, allocations) = counting(|| decode(&HardwareCpuid));
    assert_eq!(allocations, 0, "allocations while decoding {features:?}");
}

#[test]
fn reading_the_cgroup_quota_allocates_nothing() {
    let (limit, allocations) = counting(cpu_limit);
    assert_eq!(
        allocations, 0,
        "allocations while reading the quota {limit:?}"
    );
}

#[test]
fn counting_the_process_cpus_allocates_nothing() {
    let (count, allocations) = counting(process_cpu_count);
    assert_eq!(allocations, 0, "allocations while counting {count} CPUs");
}

#[test]
fn an_unpinned_thread_counts_what_std_counts() {
    let std = std::thread::available_parallelism().unwrap().get();
    assert_eq!(process_cpu_count(), std);
    if let Some(limit) = cpu_limit() {
        assert!(
            std <= limit,
            "std counts {std} CPUs under a quota of {limit}"
        );
    }
}
