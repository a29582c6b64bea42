//! [`Prefetcher`]: how a helper brings lines of memory the worker is
//! writing into the caches without reading it. A read of memory another
//! thread writes is a data race; a prefetch hint (PREFETCHT0 on x86_64,
//! part of SSE, which every x86_64 CPU has) is not an access at all, so a
//! helper may issue it for any address. Elsewhere the hints are no-ops.
//! [`run_with_prefetching_helper`]: a worker's task list with such a
//! helper beside it.

use super::HelperWork;
use waitwise::helper::{self, HelperConfig, Pinning, RunReport, Step};

/// Prefetch hints over one buffer of `T`, by index. Holds the buffer's
/// address as a number, so it is `Send + Sync` and borrows nothing: the
/// worker keeps its `&mut` to the buffer.
#[derive(Clone, Copy, Debug)]
pub struct Prefetcher {
    base: usize,
    len: usize,
    size: usize,
}

/// Bytes per cache line the hints step by (64 on every x86_64 CPU).
const LINE: usize = 64;

impl Prefetcher {
    /// Hints over `buffer`.
    pub fn new<T>(buffer: &[T]) -> Self {
        Self {
            base: buffer.as_ptr() as usize,
            len: buffer.len(),
            size: std::mem::size_of::<T>(),
        }
    }

    /// Hints every line of elements `range` (clamped to the buffer).
    #[inline]
    pub fn range(&self, range: std::ops::Range<usize>) {
        let end = range.end.min(self.len);
        if range.start >= end {
            return;
        }
        let first = self.base + range.start * self.size;
        let last = self.base + end * self.size;
        let mut addr = first & !(LINE - 1);
        while addr < last {
            hint(addr);
            addr += LINE;
        }
    }
}

/// Runs `tasks` in order on the calling thread (`run`), publishing each
/// one's index as the phase, beside a helper that calls `prefetch` for the
/// task of the phase it reached, up to `config.distance` phases ahead of
/// the worker ([`HelperWork::Idle`]: a helper that only follows, to
/// measure its interference). The shape of every speculative-precomputation
/// application here (blocked LU, transitive closure): the worker's tasks
/// are known up front, and the helper warms what one of them will touch.
pub fn run_with_prefetching_helper<T: Copy + Sync>(
    tasks: &[T],
    work: HelperWork,
    config: &HelperConfig,
    pinning: Pinning,
    prefetch: impl Fn(T) + Sync,
    mut run: impl FnMut(T),
) -> RunReport {
    let helper_step = |step: &Step<'_>| {
        if work == HelperWork::Idle {
            return;
        }
        if let Some(&t) = tasks.get(step.phase() as usize) {
            prefetch(t);
        }
    };
    let ((), report) = helper::run(config, pinning, vec![helper_step], |worker| {
        for (p, &t) in tasks.iter().enumerate() {
            worker.publish(p.min(helper::LAST_PHASE as usize) as u32);
            run(t);
        }
    });
    report
}

/// One prefetch hint for the line holding `addr`.
#[inline(always)]
fn hint(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is in SSE, baseline on x86_64; a prefetch never
    // faults and accesses no memory in the language's sense, whatever the
    // address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(addr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_any_range_without_touching_it() {
        let v = vec![0u64; 1000];
        let p = Prefetcher::new(&v);
        p.range(0..1000);
        p.range(990..2000);
        p.range(5..5);
        p.range(2000..3000);
    }
}
