//! The barrier's CPU count is read once per process. A program whose
//! first barrier is made by a worker pinned to one CPU must still see all
//! of the process's CPUs (before, every barrier of such a process polled
//! by yielding, as if oversubscribed). Its own test binary: nothing else
//! may read the count first.

use waitwise::barrier::{allowed_cpus, is_oversubscribed};
use waitwise_platform::affinity::{allowed_cpus as thread_cpus, pin_current_thread};

#[test]
fn a_pinned_first_caller_does_not_shrink_the_process() {
    let process = std::thread::available_parallelism().map_or(1, |n| n.get());
    let seen = std::thread::spawn(|| {
        let mine = thread_cpus().unwrap();
        pin_current_thread(mine[0]).unwrap();
        allowed_cpus()
    })
    .join()
    .unwrap();
    assert_eq!(seen, process);
    assert_eq!(allowed_cpus(), process);
    assert!(!is_oversubscribed(process));
    assert!(is_oversubscribed(process + 1));
}
