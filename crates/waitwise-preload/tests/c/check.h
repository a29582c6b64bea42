/* Shared by the interposer's C test programs: CHECK macros and time helpers. */
#ifndef WAITWISE_PRELOAD_TEST_CHECK_H
#define WAITWISE_PRELOAD_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

/* Checks that `expr` returns `want` (an errno value or 0). */
#define CHECK_RC(expr, want)                                                  \
    do {                                                                      \
        int rc_ = (expr);                                                     \
        if (rc_ != (want)) {                                                  \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s)\n", \
                    __FILE__, __LINE__, #expr, rc_, strerror(rc_), (want),    \
                    strerror(want));                                          \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static inline double now_s(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The absolute time `ms` milliseconds from now on `clock`. */
static inline struct timespec deadline_ms(clockid_t clock, long ms) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static inline void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif
