/* Every interposed function, as referenced by a normally built program
 * (versioned references such as pthread_cond_wait@GLIBC_2.3.2 included),
 * resolves to libwaitwise_preload.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <threads.h>

#include "check.h"

struct fn {
    const char *name;
    void *addr;
};

#define FN(f) {#f, (void *)&f}

int main(void) {
    struct fn fns[] = {
        FN(pthread_mutex_init),     FN(pthread_mutex_destroy),
        FN(pthread_mutex_lock),     FN(pthread_mutex_trylock),
        FN(pthread_mutex_timedlock), FN(pthread_mutex_clocklock),
        FN(pthread_mutex_unlock),   FN(pthread_cond_init),
        FN(pthread_cond_destroy),   FN(pthread_cond_wait),
        FN(pthread_cond_timedwait), FN(pthread_cond_clockwait),
        FN(pthread_cond_signal),    FN(pthread_cond_broadcast),
        FN(pthread_barrier_init),   FN(pthread_barrier_destroy),
        FN(pthread_barrier_wait),   FN(pthread_spin_init),
        FN(pthread_spin_destroy),   FN(pthread_spin_lock),
        FN(pthread_spin_trylock),   FN(pthread_spin_unlock),
        FN(sem_init),               FN(sem_destroy),
        FN(sem_wait),               FN(sem_trywait),
        FN(sem_timedwait),          FN(sem_post),
        FN(sem_getvalue),           FN(mtx_init),
        FN(mtx_lock),               FN(mtx_trylock),
        FN(mtx_timedlock),          FN(mtx_unlock),
        FN(mtx_destroy),            FN(cnd_init),
        FN(cnd_signal),             FN(cnd_broadcast),
        FN(cnd_wait),               FN(cnd_timedwait),
        FN(cnd_destroy),
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        Dl_info info;
        if (!dladdr(fns[i].addr, &info) || !info.dli_fname ||
            !strstr(info.dli_fname, "waitwise_preload")) {
            fprintf(stderr, "%s resolves to %s\n", fns[i].name,
                    info.dli_fname ? info.dli_fname : "?");
            bad = 1;
        }
    }
    printf("%s\n", bad ? "unbound" : "bound");
    return bad;
}
