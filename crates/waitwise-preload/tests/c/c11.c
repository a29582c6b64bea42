/* C11's <threads.h> mutexes and condition variables (mtx_*, cnd_*): their
 * types, results (thrd_busy, thrd_timedout), recursion, timed
 * waits on TIME_UTC, turns through one condition variable and a bounded
 * buffer, and call_once beside them. Prints "ok" and exits 0, or fails
 * with a message. */
#include <stdatomic.h>
#include <threads.h>

#include "check.h"

/* Checks that a thrd_* result is `want`. */
#define CHECK_THRD(expr, want)                                                    \
    do {                                                                          \
        int r_ = (expr);                                                          \
        if (r_ != (want)) {                                                       \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__,     \
                    __LINE__, #expr, r_, (want));                                 \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

/* A thread that tries the mutex once: its result. */
static int try_once(void *m) {
    int r = mtx_trylock(m);
    if (r == thrd_success)
        mtx_unlock(m);
    return r;
}

static int try_from_another_thread(mtx_t *m) {
    thrd_t t;
    int r;
    CHECK_THRD(thrd_create(&t, try_once, m), thrd_success);
    CHECK_THRD(thrd_join(t, &r), thrd_success);
    return r;
}

static void types_and_results(void) {
    mtx_t m;
    int types[] = {mtx_plain, mtx_timed, mtx_plain | mtx_recursive, mtx_timed | mtx_recursive};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        CHECK_THRD(mtx_init(&m, types[i]), thrd_success);
        CHECK_THRD(mtx_lock(&m), thrd_success);
        CHECK_THRD(try_from_another_thread(&m), thrd_busy);
        CHECK_THRD(mtx_unlock(&m), thrd_success);
        CHECK_THRD(try_from_another_thread(&m), thrd_success);
        mtx_destroy(&m);
    }
    /* Not one of C11's types: a normal mutex, as glibc 2.36 makes (it
     * refuses none). */
    int others[] = {-1, 4, 5, 7};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        CHECK_THRD(mtx_init(&m, others[i]), thrd_success);
        CHECK_THRD(mtx_lock(&m), thrd_success);
        CHECK_THRD(mtx_trylock(&m), thrd_busy);
        CHECK_THRD(mtx_unlock(&m), thrd_success);
        mtx_destroy(&m);
    }
    /* A plain mutex held by its caller is busy to it too. */
    CHECK_THRD(mtx_init(&m, mtx_plain), thrd_success);
    CHECK_THRD(mtx_lock(&m), thrd_success);
    CHECK_THRD(mtx_trylock(&m), thrd_busy);
    CHECK_THRD(mtx_unlock(&m), thrd_success);
    mtx_destroy(&m);
}

static void recursion(void) {
    mtx_t m;
    CHECK_THRD(mtx_init(&m, mtx_plain | mtx_recursive), thrd_success);
    CHECK_THRD(mtx_lock(&m), thrd_success);
    CHECK_THRD(mtx_lock(&m), thrd_success);
    CHECK_THRD(mtx_trylock(&m), thrd_success);
    struct timespec soon = deadline_ms(CLOCK_REALTIME, 10);
    CHECK_THRD(mtx_timedlock(&m, &soon), thrd_success);
    for (int i = 0; i < 3; i++) {
        CHECK_THRD(mtx_unlock(&m), thrd_success);
        CHECK_THRD(try_from_another_thread(&m), thrd_busy);
    }
    CHECK_THRD(mtx_unlock(&m), thrd_success);
    CHECK_THRD(try_from_another_thread(&m), thrd_success);
    mtx_destroy(&m);
}

struct holder {
    mtx_t *m;
    atomic_int held;
    atomic_int release;
};

static int hold_until_released(void *arg) {
    struct holder *h = arg;
    mtx_lock(h->m);
    atomic_store(&h->held, 1);
    while (!atomic_load(&h->release))
        thrd_yield();
    mtx_unlock(h->m);
    return 0;
}

static void timed_lock(void) {
    mtx_t m;
    CHECK_THRD(mtx_init(&m, mtx_timed), thrd_success);
    struct holder h = {&m, 0, 0};
    thrd_t t;
    CHECK_THRD(thrd_create(&t, hold_until_released, &h), thrd_success);
    while (!atomic_load(&h.held))
        thrd_yield();
    /* Held by another thread: times out, not before its deadline. */
    double start = now_s(CLOCK_REALTIME);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 50);
    CHECK_THRD(mtx_timedlock(&m, &d), thrd_timedout);
    CHECK(now_s(CLOCK_REALTIME) - start >= 0.049);
    /* A deadline already past: times out at once. */
    struct timespec past;
    clock_gettime(CLOCK_REALTIME, &past);
    past.tv_sec -= 1;
    CHECK_THRD(mtx_timedlock(&m, &past), thrd_timedout);
    atomic_store(&h.release, 1);
    CHECK_THRD(thrd_join(t, NULL), thrd_success);
    /* Free: taken, whatever the deadline. */
    CHECK_THRD(mtx_timedlock(&m, &past), thrd_success);
    CHECK_THRD(mtx_unlock(&m), thrd_success);
    mtx_destroy(&m);
}

/* Threads taking turns in order through one condition variable. */
enum { TAKERS = 4, ROUNDS = 1000 };
static mtx_t turn_m;
static cnd_t turn_c;
static int turn;

static int take_turns(void *arg) {
    int me = (int)(long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        mtx_lock(&turn_m);
        while (turn % TAKERS != me)
            CHECK_THRD(cnd_wait(&turn_c, &turn_m), thrd_success);
        turn++;
        cnd_broadcast(&turn_c);
        mtx_unlock(&turn_m);
    }
    return 0;
}

static void turns(void) {
    CHECK_THRD(mtx_init(&turn_m, mtx_plain), thrd_success);
    CHECK_THRD(cnd_init(&turn_c), thrd_success);
    thrd_t t[TAKERS];
    for (long i = 0; i < TAKERS; i++)
        CHECK_THRD(thrd_create(&t[i], take_turns, (void *)i), thrd_success);
    for (int i = 0; i < TAKERS; i++)
        CHECK_THRD(thrd_join(t[i], NULL), thrd_success);
    CHECK(turn == TAKERS * ROUNDS);
    cnd_destroy(&turn_c);
    mtx_destroy(&turn_m);
}

/* A bounded buffer: producers wait while it is full, consumers while it
 * is empty, each side woken by cnd_signal. */
enum { SLOTS = 8, ITEMS = 20000, SIDES = 2 };
static struct {
    mtx_t m;
    cnd_t not_full, not_empty;
    long buf[SLOTS];
    int head, count, producers_left;
    long sum;
} q;

static int produce(void *arg) {
    long base = (long)arg;
    for (long i = 1; i <= ITEMS; i++) {
        mtx_lock(&q.m);
        while (q.count == SLOTS)
            cnd_wait(&q.not_full, &q.m);
        q.buf[(q.head + q.count) % SLOTS] = base + i;
        q.count++;
        cnd_signal(&q.not_empty);
        mtx_unlock(&q.m);
    }
    mtx_lock(&q.m);
    q.producers_left--;
    cnd_broadcast(&q.not_empty);
    mtx_unlock(&q.m);
    return 0;
}

static int consume(void *arg) {
    (void)arg;
    for (;;) {
        mtx_lock(&q.m);
        while (q.count == 0 && q.producers_left > 0)
            cnd_wait(&q.not_empty, &q.m);
        if (q.count == 0) {
            mtx_unlock(&q.m);
            return 0;
        }
        q.sum += q.buf[q.head];
        q.head = (q.head + 1) % SLOTS;
        q.count--;
        cnd_signal(&q.not_full);
        mtx_unlock(&q.m);
    }
}

static void bounded_buffer(void) {
    CHECK_THRD(mtx_init(&q.m, mtx_plain), thrd_success);
    CHECK_THRD(cnd_init(&q.not_full), thrd_success);
    CHECK_THRD(cnd_init(&q.not_empty), thrd_success);
    q.producers_left = SIDES;
    thrd_t p[SIDES], c[SIDES];
    for (long i = 0; i < SIDES; i++) {
        CHECK_THRD(thrd_create(&p[i], produce, (void *)(i * 1000000)), thrd_success);
        CHECK_THRD(thrd_create(&c[i], consume, NULL), thrd_success);
    }
    for (int i = 0; i < SIDES; i++) {
        CHECK_THRD(thrd_join(p[i], NULL), thrd_success);
        CHECK_THRD(thrd_join(c[i], NULL), thrd_success);
    }
    long want = 0;
    for (long i = 0; i < SIDES; i++)
        want += i * 1000000 * ITEMS + (long)ITEMS * (ITEMS + 1) / 2;
    CHECK(q.sum == want);
    cnd_destroy(&q.not_full);
    cnd_destroy(&q.not_empty);
    mtx_destroy(&q.m);
}

/* Timed condition waits on TIME_UTC: one that nobody signals times out,
 * not before its deadline, holding the mutex again; one that is signalled
 * returns success. */
static mtx_t sig_m;
static cnd_t sig_c;
static int signalled;

static int signal_soon(void *arg) {
    (void)arg;
    sleep_ms(20);
    mtx_lock(&sig_m);
    signalled = 1;
    cnd_signal(&sig_c);
    mtx_unlock(&sig_m);
    return 0;
}

static void timed_waits(void) {
    CHECK_THRD(mtx_init(&sig_m, mtx_plain), thrd_success);
    CHECK_THRD(cnd_init(&sig_c), thrd_success);
    mtx_lock(&sig_m);
    double start = now_s(CLOCK_REALTIME);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 50);
    int r;
    do
        r = cnd_timedwait(&sig_c, &sig_m, &d);
    while (r == thrd_success); /* spurious wake-ups are allowed */
    CHECK_THRD(r, thrd_timedout);
    CHECK(now_s(CLOCK_REALTIME) - start >= 0.049);
    CHECK_THRD(try_from_another_thread(&sig_m), thrd_busy);
    thrd_t t;
    CHECK_THRD(thrd_create(&t, signal_soon, NULL), thrd_success);
    struct timespec later = deadline_ms(CLOCK_REALTIME, 60000);
    while (!signalled)
        CHECK_THRD(cnd_timedwait(&sig_c, &sig_m, &later), thrd_success);
    mtx_unlock(&sig_m);
    CHECK_THRD(thrd_join(t, NULL), thrd_success);
    cnd_destroy(&sig_c);
    mtx_destroy(&sig_m);
}

static once_flag once = ONCE_FLAG_INIT;
static atomic_int once_calls;

static void count_call(void) {
    sleep_ms(10);
    atomic_fetch_add(&once_calls, 1);
}

static int call_it_once(void *arg) {
    (void)arg;
    call_once(&once, count_call);
    return 0;
}

static void once_beside_them(void) {
    thrd_t t[8];
    for (int i = 0; i < 8; i++)
        CHECK_THRD(thrd_create(&t[i], call_it_once, NULL), thrd_success);
    for (int i = 0; i < 8; i++)
        CHECK_THRD(thrd_join(t[i], NULL), thrd_success);
    CHECK(atomic_load(&once_calls) == 1);
}

int main(void) {
    types_and_results();
    recursion();
    timed_lock();
    turns();
    bounded_buffer();
    timed_waits();
    once_beside_them();
    printf("ok\n");
    return 0;
}
