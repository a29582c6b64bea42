/* A process-shared condition variable (forwarded to glibc) used with a
 * default, process-private mutex (native): glibc's condvar re-locks the
 * mutex through its internal path, which asserts that the mutex's owner
 * field is 0 and then sets it; the program's unlock goes through the
 * interposer, which must clear it again. Two waiters and a broadcaster
 * take turns for many rounds. Usage: pshared_cond_private_mutex. */
#define _GNU_SOURCE
#include <pthread.h>

#include "check.h"

#define ROUNDS 2000
#define WAITERS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static long round_no;
static int arrived;

static void *waiter(void *arg) {
    (void)arg;
    for (long r = 1; r <= ROUNDS; r++) {
        CHECK_RC(pthread_mutex_lock(&m), 0);
        arrived++;
        while (round_no < r) CHECK_RC(pthread_cond_wait(&cv, &m), 0);
        CHECK_RC(pthread_mutex_unlock(&m), 0);
    }
    return NULL;
}

int main(void) {
    pthread_condattr_t ca;
    CHECK_RC(pthread_condattr_init(&ca), 0);
    CHECK_RC(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
    CHECK_RC(pthread_cond_init(&cv, &ca), 0);
    pthread_t t[WAITERS];
    for (int i = 0; i < WAITERS; i++) CHECK_RC(pthread_create(&t[i], NULL, waiter, NULL), 0);
    for (long r = 1; r <= ROUNDS; r++) {
        /* Wait until every waiter arrived in round r, then release them. */
        for (;;) {
            CHECK_RC(pthread_mutex_lock(&m), 0);
            int all = arrived >= WAITERS * r;
            if (all) {
                round_no = r;
                CHECK_RC(pthread_cond_broadcast(&cv), 0);
            }
            CHECK_RC(pthread_mutex_unlock(&m), 0);
            if (all) break;
            sched_yield();
        }
    }
    for (int i = 0; i < WAITERS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    CHECK_RC(pthread_cond_destroy(&cv), 0);
    CHECK_RC(pthread_mutex_destroy(&m), 0);
    printf("ok\n");
    return 0;
}
