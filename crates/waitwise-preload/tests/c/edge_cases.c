/* Results at the edges of the replaced functions, printed one per line so
 * that the test compares the interposer's with glibc's (the same program
 * run natively): destroying a held rwlock, barrier counts near the limit,
 * a contended timed mutex lock with bad or negative times, and timed
 * semaphore waits with a bad time or clock on an available semaphore.
 * Usage: edge_cases. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>

#include "check.h"

static void rwlock_destroy_held(void) {
    pthread_rwlock_t rw;
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    printf("rwlock_destroy read-held: %d\n", pthread_rwlock_destroy(&rw));
    CHECK_RC(pthread_rwlock_init(&rw, NULL), 0);
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    printf("rwlock_destroy write-held: %d\n", pthread_rwlock_destroy(&rw));
}

static void barrier_counts(void) {
    const unsigned counts[] = {0,       1,           2,           INT_MAX / 2, INT_MAX - 1u,
                               INT_MAX, INT_MAX + 1u, UINT_MAX / 2, UINT_MAX};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        pthread_barrier_t b;
        int rc = pthread_barrier_init(&b, NULL, counts[i]);
        printf("barrier_init count %u: %d\n", counts[i], rc);
        if (rc == 0) CHECK_RC(pthread_barrier_destroy(&b), 0);
    }
}

static const struct timespec times[] = {
    {-1, -1}, {-1, 0}, {-1, 1000000000}, {0, -1}, {1, 1000000000}, {0, 0},
};
#define TIMES (sizeof times / sizeof *times)

struct timed_lock {
    pthread_mutex_t *m;
    const struct timespec *ts;
    int clock; /* -1: pthread_mutex_timedlock */
    int rc;
};

static void *timed_lock_in_thread(void *arg) {
    struct timed_lock *t = arg;
    t->rc = t->clock < 0 ? pthread_mutex_timedlock(t->m, t->ts)
                         : pthread_mutex_clocklock(t->m, t->clock, t->ts);
    return NULL;
}

static void mutex_timed_contended(void) {
    static const char *const types[] = {"normal", "recursive", "errorcheck", "adaptive"};
    static const int type_values[] = {PTHREAD_MUTEX_NORMAL, PTHREAD_MUTEX_RECURSIVE,
                                      PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_ADAPTIVE_NP};
    for (int ty = 0; ty < 4; ty++) {
        pthread_mutexattr_t a;
        CHECK_RC(pthread_mutexattr_init(&a), 0);
        CHECK_RC(pthread_mutexattr_settype(&a, type_values[ty]), 0);
        pthread_mutex_t m;
        CHECK_RC(pthread_mutex_init(&m, &a), 0);
        for (size_t i = 0; i < TIMES; i++) {
            /* Uncontended: taken without looking at the time. */
            int free_rc = pthread_mutex_timedlock(&m, &times[i]);
            if (free_rc == 0) CHECK_RC(pthread_mutex_unlock(&m), 0);
            CHECK_RC(pthread_mutex_lock(&m), 0);
            int rc[3];
            const int clocks[3] = {-1, CLOCK_REALTIME, CLOCK_MONOTONIC};
            for (int c = 0; c < 3; c++) {
                struct timed_lock t = {&m, &times[i], clocks[c], -1};
                pthread_t th;
                CHECK_RC(pthread_create(&th, NULL, timed_lock_in_thread, &t), 0);
                CHECK_RC(pthread_join(th, NULL), 0);
                rc[c] = t.rc;
            }
            CHECK_RC(pthread_mutex_unlock(&m), 0);
            printf("mutex %s {%ld, %ld}: free timedlock %d, held timedlock %d, "
                   "clocklock realtime %d, monotonic %d\n",
                   types[ty], (long)times[i].tv_sec, times[i].tv_nsec, free_rc, rc[0], rc[1],
                   rc[2]);
        }
        CHECK_RC(pthread_mutex_destroy(&m), 0);
        CHECK_RC(pthread_mutexattr_destroy(&a), 0);
    }
}

/* One timed semaphore wait at `value`: its result, errno and the value
 * after it. */
static void sem_case(const char *what, unsigned value, int clock, const struct timespec *ts) {
    sem_t s;
    CHECK(sem_init(&s, 0, value) == 0);
    errno = 0;
    int rc = clock < 0 ? sem_timedwait(&s, ts) : sem_clockwait(&s, clock, ts);
    int err = errno;
    int after;
    CHECK(sem_getvalue(&s, &after) == 0);
    printf("%s at %u: %d errno %d, value after %d\n", what, value, rc, rc ? err : 0, after);
    CHECK(sem_destroy(&s) == 0);
}

static void sem_timed_bad_arguments(void) {
    struct timespec later;
    CHECK(clock_gettime(CLOCK_REALTIME, &later) == 0);
    later.tv_sec += 1;
    for (unsigned value = 0; value < 2; value++) {
        for (size_t i = 0; i < TIMES; i++) {
            char what[64];
            snprintf(what, sizeof what, "sem_timedwait {%ld, %ld}", (long)times[i].tv_sec,
                     times[i].tv_nsec);
            sem_case(what, value, -1, &times[i]);
            snprintf(what, sizeof what, "sem_clockwait monotonic {%ld, %ld}",
                     (long)times[i].tv_sec, times[i].tv_nsec);
            sem_case(what, value, CLOCK_MONOTONIC, &times[i]);
        }
        sem_case("sem_clockwait CLOCK_PROCESS_CPUTIME_ID", value, CLOCK_PROCESS_CPUTIME_ID,
                 &later);
        sem_case("sem_clockwait CLOCK_THREAD_CPUTIME_ID", value, CLOCK_THREAD_CPUTIME_ID, &later);
        sem_case("sem_clockwait clock 42", value, 42, &later);
    }
}

int main(void) {
    rwlock_destroy_held();
    barrier_counts();
    mutex_timed_contended();
    sem_timed_bad_arguments();
    return 0;
}
