//! The CPU's features are detected by the first contended wait, which may
//! be for the allocator's own lock: detection must not allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
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

#[test]
fn decoding_this_cpus_features_allocates_nothing() {
    let before = ALLOCATIONS.with(Cell::get);
    let features = decode(&HardwareCpuid);
    let after = ALLOCATIONS.with(Cell::get);
    assert_eq!(after - before, 0, "allocations while decoding {features:?}");
}
