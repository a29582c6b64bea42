/* Process-shared objects across fork (forwarded to the C library): a
 * mutex guarding a counter in shared memory, a condvar hand-off, a
 * semaphore and a barrier; plus robust and priority-inheritance mutexes
 * (forwarded too). Usage: pshared. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define ITERS 100000

struct shared {
    pthread_mutex_t m;
    pthread_cond_t cv;
    pthread_barrier_t b;
    sem_t sem;
    long counter;
    int ready;
    pthread_mutex_t robust;
};

static void work(struct shared *s) {
    for (int i = 0; i < ITERS; i++) {
        CHECK_RC(pthread_mutex_lock(&s->m), 0);
        s->counter++;
        CHECK_RC(pthread_mutex_unlock(&s->m), 0);
    }
    CHECK_RC(pthread_barrier_wait(&s->b) & ~PTHREAD_BARRIER_SERIAL_THREAD, 0);
}

int main(void) {
    struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(s != MAP_FAILED);
    pthread_mutexattr_t ma;
    CHECK_RC(pthread_mutexattr_init(&ma), 0);
    CHECK_RC(pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED), 0);
    CHECK_RC(pthread_mutex_init(&s->m, &ma), 0);
    CHECK_RC(pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST), 0);
    CHECK_RC(pthread_mutex_init(&s->robust, &ma), 0);
    pthread_condattr_t ca;
    CHECK_RC(pthread_condattr_init(&ca), 0);
    CHECK_RC(pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED), 0);
    CHECK_RC(pthread_cond_init(&s->cv, &ca), 0);
    pthread_barrierattr_t ba;
    CHECK_RC(pthread_barrierattr_init(&ba), 0);
    CHECK_RC(pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED), 0);
    CHECK_RC(pthread_barrier_init(&s->b, &ba, 2), 0);
    CHECK(sem_init(&s->sem, 1, 0) == 0);

    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        work(s);
        /* Hand-off over the shared condvar and semaphore. */
        CHECK_RC(pthread_mutex_lock(&s->m), 0);
        s->ready = 1;
        CHECK_RC(pthread_cond_signal(&s->cv), 0);
        CHECK_RC(pthread_mutex_unlock(&s->m), 0);
        CHECK(sem_post(&s->sem) == 0);
        /* Die holding the robust mutex. */
        CHECK_RC(pthread_mutex_lock(&s->robust), 0);
        _exit(0);
    }
    work(s);
    CHECK_RC(pthread_mutex_lock(&s->m), 0);
    while (!s->ready) CHECK_RC(pthread_cond_wait(&s->cv, &s->m), 0);
    CHECK_RC(pthread_mutex_unlock(&s->m), 0);
    CHECK(sem_wait(&s->sem) == 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(s->counter == 2L * ITERS);
    /* The child died holding it: the next owner learns so. */
    CHECK_RC(pthread_mutex_lock(&s->robust), EOWNERDEAD);
    CHECK_RC(pthread_mutex_consistent(&s->robust), 0);
    CHECK_RC(pthread_mutex_unlock(&s->robust), 0);

    /* Priority inheritance (process-private): forwarded, still a mutex. */
    pthread_mutexattr_t pa;
    pthread_mutex_t pi;
    CHECK_RC(pthread_mutexattr_init(&pa), 0);
    CHECK_RC(pthread_mutexattr_setprotocol(&pa, PTHREAD_PRIO_INHERIT), 0);
    CHECK_RC(pthread_mutex_init(&pi, &pa), 0);
    CHECK_RC(pthread_mutex_lock(&pi), 0);
    CHECK_RC(pthread_mutex_trylock(&pi), EBUSY);
    CHECK_RC(pthread_mutex_unlock(&pi), 0);
    CHECK_RC(pthread_mutex_destroy(&pi), 0);

    CHECK_RC(pthread_mutex_destroy(&s->m), 0);
    CHECK_RC(pthread_cond_destroy(&s->cv), 0);
    CHECK_RC(pthread_barrier_destroy(&s->b), 0);
    CHECK(sem_destroy(&s->sem) == 0);
    printf("ok\n");
    return 0;
}
