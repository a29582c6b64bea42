/*
 * waitwise.h: the C ABI of waitwise (libwaitwise.so / libwaitwise.a).
 *
 * Thread waiting done well: every wait polls for a while, then blocks on a
 * futex, and the poll limit is alpha * B, with B the cost of blocking
 * measured on this machine. Objects: event, barrier, mutex, condition
 * variable, semaphore; a policy value chooses how each object waits.
 *
 * Build:   cargo build --release -p waitwise-ffi
 * Install: crates/waitwise-ffi/install.sh /usr/local
 *          (the library as libwaitwise.so.VERSION with the links
 *          libwaitwise.so.0 (its SONAME) and libwaitwise.so, libwaitwise.a,
 *          this header, and lib/pkgconfig/waitwise.pc and
 *          waitwise-static.pc; DESTDIR is honoured)
 * Link:    cc prog.c $(pkg-config --cflags --libs waitwise), or statically:
 *          cc prog.c $(pkg-config --cflags --libs waitwise-static)
 *          (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig for a prefix that
 *          pkg-config does not search)
 *
 * Conventions
 * - Names are waitwise_<object>_<verb>; objects are opaque, made by
 *   waitwise_<object>_new[_with_policy](&handle, ...), which stores a
 *   handle in *out, and freed by waitwise_<object>_destroy(handle).
 * - Every function returns int: 0 on success or a positive WAITWISE_E*
 *   code (exceptions: waitwise_barrier_wait also returns
 *   WAITWISE_BARRIER_SERIAL_THREAD; the policy constructors return a value;
 *   waitwise_strerror returns a string; waitwise_string_free returns
 *   nothing).
 * - A NULL handle or out-pointer is WAITWISE_EINVAL; nothing is written.
 * - Timeouts are relative, in nanoseconds: 0 only checks,
 *   WAITWISE_TIMEOUT_INFINITE never times out.
 * - No Rust panic unwinds into C: one would be caught and reported as
 *   WAITWISE_EINTERNAL (a bug in waitwise; the object is then unusable).
 * - Ownership: the caller owns each handle from _new to _destroy. Using a
 *   handle after (or while) it is destroyed, or destroying it while a
 *   thread waits on it, is undefined behaviour (as with pthreads); a
 *   held mutex is detected (WAITWISE_EBUSY), the rest cannot be. Strings
 *   returned by waitwise are freed with waitwise_string_free, never free().
 *   Policies are plain values: copy them, never free them.
 * - All functions are thread-safe on live objects. No object has a static
 *   initializer: each lives on the heap behind its handle (the
 *   LD_PRELOAD interposer keeps state inside pthread objects instead).
 *
 * This header is checked against the library by the test
 * crates/waitwise-ffi/tests/header.rs: every function, type and constant
 * here must match the Rust side.
 */
#ifndef WAITWISE_H
#define WAITWISE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ---- */

/** The version this header belongs to (the crate's, MAJOR.MINOR.PATCH). */
#define WAITWISE_VERSION_MAJOR 0
#define WAITWISE_VERSION_MINOR 1
#define WAITWISE_VERSION_PATCH 0
/** MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define WAITWISE_VERSION_NUMBER 100
#define WAITWISE_VERSION_STRING "0.1.0"
/** The C ABI's major version: the N of the SONAME libwaitwise.so.N. */
#define WAITWISE_ABI_VERSION 0

/** The loaded library's version, "MAJOR.MINOR.PATCH"; a static string,
 *  never NULL, never freed. Compare with WAITWISE_VERSION_STRING. */
const char *waitwise_version(void);
/** The loaded library's WAITWISE_VERSION_NUMBER. */
uint32_t waitwise_version_number(void);

/* ---- Return codes (values equal to the Linux errno of the same name) ---- */

/** Success. */
#define WAITWISE_OK 0
/** The calling thread does not hold the mutex it unlocks or waits with. */
#define WAITWISE_EPERM 1
/** The probe could not read the machine's description. */
#define WAITWISE_EIO 5
/** Nothing available now: waitwise_semaphore_trywait found no permit. */
#define WAITWISE_EAGAIN 11
/** The mutex is held: trylock failed, or destroy of a held mutex. */
#define WAITWISE_EBUSY 16
/** A NULL pointer, or an argument out of range. */
#define WAITWISE_EINVAL 22
/** The calling thread already holds the mutex it locks. */
#define WAITWISE_EDEADLK 35
/** A semaphore's value would pass WAITWISE_SEM_VALUE_MAX. */
#define WAITWISE_EOVERFLOW 75
/** The timeout passed first. */
#define WAITWISE_ETIMEDOUT 110
/** A bug in waitwise (a panic was caught at the boundary). */
#define WAITWISE_EINTERNAL 131

/** A description of a return code; a static string, never NULL. */
const char *waitwise_strerror(int code);

/* ---- Other constants ---- */

/** A timeout that never passes. */
#define WAITWISE_TIMEOUT_INFINITE UINT64_MAX
/** Returned by waitwise_barrier_wait to one thread per episode (as
 *  PTHREAD_BARRIER_SERIAL_THREAD; negative, so never an error code). */
#define WAITWISE_BARRIER_SERIAL_THREAD (-1)
/** The largest value a semaphore holds (INT_MAX). */
#define WAITWISE_SEM_VALUE_MAX 2147483647

/* ---- Policies: how an object waits (a value type; never freed) ---- */

/** The object's own default: two-phase with its kind's alpha
 *  (WAITWISE_ALPHA in the environment overrides alpha). */
#define WAITWISE_POLICY_DEFAULT 0
/** Poll for alpha * B, then block (B = block cost measured here). */
#define WAITWISE_POLICY_TWO_PHASE 1
/** Always poll, never block. */
#define WAITWISE_POLICY_SPIN 2
/** Block at once. */
#define WAITWISE_POLICY_BLOCK 3
/** Poll for a limit drawn per wait on [0, B], then block. */
#define WAITWISE_POLICY_RANDOMIZED 4
/** Per object, poll for a limit drawn per wait from the poll-limit law
 *  that cost least on its recent waits, then block (adapt/b; within 32.5
 *  times the off-line optimum on any wait sequence). */
#define WAITWISE_POLICY_ADAPTIVE 5

/** A waiting policy. Make it with the functions below; a kind not listed
 *  above, or a two-phase alpha that is negative, NaN or infinite, makes
 *  the *_new_with_policy call that receives it fail with WAITWISE_EINVAL. */
typedef struct waitwise_policy {
    uint32_t kind; /**< One of WAITWISE_POLICY_*. */
    double alpha;  /**< Poll limit in units of B (WAITWISE_POLICY_TWO_PHASE). */
} waitwise_policy_t;

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(waitwise_policy_t) == 16, "waitwise_policy_t is 16 bytes");
#endif

waitwise_policy_t waitwise_policy_default(void);
waitwise_policy_t waitwise_policy_two_phase(double alpha);
waitwise_policy_t waitwise_policy_spin(void);
waitwise_policy_t waitwise_policy_block(void);
waitwise_policy_t waitwise_policy_randomized(void);
waitwise_policy_t waitwise_policy_adaptive(void);

/* ---- Event: auto-reset; a notify releases one waiter, or is kept ---- */

typedef struct waitwise_event waitwise_event_t;

int waitwise_event_new(waitwise_event_t **out);
int waitwise_event_new_with_policy(waitwise_event_t **out, waitwise_policy_t policy);
/** Waits until notified; consumes the notify. */
int waitwise_event_wait(waitwise_event_t *event);
/** 0 if notified, WAITWISE_ETIMEDOUT if timeout_ns passed first. */
int waitwise_event_wait_timeout_ns(waitwise_event_t *event, uint64_t timeout_ns);
/** Releases one waiter, or signals the event if none waits. */
int waitwise_event_notify(waitwise_event_t *event);
/** Releases every thread waiting now (or signals the event). */
int waitwise_event_notify_all(waitwise_event_t *event);
int waitwise_event_destroy(waitwise_event_t *event);

/* ---- Barrier: reusable, for n threads ---- */

typedef struct waitwise_barrier waitwise_barrier_t;

/** WAITWISE_EINVAL if n == 0. */
int waitwise_barrier_new(waitwise_barrier_t **out, uint32_t n);
int waitwise_barrier_new_with_policy(waitwise_barrier_t **out, uint32_t n,
                                     waitwise_policy_t policy);
/** Waits for all n threads: WAITWISE_BARRIER_SERIAL_THREAD to exactly one
 *  thread per episode, 0 to the others, a WAITWISE_E* code on error.
 *  At most n threads may be inside it at once: unlike pthread_barrier_wait,
 *  more threads taking turns is a caller error (some may leave early). */
int waitwise_barrier_wait(waitwise_barrier_t *barrier);
int waitwise_barrier_destroy(waitwise_barrier_t *barrier);

/* ---- Mutex: error-checking (it knows its holder), not recursive ---- */

typedef struct waitwise_mutex waitwise_mutex_t;

int waitwise_mutex_new(waitwise_mutex_t **out);
int waitwise_mutex_new_with_policy(waitwise_mutex_t **out, waitwise_policy_t policy);
/** WAITWISE_EDEADLK if the calling thread holds it already. */
int waitwise_mutex_lock(waitwise_mutex_t *mutex);
/** WAITWISE_EBUSY if held (by anyone, the caller included). */
int waitwise_mutex_trylock(waitwise_mutex_t *mutex);
/** WAITWISE_ETIMEDOUT after timeout_ns; WAITWISE_EDEADLK as lock. */
int waitwise_mutex_timedlock_ns(waitwise_mutex_t *mutex, uint64_t timeout_ns);
/** WAITWISE_EPERM (and no change) unless the calling thread holds it. */
int waitwise_mutex_unlock(waitwise_mutex_t *mutex);
/** WAITWISE_EBUSY (and nothing freed) if the mutex is held. */
int waitwise_mutex_destroy(waitwise_mutex_t *mutex);

/* ---- Condition variable: waits may wake spuriously; loop on the condition ---- */

typedef struct waitwise_condvar waitwise_condvar_t;

int waitwise_condvar_new(waitwise_condvar_t **out);
int waitwise_condvar_new_with_policy(waitwise_condvar_t **out, waitwise_policy_t policy);
/** Unlocks mutex, waits for a signal, re-locks mutex (also on error).
 *  WAITWISE_EPERM, without waiting, unless the caller holds mutex. */
int waitwise_condvar_wait(waitwise_condvar_t *condvar, waitwise_mutex_t *mutex);
/** As waitwise_condvar_wait; WAITWISE_ETIMEDOUT after timeout_ns. */
int waitwise_condvar_timedwait_ns(waitwise_condvar_t *condvar, waitwise_mutex_t *mutex,
                                  uint64_t timeout_ns);
/** Wakes one waiter (maybe more). Holding the mutex is allowed, not needed. */
int waitwise_condvar_signal(waitwise_condvar_t *condvar);
/** Wakes every waiter. */
int waitwise_condvar_broadcast(waitwise_condvar_t *condvar);
int waitwise_condvar_destroy(waitwise_condvar_t *condvar);

/* ---- Semaphore: counting, POSIX sem_* conventions ---- */

typedef struct waitwise_semaphore waitwise_semaphore_t;

/** WAITWISE_EINVAL if value > WAITWISE_SEM_VALUE_MAX. */
int waitwise_semaphore_new(waitwise_semaphore_t **out, uint32_t value);
int waitwise_semaphore_new_with_policy(waitwise_semaphore_t **out, uint32_t value,
                                       waitwise_policy_t policy);
/** Takes a permit, waiting as long as it takes. */
int waitwise_semaphore_wait(waitwise_semaphore_t *semaphore);
/** WAITWISE_EAGAIN if no permit is available now. */
int waitwise_semaphore_trywait(waitwise_semaphore_t *semaphore);
/** WAITWISE_ETIMEDOUT if no permit came within timeout_ns. */
int waitwise_semaphore_timedwait_ns(waitwise_semaphore_t *semaphore, uint64_t timeout_ns);
/** Returns a permit; WAITWISE_EOVERFLOW at WAITWISE_SEM_VALUE_MAX. */
int waitwise_semaphore_post(waitwise_semaphore_t *semaphore);
/** Stores the available permits (a snapshot) in *value. */
int waitwise_semaphore_getvalue(waitwise_semaphore_t *semaphore, int *value);
int waitwise_semaphore_destroy(waitwise_semaphore_t *semaphore);

/* ---- Probe: what this machine offers for waiting, as JSON ---- */

/** Runs the probe (well under 5 s) and stores a NUL-terminated JSON object
 *  (the keys of `waitwise probe --json`) in *out; free it with
 *  waitwise_string_free. WAITWISE_EIO (and *out = NULL) if it failed. */
int waitwise_probe_json(char **out);
/** Frees a string returned by waitwise. NULL is a no-op. */
void waitwise_string_free(char *s);

#ifdef __cplusplus
}
#endif

#endif /* WAITWISE_H */
