/* A library whose constructor takes a lock. Linked into a program, it is
 * initialized before the preloaded shim (which the program does not depend
 * on), so its call reaches the shim before the shim's own constructor has
 * decided anything. Reports whether the implementation was mapped right
 * after the lock. */
#include <pthread.h>

#include "check.h"
#include "implementation_mapped.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int mapped_in_constructor = -1;

__attribute__((constructor)) static void take_the_lock(void) {
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    mapped_in_constructor = implementation_mapped();
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
}

int early_library_mapped(void) { return mapped_in_constructor; }
