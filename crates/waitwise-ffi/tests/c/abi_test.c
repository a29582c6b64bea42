/*
 * abi_test.c: exercises every object of include/waitwise.h from C.
 * Built and run by crates/waitwise-ffi/tests/c_abi.rs:
 *   cc -std=c11 -Wall -Wextra -Werror -pthread -Iinclude abi_test.c -lwaitwise
 * Prints one line per section and exits 0, or names the failed check and
 * exits 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <waitwise.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

/* expr must return the code `want`; prints both codes and texts if not. */
#define CHECK_RC(expr, want)                                                     \
    do {                                                                         \
        int rc_ = (expr);                                                        \
        if (rc_ != (want)) {                                                     \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n",    \
                    __FILE__, __LINE__, #expr, rc_, waitwise_strerror(rc_),      \
                    (want), waitwise_strerror(want));                            \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

#define OK(expr) CHECK_RC(expr, WAITWISE_OK)

static const uint64_t MS = 1000000; /* ns */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static pthread_t spawn(void *(*f)(void *), void *arg) {
    pthread_t t;
    CHECK(pthread_create(&t, NULL, f, arg) == 0);
    return t;
}

static void join(pthread_t t) { CHECK(pthread_join(t, NULL) == 0); }

/* The policies every object is built with in turn. */
static waitwise_policy_t policy_at(int i) {
    switch (i) {
    case 0: return waitwise_policy_default();
    case 1: return waitwise_policy_two_phase(0.5);
    case 2: return waitwise_policy_block();
    case 3: return waitwise_policy_randomized();
    default: return waitwise_policy_spin();
    }
}
#define POLICIES 5

/* Rounds of a hand-off loop under policy i: fewer for always-spin, which
 * burns whole time slices when threads outnumber CPUs (the CI machine has
 * two, and other tests run beside this one). */
static int rounds_for(int i, int full) {
    return policy_at(i).kind == WAITWISE_POLICY_SPIN ? full / 500 : full;
}

/* ------------------------------------------------------------------ */

static void test_errors_and_policies(void) {
    CHECK(strcmp(waitwise_strerror(WAITWISE_OK), "success") == 0);
    CHECK(strcmp(waitwise_strerror(WAITWISE_ETIMEDOUT), waitwise_strerror(WAITWISE_EINVAL)) != 0);
    CHECK(strstr(waitwise_strerror(12345), "unknown") != NULL);

    CHECK(waitwise_policy_default().kind == WAITWISE_POLICY_DEFAULT);
    CHECK(waitwise_policy_two_phase(0.25).kind == WAITWISE_POLICY_TWO_PHASE);
    CHECK(waitwise_policy_two_phase(0.25).alpha == 0.25);
    CHECK(waitwise_policy_spin().kind == WAITWISE_POLICY_SPIN);
    CHECK(waitwise_policy_block().kind == WAITWISE_POLICY_BLOCK);
    CHECK(waitwise_policy_randomized().kind == WAITWISE_POLICY_RANDOMIZED);
    CHECK(waitwise_policy_adaptive().kind == WAITWISE_POLICY_ADAPTIVE);

    /* Bad policies are refused where they are used, and nothing is made. */
    waitwise_policy_t bad_kind = {99, 0.0};
    waitwise_mutex_t *m = NULL;
    CHECK_RC(waitwise_mutex_new_with_policy(&m, bad_kind), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_new_with_policy(&m, waitwise_policy_two_phase(-1.0)), WAITWISE_EINVAL);
    CHECK(m == NULL);
    waitwise_event_t *e = NULL;
    CHECK_RC(waitwise_event_new_with_policy(&e, waitwise_policy_two_phase(1.0 / 0.0)),
             WAITWISE_EINVAL);
    CHECK(e == NULL);
    printf("errors, policies: ok\n");
}

static void test_version(void) {
    /* The loaded library is the one this header describes. */
    CHECK(strcmp(waitwise_version(), WAITWISE_VERSION_STRING) == 0);
    CHECK(waitwise_version_number() == WAITWISE_VERSION_NUMBER);
    CHECK(WAITWISE_VERSION_NUMBER == WAITWISE_VERSION_MAJOR * 10000 +
                                         WAITWISE_VERSION_MINOR * 100 +
                                         WAITWISE_VERSION_PATCH);
    printf("version: ok\n");
}

static void test_null_handling(void) {
    CHECK_RC(waitwise_event_new(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_event_new_with_policy(NULL, waitwise_policy_block()), WAITWISE_EINVAL);
    CHECK_RC(waitwise_event_wait(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_event_wait_timeout_ns(NULL, 0), WAITWISE_EINVAL);
    CHECK_RC(waitwise_event_notify(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_event_notify_all(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_event_destroy(NULL), WAITWISE_EINVAL);

    CHECK_RC(waitwise_barrier_new(NULL, 2), WAITWISE_EINVAL);
    CHECK_RC(waitwise_barrier_new_with_policy(NULL, 2, waitwise_policy_block()), WAITWISE_EINVAL);
    CHECK_RC(waitwise_barrier_wait(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_barrier_destroy(NULL), WAITWISE_EINVAL);

    CHECK_RC(waitwise_mutex_new(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_new_with_policy(NULL, waitwise_policy_block()), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_lock(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_trylock(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_timedlock_ns(NULL, MS), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_unlock(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_mutex_destroy(NULL), WAITWISE_EINVAL);

    waitwise_mutex_t *m;
    OK(waitwise_mutex_new(&m));
    CHECK_RC(waitwise_condvar_new(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_new_with_policy(NULL, waitwise_policy_block()), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_wait(NULL, m), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_timedwait_ns(NULL, m, MS), WAITWISE_EINVAL);
    waitwise_condvar_t *cv;
    OK(waitwise_condvar_new(&cv));
    CHECK_RC(waitwise_condvar_wait(cv, NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_timedwait_ns(cv, NULL, MS), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_signal(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_broadcast(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_condvar_destroy(NULL), WAITWISE_EINVAL);
    OK(waitwise_condvar_destroy(cv));
    OK(waitwise_mutex_destroy(m));

    CHECK_RC(waitwise_semaphore_new(NULL, 1), WAITWISE_EINVAL);
    CHECK_RC(waitwise_semaphore_new_with_policy(NULL, 1, waitwise_policy_block()), WAITWISE_EINVAL);
    CHECK_RC(waitwise_semaphore_wait(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_semaphore_trywait(NULL), WAITWISE_EINVAL);
    CHECK_RC(waitwise_semaphore_timedwait_ns(NULL, MS), WAITWISE_EINVAL);
    CHECK_RC(waitwise_semaphore_post(NULL), WAITWISE_EINVAL);
    int v;
    CHECK_RC(waitwise_semaphore_getvalue(NULL, &v), WAITWISE_EINVAL);
    waitwise_semaphore_t *s;
    OK(waitwise_semaphore_new(&s, 0));
    CHECK_RC(waitwise_semaphore_getvalue(s, NULL), WAITWISE_EINVAL);
    OK(waitwise_semaphore_destroy(s));
    CHECK_RC(waitwise_semaphore_destroy(NULL), WAITWISE_EINVAL);

    CHECK_RC(waitwise_probe_json(NULL), WAITWISE_EINVAL);
    waitwise_string_free(NULL);
    printf("NULL handling: ok\n");
}

/* ---- event ---- */

struct event_arg {
    waitwise_event_t *event;
    atomic_int released;
};

static void *event_waiter(void *p) {
    struct event_arg *a = p;
    OK(waitwise_event_wait(a->event));
    atomic_fetch_add(&a->released, 1);
    return NULL;
}

static void test_event(void) {
    for (int i = 0; i < POLICIES; i++) {
        struct event_arg a = {NULL, 0};
        OK(waitwise_event_new_with_policy(&a.event, policy_at(i)));

        /* Nothing pending: a zero timeout only checks. */
        CHECK_RC(waitwise_event_wait_timeout_ns(a.event, 0), WAITWISE_ETIMEDOUT);
        double t0 = now_s();
        CHECK_RC(waitwise_event_wait_timeout_ns(a.event, 20 * MS), WAITWISE_ETIMEDOUT);
        double waited = now_s() - t0;
        CHECK(waited >= 0.019 && waited < 5.0);

        /* A notify before the wait is kept, once. */
        OK(waitwise_event_notify(a.event));
        OK(waitwise_event_notify(a.event));
        OK(waitwise_event_wait_timeout_ns(a.event, 0));
        CHECK_RC(waitwise_event_wait_timeout_ns(a.event, 0), WAITWISE_ETIMEDOUT);

        /* One waiter, released by a later notify. */
        pthread_t t = spawn(event_waiter, &a);
        sleep_ms(5);
        OK(waitwise_event_notify(a.event));
        join(t);
        CHECK(atomic_load(&a.released) == 1);

        /* notify_all releases every current waiter. */
        pthread_t ts[3];
        for (int k = 0; k < 3; k++) ts[k] = spawn(event_waiter, &a);
        /* Keep broadcasting until all three are out: a broadcast releases
         * those waiting at that moment, and a thread may not have arrived. */
        while (atomic_load(&a.released) < 4) {
            OK(waitwise_event_notify_all(a.event));
            sleep_ms(1);
        }
        for (int k = 0; k < 3; k++) join(ts[k]);

        /* A timed wait that is notified in time. */
        OK(waitwise_event_notify(a.event));
        OK(waitwise_event_wait_timeout_ns(a.event, WAITWISE_TIMEOUT_INFINITE));
        OK(waitwise_event_destroy(a.event));
    }
    printf("event: ok\n");
}

/* ---- mutex ---- */

#define COUNTER_THREADS 4
#define COUNTER_ITERS 50000

struct counter {
    waitwise_mutex_t *mutex;
    long value; /* plain, protected by mutex */
};

static void *count_up(void *p) {
    struct counter *c = p;
    for (int i = 0; i < COUNTER_ITERS; i++) {
        if (i % 3 == 2) {
            int rc;
            while ((rc = waitwise_mutex_trylock(c->mutex)) == WAITWISE_EBUSY) {
            }
            OK(rc);
        } else if (i % 3 == 1) {
            OK(waitwise_mutex_timedlock_ns(c->mutex, WAITWISE_TIMEOUT_INFINITE));
        } else {
            OK(waitwise_mutex_lock(c->mutex));
        }
        c->value++;
        OK(waitwise_mutex_unlock(c->mutex));
    }
    return NULL;
}

static void *try_from_other_thread(void *p) {
    waitwise_mutex_t *m = p;
    CHECK_RC(waitwise_mutex_trylock(m), WAITWISE_EBUSY);
    CHECK_RC(waitwise_mutex_unlock(m), WAITWISE_EPERM);
    double t0 = now_s();
    CHECK_RC(waitwise_mutex_timedlock_ns(m, 20 * MS), WAITWISE_ETIMEDOUT);
    CHECK(now_s() - t0 >= 0.019);
    /* Waits until main unlocks. */
    OK(waitwise_mutex_timedlock_ns(m, 10000 * MS));
    OK(waitwise_mutex_unlock(m));
    return NULL;
}

static void test_mutex(void) {
    for (int i = 0; i < POLICIES; i++) {
        struct counter c = {NULL, 0};
        OK(waitwise_mutex_new_with_policy(&c.mutex, policy_at(i)));
        pthread_t ts[COUNTER_THREADS];
        for (int k = 0; k < COUNTER_THREADS; k++) ts[k] = spawn(count_up, &c);
        for (int k = 0; k < COUNTER_THREADS; k++) join(ts[k]);
        CHECK(c.value == (long)COUNTER_THREADS * COUNTER_ITERS);
        OK(waitwise_mutex_destroy(c.mutex));
    }

    /* Misuse is reported. */
    waitwise_mutex_t *m;
    OK(waitwise_mutex_new(&m));
    CHECK_RC(waitwise_mutex_unlock(m), WAITWISE_EPERM);
    OK(waitwise_mutex_lock(m));
    CHECK_RC(waitwise_mutex_lock(m), WAITWISE_EDEADLK);
    CHECK_RC(waitwise_mutex_timedlock_ns(m, MS), WAITWISE_EDEADLK);
    CHECK_RC(waitwise_mutex_trylock(m), WAITWISE_EBUSY);
    CHECK_RC(waitwise_mutex_destroy(m), WAITWISE_EBUSY);
    pthread_t t = spawn(try_from_other_thread, m);
    sleep_ms(60);
    OK(waitwise_mutex_unlock(m));
    join(t);
    CHECK_RC(waitwise_mutex_unlock(m), WAITWISE_EPERM);
    OK(waitwise_mutex_trylock(m));
    OK(waitwise_mutex_unlock(m));
    OK(waitwise_mutex_destroy(m));
    printf("mutex: ok (%d threads x %d increments, %d policies)\n", COUNTER_THREADS,
           COUNTER_ITERS, POLICIES);
}

/* ---- condvar: a bounded queue, 2 producers and 2 consumers ---- */

#define QUEUE_CAP 8
#define ITEMS_PER_PRODUCER 20000

struct queue {
    waitwise_mutex_t *mutex;
    waitwise_condvar_t *not_empty, *not_full;
    long items[QUEUE_CAP];
    int head, len;
    int producers_left;
    long items_per_producer;
    long consumed_sum, consumed_count;
};

static void *produce(void *p) {
    struct queue *q = p;
    for (long i = 1; i <= q->items_per_producer; i++) {
        OK(waitwise_mutex_lock(q->mutex));
        while (q->len == QUEUE_CAP) OK(waitwise_condvar_wait(q->not_full, q->mutex));
        q->items[(q->head + q->len) % QUEUE_CAP] = i;
        q->len++;
        OK(waitwise_condvar_signal(q->not_empty));
        OK(waitwise_mutex_unlock(q->mutex));
    }
    OK(waitwise_mutex_lock(q->mutex));
    q->producers_left--;
    OK(waitwise_condvar_broadcast(q->not_empty));
    OK(waitwise_mutex_unlock(q->mutex));
    return NULL;
}

static void *consume(void *p) {
    struct queue *q = p;
    OK(waitwise_mutex_lock(q->mutex));
    for (;;) {
        while (q->len == 0 && q->producers_left > 0) {
            /* Timed waits too: a timeout here is harmless, the loop re-checks. */
            int rc = waitwise_condvar_timedwait_ns(q->not_empty, q->mutex, 50 * MS);
            CHECK(rc == WAITWISE_OK || rc == WAITWISE_ETIMEDOUT);
        }
        if (q->len == 0) break;
        q->consumed_sum += q->items[q->head];
        q->consumed_count++;
        q->head = (q->head + 1) % QUEUE_CAP;
        q->len--;
        OK(waitwise_condvar_signal(q->not_full));
    }
    OK(waitwise_mutex_unlock(q->mutex));
    return NULL;
}

static void test_condvar(void) {
    for (int i = 0; i < POLICIES; i++) {
        double t_policy = now_s();
        struct queue q;
        memset(&q, 0, sizeof q);
        q.producers_left = 2;
        q.items_per_producer = rounds_for(i, ITEMS_PER_PRODUCER);
        OK(waitwise_mutex_new(&q.mutex));
        OK(waitwise_condvar_new_with_policy(&q.not_empty, policy_at(i)));
        OK(waitwise_condvar_new_with_policy(&q.not_full, policy_at(i)));
        pthread_t ts[4];
        ts[0] = spawn(produce, &q);
        ts[1] = spawn(produce, &q);
        ts[2] = spawn(consume, &q);
        ts[3] = spawn(consume, &q);
        for (int k = 0; k < 4; k++) join(ts[k]);
        long n = q.items_per_producer;
        CHECK(q.consumed_count == 2 * n);
        CHECK(q.consumed_sum == 2 * (n * (n + 1) / 2));

        /* A wait without holding the mutex is refused at once. */
        CHECK_RC(waitwise_condvar_wait(q.not_empty, q.mutex), WAITWISE_EPERM);
        CHECK_RC(waitwise_condvar_timedwait_ns(q.not_empty, q.mutex, MS), WAITWISE_EPERM);
        /* A timed wait that times out returns with the mutex held again. */
        OK(waitwise_mutex_lock(q.mutex));
        double t0 = now_s();
        CHECK_RC(waitwise_condvar_timedwait_ns(q.not_empty, q.mutex, 20 * MS), WAITWISE_ETIMEDOUT);
        CHECK(now_s() - t0 >= 0.019);
        CHECK_RC(waitwise_mutex_trylock(q.mutex), WAITWISE_EBUSY);
        OK(waitwise_mutex_unlock(q.mutex));

        OK(waitwise_condvar_destroy(q.not_empty));
        OK(waitwise_condvar_destroy(q.not_full));
        OK(waitwise_mutex_destroy(q.mutex));
        printf("  condvar policy %d: %.2f s\n", i, now_s() - t_policy);
    }
    printf("condvar: ok (2 producers x %d items, 2 consumers)\n", ITEMS_PER_PRODUCER);
}

/* ---- barrier: exactly one serial thread per episode ---- */

#define BARRIER_THREADS 4
#define EPISODES 10000

struct barrier_arg {
    waitwise_barrier_t *barrier;
    atomic_int arrived;
    atomic_int leaders[EPISODES];
};

static void *barrier_worker(void *p) {
    struct barrier_arg *a = p;
    for (int e = 0; e < EPISODES; e++) {
        atomic_fetch_add(&a->arrived, 1);
        int rc = waitwise_barrier_wait(a->barrier);
        CHECK(rc == 0 || rc == WAITWISE_BARRIER_SERIAL_THREAD);
        /* Nobody leaves episode e before all arrived in it. */
        CHECK(atomic_load(&a->arrived) >= BARRIER_THREADS * (e + 1));
        if (rc == WAITWISE_BARRIER_SERIAL_THREAD) atomic_fetch_add(&a->leaders[e], 1);
    }
    return NULL;
}

static void test_barrier(void) {
    waitwise_barrier_t *b = NULL;
    CHECK_RC(waitwise_barrier_new(&b, 0), WAITWISE_EINVAL);
    CHECK(b == NULL);
    /* One party: every wait leads at once. */
    OK(waitwise_barrier_new(&b, 1));
    CHECK_RC(waitwise_barrier_wait(b), WAITWISE_BARRIER_SERIAL_THREAD);
    OK(waitwise_barrier_destroy(b));

    for (int i = 0; i < 3; i++) {
        struct barrier_arg *a = calloc(1, sizeof *a);
        CHECK(a != NULL);
        OK(waitwise_barrier_new_with_policy(&a->barrier, BARRIER_THREADS, policy_at(i)));
        pthread_t ts[BARRIER_THREADS];
        for (int k = 0; k < BARRIER_THREADS; k++) ts[k] = spawn(barrier_worker, a);
        for (int k = 0; k < BARRIER_THREADS; k++) join(ts[k]);
        for (int e = 0; e < EPISODES; e++) CHECK(atomic_load(&a->leaders[e]) == 1);
        OK(waitwise_barrier_destroy(a->barrier));
        free(a);
    }
    printf("barrier: ok (%d threads x %d episodes, one leader each)\n", BARRIER_THREADS,
           EPISODES);
}

/* ---- semaphore ---- */

struct ping {
    waitwise_semaphore_t *ping, *pong;
    int rounds;
};

static void *ponger(void *p) {
    struct ping *a = p;
    for (int i = 0; i < a->rounds; i++) {
        OK(waitwise_semaphore_wait(a->ping));
        OK(waitwise_semaphore_post(a->pong));
    }
    return NULL;
}

static void test_semaphore(void) {
    waitwise_semaphore_t *s = NULL;
    CHECK_RC(waitwise_semaphore_new(&s, (uint32_t)WAITWISE_SEM_VALUE_MAX + 1), WAITWISE_EINVAL);
    CHECK(s == NULL);
    OK(waitwise_semaphore_new(&s, WAITWISE_SEM_VALUE_MAX));
    CHECK_RC(waitwise_semaphore_post(s), WAITWISE_EOVERFLOW);
    int v = 0;
    OK(waitwise_semaphore_getvalue(s, &v));
    CHECK(v == WAITWISE_SEM_VALUE_MAX);
    OK(waitwise_semaphore_destroy(s));

    for (int i = 0; i < POLICIES; i++) {
        double t_policy = now_s();
        OK(waitwise_semaphore_new_with_policy(&s, 0, policy_at(i)));
        CHECK_RC(waitwise_semaphore_trywait(s), WAITWISE_EAGAIN);
        double t0 = now_s();
        CHECK_RC(waitwise_semaphore_timedwait_ns(s, 20 * MS), WAITWISE_ETIMEDOUT);
        CHECK(now_s() - t0 >= 0.019);
        OK(waitwise_semaphore_post(s));
        OK(waitwise_semaphore_post(s));
        OK(waitwise_semaphore_getvalue(s, &v));
        CHECK(v == 2);
        OK(waitwise_semaphore_trywait(s));
        OK(waitwise_semaphore_timedwait_ns(s, 0));
        OK(waitwise_semaphore_getvalue(s, &v));
        CHECK(v == 0);
        OK(waitwise_semaphore_destroy(s));

        struct ping a;
        a.rounds = rounds_for(i, 10000);
        OK(waitwise_semaphore_new_with_policy(&a.ping, 0, policy_at(i)));
        OK(waitwise_semaphore_new_with_policy(&a.pong, 0, policy_at(i)));
        pthread_t t = spawn(ponger, &a);
        for (int k = 0; k < a.rounds; k++) {
            OK(waitwise_semaphore_post(a.ping));
            OK(waitwise_semaphore_wait(a.pong));
        }
        join(t);
        OK(waitwise_semaphore_destroy(a.ping));
        OK(waitwise_semaphore_destroy(a.pong));
        printf("  semaphore policy %d: %.2f s\n", i, now_s() - t_policy);
    }
    printf("semaphore: ok\n");
}

/* ---- probe ---- */

static void test_probe(void) {
    char *json = (char *)1;
    OK(waitwise_probe_json(&json));
    CHECK(json != NULL);
    size_t n = strlen(json);
    CHECK(n > 2 && json[0] == '{' && json[n - 1] == '}');
    CHECK(strstr(json, "\"costs\"") != NULL);
    CHECK(strstr(json, "\"block_ns\"") != NULL);
    CHECK(strstr(json, "\"topology\"") != NULL);
    printf("probe: ok (%zu bytes of JSON)\n", n);
    waitwise_string_free(json);
}

/* Runs one section and prints how long it took. */
static void section(const char *name, void (*test)(void)) {
    double t0 = now_s();
    test();
    printf("  (%s: %.2f s)\n", name, now_s() - t0);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    section("errors", test_errors_and_policies);
    section("version", test_version);
    section("null", test_null_handling);
    section("event", test_event);
    section("mutex", test_mutex);
    section("condvar", test_condvar);
    section("barrier", test_barrier);
    section("semaphore", test_semaphore);
    section("probe", test_probe);
    printf("all ok\n");
    return 0;
}
