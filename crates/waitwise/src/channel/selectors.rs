//! [`Selectors`]: the [`Select`](super::Select)s waiting on a ring index,
//! which the index's notify signals besides its own sleepers.
//!
//! A selector waits on several channels at once, and a thread can sleep on
//! one futex only; so it sleeps on a word of its own (a [`WaitWord`]
//! epoch) and registers that word with the `tail` index of every channel
//! it selects over. It then announces itself on each index as a parking
//! receiver does ([`Index::prepare`](super::index::Index::prepare): the
//! `WAITING` bit), so that the next change of each index takes the
//! notify's slow path, which bumps and wakes every registered word (after
//! waking its own sleepers). The fast path, a push with nobody parked,
//! stays one load: a channel that no selector waits on pays nothing.
//!
//! # Memory ordering
//!
//! The list is under a mutex. A selector registers before it announces
//! (`fetch_or`, `SeqCst`), and a notifier reads the list after its `SeqCst`
//! load saw an announcement: the load reads from the announcement's RMW
//! or a later RMW of its release sequence, so the registration happens
//! before the notifier locks the list and the notifier signals it. A
//! signal is a `SeqCst` increment of the selector's word and a wake; the
//! selector read its word before announcing, and sleeps only while it is
//! unchanged.

use crate::wait_word::WaitWord;
use waitwise_platform::shim::{Arc, Ordering};

#[cfg(loom)]
use loom::sync::Mutex;
#[cfg(not(loom))]
use std::sync::Mutex;

/// The words of the selectors waiting on one index.
#[derive(Debug)]
pub(crate) struct Selectors {
    words: Mutex<Vec<Arc<WaitWord>>>,
}

impl Selectors {
    /// Nobody registered.
    pub(crate) fn new() -> Self {
        Self {
            words: Mutex::new(Vec::new()),
        }
    }

    /// Registers a selector's word (before the selector announces itself
    /// on the index).
    pub(crate) fn register(&self, word: &Arc<WaitWord>) {
        self.lock().push(word.clone());
    }

    /// Removes a selector's word (once, per registration).
    pub(crate) fn unregister(&self, word: &Arc<WaitWord>) {
        let mut words = self.lock();
        if let Some(i) = words.iter().position(|w| Arc::ptr_eq(w, word)) {
            words.swap_remove(i);
        }
    }

    /// The notify's slow path: bump and wake every registered word.
    pub(crate) fn signal_all(&self) {
        for word in self.lock().iter() {
            // SeqCst: the write half of the selector's sleep (module doc).
            word.value().fetch_add(1, Ordering::SeqCst);
            word.wake_all();
        }
    }

    /// The list, also after a panic elsewhere left the mutex poisoned (a
    /// list of words cannot be left half changed).
    fn lock(&self) -> impl std::ops::DerefMut<Target = Vec<Arc<WaitWord>>> + '_ {
        #[cfg(not(loom))]
        {
            self.words.lock().unwrap_or_else(|e| e.into_inner())
        }
        #[cfg(loom)]
        {
            self.words.lock().unwrap()
        }
    }
}
