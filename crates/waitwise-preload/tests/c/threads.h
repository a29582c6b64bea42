/* Shared by the programs that stop a thread inside a wait (unwind.c,
 * cancel.c, fork.c): failing with a message, a watchdog that turns a hang
 * into a failure, joining with a deadline, and waiting until a thread is
 * asleep in the kernel. Include after defining _GNU_SOURCE. */
#ifndef WAITWISE_PRELOAD_TEST_THREADS_H
#define WAITWISE_PRELOAD_TEST_THREADS_H

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"

/* Prints "FAIL: message" on stderr and ends the process at once (_exit:
 * no atexit handler may wait for a thread that is stuck). */
__attribute__((format(printf, 1, 2), noreturn)) static inline void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fputs("FAIL: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    _exit(1);
}

/* What the program is doing, for the watchdog's message. */
static const char *volatile watchdog_stage = "start";
static const char *watchdog_name = "";

static inline void say(const char *s) {
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}

static inline void watchdog_fired(int sig) {
    (void)sig;
    say("FAIL: ");
    say(watchdog_name);
    say(": watchdog: hung while: ");
    say(watchdog_stage);
    say("\n");
    _exit(3);
}

/* After `seconds` without finishing, the process prints its stage and
 * exits with status 3 (a hang fails fast instead of stalling the tests). */
static inline void watchdog_start(const char *name, unsigned seconds) {
    watchdog_name = name;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = watchdog_fired;
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
    alarm(seconds);
}

static inline void stage(const char *what) { watchdog_stage = what; }

/* Joins `t` within `seconds` (a hang detector, never a performance
 * bound); fails with `what` if it is still running then. */
static inline void *join_within(pthread_t t, int seconds, const char *what) {
    struct timespec d = deadline_ms(CLOCK_REALTIME, seconds * 1000L);
    void *ret = NULL;
    int rc = pthread_timedjoin_np(t, &ret, &d);
    if (rc == ETIMEDOUT) fail("%s (thread still running after %d s)", what, seconds);
    CHECK_RC(rc, 0);
    return ret;
}

/* The scheduler state of thread `tid` of this process ('S': asleep,
 * 'R': running), or 0 if it has exited. */
static inline char task_state(pid_t tid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : 0;
}

/* A thread that is about to make a blocking call. */
struct waiter {
    pthread_t thread;
    atomic_int tid;
    atomic_int entering; /* set just before the blocking call */
    atomic_int returned; /* set when the blocking call returned */
    atomic_int rc;       /* what it returned */
    atomic_int cleaned;  /* its cleanup handler ran */
    atomic_int unlock_rc; /* what the cleanup handler's mutex unlock returned */
};

/* Whether `w` is asleep and stays so for 30 ms (seen twice). */
static inline int stays_asleep(struct waiter *w) {
    if (task_state(atomic_load(&w->tid)) != 'S') return 0;
    sleep_ms(30);
    return task_state(atomic_load(&w->tid)) == 'S' && !atomic_load(&w->returned);
}

/* Waits until `w` has entered its blocking call and sleeps in it. A wait
 * that polls before it sleeps sleeps within milliseconds; one that never
 * sleeps (a spin lock) gets `spin_ms` after entering instead. A thread
 * seen running for 3 s (it spins on) is taken as waiting too. */
static inline void wait_asleep(struct waiter *w, int spins, long spin_ms) {
    while (!atomic_load(&w->entering)) sleep_ms(1);
    sleep_ms(20);
    if (spins) {
        sleep_ms(spin_ms);
        return;
    }
    for (int i = 0; i < 600; i++) {
        if (atomic_load(&w->returned)) return;
        if (stays_asleep(w)) return;
        sleep_ms(5);
    }
}

#endif
