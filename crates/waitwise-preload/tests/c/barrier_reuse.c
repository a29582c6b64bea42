/* pthread_barrier_* with more threads than parties (POSIX allows it: each
 * group of COUNT calls is one episode, whichever threads make them), so
 * that threads arrive for the next episode while the last arrival of the
 * current one is still completing it. Every episode must let exactly COUNT
 * threads through, one of them the serial thread, and no thread may leave
 * before COUNT threads have arrived for its episode.
 * Usage: barrier_reuse COUNT THREADS CALLS (CALLS a multiple of COUNT). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "check.h"

static pthread_barrier_t barrier;
static long count, calls;
/* Calls handed out (the threads share CALLS calls, so that the last ones
 * always find partners), made, returned, and serial returns. */
static atomic_long tickets, arrived, returned, serials;

static void *worker(void *arg) {
    (void)arg;
    while (atomic_fetch_add(&tickets, 1) < calls) {
        atomic_fetch_add(&arrived, 1);
        int rc = pthread_barrier_wait(&barrier);
        CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD) atomic_fetch_add(&serials, 1);
        /* Threads returned so far belong to complete episodes, each of
         * COUNT arrivals made before it completed. */
        long r = atomic_fetch_add(&returned, 1) + 1;
        long a = atomic_load(&arrived);
        if (r > a - a % count) {
            fprintf(stderr, "left early: %ld returned, %ld arrived\n", r, a);
            exit(1);
        }
    }
    return NULL;
}

/* A lost arrival leaves a thread without partners at the end: fail, not hang. */
static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "barrier_reuse: stuck (an arrival was lost)\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(1);
}

int main(int argc, char **argv) {
    CHECK(argc == 4);
    count = atol(argv[1]);
    int threads = atoi(argv[2]);
    calls = atol(argv[3]);
    CHECK(count > 0 && threads > 0 && threads <= 64 && calls % count == 0);
    signal(SIGALRM, on_alarm);
    alarm(20);
    CHECK_RC(pthread_barrier_init(&barrier, NULL, (unsigned)count), 0);
    pthread_t t[64];
    for (int i = 0; i < threads; i++) CHECK_RC(pthread_create(&t[i], NULL, worker, NULL), 0);
    for (int i = 0; i < threads; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    if (atomic_load(&serials) != calls / count) {
        fprintf(stderr, "%ld serial threads for %ld episodes\n", atomic_load(&serials),
                calls / count);
        return 1;
    }
    CHECK_RC(pthread_barrier_destroy(&barrier), 0);
    printf("ok\n");
    return 0;
}
