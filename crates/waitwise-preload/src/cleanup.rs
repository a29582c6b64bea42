//! Undoing a waiter's registrations when glibc unwinds its thread.
//!
//! A thread blocked in a wait leaves it without returning when it is
//! cancelled (at a cancellation point, or asynchronously) or when a signal
//! handler calls `pthread_exit`: glibc unwinds its stack (a forced unwind)
//! and runs the cleanup handlers on the way. [`on_forced_unwind`] (the
//! platform's) registers a routine of ours for the span of a call, with
//! glibc's own `_pthread_cleanup_push` / `_pthread_cleanup_pop`: glibc's
//! unwinder runs every handler so registered whose frame the unwind
//! leaves, innermost first, before it goes on to the caller's frames.
//!
//! This needs no landing pad (no `Drop` guard) in the interposer's frames,
//! which matters because an unwind that a signal handler starts may start
//! at any instruction, and Rust's personality routine aborts one that
//! starts between the call sites of a function that has landing pads. The
//! handler routines are `extern "C"` and never unwind.

pub use waitwise_platform::cancel::on_forced_unwind;
