/* pthread_barrier_* under the interposer: exactly one
 * PTHREAD_BARRIER_SERIAL_THREAD per episode over 10,000 episodes, and no
 * thread leaves an episode before every thread has arrived.
 * Usage: barrier [THREADS] [EPISODES]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>

#include "check.h"

static pthread_barrier_t barrier;
static int threads = 4, episodes = 10000;
static atomic_int serials[100000];
static atomic_int arrivals[100000];

static void *worker(void *arg) {
    (void)arg;
    for (int e = 0; e < episodes; e++) {
        atomic_fetch_add(&arrivals[e], 1);
        int rc = pthread_barrier_wait(&barrier);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
        /* Everyone arrived before anyone left. */
        CHECK(atomic_load(&arrivals[e]) == threads);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD) atomic_fetch_add(&serials[e], 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) threads = atoi(argv[1]);
    if (argc > 2) episodes = atoi(argv[2]);
    CHECK(threads > 0 && threads <= 64 && episodes > 0 && episodes <= 100000);
    pthread_barrier_t b0;
    CHECK_RC(pthread_barrier_init(&b0, NULL, 0), EINVAL);
    /* A barrier of one: every wait is the serial thread. */
    CHECK_RC(pthread_barrier_init(&b0, NULL, 1), 0);
    CHECK_RC(pthread_barrier_wait(&b0), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_RC(pthread_barrier_destroy(&b0), 0);

    CHECK_RC(pthread_barrier_init(&barrier, NULL, threads), 0);
    pthread_t t[64];
    for (int i = 0; i < threads; i++) CHECK_RC(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int i = 0; i < threads; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    for (int e = 0; e < episodes; e++) {
        if (atomic_load(&serials[e]) != 1) {
            fprintf(stderr, "episode %d had %d serial threads\n", e, atomic_load(&serials[e]));
            return 1;
        }
    }
    CHECK_RC(pthread_barrier_destroy(&barrier), 0);
    printf("ok %d threads %d episodes\n", threads, episodes);
    return 0;
}
