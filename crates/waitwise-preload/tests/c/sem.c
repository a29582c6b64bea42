/* sem_* under the interposer: counting, errors, timed waits, and a
 * producer/consumer hand-off; with `eintr`, waits interrupted by a signal
 * handler; with `handler-post`, semaphores posted from signal handlers.
 * Usage: sem [eintr | handler-post]. */
#define _GNU_SOURCE
#include <pthread.h>
#include <limits.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>

#include "check.h"

/* sem_* report errors in errno: returns errno on failure, 0 on success. */
#define ERR(expr) ((expr) == 0 ? 0 : errno)

#define ITEMS 100000
static sem_t items, slots;
static long buf[8], sum;

static void *producer(void *arg) {
    (void)arg;
    for (long i = 1; i <= ITEMS; i++) {
        CHECK_RC(ERR(sem_wait(&slots)), 0);
        buf[i % 8] = i;
        CHECK_RC(ERR(sem_post(&items)), 0);
    }
    return NULL;
}

static sem_t later;
static void *post_later(void *arg) {
    sleep_ms((long)arg);
    CHECK_RC(ERR(sem_post(&later)), 0);
    return NULL;
}

/* A waiter on `intr`, timed (5 s) or not; returns errno or 0. */
static sem_t intr;
static atomic_int intr_done;
static void on_signal(int sig) { (void)sig; }

static void *intr_waiter(void *timed) {
    struct timespec d = deadline_ms(CLOCK_REALTIME, 5000);
    long e = timed ? ERR(sem_timedwait(&intr, &d)) : ERR(sem_wait(&intr));
    atomic_store(&intr_done, 1);
    return (void *)e;
}

/* Starts a waiter, signals it every 5 ms until it returns (at most 0.5 s:
 * it blocks within microseconds, so a signal lands while it sleeps), then
 * posts if it still waits; returns the waiter's result. */
static long interrupt_waiter(int restart, int timed) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = restart ? SA_RESTART : 0;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    atomic_store(&intr_done, 0);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, intr_waiter, (void *)(long)timed), 0);
    for (int i = 0; i < 100 && !atomic_load(&intr_done); i++) {
        CHECK_RC(pthread_kill(t, SIGUSR1), 0);
        sleep_ms(5);
    }
    if (!atomic_load(&intr_done)) CHECK_RC(ERR(sem_post(&intr)), 0);
    void *e;
    CHECK_RC(pthread_join(t, &e), 0);
    return (long)e;
}

/* As glibc: a handler ends sem_timedwait with EINTR, and sem_wait unless
 * the handler was installed with SA_RESTART; the semaphore works on. */
static void eintr(void) {
    CHECK_RC(ERR(sem_init(&intr, 0, 0)), 0);
    CHECK(interrupt_waiter(0, 0) == EINTR);
    CHECK(interrupt_waiter(0, 1) == EINTR);
    CHECK(interrupt_waiter(1, 1) == EINTR);
    CHECK(interrupt_waiter(1, 0) == 0); /* restarted until the post */
    int v;
    CHECK_RC(ERR(sem_getvalue(&intr, &v)), 0);
    CHECK(v == 0);
    CHECK_RC(ERR(sem_post(&intr)), 0);
    CHECK_RC(ERR(sem_wait(&intr)), 0);
    CHECK_RC(ERR(sem_destroy(&intr)), 0);
    printf("ok\n");
}

/* sem_post is async-signal-safe: handlers post a private and a
 * process-shared semaphore (which the interposer forwards to glibc), the
 * first posts of the process among them, in a thread that allocates and
 * frees in a loop (a handler that reached the dynamic linker or the
 * allocator there could deadlock); the main thread waits for every post. */
#define HANDLER_POSTS 2000
static sem_t posted[2]; /* private, process-shared */
static atomic_int stop_allocating;

static void post_both(int sig) {
    (void)sig;
    int saved = errno;
    CHECK_RC(ERR(sem_post(&posted[0])), 0);
    CHECK_RC(ERR(sem_post(&posted[1])), 0);
    errno = saved;
}

static void *allocate(void *arg) {
    (void)arg;
    while (!atomic_load(&stop_allocating)) {
        void *p[16];
        for (int i = 0; i < 16; i++) p[i] = malloc(16 + 48 * (size_t)i);
        for (int i = 0; i < 16; i++) free(p[i]);
    }
    return NULL;
}

static void handler_post(void) {
    CHECK_RC(ERR(sem_init(&posted[0], 0, 0)), 0);
    CHECK_RC(ERR(sem_init(&posted[1], 1, 0)), 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = post_both;
    sa.sa_flags = SA_RESTART;
    CHECK(sigaction(SIGUSR2, &sa, NULL) == 0);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, allocate, NULL), 0);
    for (int i = 0; i < HANDLER_POSTS; i++) {
        CHECK_RC(pthread_kill(t, SIGUSR2), 0);
        /* Each signal is delivered (and posts) before the next is sent. */
        for (int k = 0; k < 2; k++) {
            int r;
            while ((r = ERR(sem_wait(&posted[k]))) == EINTR) {
            }
            CHECK_RC(r, 0);
        }
    }
    atomic_store(&stop_allocating, 1);
    CHECK_RC(pthread_join(t, NULL), 0);
    for (int k = 0; k < 2; k++) {
        int v;
        CHECK_RC(ERR(sem_getvalue(&posted[k], &v)), 0);
        CHECK(v == 0);
        CHECK_RC(ERR(sem_destroy(&posted[k])), 0);
    }
    printf("ok\n");
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "eintr") == 0) {
        eintr();
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "handler-post") == 0) {
        handler_post();
        return 0;
    }
    sem_t s;
    int v;
    CHECK_RC(ERR(sem_init(&s, 0, 2)), 0);
    CHECK_RC(ERR(sem_getvalue(&s, &v)), 0);
    CHECK(v == 2);
    CHECK_RC(ERR(sem_trywait(&s)), 0);
    CHECK_RC(ERR(sem_wait(&s)), 0);
    CHECK_RC(ERR(sem_trywait(&s)), EAGAIN);
    CHECK_RC(ERR(sem_getvalue(&s, &v)), 0);
    CHECK(v == 0);
    /* Timed: out after ~50 ms; a bad tv_nsec is EINVAL (at zero). */
    double t0 = now_s(CLOCK_MONOTONIC);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 50);
    CHECK_RC(ERR(sem_timedwait(&s, &d)), ETIMEDOUT);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 >= 0.045);
    d.tv_nsec = 1000000000L;
    CHECK_RC(ERR(sem_timedwait(&s, &d)), EINVAL);
    /* With a unit available too, as glibc: the deadline is checked first,
     * and the unit stays. */
    CHECK_RC(ERR(sem_post(&s)), 0);
    CHECK_RC(ERR(sem_timedwait(&s, &d)), EINVAL);
    CHECK_RC(ERR(sem_getvalue(&s, &v)), 0);
    CHECK(v == 1);
    CHECK_RC(ERR(sem_trywait(&s)), 0);
    CHECK_RC(ERR(sem_destroy(&s)), 0);
    CHECK_RC(ERR(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1u)), EINVAL);
    CHECK_RC(ERR(sem_init(&s, 0, SEM_VALUE_MAX)), 0);
    CHECK_RC(ERR(sem_post(&s)), EOVERFLOW);

    /* Posted after 20 ms: a 5 s timed wait succeeds. */
    CHECK_RC(ERR(sem_init(&later, 0, 0)), 0);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, post_later, (void *)20L), 0);
    d = deadline_ms(CLOCK_REALTIME, 5000);
    CHECK_RC(ERR(sem_timedwait(&later, &d)), 0);
    CHECK_RC(pthread_join(t, NULL), 0);

    /* Producer/consumer through a ring of 8 slots. */
    CHECK_RC(ERR(sem_init(&items, 0, 0)), 0);
    CHECK_RC(ERR(sem_init(&slots, 0, 8)), 0);
    CHECK_RC(pthread_create(&t, NULL, producer, NULL), 0);
    for (long i = 1; i <= ITEMS; i++) {
        CHECK_RC(ERR(sem_wait(&items)), 0);
        CHECK(buf[i % 8] == i);
        sum += buf[i % 8];
        CHECK_RC(ERR(sem_post(&slots)), 0);
    }
    CHECK_RC(pthread_join(t, NULL), 0);
    CHECK(sum == (long)ITEMS * (ITEMS + 1) / 2);
    printf("ok\n");
    return 0;
}
