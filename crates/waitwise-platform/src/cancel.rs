//! POSIX thread cancellation at the waits that are cancellation points.
//!
//! A deferred cancellation request (`pthread_cancel` of a thread whose
//! cancellation type is the default, deferred) is acted on only at a
//! cancellation point: then the thread runs its cleanup handlers and exits,
//! by a *forced unwind* that starts inside the C library and passes through
//! every frame between there and the thread's start routine. Among the
//! waits waitwise implements for C programs, the condition waits and the
//! semaphore waits are cancellation points (POSIX), the lock and barrier
//! waits are not.
//!
//! A cancellable wait
//! 1. acts on a request already pending before it blocks ([`point`]), and
//! 2. sleeps with [`Futex::wait_cancellable`](crate::futex::Futex::wait_cancellable),
//!    during which a request ends the sleep and the thread.
//!
//! What unwinds must find guards on its way: every frame that registered
//! the thread somewhere (a sleeper count, a waiter count, a barrier
//! arrival) undoes it in a `Drop` implementation, and a frame whose thread
//! may have been handed a wake-up just before the cancellation passes it
//! on. The same forced unwind comes from a signal handler that calls
//! `pthread_exit` (or a `longjmp`-free C++ exception) while the thread
//! blocks in any wait, cancellation point or not, so every blocking wait
//! needs those guards.

/// C functions a waiting thread may be unwound out of.
mod sys {
    extern "C-unwind" {
        pub fn pthread_testcancel();
    }
}

/// Acts on a pending deferred cancellation request of the calling thread
/// (`pthread_testcancel`): if there is one, and cancellation is enabled,
/// the thread exits here (a forced unwind through the caller). Otherwise
/// returns at once.
#[inline]
pub fn point() {
    // SAFETY: no preconditions; an unwind out of it is what a cancellation
    // point is for, and it is declared `C-unwind`.
    unsafe { sys::pthread_testcancel() };
}
