//! The memory of slices lost to other processes
//! (`mechanism::yield_guard::lost_slice_recently`), in a process of its
//! own (the memory is process-wide): while it holds a loss, the default
//! waits that would poll by `yield` only because their threads outnumber
//! the CPUs block at once, a channel's re-tries spin less on a busy
//! machine, and every wait still completes.
#![cfg(not(loom))]

use waitwise::mechanism::yield_guard;

/// `threads` threads take `turns` turns each through one mutex and
/// condition variable; returns the turns counted.
fn take_turns(threads: usize, turns: usize) -> u64 {
    let st = (
        waitwise::Mutex::new(0u64),
        waitwise::condvar::Condvar::new(),
    );
    std::thread::scope(|s| {
        for id in 0..threads {
            let st = &st;
            s.spawn(move || {
                for _ in 0..turns {
                    let mut g = st.0.lock();
                    while *g as usize % threads != id {
                        st.1.wait(&mut g);
                    }
                    *g += 1;
                    st.1.notify_all();
                }
            });
        }
    });
    let n = *st.0.lock();
    n
}

/// A lost slice makes the waits that poll by `yield` only because their
/// threads outnumber the CPUs block at once (`crowding::for_wait`), and
/// such waits still complete: a condition-variable hand-off chain and a
/// channel with more endpoints than CPUs.
#[test]
fn after_a_lost_slice_crowded_default_waits_block_at_once_and_complete() {
    use waitwise::platform::clock::cycle_clock;
    use waitwise::policy::crowding::{allowed_cpus, for_threads, for_wait};
    use waitwise::{Mechanism, Policy};

    yield_guard::note_lost_slice_at(cycle_clock().now());
    assert!(yield_guard::lost_slice_recently());
    let crowd = allowed_cpus() + 1;
    assert_eq!(
        for_wait(Policy::adaptive(), crowd).mechanism(),
        Mechanism::Block
    );
    assert_eq!(for_wait(Policy::adaptive(), 1), Policy::adaptive());
    assert_eq!(
        for_threads(Policy::adaptive(), crowd).mechanism(),
        Mechanism::Yield,
        "a choice made once does not follow the losses"
    );

    assert_eq!(take_turns(crowd + 1, 300), (crowd as u64 + 1) * 300);

    let (tx, rx) = waitwise::channel::bounded::<u64>(1);
    let senders: Vec<_> = (0..crowd).map(|_| tx.clone()).collect();
    drop(tx);
    let sum: u64 = std::thread::scope(|s| {
        for (i, tx) in senders.into_iter().enumerate() {
            s.spawn(move || {
                for v in 0..1000 {
                    tx.send(i as u64 * 1000 + v).unwrap();
                }
            });
        }
        rx.iter().sum()
    });
    let n = crowd as u64 * 1000;
    assert_eq!(sum, n * (n - 1) / 2);

    // A busy machine besides: a channel's re-tries spin less before they
    // block; every value still arrives, in order.
    use waitwise::policy::idle_extension::{force_demand, CpuDemand};
    force_demand(Some(CpuDemand::Busy));
    yield_guard::note_lost_slice_at(cycle_clock().now());
    let (tx, rx) = waitwise::channel::bounded::<u64>(4);
    let received: Vec<u64> = std::thread::scope(|s| {
        s.spawn(move || {
            for v in 0..20_000 {
                tx.send(v).unwrap();
            }
        });
        rx.iter().collect()
    });
    force_demand(None);
    assert!(received.iter().copied().eq(0..20_000));
}
