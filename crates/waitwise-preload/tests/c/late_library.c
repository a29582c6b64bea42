/* A library opened with dlopen by a program that imports none of the
 * interposed functions (opens_late.c): its waits run on whatever the
 * interposer bound at their first call. Each of them checks its result. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>

#include "check.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static sem_t items;
static int produced;

static void *producer(void *arg) {
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    produced = 1;
    CHECK_RC(pthread_cond_signal(&cond), 0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    CHECK(sem_post(&items) == 0);
    return arg;
}

int late_library_waits(void) {
    /* A timed wait that times out (glibc's current condition-variable ABI,
     * not its 2.2.5 compatibility one, would be needed to get this right). */
    struct timespec soon;
    CHECK(clock_gettime(CLOCK_REALTIME, &soon) == 0);
    soon.tv_nsec += 2000000;
    if (soon.tv_nsec >= 1000000000) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000;
    }
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    CHECK_RC(pthread_cond_timedwait(&cond, &lock, &soon), ETIMEDOUT);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);

    CHECK(sem_init(&items, 0, 0) == 0);
    pthread_t other;
    CHECK_RC(pthread_create(&other, NULL, producer, NULL), 0);
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    while (!produced)
        CHECK_RC(pthread_cond_wait(&cond, &lock), 0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    CHECK(sem_wait(&items) == 0);
    int value = -1;
    CHECK(sem_getvalue(&items, &value) == 0 && value == 0);
    CHECK_RC(pthread_join(other, NULL), 0);
    CHECK(sem_destroy(&items) == 0);
    return 0;
}
