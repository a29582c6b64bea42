/* pthread_mutex_* under the interposer: mutual exclusion, types, static
 * initializers, timed locks. Usage: mutex MODE (see main). */
#define _GNU_SOURCE
#include <pthread.h>

#include "check.h"

#define THREADS 4
#define ITERS 200000

static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long counter; /* plain, protected by counter_lock */

static void *add(void *arg) {
    pthread_mutex_t *m = arg;
    for (int i = 0; i < ITERS; i++) {
        CHECK_RC(pthread_mutex_lock(m), 0);
        counter++;
        CHECK_RC(pthread_mutex_unlock(m), 0);
    }
    return NULL;
}

/* 4 threads increment a plain counter under the mutex. */
static void exclusion(pthread_mutex_t *m) {
    pthread_t t[THREADS];
    counter = 0;
    for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_create(&t[i], NULL, add, m), 0);
    for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    CHECK(counter == (long)THREADS * ITERS);
}

static void *try_in_thread(void *arg) {
    return (void *)(long)pthread_mutex_trylock(arg);
}

static void *unlock_in_thread(void *arg) {
    return (void *)(long)pthread_mutex_unlock(arg);
}

static int in_other_thread(void *(*f)(void *), pthread_mutex_t *m) {
    pthread_t t;
    void *r;
    CHECK_RC(pthread_create(&t, NULL, f, m), 0);
    CHECK_RC(pthread_join(t, &r), 0);
    return (int)(long)r;
}

static void errorcheck(pthread_mutex_t *m) {
    CHECK_RC(pthread_mutex_unlock(m), EPERM); /* not locked */
    CHECK_RC(pthread_mutex_lock(m), 0);
    CHECK_RC(pthread_mutex_lock(m), EDEADLK);
    CHECK_RC(pthread_mutex_trylock(m), EBUSY);
    CHECK_RC(in_other_thread(unlock_in_thread, m), EPERM);
    CHECK_RC(in_other_thread(try_in_thread, m), EBUSY);
    CHECK_RC(pthread_mutex_unlock(m), 0);
    CHECK_RC(pthread_mutex_unlock(m), EPERM);
}

static void recursive(pthread_mutex_t *m) {
    CHECK_RC(pthread_mutex_unlock(m), EPERM);
    CHECK_RC(pthread_mutex_lock(m), 0);
    CHECK_RC(pthread_mutex_lock(m), 0);
    CHECK_RC(pthread_mutex_trylock(m), 0); /* depth 3 */
    CHECK_RC(in_other_thread(unlock_in_thread, m), EPERM);
    for (int depth = 3; depth > 0; depth--) {
        CHECK_RC(in_other_thread(try_in_thread, m), EBUSY);
        CHECK_RC(pthread_mutex_unlock(m), 0);
    }
    CHECK_RC(pthread_mutex_unlock(m), EPERM);
    /* Free now: another thread takes it (and leaves it locked, its own). */
    CHECK_RC(in_other_thread(try_in_thread, m), 0);
}

static void typed(int type, void (*check)(pthread_mutex_t *)) {
    pthread_mutexattr_t a;
    pthread_mutex_t m;
    CHECK_RC(pthread_mutexattr_init(&a), 0);
    CHECK_RC(pthread_mutexattr_settype(&a, type), 0);
    CHECK_RC(pthread_mutex_init(&m, &a), 0);
    CHECK_RC(pthread_mutexattr_destroy(&a), 0);
    check(&m);
}

static pthread_mutex_t held;

static void *hold_for(void *arg) {
    CHECK_RC(pthread_mutex_lock(&held), 0);
    sleep_ms((long)arg);
    CHECK_RC(pthread_mutex_unlock(&held), 0);
    return NULL;
}

static void timed(void) {
    CHECK_RC(pthread_mutex_init(&held, NULL), 0);
    /* Free: succeeds even with a deadline in the past. */
    struct timespec past = {0, 0};
    CHECK_RC(pthread_mutex_timedlock(&held, &past), 0);
    /* Held by us (normal mutex): a timed lock times out. */
    struct timespec bad = deadline_ms(CLOCK_REALTIME, 10);
    bad.tv_nsec = 1000000000L;
    CHECK_RC(pthread_mutex_timedlock(&held, &bad), EINVAL);
    bad.tv_nsec = -1;
    CHECK_RC(pthread_mutex_timedlock(&held, &bad), EINVAL);
    double t0 = now_s(CLOCK_MONOTONIC);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 50);
    CHECK_RC(pthread_mutex_timedlock(&held, &d), ETIMEDOUT);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 >= 0.045);
    t0 = now_s(CLOCK_MONOTONIC);
    d = deadline_ms(CLOCK_MONOTONIC, 50);
    CHECK_RC(pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &d), ETIMEDOUT);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 >= 0.045);
    CHECK_RC(pthread_mutex_clocklock(&held, CLOCK_PROCESS_CPUTIME_ID, &d), EINVAL);
    CHECK_RC(pthread_mutex_trylock(&held), EBUSY);
    CHECK_RC(pthread_mutex_destroy(&held), EBUSY);
    CHECK_RC(pthread_mutex_unlock(&held), 0);
    /* Held by another thread for 30 ms: a 5 s deadline does not pass. */
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, hold_for, (void *)30L), 0);
    sleep_ms(5);
    d = deadline_ms(CLOCK_REALTIME, 5000);
    t0 = now_s(CLOCK_MONOTONIC);
    CHECK_RC(pthread_mutex_timedlock(&held, &d), 0);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 < 4.0);
    CHECK_RC(pthread_mutex_unlock(&held), 0);
    CHECK_RC(pthread_join(t, NULL), 0);
    d = deadline_ms(CLOCK_MONOTONIC, 5000);
    CHECK_RC(pthread_mutex_clocklock(&held, CLOCK_MONOTONIC, &d), 0);
    CHECK_RC(pthread_mutex_unlock(&held), 0);
    CHECK_RC(pthread_mutex_destroy(&held), 0);
}

static pthread_mutex_t s_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t s_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t s_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t s_adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;

static void static_init(void) {
    exclusion(&s_normal);
    exclusion(&s_adaptive);
    recursive(&s_recursive);
    errorcheck(&s_errorcheck);
    /* On the stack, zeroed: a normal mutex. */
    pthread_mutex_t z;
    memset(&z, 0, sizeof z);
    CHECK_RC(pthread_mutex_lock(&z), 0);
    CHECK_RC(pthread_mutex_trylock(&z), EBUSY);
    CHECK_RC(pthread_mutex_unlock(&z), 0);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    int all = !strcmp(mode, "all");
    if (all || !strcmp(mode, "exclusion")) {
        pthread_mutex_t m;
        CHECK_RC(pthread_mutex_init(&m, NULL), 0);
        exclusion(&m);
        CHECK_RC(pthread_mutex_destroy(&m), 0);
        exclusion(&counter_lock);
    }
    if (all || !strcmp(mode, "errorcheck")) typed(PTHREAD_MUTEX_ERRORCHECK, errorcheck);
    if (all || !strcmp(mode, "recursive")) typed(PTHREAD_MUTEX_RECURSIVE, recursive);
    if (all || !strcmp(mode, "timed")) timed();
    if (all || !strcmp(mode, "static")) static_init();
    printf("ok %s\n", mode);
    return 0;
}
