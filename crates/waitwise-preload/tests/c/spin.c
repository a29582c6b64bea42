/* pthread_spin_* under the interposer.
 *
 * Usage: spin [MODE]
 *   (none)       mutual exclusion across 4 threads, trylock
 *   values       prints the lock word after init, lock and unlock (to
 *                compare with glibc's, which the program prints natively)
 *   mixed        a process-shared lock in a shared memory file, taken in
 *                turns by this process and a child that exec's this program
 *                with LD_PRELOAD set to $SPIN_CHILD_PRELOAD (removed when
 *                that is unset): one process under the interposer and one
 *                on glibc's functions share the lock
 *
 * Prints "ok" (values: the lock word's values). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define THREADS 4
#define ITERS 100000
static pthread_spinlock_t lock;
static long counter;

static void *add(void *arg) {
    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        CHECK_RC(pthread_spin_lock(&lock), 0);
        counter++;
        CHECK_RC(pthread_spin_unlock(&lock), 0);
    }
    return NULL;
}

static void exclusion(void) {
    CHECK_RC(pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE), 0);
    CHECK_RC(pthread_spin_trylock(&lock), 0);
    CHECK_RC(pthread_spin_trylock(&lock), EBUSY);
    CHECK_RC(pthread_spin_unlock(&lock), 0);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_create(&t[i], NULL, add, NULL), 0);
    for (int i = 0; i < THREADS; i++) CHECK_RC(pthread_join(t[i], NULL), 0);
    CHECK(counter == (long)THREADS * ITERS);
    CHECK_RC(pthread_spin_destroy(&lock), 0);
}

/* The lock word as an int. */
static int raw(pthread_spinlock_t *l) {
    int v;
    memcpy(&v, (void *)l, sizeof v);
    return v;
}

static void values(void) {
    for (int pshared = 0; pshared < 2; pshared++) {
        pthread_spinlock_t l;
        CHECK_RC(pthread_spin_init(&l, pshared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE),
                 0);
        printf("pshared %d: init %d", pshared, raw(&l));
        CHECK_RC(pthread_spin_lock(&l), 0);
        printf(", lock %d", raw(&l));
        CHECK_RC(pthread_spin_trylock(&l), EBUSY);
        printf(", trylock held %d", raw(&l));
        CHECK_RC(pthread_spin_unlock(&l), 0);
        printf(", unlock %d", raw(&l));
        CHECK_RC(pthread_spin_trylock(&l), 0);
        printf(", trylock %d\n", raw(&l));
        CHECK_RC(pthread_spin_unlock(&l), 0);
        CHECK_RC(pthread_spin_destroy(&l), 0);
    }
}

struct shared {
    pthread_spinlock_t lock;
    long counter;
};

/* ITERS turns on the shared lock, each adding one to the counter with a
 * read and a write apart (a second holder loses updates). */
static void take_turns(struct shared *s) {
    for (int i = 0; i < ITERS; i++) {
        CHECK_RC(pthread_spin_lock(&s->lock), 0);
        long c = s->counter;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        s->counter = c + 1;
        CHECK_RC(pthread_spin_unlock(&s->lock), 0);
    }
}

static struct shared *map_shared(int fd) {
    struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(s != MAP_FAILED);
    return s;
}

static void mixed(void) {
    int fd = memfd_create("spin", 0); /* inherited across exec */
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, sizeof(struct shared)) == 0);
    struct shared *s = map_shared(fd);
    CHECK_RC(pthread_spin_init(&s->lock, PTHREAD_PROCESS_SHARED), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* A child left spinning on a lock it cannot take ends with us. */
        CHECK(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
        const char *preload = getenv("SPIN_CHILD_PRELOAD");
        if (preload)
            CHECK(setenv("LD_PRELOAD", preload, 1) == 0);
        else
            CHECK(unsetenv("LD_PRELOAD") == 0);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", fd);
        execl("/proc/self/exe", "spin", "mixed-child", arg, (char *)NULL);
        perror("exec");
        _exit(127);
    }
    take_turns(s);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(s->counter == 2L * ITERS);
    CHECK_RC(pthread_spin_trylock(&s->lock), 0);
    CHECK_RC(pthread_spin_unlock(&s->lock), 0);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "exclusion";
    if (strcmp(mode, "exclusion") == 0) {
        exclusion();
    } else if (strcmp(mode, "values") == 0) {
        values();
        return 0;
    } else if (strcmp(mode, "mixed") == 0) {
        mixed();
    } else if (strcmp(mode, "mixed-child") == 0 && argc == 3) {
        take_turns(map_shared(atoi(argv[2])));
        return 0;
    } else {
        fprintf(stderr, "usage: spin [values|mixed]\n");
        return 2;
    }
    printf("ok\n");
    return 0;
}
