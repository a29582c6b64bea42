/* fork() while the process makes its first timed waits. Each iteration is
 * a fresh process (this program exec'd as `fork one SEED`): it starts
 * threads that make timed waits (the process's first: a condvar
 * timedwait, a sem_timedwait, a mutex timedlock on a held mutex, with
 * short timeouts, in loops) and threads that block (a condvar wait, a
 * sem_wait), sleeps 0-20 ms (drawn from SEED), and forks. Anything the
 * first waits set up lazily may be half done in the child, which inherits
 * only the forking thread. The child makes a timed wait of each kind, locks
 * and unlocks a mutex, signals a condvar, meets a second thread at a
 * barrier of 2, and _exits 0. The parent waits for it at most CHILD_S
 * seconds; a child still alive then is killed and reported hung.
 *
 * Usage: fork ITERATIONS [FIRST_SEED]: prints "fork: ITERATIONS
 * iterations ok", or the seed of the first failing one (rerun it with
 * `fork one SEED`). */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "threads.h"

#define CHILD_S 5    /* a child that takes longer is hung (it takes ~1 ms) */
#define PROCESS_S 30 /* the same for a whole iteration */

static int sem_rc(int r) { return r == 0 ? 0 : errno; }

/* Waits for `pid` at most `seconds`; returns its wait status, or -1 after
 * killing it when it is still running then. */
static int wait_for(pid_t pid, int seconds) {
    int status;
    for (long waited_ms = 0;; waited_ms++) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status;
        CHECK(r == 0);
        if (waited_ms >= seconds * 1000L) break;
        sleep_ms(1);
    }
    kill(pid, SIGKILL);
    CHECK(waitpid(pid, &status, 0) == pid);
    return -1;
}

static void describe(char *buf, size_t n, int status) {
    if (status == -1)
        snprintf(buf, n, "hung (killed)");
    else if (WIFEXITED(status))
        snprintf(buf, n, "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "status %#x", status);
}

/* ---- the child ---- */

static pthread_barrier_t child_barrier;

static void *child_partner(void *arg) {
    (void)arg;
    int rc = pthread_barrier_wait(&child_barrier);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    return NULL;
}

/* Fresh objects only: the parent's may be held by threads the child does
 * not have. */
static void child(void) {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    sem_t s;
    CHECK_RC(pthread_mutex_lock(&m), 0);
    struct timespec d = deadline_ms(CLOCK_REALTIME, 2);
    int rc = pthread_cond_timedwait(&c, &m, &d);
    CHECK(rc == 0 || rc == ETIMEDOUT);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(sem_rc(sem_init(&s, 0, 0)), 0);
    d = deadline_ms(CLOCK_REALTIME, 2);
    CHECK_RC(sem_rc(sem_timedwait(&s, &d)), ETIMEDOUT);
    CHECK_RC(sem_rc(sem_post(&s)), 0);
    d = deadline_ms(CLOCK_REALTIME, 2);
    CHECK_RC(sem_rc(sem_timedwait(&s, &d)), 0);
    d = deadline_ms(CLOCK_REALTIME, 2);
    CHECK_RC(pthread_mutex_timedlock(&m, &d), 0);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(pthread_mutex_lock(&m), 0);
    CHECK_RC(pthread_cond_signal(&c), 0);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(pthread_barrier_init(&child_barrier, NULL, 2), 0);
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, child_partner, NULL), 0);
    rc = pthread_barrier_wait(&child_barrier);
    CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_RC(pthread_join(t, NULL), 0);
    CHECK_RC(pthread_barrier_destroy(&child_barrier), 0);
    _exit(0);
}

/* ---- one process: threads waiting, then fork ---- */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, held = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER, never = PTHREAD_COND_INITIALIZER;
static sem_t timed_sem, blocking_sem;
static atomic_int stop;
static int done; /* under m */

static void *cond_timed(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        CHECK_RC(pthread_mutex_lock(&m), 0);
        struct timespec d = deadline_ms(CLOCK_REALTIME, 1);
        int rc = pthread_cond_timedwait(&c, &m, &d);
        CHECK(rc == 0 || rc == ETIMEDOUT);
        CHECK_RC(pthread_mutex_unlock(&m), 0);
    }
    return NULL;
}

static void *sem_timed(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        struct timespec d = deadline_ms(CLOCK_REALTIME, 2);
        int rc = sem_rc(sem_timedwait(&timed_sem, &d));
        CHECK(rc == ETIMEDOUT || rc == EINTR);
    }
    return NULL;
}

static void *mutex_timed(void *arg) {
    (void)arg;
    while (!atomic_load(&stop)) {
        struct timespec d = deadline_ms(CLOCK_REALTIME, 3);
        int rc = pthread_mutex_timedlock(&held, &d);
        if (rc == 0)
            CHECK_RC(pthread_mutex_unlock(&held), 0);
        else
            CHECK_RC(rc, ETIMEDOUT);
    }
    return NULL;
}

static void *cond_blocking(void *arg) {
    (void)arg;
    CHECK_RC(pthread_mutex_lock(&m), 0);
    while (!done) CHECK_RC(pthread_cond_wait(&never, &m), 0);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    return NULL;
}

static void *sem_blocking(void *arg) {
    (void)arg;
    while (sem_wait(&blocking_sem) != 0) CHECK_RC(errno, EINTR);
    return NULL;
}

static int one(unsigned seed) {
    watchdog_start("fork one", PROCESS_S);
    unsigned r = seed;
    long delay_us = rand_r(&r) % 20001;
    CHECK_RC(sem_rc(sem_init(&timed_sem, 0, 0)), 0);
    CHECK_RC(sem_rc(sem_init(&blocking_sem, 0, 0)), 0);
    CHECK_RC(pthread_mutex_lock(&held), 0);
    void *(*fns[])(void *) = {cond_timed, sem_timed, mutex_timed, cond_blocking, sem_blocking};
    enum { N = sizeof fns / sizeof fns[0] };
    pthread_t t[N];
    /* Start the threads in an order drawn from the seed. */
    int first = rand_r(&r) % 3;
    for (int i = 0; i < N; i++) {
        int k = i < 3 ? (first + i) % 3 : i;
        CHECK_RC(pthread_create(&t[k], NULL, fns[k], NULL), 0);
    }
    struct timespec ts = {0, delay_us * 1000L};
    nanosleep(&ts, NULL);
    stage("fork");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) child();
    stage("waiting for the child");
    int status = wait_for(pid, CHILD_S);
    if (status != 0) {
        char what[128];
        describe(what, sizeof what, status);
        fail("fork one %u: the child forked after %ld us %s", seed, delay_us, what);
    }
    stage("stopping the threads");
    atomic_store(&stop, 1);
    CHECK_RC(pthread_mutex_unlock(&held), 0);
    CHECK_RC(pthread_mutex_lock(&m), 0);
    done = 1;
    CHECK_RC(pthread_cond_broadcast(&never), 0);
    CHECK_RC(pthread_mutex_unlock(&m), 0);
    CHECK_RC(sem_rc(sem_post(&blocking_sem)), 0);
    for (int i = 0; i < N; i++) join_within(t[i], 10, "fork one: a thread did not stop");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "one") == 0) return one((unsigned)strtoul(argv[2], NULL, 10));
    if (argc < 2) {
        fprintf(stderr, "usage: fork ITERATIONS [FIRST_SEED] | fork one SEED\n");
        return 2;
    }
    long iterations = atol(argv[1]);
    unsigned first_seed = argc >= 3 ? (unsigned)strtoul(argv[2], NULL, 10) : 1;
    for (long i = 0; i < iterations; i++) {
        unsigned seed = first_seed + (unsigned)i;
        char arg[32];
        snprintf(arg, sizeof arg, "%u", seed);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "one", arg, (char *)NULL);
            _exit(127);
        }
        int status = wait_for(pid, PROCESS_S + 5);
        if (status != 0) {
            char what[128];
            describe(what, sizeof what, status);
            fail("fork: iteration %ld (rerun with: fork one %u): %s", i, seed, what);
        }
    }
    printf("fork: %ld iterations ok\n", iterations);
    return 0;
}
