/* pthread_spin_* under the interposer: mutual exclusion across 4 threads,
 * trylock. Usage: spin. */
#define _GNU_SOURCE
#include <pthread.h>

#include "check.h"

#define THREADS 4
#define ITERS 100000
static pthread_spinlock_t lock;
static long counter;

static void *add(void *arg) {
    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        CHECK_RC(pthread_spin_lock(&lock), 0);
        counter++;
        CHECK_RC(pthread_spin_unlock(&lock), 0);
    }
    return NULL;
}

int main(void) {
    CHECK_RC(pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE), 0);
    CHECK_RC(pthread_spin_trylock(&lock), 0);
    CHECK_RC(pthread_spin_trylock(&lock), EBUSY);
    CHECK_RC(pthread_spin_unlock(&lock), 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_create(&t[i], NULL, add, NULL), 0);
    for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    CHECK(counter == (long)THREADS * ITERS);
    CHECK_RC(pthread_spin_destroy(&lock), 0);
    printf("ok\n");
    return 0;
}
