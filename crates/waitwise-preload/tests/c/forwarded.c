/* The functions forwarded.txt leaves to glibc, used with objects the
 * interposer initializes: attributes take effect, the robust and
 * priority-ceiling functions refuse native mutexes as glibc refuses
 * mutexes of other kinds (EINVAL), and named semaphores (sem_open) work
 * through every sem_* function. Prints "forwarded: ok". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include "check.h"

static int sem_rc(int r) { return r == 0 ? 0 : errno; }

int main(void) {
    /* Mutex attributes: the type set through glibc is the type used. */
    pthread_mutexattr_t ma;
    int v;
    CHECK_RC(pthread_mutexattr_init(&ma), 0);
    CHECK_RC(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
    CHECK_RC(pthread_mutexattr_gettype(&ma, &v), 0);
    CHECK(v == PTHREAD_MUTEX_ERRORCHECK);
    CHECK_RC(pthread_mutexattr_getpshared(&ma, &v), 0);
    CHECK(v == PTHREAD_PROCESS_PRIVATE);
    CHECK_RC(pthread_mutexattr_getrobust(&ma, &v), 0);
    CHECK(v == PTHREAD_MUTEX_STALLED);
    CHECK_RC(pthread_mutexattr_getprotocol(&ma, &v), 0);
    CHECK(v == PTHREAD_PRIO_NONE);
    pthread_mutex_t m;
    CHECK_RC(pthread_mutex_init(&m, &ma), 0);
    CHECK_RC(pthread_mutexattr_destroy(&ma), 0);
    CHECK_RC(pthread_mutex_lock(&m), 0);
    CHECK_RC(pthread_mutex_lock(&m), EDEADLK);

    /* Robust and priority-ceiling functions on a native mutex. */
    CHECK_RC(pthread_mutex_consistent(&m), EINVAL);
    CHECK_RC(pthread_mutex_getprioceiling(&m, &v), EINVAL);
    int old;
    CHECK_RC(pthread_mutex_setprioceiling(&m, 1, &old), EINVAL);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(pthread_mutex_unlock(&m), EPERM);
    CHECK_RC(pthread_mutex_destroy(&m), 0);
    pthread_mutex_t plain = PTHREAD_MUTEX_INITIALIZER;
    CHECK_RC(pthread_mutex_consistent(&plain), EINVAL);
    CHECK_RC(pthread_mutex_getprioceiling(&plain, &v), EINVAL);

    /* Condvar attributes: the clock set through glibc is the clock used. */
    pthread_condattr_t ca;
    CHECK_RC(pthread_condattr_init(&ca), 0);
    CHECK_RC(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
    clockid_t clock;
    CHECK_RC(pthread_condattr_getclock(&ca, &clock), 0);
    CHECK(clock == CLOCK_MONOTONIC);
    pthread_cond_t c;
    CHECK_RC(pthread_cond_init(&c, &ca), 0);
    CHECK_RC(pthread_condattr_destroy(&ca), 0);
    pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
    CHECK_RC(pthread_mutex_lock(&cm), 0);
    struct timespec d = deadline_ms(CLOCK_MONOTONIC, 20);
    int rc;
    do rc = pthread_cond_timedwait(&c, &cm, &d);
    while (rc == 0);
    CHECK_RC(rc, ETIMEDOUT);
    /* Not before its deadline on CLOCK_MONOTONIC (read as CLOCK_REALTIME,
     * the deadline would be decades past and the wait end at once). */
    CHECK(now_s(CLOCK_MONOTONIC) >= (double)d.tv_sec + (double)d.tv_nsec / 1e9);
    CHECK_RC(pthread_mutex_unlock(&cm), 0);
    CHECK_RC(pthread_cond_destroy(&c), 0);

    /* Barrier and rwlock attributes. */
    pthread_barrierattr_t ba;
    CHECK_RC(pthread_barrierattr_init(&ba), 0);
    CHECK_RC(pthread_barrierattr_getpshared(&ba, &v), 0);
    CHECK(v == PTHREAD_PROCESS_PRIVATE);
    pthread_barrier_t b;
    CHECK_RC(pthread_barrier_init(&b, &ba, 1), 0);
    CHECK_RC(pthread_barrierattr_destroy(&ba), 0);
    CHECK_RC(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_RC(pthread_barrier_destroy(&b), 0);
    pthread_rwlockattr_t ra;
    CHECK_RC(pthread_rwlockattr_init(&ra), 0);
    CHECK_RC(pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), 0);
    CHECK_RC(pthread_rwlockattr_getkind_np(&ra, &v), 0);
    CHECK(v == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_t rw;
    CHECK_RC(pthread_rwlock_init(&rw, &ra), 0);
    CHECK_RC(pthread_rwlockattr_destroy(&ra), 0);
    CHECK_RC(pthread_rwlock_rdlock(&rw), 0);
    CHECK_RC(pthread_rwlock_trywrlock(&rw), EBUSY);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
    CHECK_RC(pthread_rwlock_destroy(&rw), 0);

    /* A named semaphore through every sem_* function. */
    char name[64];
    snprintf(name, sizeof name, "/waitwise-forwarded-%d", (int)getpid());
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 1);
    CHECK(s != SEM_FAILED);
    CHECK_RC(sem_rc(sem_unlink(name)), 0);
    CHECK_RC(sem_rc(sem_getvalue(s, &v)), 0);
    CHECK(v == 1);
    CHECK_RC(sem_rc(sem_wait(s)), 0);
    CHECK_RC(sem_rc(sem_trywait(s)), EAGAIN);
    d = deadline_ms(CLOCK_REALTIME, 5);
    CHECK_RC(sem_rc(sem_timedwait(s, &d)), ETIMEDOUT);
    d = deadline_ms(CLOCK_MONOTONIC, 5);
    CHECK_RC(sem_rc(sem_clockwait(s, CLOCK_MONOTONIC, &d)), ETIMEDOUT);
    CHECK_RC(sem_rc(sem_post(s)), 0);
    d = deadline_ms(CLOCK_MONOTONIC, 5000);
    CHECK_RC(sem_rc(sem_clockwait(s, CLOCK_MONOTONIC, &d)), 0);
    CHECK_RC(sem_rc(sem_post(s)), 0);
    CHECK_RC(sem_rc(sem_getvalue(s, &v)), 0);
    CHECK(v == 1);
    CHECK_RC(sem_rc(sem_close(s)), 0);

    printf("forwarded: ok\n");
    return 0;
}
