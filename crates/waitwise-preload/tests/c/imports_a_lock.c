/* A program that imports pthread_mutex_lock and prints, first thing in
 * main, whether the interposer's implementation is mapped ("mapped" or
 * "not mapped"); then it takes its lock from two threads. */
#include <pthread.h>

#include "check.h"
#include "implementation_mapped.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void *add(void *arg) {
    for (int i = 0; i < 100000; i++) {
        CHECK_RC(pthread_mutex_lock(&lock), 0);
        counter++;
        CHECK_RC(pthread_mutex_unlock(&lock), 0);
    }
    return arg;
}

int main(void) {
    int mapped = implementation_mapped();
    CHECK(mapped >= 0);
    puts(mapped ? "mapped" : "not mapped");
    pthread_t other;
    CHECK_RC(pthread_create(&other, NULL, add, NULL), 0);
    add(NULL);
    CHECK_RC(pthread_join(other, NULL), 0);
    CHECK(counter == 200000);
    return 0;
}
