/* Micro-benchmarks for the interposer; run the same binary with and
 * without LD_PRELOAD (see run.sh).
 *
 *   bench barrier THREADS EPISODES   -> ns per barrier episode
 *   bench mutex THREADS SECONDS      -> lock/unlock pairs per second (all threads)
 *   bench first-timedwait 1 MS       -> ns of the process's first
 *                                       pthread_cond_timedwait (MS ms, times out)
 *   bench turns THREADS TURNS        -> seconds for THREADS threads to take
 *                                       TURNS turns each, in order, through
 *                                       one mutex and condition variable
 *
 * The mutex benchmark holds the lock for a short critical section (a few
 * counter updates) and does a little work outside it, so that the lock
 * changes hands between threads (contended) rather than staying with one. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static pthread_barrier_t barrier;
static long episodes;

static void *barrier_worker(void *arg) {
    (void)arg;
    for (long i = 0; i < episodes; i++) pthread_barrier_wait(&barrier);
    return NULL;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long shared[8];
static atomic_int stop;
static long ops[64];

static void *mutex_worker(void *arg) {
    long id = (long)arg, n = 0;
    unsigned x = (unsigned)id * 2654435761u + 1;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < 8; i++) shared[i]++;
        pthread_mutex_unlock(&lock);
        /* ~100 ns of private work */
        for (int i = 0; i < 50; i++) x = x * 1103515245u + 12345u;
        n++;
    }
    ops[id] = n + (x == 42);
    return NULL;
}

static pthread_cond_t turn_cond = PTHREAD_COND_INITIALIZER;
static long turn, turn_threads, turns_each;

/* Waits for its turn (turn % threads == id), takes it, wakes all: every
 * turn is a hand-off to one particular thread. */
static void *turn_worker(void *arg) {
    long id = (long)arg;
    for (long r = 0; r < turns_each; r++) {
        pthread_mutex_lock(&lock);
        while (turn % turn_threads != id) pthread_cond_wait(&turn_cond, &lock);
        turn++;
        pthread_cond_broadcast(&turn_cond);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench barrier|mutex|turns|first-timedwait THREADS EPISODES|SECONDS|TURNS|MS\n");
        return 2;
    }
    int threads = atoi(argv[2]);
    pthread_t t[64];
    if (threads < 1 || threads > 64) return 2;
    if (!strcmp(argv[1], "first-timedwait")) {
        pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
        pthread_cond_t c = PTHREAD_COND_INITIALIZER;
        long ms = atol(argv[3]);
        struct timespec d;
        pthread_mutex_lock(&m);
        double t0 = now();
        clock_gettime(CLOCK_REALTIME, &d);
        d.tv_nsec += ms * 1000000L;
        d.tv_sec += d.tv_nsec / 1000000000L;
        d.tv_nsec %= 1000000000L;
        while (pthread_cond_timedwait(&c, &m, &d) == 0) {
        }
        double dt = now() - t0;
        pthread_mutex_unlock(&m);
        printf("%.0f\n", dt * 1e9);
    } else if (!strcmp(argv[1], "barrier")) {
        episodes = atol(argv[3]);
        pthread_barrier_init(&barrier, NULL, threads);
        double t0 = now();
        for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, barrier_worker, NULL);
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
        double dt = now() - t0;
        printf("%.1f\n", dt / episodes * 1e9);
    } else if (!strcmp(argv[1], "turns")) {
        turn_threads = threads;
        turns_each = atol(argv[3]);
        double t0 = now();
        for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, turn_worker, (void *)i);
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
        double dt = now() - t0;
        if (turn != threads * turns_each) return 1;
        printf("%.3f\n", dt);
    } else {
        double secs = atof(argv[3]);
        for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, mutex_worker, (void *)i);
        struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
        double t0 = now();
        nanosleep(&ts, NULL);
        atomic_store(&stop, 1);
        long total = 0;
        for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
        double dt = now() - t0;
        for (int i = 0; i < threads; i++) total += ops[i];
        printf("%.0f\n", total / dt);
    }
    return 0;
}
