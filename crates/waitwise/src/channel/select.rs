//! [`Select`]: waiting on several receivers at once, in crossbeam-channel's
//! shape:
//!
//! ```
//! use waitwise::channel::{self, Select};
//!
//! let (tx1, rx1) = channel::bounded::<i32>(1);
//! let (tx2, rx2) = channel::bounded::<&str>(1);
//! tx2.send("two").unwrap();
//! let mut sel = Select::new();
//! let op1 = sel.recv(&rx1);
//! let op2 = sel.recv(&rx2);
//! let op = sel.select();
//! match op.index() {
//!     i if i == op1 => panic!("nothing was sent on rx1: {:?}", op.recv(&rx1)),
//!     i if i == op2 => assert_eq!(op.recv(&rx2), Ok("two")),
//!     _ => unreachable!(),
//! }
//! # drop(tx1);
//! ```
//!
//! # How it waits
//!
//! A selection tries each receiver (`try_recv`), starting at a rotating
//! position so that no channel is always preferred. The receive of the
//! selected operation has already happened when the selection returns:
//! its value (or the disconnection) waits in the [`SelectedOperation`]
//! for [`SelectedOperation::recv`], so no other receiver can take it in
//! between. When no receiver is ready, the selector registers a word of
//! its own with each channel's `tail` index (`selectors.rs`), reads the
//! word, announces itself on each index as a parking receiver does, tries
//! every receiver once more, and sleeps on its word until it changes: a
//! push or disconnection after the announcement takes that index's
//! notify slow path, which signals the word. A push before the
//! announcement is seen by the second try. The selector unregisters when
//! it returns.
//!
//! # Send operations
//!
//! A send operation is selected when its channel has room or is
//! disconnected; [`SelectedOperation::send`] then sends. Unlike a
//! receive, the selection reserves nothing: if another sender fills the
//! channel in between, the send waits for room as [`Sender::send`] does
//! (with one sender per channel, as in a pipeline, it never waits). A
//! selector waiting to send registers with the channel's `head` index,
//! which every receive and the disconnection notify.

use super::endpoints::{Receiver, Sender};
use super::error::{RecvError, SendError, TrySendError};
use super::index::Index;
use crate::policy::{Policy, SyncKind};
use crate::wait_word::WaitWord;
use std::fmt;
use std::marker::PhantomData;
use std::time::{Duration, Instant};
use waitwise_platform::clock::Deadline;
use waitwise_platform::shim::{Arc, Ordering};

/// An operation as a [`Select`] sees it, whatever its value type.
trait SelectOp {
    /// Receives now, if a value or the disconnection is there; for a
    /// send, whether it may go ahead.
    fn try_take(&self) -> Option<Taken>;
    /// The index to wait on: `tail` for a receive, `head` for a send.
    fn index(&self) -> &Index;
    /// The channel's identity.
    fn id(&self) -> *const ();
}

/// What a selected receive got: a value (boxed, its type erased) or the
/// disconnection; or a send that may go ahead.
enum Taken {
    /// A `Box<T>` as a raw pointer, and how to drop it unclaimed.
    Value {
        ptr: *mut (),
        drop: unsafe fn(*mut ()),
    },
    Disconnected,
    /// A send operation whose channel had room or was disconnected.
    SendReady,
}

/// Drops an unclaimed `Box<T>` made by `try_take`.
///
/// # Safety
///
/// `ptr` came from `Box::<T>::into_raw` and is dropped once.
unsafe fn drop_boxed<T>(ptr: *mut ()) {
    // SAFETY: the contract above.
    drop(unsafe { Box::from_raw(ptr.cast::<T>()) });
}

impl<T> SelectOp for Sender<T> {
    fn try_take(&self) -> Option<Taken> {
        (!self.is_full() || self.is_disconnected()).then_some(Taken::SendReady)
    }

    fn index(&self) -> &Index {
        self.head_index()
    }

    fn id(&self) -> *const () {
        self.channel_id()
    }
}

impl<T> SelectOp for Receiver<T> {
    fn try_take(&self) -> Option<Taken> {
        match self.try_recv() {
            Ok(v) => Some(Taken::Value {
                ptr: Box::into_raw(Box::new(v)).cast(),
                drop: drop_boxed::<T>,
            }),
            Err(super::TryRecvError::Disconnected) => Some(Taken::Disconnected),
            Err(super::TryRecvError::Empty) => None,
        }
    }

    fn index(&self) -> &Index {
        self.tail_index()
    }

    fn id(&self) -> *const () {
        self.channel_id()
    }
}

thread_local! {
    /// This thread's count of selections: where the next one starts
    /// trying, so that successive selections prefer no operation.
    static SELECTIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The start of a new selection's tries (taken modulo its operations).
/// Under loom, 0: a model's executions must not depend on the ones
/// before.
fn next_start() -> usize {
    if cfg!(loom) {
        return 0;
    }
    SELECTIONS.with(|c| {
        let n = c.get();
        c.set(n.wrapping_add(1));
        n
    })
}

/// A set of receive and send operations to wait on at once
/// (crossbeam-channel's `Select`): a selection picks one ready operation
/// (a receive it has already made, or a send whose channel has room) and
/// hands it over in a [`SelectedOperation`], which
/// [`SelectedOperation::recv`] or [`SelectedOperation::send`] completes. Successive selections start
/// trying at rotating positions, so no receiver is always preferred; a
/// selection that finds none ready sleeps until a send or a
/// disconnection on one of them.
///
/// # Examples
/// ```
/// use waitwise::channel::{self, Select};
///
/// let (tx1, rx1) = channel::bounded::<i32>(1);
/// let (tx2, rx2) = channel::bounded::<i32>(1);
/// std::thread::spawn(move || tx2.send(2).unwrap());
/// let mut sel = Select::new();
/// let op1 = sel.recv(&rx1);
/// let op2 = sel.recv(&rx2);
/// let op = sel.select(); // waits for the send
/// assert_eq!(op.index(), op2);
/// assert_eq!(op.recv(&rx2), Ok(2));
/// # let _ = (op1, tx1);
/// ```
pub struct Select<'a> {
    ops: Vec<&'a dyn SelectOp>,
    /// Where the next selection starts trying (rotates).
    start: usize,
}

/// The operation a [`Select`] selected, with its receive done: complete
/// it with [`SelectedOperation::recv`] on the same receiver.
///
/// Dropping it without completing panics, as crossbeam's does (the value
/// it holds is dropped, unreceived).
#[must_use = "complete the operation with `recv`"]
pub struct SelectedOperation<'a> {
    index: usize,
    id: *const (),
    taken: Option<Taken>,
    _select: PhantomData<&'a ()>,
}

/// [`Select::try_select`] found no operation ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrySelectError;

/// [`Select::select_timeout`] found no operation ready in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SelectTimeoutError;

impl fmt::Display for TrySelectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("all operations in select would block")
    }
}

impl fmt::Display for SelectTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timed out waiting on select")
    }
}

impl std::error::Error for TrySelectError {}
impl std::error::Error for SelectTimeoutError {}

impl<'a> Select<'a> {
    /// No operations yet.
    pub fn new() -> Self {
        Self {
            ops: Vec::new(),
            start: next_start(),
        }
    }

    /// Adds a receive on `r`; returns its index, which
    /// [`SelectedOperation::index`] reports when it is selected.
    pub fn recv<T>(&mut self, r: &'a Receiver<T>) -> usize {
        self.ops.push(r);
        self.ops.len() - 1
    }

    /// Adds a send on `s`; returns its index. It is selected when the
    /// channel has room or is disconnected.
    pub fn send<T>(&mut self, s: &'a Sender<T>) -> usize {
        self.ops.push(s);
        self.ops.len() - 1
    }

    /// Selects an operation that is ready now, if any; never waits.
    pub fn try_select(&mut self) -> Result<SelectedOperation<'a>, TrySelectError> {
        self.try_once().ok_or(TrySelectError)
    }

    /// Waits until an operation is ready and selects it.
    ///
    /// # Panics
    ///
    /// With no operations (it would wait forever), as crossbeam's.
    pub fn select(&mut self) -> SelectedOperation<'a> {
        assert!(
            !self.ops.is_empty(),
            "no operations have been added to `Select`"
        );
        self.select_until(Deadline::NEVER)
            .expect("a selection without a deadline selects")
    }

    /// Waits at most `timeout` for an operation to be ready.
    pub fn select_timeout(
        &mut self,
        timeout: Duration,
    ) -> Result<SelectedOperation<'a>, SelectTimeoutError> {
        self.select_until(Deadline::after(timeout))
            .ok_or(SelectTimeoutError)
    }

    /// Waits until `deadline` for an operation to be ready.
    pub fn select_deadline(
        &mut self,
        deadline: Instant,
    ) -> Result<SelectedOperation<'a>, SelectTimeoutError> {
        let timeout = deadline.saturating_duration_since(Instant::now());
        self.select_timeout(timeout)
    }

    /// One try of every operation, from the rotating start.
    fn try_once(&mut self) -> Option<SelectedOperation<'a>> {
        let n = self.ops.len();
        if n == 0 {
            return None;
        }
        self.start %= n;
        for k in 0..n {
            let index = (self.start + k) % n;
            let op = self.ops[index];
            if let Some(taken) = op.try_take() {
                self.start = (index + 1) % n;
                return Some(SelectedOperation {
                    index,
                    id: op.id(),
                    taken: Some(taken),
                    _select: PhantomData,
                });
            }
        }
        None
    }

    /// The wait (module doc, "How it waits").
    fn select_until(&mut self, deadline: Deadline) -> Option<SelectedOperation<'a>> {
        if let Some(op) = self.try_once() {
            return Some(op);
        }
        if self.ops.is_empty() {
            // Nothing can become ready: wait out the deadline.
            if let Some(t) = deadline.remaining() {
                std::thread::sleep(t);
            }
            return None;
        }
        let word = Arc::new(WaitWord::new(0));
        for op in &self.ops {
            op.index().selectors().register(&word);
        }
        // The channels' default kind; under loom, blocking at once (each
        // poll would be a model-checked step).
        let policy = if cfg!(loom) {
            Policy::always_block()
        } else {
            Policy::for_kind(SyncKind::ProducerConsumer)
        };
        let selected = loop {
            // The word before the announcements: a signal after this read
            // changes it (module doc of `selectors.rs`).
            let seen = word.value().load(Ordering::SeqCst);
            for op in &self.ops {
                let _ = op.index().prepare();
            }
            if let Some(op) = self.try_once() {
                break Some(op);
            }
            if deadline.has_passed() {
                break None;
            }
            let out = word.wait_until(&policy, deadline, |v| v != seen);
            if out.timed_out() {
                // One more try: a push may have come with the deadline.
                break self.try_once();
            }
            if let Some(op) = self.try_once() {
                break Some(op);
            }
        };
        for op in &self.ops {
            op.index().selectors().unregister(&word);
        }
        selected
    }
}

impl Default for Select<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Select<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select")
            .field("operations", &self.ops.len())
            .finish()
    }
}

impl SelectedOperation<'_> {
    /// The index [`Select::recv`] returned for this operation.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Completes the selected receive: the value, or [`RecvError`] if
    /// the channel was empty and disconnected.
    ///
    /// # Panics
    ///
    /// If `r` is not a receiver of the selected operation's channel, or
    /// the selected operation is a send.
    pub fn recv<T>(mut self, r: &Receiver<T>) -> Result<T, RecvError> {
        assert!(
            r.channel_id() == self.id,
            "passed a receiver that wasn't selected"
        );
        match self.taken.take().expect("completed once") {
            Taken::SendReady => panic!("completed a selected send with `recv`"),
            // SAFETY: `ptr` is a `Box<T>`: the selected receiver is of this
            // channel (checked above), whose values are `T`s; taken out of
            // `self`, it is not dropped again.
            Taken::Value { ptr, .. } => Ok(*unsafe { Box::from_raw(ptr.cast::<T>()) }),
            Taken::Disconnected => Err(RecvError),
        }
    }
}

impl SelectedOperation<'_> {
    /// Completes the selected send: sends `value`, or returns it in the
    /// error if the channel is disconnected. Waits for room only if
    /// another sender filled the channel since the selection (module
    /// doc, "Send operations").
    ///
    /// # Panics
    ///
    /// If `s` is not a sender of the selected operation's channel, or the
    /// selected operation is a receive.
    pub fn send<T>(mut self, s: &Sender<T>, value: T) -> Result<(), SendError<T>> {
        assert!(
            s.channel_id() == self.id,
            "passed a sender that wasn't selected"
        );
        match self.taken.take().expect("completed once") {
            Taken::SendReady => match s.try_send(value) {
                Ok(()) => Ok(()),
                Err(TrySendError::Disconnected(v)) => Err(SendError(v)),
                Err(TrySendError::Full(v)) => s.send(v),
            },
            other => {
                self.taken = Some(other);
                panic!("completed a selected receive with `send`");
            }
        }
    }
}

impl Drop for SelectedOperation<'_> {
    fn drop(&mut self) {
        if let Some(taken) = self.taken.take() {
            if let Taken::Value { ptr, drop } = taken {
                // SAFETY: an unclaimed box, dropped once (taken above).
                unsafe { drop(ptr) };
            }
            if !std::thread::panicking() {
                panic!("dropped `SelectedOperation` without completing the operation");
            }
        }
    }
}

impl fmt::Debug for SelectedOperation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectedOperation")
            .field("index", &self.index)
            .finish()
    }
}
