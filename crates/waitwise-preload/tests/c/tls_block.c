/* Whether a new thread has the interposer implementation's TLS block
 * before any access to it: prints "allocated" or "not allocated" (as
 * dl_iterate_phdr reports the calling thread's block), or "not loaded".
 * A lock before and after makes the program import pthread_mutex_lock. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "check.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *verdict = "not loaded";

static int look(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && strstr(info->dlpi_name, "libwaitwise_interposer.so"))
        verdict = info->dlpi_tls_modid && info->dlpi_tls_data ? "allocated" : "not allocated";
    return 0;
}

static void *new_thread(void *arg) {
    dl_iterate_phdr(look, NULL);
    return arg;
}

int main(void) {
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    pthread_t thread;
    CHECK_RC(pthread_create(&thread, NULL, new_thread, NULL), 0);
    CHECK_RC(pthread_join(thread, NULL), 0);
    puts(verdict);
    return 0;
}
