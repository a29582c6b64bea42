/* The owner id a lock records is the one glibc keeps for the thread (the
 * `tid` field of its descriptor), which is not always the kernel's id.
 *
 * A process made by the raw clone system call, not glibc's fork, keeps
 * its parent's id in that field. Chromium's zygote clones its renderers
 * so, then learns glibc's id by locking a recursive mutex and reading
 * `__owner`; when that differs from gettid() it corrects glibc's field
 * and checks the correction the same way. Had the lock recorded gettid(),
 * glibc's field would stay stale, and glibc's later calls about "this
 * thread" (pthread_getschedparam, pthread_getattr_np) would name the
 * parent's id, which Chromium's sandbox kills the process for.
 *
 * Checks, in the main thread and a second thread: `__owner` of a held
 * recursive and of a held error-checking mutex, and a write-locked
 * rwlock's `__cur_writer`, are gettid(). Then in a raw-clone child: they
 * are the parent's id; after the child corrects glibc's field as Chromium
 * does, they are the child's id, and the child's locks still unlock.
 *
 * Prints "owner ids as glibc's" and exits 0, or names the failed check. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static pid_t kernel_tid(void) { return (pid_t)syscall(SYS_gettid); }

/* The owner ids a held recursive mutex, a held error-checking mutex and a
 * write-locked rwlock record for the calling thread; each must be
 * `want`. */
static void check_owners(pid_t want) {
    pthread_mutex_t recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    CHECK_RC(pthread_mutex_lock(&recursive), 0);
    CHECK_RC(pthread_mutex_lock(&recursive), 0);
    CHECK(recursive.__data.__owner == want);
    CHECK_RC(pthread_mutex_unlock(&recursive), 0);
    CHECK_RC(pthread_mutex_unlock(&recursive), 0);
    CHECK_RC(pthread_mutex_unlock(&recursive), EPERM);

    pthread_mutex_t errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
    CHECK_RC(pthread_mutex_lock(&errorcheck), 0);
    CHECK(errorcheck.__data.__owner == want);
    CHECK_RC(pthread_mutex_lock(&errorcheck), EDEADLK);
    CHECK_RC(pthread_mutex_unlock(&errorcheck), 0);

    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    CHECK_RC(pthread_rwlock_wrlock(&rw), 0);
    CHECK(rw.__data.__cur_writer == want);
    CHECK_RC(pthread_rwlock_unlock(&rw), 0);
}

static void *second_thread(void *arg) {
    (void)arg;
    check_owners(kernel_tid());
    return NULL;
}

/* glibc's id for the calling thread, read as Chromium reads it. */
static pid_t glibc_cached_tid(void) {
    pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    CHECK_RC(pthread_mutex_lock(&lock), 0);
    pid_t tid = lock.__data.__owner;
    CHECK_RC(pthread_mutex_unlock(&lock), 0);
    return tid;
}

/* The raw-clone child: runs the checks, returns its exit status. */
static int child(pid_t parent_tid) {
    CHECK(kernel_tid() != parent_tid);
    /* glibc's field still holds the parent's id. */
    check_owners(parent_tid);
    CHECK(glibc_cached_tid() == parent_tid);
#if defined(__x86_64__)
    /* Chromium's correction: glibc's `struct pthread` starts with a
     * 704-byte header and a two-pointer list link, then `tid`. */
    pid_t *field = (pid_t *)((char *)pthread_self() + 704 + 2 * sizeof(void *));
    CHECK(*field == parent_tid);
    *field = kernel_tid();
    CHECK(glibc_cached_tid() == kernel_tid());
    check_owners(kernel_tid());
#endif
    return 0;
}

int main(void) {
    check_owners(kernel_tid());
    pthread_t t;
    CHECK_RC(pthread_create(&t, NULL, second_thread, NULL), 0);
    CHECK_RC(pthread_join(t, NULL), 0);

    pid_t parent_tid = kernel_tid();
    fflush(stdout);
    /* A fork by the raw system call (no new stack: the child continues on
     * a copy of this one, as after fork), so glibc's fork handlers and its
     * update of the descriptor's id do not run. */
    long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
    CHECK(pid >= 0);
    if (pid == 0) _exit(child(parent_tid));
    int status;
    CHECK(waitpid((pid_t)pid, &status, 0) == (pid_t)pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("owner ids as glibc's\n");
    return 0;
}
