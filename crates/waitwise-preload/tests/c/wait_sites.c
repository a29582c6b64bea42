/* Four objects, each waited on in a function of its own, for `waitwise
 * run --profile`'s call sites: `./wait_sites KIND` with KIND one of mutex,
 * cond, barrier, sem contends only that object, so it is the one waited on
 * most. Built with -g: the report names the function and its file:line. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define ROUNDS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t step;
static sem_t tokens;
static volatile unsigned long counter;
static unsigned long turn;

/* Every thread increments the counter under one mutex. */
__attribute__((noinline)) static void contend_on_mutex(void) {
    for (int i = 0; i < ROUNDS / 10; i++) {
        pthread_mutex_lock(&lock);
        for (int j = 0; j < 2000; j++)
            counter++;
        pthread_mutex_unlock(&lock);
    }
}

/* The threads take turns, each waiting on the condition variable for its
 * own. */
__attribute__((noinline)) static void wait_for_turn(long me) {
    for (int i = 0; i < ROUNDS / 10; i++) {
        pthread_mutex_lock(&cond_lock);
        while (turn % THREADS != (unsigned long)me)
            pthread_cond_wait(&ready, &cond_lock);
        turn++;
        pthread_cond_broadcast(&ready);
        pthread_mutex_unlock(&cond_lock);
    }
}

/* Every thread meets the others at the barrier each round. */
__attribute__((noinline)) static void meet_at_barrier(void) {
    for (int i = 0; i < ROUNDS / 10; i++)
        pthread_barrier_wait(&step);
}

/* The threads pass tokens: each takes one and gives one back. */
__attribute__((noinline)) static void take_token(void) {
    for (int i = 0; i < ROUNDS / 100; i++) {
        sem_wait(&tokens);
        for (int j = 0; j < 20000; j++)
            counter++;
        sem_post(&tokens);
    }
}

static const char *kind;

/* Workers that have started. In mutex and sem mode main holds the lock or
 * the token until all have, so that it is contended even when a busy
 * machine runs the threads one after another (the cond and barrier modes
 * wait whatever the order). */
static atomic_int started;

static void *worker(void *arg) {
    long me = (long)arg;
    atomic_fetch_add(&started, 1);
    if (!strcmp(kind, "mutex"))
        contend_on_mutex();
    else if (!strcmp(kind, "cond"))
        wait_for_turn(me);
    else if (!strcmp(kind, "barrier"))
        meet_at_barrier();
    else
        take_token();
    return NULL;
}

int main(int argc, char **argv) {
    kind = argc > 1 ? argv[1] : "mutex";
    pthread_barrier_init(&step, NULL, THREADS);
    sem_init(&tokens, 0, 1);
    pthread_t t[THREADS];
    int hold_lock = !strcmp(kind, "mutex"), hold_token = !strcmp(kind, "sem");
    if (hold_lock)
        pthread_mutex_lock(&lock);
    if (hold_token)
        sem_wait(&tokens);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    if (hold_lock || hold_token) {
        while (atomic_load(&started) < THREADS)
            sched_yield();
        usleep(10000); /* time for the workers to reach the lock or token */
        if (hold_lock)
            pthread_mutex_unlock(&lock);
        else
            sem_post(&tokens);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("done %s\n", kind);
    return 0;
}
