//! `block`: sleep in the kernel on the futex until woken. Frees the CPU but
//! costs the sleep and wake-up path (microseconds; tens of them on a VM,
//! where an idle vCPU halts through the hypervisor).
//!
//! This is the bare mechanism: the waker must call `futex.wake*()` after
//! changing the word. [`crate::WaitWord`] wraps it in the sleeper-count
//! protocol that lets a waker skip the system call when nobody sleeps.

use super::MechanismWait;
use waitwise_platform::clock::Deadline;
use waitwise_platform::futex::{Futex, FutexWait};
use waitwise_platform::shim::Ordering;

/// Waits until the futex word `!= current` or `deadline` passes.
#[inline]
pub fn wait(futex: &Futex, current: u32, deadline: Deadline) -> MechanismWait {
    loop {
        // Acquire: a waiter that sees the new value sees the writer's prior writes.
        let v = futex.value().load(Ordering::Acquire);
        if v != current {
            return MechanismWait::Changed(v);
        }
        let timeout = deadline.remaining();
        if timeout == Some(std::time::Duration::ZERO) {
            return MechanismWait::TimedOut;
        }
        if futex.wait(current, timeout) == FutexWait::TimedOut {
            let v = futex.value().load(Ordering::Acquire);
            return if v != current {
                MechanismWait::Changed(v)
            } else {
                MechanismWait::TimedOut
            };
        }
    }
}
