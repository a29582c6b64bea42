//! Mutexes (placeholder docs, filled in below).

mod ttas;
mod waiting;

pub use ttas::RawTtasMutex;

/// The raw lock behind [`Mutex`].
pub type RawDefault = RawTtasMutex;
/// A mutex.
pub type Mutex<T> = lock_api::Mutex<RawDefault, T>;
/// Its guard.
pub type MutexGuard<'a, T> = lock_api::MutexGuard<'a, RawDefault, T>;
/// TTAS.
pub type TtasMutex<T> = lock_api::Mutex<RawTtasMutex, T>;
/// TTAS guard.
pub type TtasMutexGuard<'a, T> = lock_api::MutexGuard<'a, RawTtasMutex, T>;
