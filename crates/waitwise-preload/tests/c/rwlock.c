/* pthread_rwlock_* under the interposer. Usage: rwlock MODE, MODE one of
 *
 *   readers      4 threads hold read locks at once; reader churn
 *   exclusion    4 writers increment a plain counter
 *   mixed        writers and readers (every lock variant), both kinds
 *   try          tryrdlock / trywrlock: EBUSY
 *   timed        timed and clock variants time out and succeed, both
 *                clocks; a bad clock or abstime is EINVAL
 *   edeadlk      wrlock / rdlock after wrlock by the same thread
 *   eperm        unlock of a lock not held is EPERM (glibc: undefined);
 *                interposer only
 *   recursive    reader-preferring kinds: a second read lock while a
 *                writer waits does not deadlock
 *   writer-preferring  PREFER_WRITER_NONRECURSIVE_NP: a new reader waits
 *                while a writer waits; a writer that times out lets the
 *                readers it kept out in
 *   static       PTHREAD_RWLOCK_INITIALIZER and
 *                PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
 *   pshared      a process-shared lock (glibc's) across fork
 *   binding      every pthread_rwlock_* reference, and the __pthread_rwlock_*
 *                compatibility names, resolve to libwaitwise_preload.so
 *   overflow     EAGAIN at the interposer's reader limit (white-box: sets
 *                the reader count in the lock's first word)
 *   fork-tid     a forked child's write lock records its own thread id in
 *                __cur_writer
 *   unwound-writer-signal, unwound-writer-async
 *                a writer waiting on a writer-preferring lock is ended (its
 *                SIGUSR1 handler calls pthread_exit / it is cancelled
 *                asynchronously): readers get in again and the lock is
 *                destroyable (interposer only: glibc keeps counting the
 *                dead writer)
 *
 * Prints "ok" (binding: "bound"). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define THREADS 4

/* ---- helpers ---- */

static void init_kind(pthread_rwlock_t *rw, int kind) {
    pthread_rwlockattr_t a;
    CHECK_RC(pthread_rwlockattr_init(&a), 0);
    CHECK_RC(pthread_rwlockattr_setkind_np(&a, kind), 0);
    CHECK_RC(pthread_rwlock_init(rw, &a), 0);
    CHECK_RC(pthread_rwlockattr_destroy(&a), 0);
}

/* A thread that makes one lock call on `rw` and reports. */
struct call {
    pthread_t thread;
    pthread_rwlock_t *rw;
    int write;        /* wrlock (else rdlock) */
    long timeout_ms;  /* > 0: the timed variant with this deadline */
    long hold_ms;     /* after success, hold this long (-1: until `release`) */
    atomic_int release;
    atomic_int entering;
    atomic_int returned;
    atomic_int rc;
    int order; /* when it took the lock, on `taken` */
};

static atomic_int taken; /* lock acquisitions by calls so far */

static void *call_main(void *arg) {
    struct call *c = arg;
    int rc;
    atomic_store(&c->entering, 1);
    if (c->timeout_ms > 0) {
        struct timespec d = deadline_ms(CLOCK_REALTIME, c->timeout_ms);
        rc = c->write ? pthread_rwlock_timedwrlock(c->rw, &d) : pthread_rwlock_timedrdlock(c->rw, &d);
    } else {
        rc = c->write ? pthread_rwlock_wrlock(c->rw) : pthread_rwlock_rdlock(c->rw);
    }
    if (rc == 0) c->order = atomic_fetch_add(&taken, 1);
    atomic_store(&c->rc, rc);
    atomic_store(&c->returned, 1);
    if (rc == 0) {
        if (c->hold_ms > 0) sleep_ms(c->hold_ms);
        while (c->hold_ms < 0 && !atomic_load(&c->release)) sleep_ms(1);
        CHECK_RC(pthread_rwlock_unlock(c->rw), 0);
    }
    return NULL;
}

/* Starts `c` and waits until its call returned, or it has been inside it
 * for 50 ms (long enough to be waiting, past any polling phase). */
static void start_call(struct call *c, pthread_rwlock_t *rw, int write, long timeout_ms,
                       long hold_ms) {
    c->rw = rw;
    c->write = write;
    c->timeout_ms = timeout_ms;
    c->hold_ms = hold_ms;
    atomic_store(&c->release, 0);
    atomic_store(&c->entering, 0);
    atomic_store(&c->returned, 0);
    atomic_store(&c->rc, -1);
    CHECK_RC(pthread_create(&c->thread, NULL, call_main, c), 0);
    while (!atomic_load(&c->entering)) sleep_ms(1);
    for (int i = 0; i < 50 && !atomic_load(&c->returned); i++) sleep_ms(1);
}

/* Waits (at most 5 s) for `c` to return (letting go of a lock it holds
 * until released); its result. */
static int finish_call(struct call *c) {
    atomic_store(&c->release, 1);
    for (int i = 0; i < 5000 && !atomic_load(&c->returned); i++) sleep_ms(1);
    CHECK(atomic_load(&c->returned));
    CHECK_RC(pthread_join(c->thread, NULL), 0);
    return atomic_load(&c->rc);
}

/* ---- readers ---- */

static pthread_rwlock_t rw;
static pthread_barrier_t start_line; /* the stress threads start together */

static void start_together(int threads) { CHECK_RC(pthread_barrier_init(&start_line, NULL, threads), 0); }

static void line_up(void) {
    int rc = pthread_barrier_wait(&start_line);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
}
static atomic_int inside;
static long churn_iters = 100000;

static void *reader_together(void *arg) {
    (void)arg;
    line_up();
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    atomic_fetch_add(&inside, 1);
    /* Every reader gets in while the others hold their read locks. */
    double end = now_s(CLOCK_MONOTONIC) + 5;
    while (atomic_load(&inside) < THREADS) {
        CHECK(now_s(CLOCK_MONOTONIC) < end);
        sleep_ms(1);
    }
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    for (long i = 0; i < churn_iters; i++) {
        CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

static void readers(void) {
    for (int kind = 0; kind <= PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP; kind++) {
        init_kind(&rw, kind);
        start_together(THREADS);
        atomic_store(&inside, 0);
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_create(&t[i], NULL, reader_together, NULL), 0);
        for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
        CHECK_RC(pthread_barrier_destroy(&start_line), 0);
        /* Nothing is left held. */
        CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
        CHECK_RC(pthread_rwlock_destroy(&rw), 0);
    }
}

/* ---- exclusion ---- */

#define EXCLUSION_ITERS 100000
static long counter; /* plain, protected by rw */

static void *writer_add(void *arg) {
    (void)arg;
    line_up();
    for (int i = 0; i < EXCLUSION_ITERS; i++) {
        CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
        counter++;
        if (i % 64 == 0) sched_yield(); /* others wait meanwhile */
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

static void exclusion(void) {
    for (int kind = 0; kind <= PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP; kind += 2) {
        init_kind(&rw, kind);
        start_together(THREADS);
        counter = 0;
        pthread_t t[THREADS];
        for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_create(&t[i], NULL, writer_add, NULL), 0);
        for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
        CHECK_RC(pthread_barrier_destroy(&start_line), 0);
        CHECK(counter == (long)THREADS * EXCLUSION_ITERS);
        CHECK_RC(pthread_rwlock_destroy(&rw), 0);
    }
}

/* ---- mixed ---- */

#define MIXED_WRITER_ITERS 100000
#define MIXED_READER_ITERS 200000
static long pair_a, pair_b;       /* written together under the write lock */
static atomic_int writers_inside; /* checked by everyone */
static atomic_int readers_inside;

static void write_locked(int i) {
    if (i % 5 == 1) {
        int rc;
        while ((rc = pthread_rwlock_trywrlock(&rw)) == EBUSY) sched_yield();
        CHECK_RC(rc, 0);
    } else if (i % 5 == 2) {
        struct timespec d = deadline_ms(CLOCK_MONOTONIC, 60000);
        CHECK_RC(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &d), 0);
    } else if (i % 5 == 3) {
        struct timespec d = deadline_ms(CLOCK_REALTIME, 60000);
        CHECK_RC(pthread_rwlock_timedwrlock(&rw, &d), 0);
    } else {
        CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    }
}

static void read_locked(int i) {
    if (i % 5 == 1) {
        int rc;
        while ((rc = pthread_rwlock_tryrdlock(&rw)) == EBUSY) sched_yield();
        CHECK_RC(rc, 0);
    } else if (i % 5 == 2) {
        struct timespec d = deadline_ms(CLOCK_REALTIME, 60000);
        CHECK_RC(pthread_rwlock_clockrdlock(&rw, CLOCK_REALTIME, &d), 0);
    } else if (i % 5 == 3) {
        struct timespec d = deadline_ms(CLOCK_REALTIME, 60000);
        CHECK_RC(pthread_rwlock_timedrdlock(&rw, &d), 0);
    } else {
        CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    }
}

static void *mixed_writer(void *arg) {
    (void)arg;
    line_up();
    for (int i = 0; i < MIXED_WRITER_ITERS; i++) {
        write_locked(i);
        CHECK(atomic_fetch_add(&writers_inside, 1) == 0);
        CHECK(atomic_load(&readers_inside) == 0);
        pair_a++;
        if (i % 32 == 0) sched_yield(); /* others wait meanwhile */
        pair_b++;
        CHECK(atomic_fetch_sub(&writers_inside, 1) == 1);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

static void *mixed_reader(void *arg) {
    (void)arg;
    line_up();
    for (int i = 0; i < MIXED_READER_ITERS; i++) {
        read_locked(i);
        atomic_fetch_add(&readers_inside, 1);
        CHECK(atomic_load(&writers_inside) == 0);
        CHECK(pair_a == pair_b);
        if (i % 32 == 0) sched_yield(); /* readers overlap, writers wait */
        CHECK(pair_a == pair_b);
        atomic_fetch_sub(&readers_inside, 1);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    }
    return NULL;
}

static void mixed(void) {
    for (int kind = 0; kind <= PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP; kind += 2) {
        init_kind(&rw, kind);
        start_together(4);
        pair_a = pair_b = 0;
        pthread_t w[2], r[2];
        for (int i = 0; i < 2; i++) CHECK_RC(pthread_create(&w[i], NULL, mixed_writer, NULL), 0);
        for (int i = 0; i < 2; i++) CHECK_RC(pthread_create(&r[i], NULL, mixed_reader, NULL), 0);
        for (int i = 0; i < 2; i++) CHECK_RC(pthread_join(w[i], NULL), 0);
        for (int i = 0; i < 2; i++) CHECK_RC(pthread_join(r[i], NULL), 0);
        CHECK_RC(pthread_barrier_destroy(&start_line), 0);
        CHECK(pair_a == 2L * MIXED_WRITER_ITERS && pair_b == pair_a);
        CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
        CHECK_RC(pthread_rwlock_destroy(&rw), 0);
    }
}

/* ---- try ---- */

static void *tryrd_in_thread(void *arg) { return (void *)(long)pthread_rwlock_tryrdlock(arg); }
static void *trywr_in_thread(void *arg) { return (void *)(long)pthread_rwlock_trywrlock(arg); }
static void *unlock_in_thread(void *arg) { return (void *)(long)pthread_rwlock_unlock(arg); }

static int in_other_thread(void *(*f)(void *), pthread_rwlock_t *l) {
    pthread_t t;
    void *r;
    CHECK_RC(pthread_create(&t, NULL, f, l), 0);
    CHECK_RC(pthread_join(t, &r), 0);
    return (int)(long)r;
}

static void try(void) {
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(in_other_thread(tryrd_in_thread, &rw), EBUSY);
    CHECK_RC(in_other_thread(trywr_in_thread, &rw), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);

    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(in_other_thread(trywr_in_thread, &rw), EBUSY);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
    /* Another thread takes a read lock and gives it back. */
    CHECK_RC(in_other_thread(tryrd_in_thread, &rw), 0);
    CHECK_RC(in_other_thread(unlock_in_thread, &rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);

    CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- timed ---- */

#define SHORT_MS 30

static void timed_out(int write, int variant, clockid_t clock) {
    struct timespec d = deadline_ms(clock, SHORT_MS);
    double t0 = now_s(CLOCK_MONOTONIC);
    int rc;
    if (variant == 0)
        rc = write ? pthread_rwlock_timedwrlock(&rw, &d) : pthread_rwlock_timedrdlock(&rw, &d);
    else
        rc = write ? pthread_rwlock_clockwrlock(&rw, clock, &d) : pthread_rwlock_clockrdlock(&rw, clock, &d);
    double waited = now_s(CLOCK_MONOTONIC) - t0;
    CHECK_RC(rc, ETIMEDOUT);
    CHECK(waited >= (SHORT_MS - 5) / 1000.0);
    CHECK(waited < 3.0);
}

/* With another thread holding `rw` (write-locked by it when `held_write`),
 * each way of taking the lock that must wait. */
static void all_time_out(int held_write) {
    for (int write = 0; write <= 1; write++) {
        if (!held_write && !write) continue; /* a reader gets in */
        timed_out(write, 0, CLOCK_REALTIME);
        timed_out(write, 1, CLOCK_REALTIME);
        timed_out(write, 1, CLOCK_MONOTONIC);
        /* A deadline in the past: at once. */
        struct timespec past = {0, 0};
        CHECK_RC(write ? pthread_rwlock_timedwrlock(&rw, &past) : pthread_rwlock_timedrdlock(&rw, &past),
                 ETIMEDOUT);
        CHECK_RC(write ? pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &past)
                       : pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &past),
                 ETIMEDOUT);
        /* A bad abstime, when the call must wait. */
        struct timespec bad = deadline_ms(CLOCK_REALTIME, SHORT_MS);
        bad.tv_nsec = 1000000000L;
        CHECK_RC(write ? pthread_rwlock_timedwrlock(&rw, &bad) : pthread_rwlock_timedrdlock(&rw, &bad),
                 EINVAL);
        bad.tv_nsec = -1;
        CHECK_RC(write ? pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &bad)
                       : pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &bad),
                 EINVAL);
        /* An unsupported clock. */
        struct timespec d = deadline_ms(CLOCK_REALTIME, SHORT_MS);
        CHECK_RC(write ? pthread_rwlock_clockwrlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &d)
                       : pthread_rwlock_clockrdlock(&rw, CLOCK_PROCESS_CPUTIME_ID, &d),
                 EINVAL);
    }
}

/* Each timed variant succeeds when the holder lets go within its deadline. */
static void succeeds_in_time(int write, int variant, clockid_t clock) {
    struct call holder;
    start_call(&holder, &rw, !write, 0, 2 * SHORT_MS); /* the other mode, held 60 ms */
    CHECK(atomic_load(&holder.returned));
    struct timespec d = deadline_ms(clock, 5000);
    int rc;
    if (variant == 0)
        rc = write ? pthread_rwlock_timedwrlock(&rw, &d) : pthread_rwlock_timedrdlock(&rw, &d);
    else
        rc = write ? pthread_rwlock_clockwrlock(&rw, clock, &d) : pthread_rwlock_clockrdlock(&rw, clock, &d);
    CHECK_RC(rc, 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(finish_call(&holder), 0);
}

static void timed(void) {
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    /* Free: every variant succeeds at once; an unsupported clock is EINVAL. */
    struct timespec d = deadline_ms(CLOCK_REALTIME, SHORT_MS);
    CHECK_RC(pthread_rwlock_timedrdlock(&rw, &d), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_timedwrlock(&rw, &d), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    d = deadline_ms(CLOCK_MONOTONIC, SHORT_MS);
    CHECK_RC(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &d), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &d), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_clockrdlock(&rw, 12345, &d), EINVAL);
    CHECK_RC(pthread_rwlock_clockwrlock(&rw, 12345, &d), EINVAL);

    /* Held for writing by another thread: everything times out. */
    struct call holder;
    start_call(&holder, &rw, 1, 0, -1);
    CHECK(atomic_load(&holder.returned));
    all_time_out(1);
    CHECK_RC(finish_call(&holder), 0);

    /* Held for reading by another thread: the writers time out. */
    start_call(&holder, &rw, 0, 0, -1);
    CHECK(atomic_load(&holder.returned));
    all_time_out(0);
    CHECK_RC(finish_call(&holder), 0);

    for (int write = 0; write <= 1; write++) {
        succeeds_in_time(write, 0, CLOCK_REALTIME);
        succeeds_in_time(write, 1, CLOCK_REALTIME);
        succeeds_in_time(write, 1, CLOCK_MONOTONIC);
    }
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- edeadlk ---- */

static void edeadlk(void) {
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_wrlock(&rw), EDEADLK);
    CHECK_RC(pthread_rwlock_rdlock(&rw), EDEADLK);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 5000);
    CHECK_RC(pthread_rwlock_timedwrlock(&rw, &d), EDEADLK);
    CHECK_RC(pthread_rwlock_timedrdlock(&rw, &d), EDEADLK);
    d = deadline_ms(CLOCK_MONOTONIC, 5000);
    CHECK_RC(pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &d), EDEADLK);
    CHECK_RC(pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &d), EDEADLK);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    /* Held by another thread for writing: no EDEADLK for us. */
    struct call holder;
    start_call(&holder, &rw, 1, 0, -1);
    CHECK(atomic_load(&holder.returned));
    d = deadline_ms(CLOCK_REALTIME, SHORT_MS);
    CHECK_RC(pthread_rwlock_timedwrlock(&rw, &d), ETIMEDOUT);
    d = deadline_ms(CLOCK_REALTIME, SHORT_MS);
    CHECK_RC(pthread_rwlock_timedrdlock(&rw, &d), ETIMEDOUT);
    CHECK_RC(finish_call(&holder), 0);
    /* A write lock after our own read lock just waits (no EDEADLK). */
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    d = deadline_ms(CLOCK_REALTIME, SHORT_MS);
    CHECK_RC(pthread_rwlock_timedwrlock(&rw, &d), ETIMEDOUT);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- eperm (interposer only) ---- */

static void eperm(void) {
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), EPERM);
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    CHECK_RC(in_other_thread(unlock_in_thread, &rw), EPERM); /* not the writer */
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), EPERM);
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), EPERM);
    /* Not corrupted: both modes still work. */
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- recursive ---- */

static void recursive(void) {
    for (int kind = PTHREAD_RWLOCK_PREFER_READER_NP; kind <= PTHREAD_RWLOCK_PREFER_WRITER_NP; kind++) {
        init_kind(&rw, kind);
        CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
        struct call writer;
        start_call(&writer, &rw, 1, 0, 0);
        CHECK(!atomic_load(&writer.returned));
        /* The writer waits; our second read lock is granted, not queued
         * behind it (which would deadlock). */
        struct timespec d = deadline_ms(CLOCK_REALTIME, 5000);
        CHECK_RC(pthread_rwlock_timedrdlock(&rw, &d), 0);
        CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
        CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
        /* Another thread's new read lock is granted too. */
        CHECK_RC(in_other_thread(tryrd_in_thread, &rw), 0);
        CHECK_RC(in_other_thread(unlock_in_thread, &rw), 0);
        for (int i = 0; i < 3; i++) CHECK_RC(pthread_rwlock_unlock(&rw), 0);
        CHECK(!atomic_load(&writer.returned));
        CHECK_RC(pthread_rwlock_unlock(&rw), 0); /* the last: the writer goes */
        CHECK_RC(finish_call(&writer), 0);
        CHECK_RC(pthread_rwlock_destroy(&rw), 0);
    }
}

/* ---- writer-preferring ---- */

/* `l` is a writer-preferring lock, free. */
static void prefers_writers(pthread_rwlock_t *l) {
    CHECK_RC(pthread_rwlock_rdlock(l), 0);
    struct call writer;
    start_call(&writer, l, 1, 0, 0);
    CHECK(!atomic_load(&writer.returned));
    /* A new reader waits while the writer waits, in this thread too. */
    CHECK_RC(pthread_rwlock_tryrdlock(l), EBUSY);
    CHECK_RC(in_other_thread(tryrd_in_thread, l), EBUSY);
    struct timespec d = deadline_ms(CLOCK_REALTIME, SHORT_MS);
    CHECK_RC(pthread_rwlock_timedrdlock(l, &d), ETIMEDOUT);
    struct call reader;
    start_call(&reader, l, 0, 0, 0);
    CHECK(!atomic_load(&reader.returned));
    /* Our unlock lets the writer in, whose unlock lets the reader in. */
    CHECK_RC(pthread_rwlock_unlock(l), 0);
    CHECK_RC(finish_call(&writer), 0);
    CHECK_RC(finish_call(&reader), 0);
    CHECK_RC(pthread_rwlock_trywrlock(l), 0);
    CHECK_RC(pthread_rwlock_unlock(l), 0);
}

static void writer_preferring(void) {
    init_kind(&rw, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    prefers_writers(&rw);

    /* A writer that times out lets in the readers that only it kept out:
     * we hold a read lock, a writer waits (timed), a reader queues behind
     * the writer; when the writer gives up, the reader gets in. */
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    struct call writer, reader;
    start_call(&writer, &rw, 1, 300, 0);
    start_call(&reader, &rw, 0, 0, 0);
    CHECK(!atomic_load(&reader.returned));
    CHECK_RC(finish_call(&writer), ETIMEDOUT);
    CHECK_RC(finish_call(&reader), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);

    /* Two writers queue behind a writer; both get in, one after the
     * other, before a reader that came later. */
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    struct call w1, w2, r1;
    start_call(&w1, &rw, 1, 0, 20);
    start_call(&w2, &rw, 1, 0, 20);
    start_call(&r1, &rw, 0, 0, 0);
    CHECK(!atomic_load(&w1.returned) && !atomic_load(&w2.returned) && !atomic_load(&r1.returned));
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(finish_call(&w1), 0);
    CHECK_RC(finish_call(&w2), 0);
    CHECK_RC(finish_call(&r1), 0);
    CHECK(r1.order > w1.order && r1.order > w2.order);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- static ---- */

static pthread_rwlock_t static_default = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t static_writer = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

static void static_initializers(void) {
    CHECK_RC(pthread_rwlock_rdlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_rdlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&static_default), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_unlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_wrlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&static_default), EBUSY);
    CHECK_RC(pthread_rwlock_wrlock(&static_default), EDEADLK);
    CHECK_RC(pthread_rwlock_unlock(&static_default), 0);
    /* Reader-preferring: a second read lock while a writer waits. */
    CHECK_RC(pthread_rwlock_rdlock(&static_default), 0);
    struct call writer;
    start_call(&writer, &static_default, 1, 0, 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_unlock(&static_default), 0);
    CHECK_RC(pthread_rwlock_unlock(&static_default), 0);
    CHECK_RC(finish_call(&writer), 0);
    CHECK_RC(pthread_rwlock_destroy(&static_default), 0);

    prefers_writers(&static_writer);
    CHECK_RC(pthread_rwlock_destroy(&static_writer), 0);
}

/* ---- pshared ---- */

#define PSHARED_ITERS 20000

struct shared {
    pthread_rwlock_t rw;
    long counter;
    long a, b;
    atomic_int parent_done, child_holds, parent_checked;
};

static void pshared_work(struct shared *s) {
    for (int i = 0; i < PSHARED_ITERS; i++) {
        CHECK_RC(pthread_rwlock_wrlock(&s->rw), 0);
        s->counter++;
        s->a++;
        s->b++;
        CHECK_RC(pthread_rwlock_unlock(&s->rw), 0);
        CHECK_RC(pthread_rwlock_rdlock(&s->rw), 0);
        CHECK(s->a == s->b);
        CHECK_RC(pthread_rwlock_unlock(&s->rw), 0);
    }
}

static void await_flag(atomic_int *flag) {
    double end = now_s(CLOCK_MONOTONIC) + 10;
    while (!atomic_load(flag)) {
        CHECK(now_s(CLOCK_MONOTONIC) < end);
        sleep_ms(1);
    }
}

static void pshared(void) {
    struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    pthread_rwlockattr_t a;
    CHECK_RC(pthread_rwlockattr_init(&a), 0);
    CHECK_RC(pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED), 0);
    CHECK_RC(pthread_rwlock_init(&s->rw, &a), 0);
    CHECK_RC(pthread_rwlockattr_destroy(&a), 0);
    /* glibc set it up: its mark for a process-shared lock. */
    CHECK(s->rw.__data.__shared == 1);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        pshared_work(s);
        /* Hold it, once the parent is done, while the parent tries. */
        await_flag(&s->parent_done);
        CHECK_RC(pthread_rwlock_wrlock(&s->rw), 0);
        atomic_store(&s->child_holds, 1);
        await_flag(&s->parent_checked);
        CHECK_RC(pthread_rwlock_unlock(&s->rw), 0);
        _exit(0);
    }
    pshared_work(s);
    atomic_store(&s->parent_done, 1);
    await_flag(&s->child_holds);
    CHECK_RC(pthread_rwlock_trywrlock(&s->rw), EBUSY);
    CHECK_RC(pthread_rwlock_tryrdlock(&s->rw), EBUSY);
    struct timespec d = deadline_ms(CLOCK_MONOTONIC, SHORT_MS);
    CHECK_RC(pthread_rwlock_clockrdlock(&s->rw, CLOCK_MONOTONIC, &d), ETIMEDOUT);
    atomic_store(&s->parent_checked, 1);
    /* The child's unlock lets us in. */
    d = deadline_ms(CLOCK_REALTIME, 10000);
    CHECK_RC(pthread_rwlock_timedwrlock(&s->rw, &d), 0);
    CHECK_RC(pthread_rwlock_unlock(&s->rw), 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(s->counter == 2L * PSHARED_ITERS);
    CHECK(s->rw.__data.__shared == 1);
    CHECK_RC(pthread_rwlock_destroy(&s->rw), 0);
}

/* ---- binding ---- */

struct fn {
    const char *name;
    void *addr;
};

#define FN(f) {#f, (void *)&f}

static int bound_here(const char *name, void *addr) {
    Dl_info info;
    if (!addr || !dladdr(addr, &info) || !info.dli_fname || !strstr(info.dli_fname, "waitwise_preload")) {
        fprintf(stderr, "%s resolves to %s\n", name, addr && info.dli_fname ? info.dli_fname : "?");
        return 0;
    }
    return 1;
}

static void binding(void) {
    struct fn fns[] = {
        FN(pthread_rwlock_init),        FN(pthread_rwlock_destroy),
        FN(pthread_rwlock_rdlock),      FN(pthread_rwlock_wrlock),
        FN(pthread_rwlock_tryrdlock),   FN(pthread_rwlock_trywrlock),
        FN(pthread_rwlock_timedrdlock), FN(pthread_rwlock_timedwrlock),
        FN(pthread_rwlock_clockrdlock), FN(pthread_rwlock_clockwrlock),
        FN(pthread_rwlock_unlock),
    };
    /* glibc's GLIBC_2.2.5 compatibility names (old binaries reference them). */
    static const char *compat[] = {
        "__pthread_rwlock_init",      "__pthread_rwlock_destroy",   "__pthread_rwlock_rdlock",
        "__pthread_rwlock_wrlock",    "__pthread_rwlock_tryrdlock", "__pthread_rwlock_trywrlock",
        "__pthread_rwlock_unlock",
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) bad |= !bound_here(fns[i].name, fns[i].addr);
    for (size_t i = 0; i < sizeof compat / sizeof compat[0]; i++)
        bad |= !bound_here(compat[i], dlsym(RTLD_DEFAULT, compat[i]));
    /* The compatibility names work. */
    int (*init)(pthread_rwlock_t *, const pthread_rwlockattr_t *) = dlsym(RTLD_DEFAULT, "__pthread_rwlock_init");
    int (*wr)(pthread_rwlock_t *) = dlsym(RTLD_DEFAULT, "__pthread_rwlock_wrlock");
    int (*unlock)(pthread_rwlock_t *) = dlsym(RTLD_DEFAULT, "__pthread_rwlock_unlock");
    if (init && wr && unlock) {
        CHECK_RC(init(&rw, NULL), 0);
        CHECK_RC(wr(&rw), 0);
        CHECK_RC(pthread_rwlock_tryrdlock(&rw), EBUSY);
        CHECK_RC(unlock(&rw), 0);
        CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    }
    printf("%s\n", bad ? "unbound" : "bound");
    exit(bad);
}

/* ---- overflow (interposer only) ---- */

/* The interposer's reader limit: R is bits 0-27 of the lock's first
 * 64-bit word (src/rwlock.rs). */
#define MAX_READERS ((1u << 28) - 1)

static void overflow(void) {
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    uint32_t r = MAX_READERS - 1;
    memcpy(&rw, &r, sizeof r); /* MAX_READERS - 1 read locks "held" */
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_rdlock(&rw), EAGAIN);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), EAGAIN);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 5000);
    CHECK_RC(pthread_rwlock_timedrdlock(&rw, &d), EAGAIN);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    memcpy(&r, &rw, sizeof r);
    CHECK(r == MAX_READERS - 1); /* nothing spilled into the other bits */
    r = 0;
    memcpy(&rw, &r, sizeof r);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- fork-tid ---- */

static void fork_tid(void) {
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0); /* the parent's id, cached */
    CHECK(rw.__data.__cur_writer == gettid());
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
        CHECK(rw.__data.__cur_writer == gettid());
        CHECK_RC(pthread_rwlock_rdlock(&rw), EDEADLK);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* ---- unwound-writer (interposer only) ---- */

#define EXIT_VALUE ((void *)0x5eedL)

static void on_usr1(int sig) {
    (void)sig;
    pthread_exit(EXIT_VALUE);
}

static atomic_int victim_entering, victim_returned;

static void *victim_main(void *arg) {
    int async = (int)(long)arg;
    if (async) CHECK_RC(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL), 0);
    atomic_store(&victim_entering, 1);
    int rc = pthread_rwlock_wrlock(&rw);
    atomic_store(&victim_returned, 1);
    fprintf(stderr, "the victim's wrlock returned %d\n", rc);
    exit(1);
}

static void unwound_writer(int async) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    init_kind(&rw, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    pthread_t victim;
    CHECK_RC(pthread_create(&victim, NULL, victim_main, (void *)(long)async), 0);
    while (!atomic_load(&victim_entering)) sleep_ms(1);
    sleep_ms(100); /* past any polling phase: asleep in the kernel */
    /* The waiting writer keeps new readers out. */
    CHECK_RC(in_other_thread(tryrd_in_thread, &rw), EBUSY);
    if (async)
        CHECK_RC(pthread_cancel(victim), 0);
    else
        CHECK_RC(pthread_kill(victim, SIGUSR1), 0);
    void *ret;
    CHECK_RC(pthread_join(victim, &ret), 0);
    CHECK(ret == (async ? PTHREAD_CANCELED : EXIT_VALUE));
    CHECK(!atomic_load(&victim_returned));
    /* The dead writer waits no more: readers get in. */
    CHECK_RC(in_other_thread(tryrd_in_thread, &rw), 0);
    CHECK_RC(in_other_thread(unlock_in_thread, &rw), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    /* Not held, nobody waiting: destroyable. */
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: rwlock MODE\n");
        return 2;
    }
    alarm(60); /* a hang fails (SIGALRM) instead of stalling the tests */
    const char *mode = argv[1];
    if (strcmp(mode, "readers") == 0)
        readers();
    else if (strcmp(mode, "exclusion") == 0)
        exclusion();
    else if (strcmp(mode, "mixed") == 0)
        mixed();
    else if (strcmp(mode, "try") == 0)
        try();
    else if (strcmp(mode, "timed") == 0)
        timed();
    else if (strcmp(mode, "edeadlk") == 0)
        edeadlk();
    else if (strcmp(mode, "eperm") == 0)
        eperm();
    else if (strcmp(mode, "recursive") == 0)
        recursive();
    else if (strcmp(mode, "writer-preferring") == 0)
        writer_preferring();
    else if (strcmp(mode, "static") == 0)
        static_initializers();
    else if (strcmp(mode, "pshared") == 0)
        pshared();
    else if (strcmp(mode, "binding") == 0)
        binding();
    else if (strcmp(mode, "overflow") == 0)
        overflow();
    else if (strcmp(mode, "fork-tid") == 0)
        fork_tid();
    else if (strcmp(mode, "unwound-writer-signal") == 0)
        unwound_writer(0);
    else if (strcmp(mode, "unwound-writer-async") == 0)
        unwound_writer(1);
    else {
        fprintf(stderr, "rwlock: unknown mode %s\n", mode);
        return 2;
    }
    printf("ok\n");
    return 0;
}
