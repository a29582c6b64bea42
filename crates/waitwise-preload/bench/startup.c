/* Start-up cost of the interposer: runs PROG (no arguments) N times under
 * each environment given, interleaved (run i of every environment before
 * run i+1 of any), and prints each environment's median wall time from
 * posix_spawn to waitpid.
 *
 *   cc -O2 -o startup startup.c
 *   ./startup 400 /bin/true - LD_PRELOAD=$PWD/target/release/libwaitwise_preload.so
 *
 * Each ENV is a ';'-separated list of VAR=VALUE ("-": none); PATH is always
 * /usr/bin:/bin. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_ENVS 16
#define MAX_VARS 8

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double run_once(char *prog, char **env) {
    char *argv[] = {prog, NULL};
    pid_t pid;
    int status;
    double t0 = now_ms();
    if (posix_spawn(&pid, prog, NULL, NULL, argv, env) != 0) {
        perror("posix_spawn");
        exit(1);
    }
    waitpid(pid, &status, 0);
    return now_ms() - t0;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc - 3 > MAX_ENVS) {
        fprintf(stderr, "usage: %s N PROG ENV [ENV...]\n", argv[0]);
        return 2;
    }
    int n = atoi(argv[1]), envs = argc - 3;
    static char *env[MAX_ENVS][MAX_VARS + 2];
    for (int j = 0; j < envs; j++) {
        char *spec = strdup(argv[3 + j]);
        int m = 0;
        env[j][m++] = "PATH=/usr/bin:/bin";
        if (strcmp(spec, "-") != 0)
            for (char *v = strtok(spec, ";"); v && m <= MAX_VARS; v = strtok(NULL, ";"))
                env[j][m++] = v;
        env[j][m] = NULL;
    }
    double *ms = malloc(sizeof(double) * n * envs);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < envs; j++)
            ms[j * n + i] = run_once(argv[2], env[j]);
    for (int j = 0; j < envs; j++) {
        qsort(ms + j * n, n, sizeof(double), by_value);
        printf("%-60s median %.3f ms (n=%d)\n", argv[3 + j], ms[j * n + n / 2], n);
    }
    return 0;
}
