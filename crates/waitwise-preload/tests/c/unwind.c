/* Forced unwinding out of a wait. A thread (the victim) blocks in MODE's
 * wait while a second thread (the other waiter) waits on the same object;
 * then the victim is ended:
 *
 *   signal: by pthread_exit(EXIT_VALUE) from a SIGUSR1 handler;
 *   async:  by pthread_cancel with PTHREAD_CANCEL_ASYNCHRONOUS set.
 *
 * Either unwinds the victim's stack through the wait's frames. Checked:
 * the process lives on, the victim's cleanup handler ran, pthread_join
 * returns EXIT_VALUE / PTHREAD_CANCELED, and the object keeps working for
 * the other threads: the other waiter is still woken (a mutex unlock, a
 * condvar signal, a semaphore post is not lost on the dead waiter), the
 * object can still be used and destroyed (pthread_cond_destroy and
 * pthread_barrier_destroy return), and a barrier completes its episode
 * with the right number of fresh threads.
 *
 * For the condvar waits the mutex is error-checking and the victim's
 * cleanup handler unlocks it: as with glibc, the unwound waiter holds it
 * again when its cleanup handlers run.
 *
 * Usage: unwind signal|async MODE. Prints "VARIANT MODE: ok". Two modes
 * print which of two outcomes they saw, because glibc does not restore
 * these objects (an unwound waiter there is still registered) while the
 * interposer must; the test runner requires the first under LD_PRELOAD:
 *
 *   barrier-wait: "barrier: the unwound waiter's arrival was undone" (the
 *     episode needed COUNT - 1 fresh arrivals besides the other waiter,
 *     and pthread_barrier_destroy returns) or "... still counted" (glibc:
 *     COUNT - 2 fresh arrivals complete it, and pthread_barrier_destroy
 *     would wait forever for the dead thread to leave: not called);
 *   rwlock-rdlock: nothing, or "rwlock: the unwound reader still counts as
 *     holding the lock" (glibc: the lock can never be write-locked again;
 *     readers still get in). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"
#include "threads.h"

#define EXIT_VALUE ((void *)0x5eedL)
#define FAR_MS (600 * 1000L) /* the timed waits' deadline: never reached */
#define JOIN_S 10            /* hang detector for a join */
#define BARRIER_COUNT 3

enum kind { MUTEX, COND, SEM, BARRIER, SPIN, RWLOCK };
enum how { PLAIN, TIMED, CLOCK, READ, WRITE };

static const struct {
    const char *name;
    enum kind kind;
    enum how how;
} modes[] = {
    {"mutex-lock", MUTEX, PLAIN},     {"mutex-timedlock", MUTEX, TIMED},
    {"mutex-clocklock", MUTEX, CLOCK}, {"cond-wait", COND, PLAIN},
    {"cond-timedwait", COND, TIMED},  {"cond-clockwait", COND, CLOCK},
    {"sem-wait", SEM, PLAIN},         {"sem-timedwait", SEM, TIMED},
    {"sem-clockwait", SEM, CLOCK},    {"barrier-wait", BARRIER, PLAIN},
    {"spin-lock", SPIN, PLAIN},       {"rwlock-rdlock", RWLOCK, READ},
    {"rwlock-wrlock", RWLOCK, WRITE},
};

static enum kind kind;
static enum how how;
static int async_cancel;

static pthread_mutex_t m;
static pthread_cond_t c;
static sem_t s;
static pthread_barrier_t b;
static pthread_spinlock_t sp;
static pthread_rwlock_t rw;
static int go; /* the condvar's predicate, under m */

/* sem_* report errors in errno. */
static int sem_rc(int r) { return r == 0 ? 0 : errno; }

/* The mode's wait; returns 0 or an error number (the barrier: its
 * result). For a condvar the caller holds m. */
static int the_wait(void) {
    struct timespec d;
    int rc = 0;
    switch (kind) {
    case MUTEX:
        if (how == PLAIN) return pthread_mutex_lock(&m);
        if (how == TIMED) {
            d = deadline_ms(CLOCK_REALTIME, FAR_MS);
            return pthread_mutex_timedlock(&m, &d);
        }
        d = deadline_ms(CLOCK_MONOTONIC, FAR_MS);
        return pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &d);
    case COND:
        d = deadline_ms(how == CLOCK ? CLOCK_MONOTONIC : CLOCK_REALTIME, FAR_MS);
        while (!go && rc == 0) {
            if (how == PLAIN)
                rc = pthread_cond_wait(&c, &m);
            else if (how == TIMED)
                rc = pthread_cond_timedwait(&c, &m, &d);
            else
                rc = pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &d);
        }
        return rc;
    case SEM:
        if (how == PLAIN) return sem_rc(sem_wait(&s));
        if (how == TIMED) {
            d = deadline_ms(CLOCK_REALTIME, FAR_MS);
            return sem_rc(sem_timedwait(&s, &d));
        }
        d = deadline_ms(CLOCK_MONOTONIC, FAR_MS);
        return sem_rc(sem_clockwait(&s, CLOCK_MONOTONIC, &d));
    case BARRIER:
        return pthread_barrier_wait(&b);
    case SPIN:
        return pthread_spin_lock(&sp);
    case RWLOCK:
        return how == READ ? pthread_rwlock_rdlock(&rw) : pthread_rwlock_wrlock(&rw);
    }
    return -1;
}

/* Gives back what a successful wait took. */
static void release(void) {
    switch (kind) {
    case MUTEX:
    case COND:
        CHECK_RC(pthread_mutex_unlock(&m), 0);
        break;
    case SPIN:
        CHECK_RC(pthread_spin_unlock(&sp), 0);
        break;
    case RWLOCK:
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
        break;
    case SEM:
    case BARRIER:
        break;
    }
}

static struct waiter victim, other, fresh[BARRIER_COUNT + 1];

static void on_usr1(int sig) {
    (void)sig;
    pthread_exit(EXIT_VALUE);
}

static void victim_cleanup(void *arg) {
    (void)arg;
    if (kind == COND) atomic_store(&victim.unlock_rc, pthread_mutex_unlock(&m));
    atomic_store(&victim.cleaned, 1);
}

static void *victim_main(void *arg) {
    (void)arg;
    atomic_store(&victim.tid, gettid());
    if (kind == COND) CHECK_RC(pthread_mutex_lock(&m), 0);
    pthread_cleanup_push(victim_cleanup, NULL);
    if (async_cancel) CHECK_RC(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL), 0);
    atomic_store(&victim.entering, 1);
    int rc = the_wait();
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
    atomic_store(&victim.rc, rc);
    atomic_store(&victim.returned, 1);
    pthread_cleanup_pop(0);
    return NULL;
}

/* The other waiter, and the barrier's fresh threads: wait, give back. */
static void *waiter_main(void *arg) {
    struct waiter *w = arg;
    atomic_store(&w->tid, gettid());
    if (kind == COND) CHECK_RC(pthread_mutex_lock(&m), 0);
    atomic_store(&w->entering, 1);
    int rc = the_wait();
    atomic_store(&w->rc, rc);
    if (kind != BARRIER) {
        CHECK_RC(rc, 0);
        release();
    }
    atomic_store(&w->returned, 1);
    return NULL;
}

static void start(struct waiter *w, void *(*fn)(void *)) {
    memset(w, 0, sizeof *w);
    CHECK_RC(pthread_create(&w->thread, NULL, fn, w), 0);
}

/* Runs fn on a thread and joins it within JOIN_S: a destroy that hangs
 * fails with `what` instead of stalling. */
static void *destroy_thread(void *fn) {
    return (void *)(long)((int (*)(void))fn)();
}
static void within(int (*fn)(void), const char *what) {
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, destroy_thread, (void *)fn), 0);
    long rc = (long)join_within(t, JOIN_S, what);
    if (rc != 0) fail("%s returned %ld (%s)", what, rc, strerror((int)rc));
}
static int destroy_cond(void) { return pthread_cond_destroy(&c); }
static int destroy_barrier(void) { return pthread_barrier_destroy(&b); }

/* The first timed wait of a process may calibrate a clock: done here, so
 * that the victim is stopped in the wait itself. */
static void warm_up(void) {
    pthread_mutex_t wm = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wc = PTHREAD_COND_INITIALIZER;
    sem_t ws;
    CHECK_RC(pthread_mutex_lock(&wm), 0);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 5);
    int rc = pthread_cond_timedwait(&wc, &wm, &d);
    CHECK(rc == 0 || rc == ETIMEDOUT);
    CHECK_RC(pthread_mutex_unlock(&wm), 0);
    CHECK_RC(sem_rc(sem_init(&ws, 0, 0)), 0);
    d = deadline_ms(CLOCK_REALTIME, 5);
    CHECK_RC(sem_rc(sem_timedwait(&ws, &d)), ETIMEDOUT);
    CHECK_RC(sem_rc(sem_destroy(&ws)), 0);
}

static const char *mode_name;
static const char *variant;

/* Ends the victim and checks how it ended. */
static void stop_victim(void) {
    stage("ending the victim");
    if (async_cancel)
        CHECK_RC(pthread_cancel(victim.thread), 0);
    else
        CHECK_RC(pthread_kill(victim.thread, SIGUSR1), 0);
    void *ret = join_within(victim.thread, JOIN_S, "the victim did not end");
    if (atomic_load(&victim.returned))
        fail("%s %s: the victim's wait returned %d instead of unwinding", variant, mode_name,
             atomic_load(&victim.rc));
    void *want = async_cancel ? PTHREAD_CANCELED : EXIT_VALUE;
    if (ret != want) fail("%s %s: pthread_join gave %p, expected %p", variant, mode_name, ret, want);
    if (!atomic_load(&victim.cleaned))
        fail("%s %s: the victim's cleanup handler did not run", variant, mode_name);
    if (kind == COND && atomic_load(&victim.unlock_rc) != 0)
        fail("%s %s: the unwound condvar waiter did not hold the mutex in its cleanup handler "
             "(unlock returned %d)",
             variant, mode_name, atomic_load(&victim.unlock_rc));
}

/* Joins the other waiter, which the object must still release. */
static void join_other(const char *what) {
    stage(what);
    join_within(other.thread, JOIN_S, what);
    CHECK_RC(atomic_load(&other.rc), 0);
}

static void mutex_after(void) {
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    join_other("the other mutex waiter was not woken by the unlock");
    stage("mutex after the unwinding");
    CHECK_RC(pthread_mutex_lock(&m), 0);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(pthread_mutex_trylock(&m), 0);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(pthread_mutex_destroy(&m), 0);
}

static void cond_after(void) {
    stage("locking the condvar's mutex after the unwinding");
    struct timespec d = deadline_ms(CLOCK_REALTIME, JOIN_S * 1000L);
    int rc = pthread_mutex_timedlock(&m, &d);
    if (rc == ETIMEDOUT) fail("%s %s: the condvar's mutex stays locked", variant, mode_name);
    CHECK_RC(rc, 0);
    go = 1;
    CHECK_RC(pthread_cond_signal(&c), 0); /* one signal: the other waiter's */
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    join_other("lost wake-up: the other condvar waiter was not woken by a signal");
    stage("condvar after the unwinding");
    CHECK_RC(pthread_cond_signal(&c), 0);
    CHECK_RC(pthread_cond_broadcast(&c), 0);
    CHECK_RC(pthread_mutex_lock(&m), 0);
    d = deadline_ms(how == CLOCK ? CLOCK_MONOTONIC : CLOCK_REALTIME, 1); /* the condvar's clock */
    rc = pthread_cond_timedwait(&c, &m, &d);
    CHECK(rc == 0 || rc == ETIMEDOUT);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    within(destroy_cond, "pthread_cond_destroy after an unwound waiter");
    CHECK_RC(pthread_mutex_destroy(&m), 0);
}

static void sem_after(void) {
    int v;
    CHECK_RC(sem_rc(sem_post(&s)), 0); /* one post: the other waiter's */
    join_other("lost post: the other semaphore waiter was not woken by sem_post");
    stage("semaphore after the unwinding");
    CHECK_RC(sem_rc(sem_getvalue(&s, &v)), 0);
    CHECK(v == 0);
    CHECK_RC(sem_rc(sem_post(&s)), 0);
    CHECK_RC(sem_rc(sem_getvalue(&s, &v)), 0);
    CHECK(v == 1);
    CHECK_RC(sem_rc(sem_wait(&s)), 0);
    CHECK_RC(sem_rc(sem_trywait(&s)), EAGAIN);
    CHECK_RC(sem_rc(sem_destroy(&s)), 0);
}

static void spin_after(void) {
    CHECK_RC(pthread_spin_unlock(&sp), 0);
    join_other("the other spin waiter never got the lock");
    stage("spin lock after the unwinding");
    CHECK_RC(pthread_spin_lock(&sp), 0);
    CHECK_RC(pthread_spin_unlock(&sp), 0);
    CHECK_RC(pthread_spin_trylock(&sp), 0);
    CHECK_RC(pthread_spin_unlock(&sp), 0);
    CHECK_RC(pthread_spin_destroy(&sp), 0);
}

static void rwlock_after(void) {
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    join_other("the other rwlock waiter was not woken by the unlock");
    stage("rwlock after the unwinding");
    /* Nobody holds it now, unless the unwound reader still counts. */
    int rc = pthread_rwlock_trywrlock(&rw);
    if (rc == EBUSY && how == READ) {
        /* glibc: a reader registers before it blocks and an unwound one
         * is never taken off, so the lock stays read-locked for good. */
        CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
        CHECK_RC(pthread_rwlock_unlock(&rw), 0);
        printf("rwlock: the unwound reader still counts as holding the lock\n");
        return;
    }
    CHECK_RC(rc, 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    struct timespec d = deadline_ms(CLOCK_REALTIME, JOIN_S * 1000L);
    rc = pthread_rwlock_timedwrlock(&rw, &d);
    if (rc == ETIMEDOUT)
        fail("%s %s: the rwlock cannot be write-locked after the unwinding", variant, mode_name);
    CHECK_RC(rc, 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_tryrdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), 0);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);
}

/* Joins the threads of one completed episode; exactly one is the serial
 * thread. */
static void join_episode(struct waiter **ws, int n, const char *what) {
    int serial = 0;
    for (int i = 0; i < n; i++) {
        join_within(ws[i]->thread, JOIN_S, what);
        int rc = atomic_load(&ws[i]->rc);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
            serial++;
        else
            CHECK_RC(rc, 0);
    }
    if (serial != 1) fail("%s: %d serial threads in one episode", what, serial);
}

static void barrier_after(void) {
    /* The victim and the other waiter arrived; the victim is gone. Fresh
     * threads arrive one at a time until the other waiter is released. */
    stage("completing the barrier's episode after the unwinding");
    int n = 0, k = 0;
    struct waiter *episode[BARRIER_COUNT + 1];
    episode[n++] = &other;
    for (;;) {
        struct waiter *f = &fresh[k++];
        start(f, waiter_main);
        episode[n++] = f;
        /* Released (the episode is complete), or asleep (it is not)? */
        while (!atomic_load(&f->entering)) sleep_ms(1);
        int released = 0;
        for (int i = 0; i < 3000; i++) {
            if (atomic_load(&other.returned) || atomic_load(&f->returned)) {
                released = 1;
                break;
            }
            if (stays_asleep(f)) break;
            sleep_ms(2);
        }
        if (released) break;
        if (n >= BARRIER_COUNT)
            fail("%s %s: %d live arrivals at a barrier of %d did not complete its episode",
                 variant, mode_name, n, BARRIER_COUNT);
    }
    join_episode(episode, n, "the barrier's episode after the unwinding did not complete");
    int undone = n == BARRIER_COUNT;
    if (!undone && n != BARRIER_COUNT - 1) {
        fail("%s %s: the episode completed with %d live arrivals (count %d)", variant, mode_name, n,
             BARRIER_COUNT);
    }
    stage("another barrier episode after the unwinding");
    for (int i = 0; i < BARRIER_COUNT; i++) {
        start(&fresh[i], waiter_main);
        episode[i] = &fresh[i];
    }
    join_episode(episode, BARRIER_COUNT, "the next barrier episode did not complete");
    if (undone) {
        within(destroy_barrier, "pthread_barrier_destroy after an unwound waiter");
        printf("barrier: the unwound waiter's arrival was undone\n");
    } else {
        /* glibc: the dead thread never leaves, and pthread_barrier_destroy
         * waits for every arrival to leave. */
        printf("barrier: the unwound waiter's arrival still counted\n");
    }
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "signal") != 0 && strcmp(argv[1], "async") != 0)) {
        fprintf(stderr, "usage: unwind signal|async MODE\n");
        return 2;
    }
    variant = argv[1];
    async_cancel = strcmp(variant, "async") == 0;
    mode_name = argv[2];
    size_t i;
    for (i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(modes[i].name, mode_name) == 0) break;
    if (i == sizeof modes / sizeof modes[0]) {
        fprintf(stderr, "unwind: unknown mode %s\n", mode_name);
        return 2;
    }
    kind = modes[i].kind;
    how = modes[i].how;
    watchdog_start("unwind", 60);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    stage("warm-up");
    warm_up();

    /* The object, held (or empty) so that both waiters block. */
    pthread_mutexattr_t ma;
    CHECK_RC(pthread_mutexattr_init(&ma), 0);
    if (kind == COND) CHECK_RC(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
    CHECK_RC(pthread_mutex_init(&m, &ma), 0);
    CHECK_RC(pthread_mutexattr_destroy(&ma), 0);
    if (kind == COND) {
        pthread_condattr_t ca;
        CHECK_RC(pthread_condattr_init(&ca), 0);
        if (how == CLOCK) CHECK_RC(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
        CHECK_RC(pthread_cond_init(&c, &ca), 0);
        CHECK_RC(pthread_condattr_destroy(&ca), 0);
    }
    if (kind == MUTEX) CHECK_RC(pthread_mutex_lock(&m), 0);
    if (kind == SEM) CHECK_RC(sem_rc(sem_init(&s, 0, 0)), 0);
    if (kind == BARRIER) CHECK_RC(pthread_barrier_init(&b, NULL, BARRIER_COUNT), 0);
    if (kind == SPIN) {
        CHECK_RC(pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE), 0);
        CHECK_RC(pthread_spin_lock(&sp), 0);
    }
    if (kind == RWLOCK) {
        CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
        CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    }

    stage("waiting for the victim to block");
    start(&victim, victim_main);
    wait_asleep(&victim, kind == SPIN, 100);
    stage("waiting for the other waiter to block");
    start(&other, waiter_main);
    wait_asleep(&other, kind == SPIN, 100);
    if (atomic_load(&victim.returned) || atomic_load(&other.returned))
        fail("%s: a wait returned before the object was released", mode_name);

    stop_victim();
    switch (kind) {
    case MUTEX:
        mutex_after();
        break;
    case COND:
        cond_after();
        break;
    case SEM:
        sem_after();
        break;
    case BARRIER:
        barrier_after();
        break;
    case SPIN:
        spin_after();
        break;
    case RWLOCK:
        rwlock_after();
        break;
    }
    printf("%s %s: ok\n", variant, mode_name);
    return 0;
}
