//! Errors of the channel operations. Each one that can fail to send gives
//! the value back, so nothing is lost on a full or disconnected channel.
//!
//! `Debug` does not print the value (so errors are usable with any `T`);
//! take it out with `into_inner` or the public field.

use std::fmt;
use thiserror::Error;

/// [`Sender::send`](super::Sender::send) failed: every receiver is gone.
/// The value comes back in field `0`.
#[derive(Clone, Copy, PartialEq, Eq, Error)]
#[error("sending on a disconnected channel")]
pub struct SendError<T>(pub T);

/// [`Sender::try_send`](super::Sender::try_send) failed.
#[derive(Clone, Copy, PartialEq, Eq, Error)]
pub enum TrySendError<T> {
    /// The channel is full; the value comes back.
    #[error("sending on a full channel")]
    Full(T),
    /// Every receiver is gone; the value comes back.
    #[error("sending on a disconnected channel")]
    Disconnected(T),
}

/// [`Sender::send_timeout`](super::Sender::send_timeout) failed.
#[derive(Clone, Copy, PartialEq, Eq, Error)]
pub enum SendTimeoutError<T> {
    /// The channel stayed full until the timeout; the value comes back.
    #[error("timed out sending on a full channel")]
    Timeout(T),
    /// Every receiver is gone; the value comes back.
    #[error("sending on a disconnected channel")]
    Disconnected(T),
}

/// [`Receiver::recv`](super::Receiver::recv) failed: the channel is empty
/// and every sender is gone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("receiving on an empty and disconnected channel")]
pub struct RecvError;

/// [`Receiver::try_recv`](super::Receiver::try_recv) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum TryRecvError {
    /// The channel is empty, and some sender is still alive.
    #[error("receiving on an empty channel")]
    Empty,
    /// The channel is empty and every sender is gone.
    #[error("receiving on an empty and disconnected channel")]
    Disconnected,
}

/// [`Receiver::recv_timeout`](super::Receiver::recv_timeout) failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum RecvTimeoutError {
    /// The channel stayed empty until the timeout.
    #[error("timed out receiving on an empty channel")]
    Timeout,
    /// The channel is empty and every sender is gone.
    #[error("receiving on an empty and disconnected channel")]
    Disconnected,
}

/// [`try_bounded`](super::try_bounded) was asked for no slot (a
/// rendezvous channel, which waitwise does not offer) or for more slots
/// than a channel can index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{}", capacity_message(*requested, *max))]
pub struct CapacityError {
    /// The capacity asked for.
    pub requested: usize,
    /// The largest capacity possible for this element type.
    pub max: usize,
}

/// The text of a [`CapacityError`].
fn capacity_message(requested: usize, max: usize) -> String {
    if requested == 0 {
        "channel capacity 0 is not supported: a zero-capacity (rendezvous) \
         channel, where a send waits for a receiver, is not offered; use a \
         capacity of at least 1"
            .to_string()
    } else {
        format!("channel capacity {requested} exceeds the maximum {max}")
    }
}

impl<T> SendError<T> {
    /// The value that could not be sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> TrySendError<T> {
    /// The value that could not be sent.
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(v) | TrySendError::Disconnected(v) => v,
        }
    }

    /// Whether the channel was full.
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }

    /// Whether every receiver is gone.
    pub fn is_disconnected(&self) -> bool {
        matches!(self, TrySendError::Disconnected(_))
    }
}

impl<T> SendTimeoutError<T> {
    /// The value that could not be sent.
    pub fn into_inner(self) -> T {
        match self {
            SendTimeoutError::Timeout(v) | SendTimeoutError::Disconnected(v) => v,
        }
    }

    /// Whether the timeout passed.
    pub fn is_timeout(&self) -> bool {
        matches!(self, SendTimeoutError::Timeout(_))
    }

    /// Whether every receiver is gone.
    pub fn is_disconnected(&self) -> bool {
        matches!(self, SendTimeoutError::Disconnected(_))
    }
}

impl TryRecvError {
    /// Whether the channel was empty with senders alive.
    pub fn is_empty(&self) -> bool {
        *self == TryRecvError::Empty
    }

    /// Whether the channel is empty and every sender is gone.
    pub fn is_disconnected(&self) -> bool {
        *self == TryRecvError::Disconnected
    }
}

impl RecvTimeoutError {
    /// Whether the timeout passed.
    pub fn is_timeout(&self) -> bool {
        *self == RecvTimeoutError::Timeout
    }

    /// Whether the channel is empty and every sender is gone.
    pub fn is_disconnected(&self) -> bool {
        *self == RecvTimeoutError::Disconnected
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("SendError(..)")
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.pad("Full(..)"),
            TrySendError::Disconnected(_) => f.pad("Disconnected(..)"),
        }
    }
}

impl<T> fmt::Debug for SendTimeoutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendTimeoutError::Timeout(_) => f.pad("Timeout(..)"),
            SendTimeoutError::Disconnected(_) => f.pad("Disconnected(..)"),
        }
    }
}

impl<T> From<SendError<T>> for TrySendError<T> {
    fn from(e: SendError<T>) -> Self {
        TrySendError::Disconnected(e.0)
    }
}

impl<T> From<SendError<T>> for SendTimeoutError<T> {
    fn from(e: SendError<T>) -> Self {
        SendTimeoutError::Disconnected(e.0)
    }
}

impl From<RecvError> for TryRecvError {
    fn from(_: RecvError) -> Self {
        TryRecvError::Disconnected
    }
}

impl From<RecvError> for RecvTimeoutError {
    fn from(_: RecvError) -> Self {
        RecvTimeoutError::Disconnected
    }
}
