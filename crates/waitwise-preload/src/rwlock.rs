//! `pthread_rwlock_*` (being written).
