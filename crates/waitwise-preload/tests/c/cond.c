/* pthread_cond_* under the interposer: producer/consumer, broadcast,
 * turn-taking, timed waits on both clocks, static initializer. Usage:
 * cond MODE, or cond turns [TURNS_EACH]. */
#define _GNU_SOURCE
#include <pthread.h>

#include "check.h"

#define QUEUE 16
#define ITEMS 100000
#define PRODUCERS 2
#define CONSUMERS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full;
static long queue[QUEUE];
static int head, len, producers_left = PRODUCERS;
static long consumed_sum, consumed_count;

static void *producer(void *arg) {
    long base = (long)arg * ITEMS;
    for (long i = 1; i <= ITEMS; i++) {
        CHECK_RC(pthread_mutex_lock(&lock), 0);
        while (len == QUEUE) CHECK_RC(pthread_cond_wait(&not_full, &lock), 0);
        queue[(head + len++) % QUEUE] = base + i;
        CHECK_RC(pthread_cond_signal(&not_empty), 0);
        CHECK_RC(pthread_mutex_unlock(&lock), 0);
    }
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    producers_left--;
    CHECK_RC(pthread_cond_broadcast(&not_empty), 0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    for (;;) {
        CHECK_RC(pthread_mutex_lock(&lock), 0);
        while (len == 0 && producers_left > 0)
            CHECK_RC(pthread_cond_wait(&not_empty, &lock), 0);
        if (len == 0) {
            CHECK_RC(pthread_mutex_unlock(&lock), 0);
            return NULL;
        }
        long v = queue[head];
        head = (head + 1) % QUEUE;
        len--;
        consumed_sum += v;
        consumed_count++;
        CHECK_RC(pthread_cond_signal(&not_full), 0);
        CHECK_RC(pthread_mutex_unlock(&lock), 0);
    }
}

static void producer_consumer(void) {
    CHECK_RC(pthread_cond_init(&not_full, NULL), 0);
    pthread_t p[PRODUCERS], c[CONSUMERS];
    for (long i = 0; i < PRODUCERS; i++) CHECK_RC(pthread_create(&p[i], NULL, producer, (void *)i), 0);
    for (long i = 0; i < CONSUMERS; i++) CHECK_RC(pthread_create(&c[i], NULL, consumer, NULL), 0);
    for (int i = 0; i < PRODUCERS; i++) CHECK_RC(pthread_join(p[i], NULL), 0);
    for (int i = 0; i < CONSUMERS; i++) CHECK_RC(pthread_join(c[i], NULL), 0);
    long n = (long)PRODUCERS * ITEMS;
    CHECK(consumed_count == n);
    CHECK(consumed_sum == n * (n + 1) / 2);
    CHECK_RC(pthread_cond_destroy(&not_full), 0);
}

/* Broadcast releases every waiter of a gate. */
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open, gate_waiting, gate_passed;

static void *gate_waiter(void *arg) {
    (void)arg;
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    gate_waiting++;
    while (!gate_open) CHECK_RC(pthread_cond_wait(&gate_cv, &lock), 0);
    gate_passed++;
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    return NULL;
}

static void broadcast(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) CHECK_RC(pthread_create(&t[i], NULL, gate_waiter, NULL), 0);
    for (;;) {
        CHECK_RC(pthread_mutex_lock(&lock), 0);
        int w = gate_waiting;
        CHECK_RC(pthread_mutex_unlock(&lock), 0);
        if (w == 4) break;
        sleep_ms(1);
    }
    sleep_ms(20); /* let them fall asleep */
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    gate_open = 1;
    CHECK_RC(pthread_cond_broadcast(&gate_cv), 0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    for (int i = 0; i < 4; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    CHECK(gate_passed == 4);
}

/* Turn-taking: TURN_THREADS threads (more than 2 CPUs hold: the waiters
 * crowd them) each wait for the counter to reach their turn, bump it and
 * broadcast; every broadcast releases all of them and one may go on. A
 * lost wake-up hangs it; a wrong order fails the check. */
#define TURN_THREADS 8
static int turns_each = 2000; /* argv[2] */
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static long turn;

static void *turn_taker(void *arg) {
    long id = (long)arg;
    for (int i = 0; i < turns_each; i++) {
        CHECK_RC(pthread_mutex_lock(&lock), 0);
        while (turn % TURN_THREADS != id) CHECK_RC(pthread_cond_wait(&turn_cv, &lock), 0);
        CHECK(turn == (long)i * TURN_THREADS + id);
        turn++;
        CHECK_RC(pthread_cond_broadcast(&turn_cv), 0);
        CHECK_RC(pthread_mutex_unlock(&lock), 0);
    }
    return NULL;
}

static void turns(void) {
    pthread_t t[TURN_THREADS];
    for (long i = 0; i < TURN_THREADS; i++) CHECK_RC(pthread_create(&t[i], NULL, turn_taker, (void *)i), 0);
    for (int i = 0; i < TURN_THREADS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    CHECK(turn == (long)TURN_THREADS * turns_each);
}

static pthread_cond_t timed_cv;
static int flag;

static void *set_flag_later(void *arg) {
    sleep_ms((long)arg);
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    flag = 1;
    CHECK_RC(pthread_cond_signal(&timed_cv), 0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    return NULL;
}

/* Timed waits on `clock` (the condvar's attribute clock). */
static void timed_on(clockid_t clock) {
    pthread_condattr_t a;
    CHECK_RC(pthread_condattr_init(&a), 0);
    CHECK_RC(pthread_condattr_setclock(&a, clock), 0);
    CHECK_RC(pthread_cond_init(&timed_cv, &a), 0);
    CHECK_RC(pthread_condattr_destroy(&a), 0);
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    /* Times out after ~50 ms, mutex re-acquired. */
    double t0 = now_s(CLOCK_MONOTONIC);
    struct timespec d = deadline_ms(clock, 50);
    CHECK_RC(pthread_cond_timedwait(&timed_cv, &lock, &d), ETIMEDOUT);
    double waited = now_s(CLOCK_MONOTONIC) - t0;
    CHECK(waited >= 0.045);
    CHECK(waited < 2.0);
    CHECK_RC(pthread_mutex_trylock(&lock), EBUSY); /* we hold it again */
    /* A deadline already past, and invalid ones. */
    struct timespec past = {1, 0};
    CHECK_RC(pthread_cond_timedwait(&timed_cv, &lock, &past), ETIMEDOUT);
    d.tv_nsec = 1000000000L;
    CHECK_RC(pthread_cond_timedwait(&timed_cv, &lock, &d), EINVAL);
    d.tv_nsec = -5;
    CHECK_RC(pthread_cond_timedwait(&timed_cv, &lock, &d), EINVAL);
    /* Signaled after 20 ms: a 5 s deadline does not pass. */
    flag = 0;
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, set_flag_later, (void *)20L), 0);
    d = deadline_ms(clock, 5000);
    int rc = 0;
    while (!flag && rc == 0) rc = pthread_cond_timedwait(&timed_cv, &lock, &d);
    CHECK_RC(rc, 0);
    CHECK(flag);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 < 4.0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    CHECK_RC(pthread_join(t, NULL), 0);
    CHECK_RC(pthread_cond_destroy(&timed_cv), 0);
}

/* A CLOCK_MONOTONIC condvar measures its deadline on CLOCK_MONOTONIC: a
 * deadline of "monotonic now + 50 ms" is ~50 ms away. Read as a
 * CLOCK_REALTIME time it would be decades in the past (monotonic time
 * counts from boot), and the wait would end at once. */
static void monotonic_clock_honored(void) {
    pthread_condattr_t a;
    CHECK_RC(pthread_condattr_init(&a), 0);
    CHECK_RC(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    pthread_cond_t cv;
    CHECK_RC(pthread_cond_init(&cv, &a), 0);
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    double t0 = now_s(CLOCK_MONOTONIC);
    struct timespec d = deadline_ms(CLOCK_MONOTONIC, 50);
    CHECK_RC(pthread_cond_timedwait(&cv, &lock, &d), ETIMEDOUT);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 >= 0.045);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    CHECK_RC(pthread_cond_destroy(&cv), 0);
}

static void clockwait(void) {
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    double t0 = now_s(CLOCK_MONOTONIC);
    struct timespec d = deadline_ms(CLOCK_MONOTONIC, 30);
    CHECK_RC(pthread_cond_clockwait(&cv, &lock, CLOCK_MONOTONIC, &d), ETIMEDOUT);
    CHECK(now_s(CLOCK_MONOTONIC) - t0 >= 0.025);
    d = deadline_ms(CLOCK_REALTIME, 30);
    CHECK_RC(pthread_cond_clockwait(&cv, &lock, CLOCK_REALTIME, &d), ETIMEDOUT);
    CHECK_RC(pthread_cond_clockwait(&cv, &lock, CLOCK_THREAD_CPUTIME_ID, &d), EINVAL);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
}

/* Waiting with an error-checking mutex the caller does not hold: EPERM. */
static void not_owner(void) {
    pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    CHECK_RC(pthread_cond_wait(&cv, &m), EPERM);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "all";
    int all = !strcmp(mode, "all");
    if (all || !strcmp(mode, "producer-consumer")) producer_consumer();
    if (all || !strcmp(mode, "broadcast")) broadcast();
    if (all || !strcmp(mode, "turns")) {
        if (argc > 2) turns_each = atoi(argv[2]);
        turns();
    }
    if (all || !strcmp(mode, "timed")) {
        timed_on(CLOCK_REALTIME);
        timed_on(CLOCK_MONOTONIC);
        monotonic_clock_honored();
        clockwait();
    }
    if (all || !strcmp(mode, "not-owner")) not_owner();
    printf("ok %s\n", mode);
    return 0;
}
