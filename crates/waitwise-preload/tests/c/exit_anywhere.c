/* pthread_exit from a signal handler that may interrupt a waiter at any
 * instruction, not only while it sleeps: a thread loops on short timed
 * waits (it spends much of its time in the wait's own code between system
 * calls), and another thread sends it SIGUSR1, whose handler calls
 * pthread_exit, after a random delay. The unwind must pass through the
 * wait's frames wherever it starts; the process must live on, and the
 * object must keep working.
 *
 * Usage: exit_anywhere cond|sem|mutex ROUNDS. Prints "exit-anywhere MODE: ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "threads.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static sem_t s;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static atomic_int started;
static const char *mode;

static void on_usr1(int sig) {
    (void)sig;
    pthread_exit((void *)7L);
}

static void unlock_m(void *arg) {
    (void)arg;
    pthread_mutex_unlock(&m);
}

static struct timespec soon(clockid_t clock, long ns) {
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += ns;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static void *looper(void *arg) {
    (void)arg;
    atomic_store(&started, 1);
    for (;;) {
        if (!strcmp(mode, "cond")) {
            /* The signal is blocked while the mutex is held outside the
             * wait and its cleanup handler is not registered. */
            sigset_t usr1;
            sigemptyset(&usr1);
            sigaddset(&usr1, SIGUSR1);
            pthread_sigmask(SIG_BLOCK, &usr1, NULL);
            pthread_mutex_lock(&m);
            pthread_cleanup_push(unlock_m, NULL);
            pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
            struct timespec d = soon(CLOCK_REALTIME, 2000);
            int rc = pthread_cond_timedwait(&c, &m, &d);
            if (rc != 0 && rc != ETIMEDOUT) fail("cond_timedwait: %d", rc);
            pthread_sigmask(SIG_BLOCK, &usr1, NULL);
            pthread_cleanup_pop(1);
            pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
        } else if (!strcmp(mode, "sem")) {
            struct timespec d = soon(CLOCK_REALTIME, 2000);
            if (sem_timedwait(&s, &d) != 0 && errno != ETIMEDOUT && errno != EINTR)
                fail("sem_timedwait: %d", errno);
        } else {
            struct timespec d = soon(CLOCK_REALTIME, 2000);
            int rc = pthread_mutex_timedlock(&held, &d);
            if (rc == 0) fail("mutex_timedlock took a held lock");
            if (rc != ETIMEDOUT) fail("mutex_timedlock: %d", rc);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    mode = argv[1];
    int rounds = atoi(argv[2]);
    watchdog_start("exit_anywhere", 120);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK_RC(sigaction(SIGUSR1, &sa, NULL), 0);
    CHECK_RC(sem_init(&s, 0, 0), 0);
    CHECK_RC(pthread_mutex_lock(&held), 0);
    unsigned x = 12345;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&started, 0);
        pthread_t t;
        CHECK_RC(pthread_create(&t, NULL, looper, NULL), 0);
        while (!atomic_load(&started)) sched_yield();
        x = x * 1103515245u + 12345u;
        struct timespec d = {0, 20000 + (long)(x >> 8) % 200000};
        nanosleep(&d, NULL);
        CHECK_RC(pthread_kill(t, SIGUSR1), 0);
        void *ret = join_within(t, 10, "the looper ignored pthread_exit");
        if (ret != (void *)7L) fail("round %d: the looper returned %p", r, ret);
    }
    /* The objects still work. */
    if (!strcmp(mode, "cond")) {
        CHECK_RC(pthread_mutex_lock(&m), 0);
        CHECK_RC(pthread_cond_signal(&c), 0);
        CHECK_RC(pthread_mutex_unlock(&m), 0);
        CHECK_RC(pthread_cond_destroy(&c), 0);
    } else if (!strcmp(mode, "sem")) {
        CHECK_RC(sem_post(&s), 0);
        CHECK_RC(sem_wait(&s), 0);
        CHECK_RC(sem_destroy(&s), 0);
    } else {
        CHECK_RC(pthread_mutex_unlock(&held), 0);
        CHECK_RC(pthread_mutex_lock(&held), 0);
        CHECK_RC(pthread_mutex_unlock(&held), 0);
    }
    printf("exit-anywhere %s: ok\n", mode);
    return 0;
}
