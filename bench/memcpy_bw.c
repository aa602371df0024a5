/* memcpy_bw.c — this machine's memcpy bandwidth, the physical reference for the cpu
 * backend's shared-memory allreduce (bench/allreduce_vs_peers.sh builds and runs it).
 *
 * For each buffer size, first 1 thread, then N threads (N = online CPUs, or --threads)
 * each copy their own disjoint src -> dst buffers concurrently.  One run: all threads
 * start together at a barrier and copy `reps` times; its time is from the earliest start
 * to the latest finish.  Each configuration is run --runs times (default 7) and the
 * median is reported.  GB/s = 1e9 B/s, counted as bytes copied per second (all threads
 * together); the memory traffic (read + write) is twice that.
 *
 *   usage: memcpy_bw [--sizes 1M,25M,100M] [--threads N] [--runs N]
 *
 * Output lines not starting with '#' are:  size_B threads reps time_per_copy_us copy_GBps rw_GBps
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 16
#define MAX_RUNS 101

typedef struct {
    unsigned char *src, *dst;
    size_t bytes;
    int reps;
    pthread_barrier_t *start;
    int64_t t0, t1;
    unsigned check; /* bytes read back after each copy */
} worker;

static volatile unsigned sink;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *copy_main(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    w->t0 = now_ns();
    for (int i = 0; i < w->reps; i++) {
        memcpy(w->dst, w->src, w->bytes);
        /* Read back one byte so no copy can be dropped as a dead store. */
        w->check += w->dst[(size_t)i * 4093 % w->bytes];
    }
    w->t1 = now_ns();
    return NULL;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0)
        return -1;
    double mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        mult = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g')
        mult = 1024.0 * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (size_t)(v * mult);
    return *out >= 1 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over `runs` runs of the group's wall time for `reps` copies per thread, in ns. */
static int measure(int nthreads, size_t bytes, int reps, int runs, double *median_ns)
{
    worker *w = calloc((size_t)nthreads, sizeof *w);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    double *t = calloc((size_t)runs, sizeof *t);
    pthread_barrier_t start;
    int rc = -1;
    if (!w || !th || !t)
        goto out;
    for (int i = 0; i < nthreads; i++) {
        w[i].src = malloc(bytes);
        w[i].dst = malloc(bytes);
        if (!w[i].src || !w[i].dst) {
            fprintf(stderr, "memcpy_bw: out of memory for %d x 2 x %zu bytes\n", nthreads, bytes);
            goto out;
        }
        /* Fault every page in before timing. */
        memset(w[i].src, i + 1, bytes);
        memset(w[i].dst, 0, bytes);
        w[i].bytes = bytes;
        w[i].start = &start;
    }
    for (int r = 0; r < runs + 1; r++) { /* run 0 is a warm-up */
        if (pthread_barrier_init(&start, NULL, (unsigned)nthreads) != 0)
            goto out;
        int started = 0;
        for (int i = 0; i < nthreads; i++) {
            w[i].reps = r == 0 ? 1 : reps;
            if (pthread_create(&th[i], NULL, copy_main, &w[i]) != 0)
                break;
            started++;
        }
        if (started < nthreads) {
            /* The barrier cannot open: nothing sensible to do but give up. */
            fprintf(stderr, "memcpy_bw: cannot start %d threads\n", nthreads);
            exit(1);
        }
        for (int i = 0; i < nthreads; i++) {
            pthread_join(th[i], NULL);
            sink += w[i].check;
        }
        pthread_barrier_destroy(&start);
        int64_t t0 = w[0].t0, t1 = w[0].t1;
        for (int i = 1; i < nthreads; i++) {
            if (w[i].t0 < t0)
                t0 = w[i].t0;
            if (w[i].t1 > t1)
                t1 = w[i].t1;
        }
        if (r > 0)
            t[r - 1] = (double)(t1 - t0);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    *median_ns = runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]);
    rc = 0;
out:
    if (w)
        for (int i = 0; i < nthreads; i++) {
            free(w[i].src);
            free(w[i].dst);
        }
    free(w);
    free(th);
    free(t);
    return rc;
}

static void usage_exit(const char *why)
{
    fprintf(stderr, "memcpy_bw: %s\nusage: memcpy_bw [--sizes 1M,25M,100M] [--threads N] [--runs N]\n", why);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *sizes = "1M,25M,100M";
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = ncpu > 0 ? (int)ncpu : 1, runs = 7;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage_exit("every option needs a value");
        char *end;
        if (!strcmp(argv[i], "--sizes")) {
            sizes = argv[++i];
        } else if (!strcmp(argv[i], "--threads")) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1024)
                usage_exit("--threads: want an integer in [1, 1024]");
            nthreads = (int)v;
        } else if (!strcmp(argv[i], "--runs")) {
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > MAX_RUNS)
                usage_exit("--runs: want an integer in [1, 101]");
            runs = (int)v;
        } else {
            usage_exit("unknown option");
        }
    }
    size_t sz[MAX_SIZES];
    int nsz = 0;
    char *list = strdup(sizes);
    if (!list)
        return 1;
    for (char *save, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (nsz == MAX_SIZES || parse_size(tok, &sz[nsz]) != 0)
            usage_exit("--sizes: want e.g. 1M,25M,100M (at most 16)");
        nsz++;
    }
    free(list);

    /* Keep the N-thread buffers (2 per thread) within half the physical memory. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;

    printf("# memcpy_bw: memcpy bandwidth, disjoint src->dst buffers per thread, median of %d runs\n", runs);
    printf("# online CPUs: %ld; GB/s = 1e9 B/s of bytes copied (all threads together);\n", ncpu);
    printf("# memory traffic is read + write = 2x the copy rate (rw column)\n");
    printf("# %10s  %7s  %5s  %12s  %9s  %9s\n", "size", "threads", "reps", "time/copy", "copy", "rw");
    printf("# %10s  %7s  %5s  %12s  %9s  %9s\n", "(B)", "", "", "(us)", "(GB/s)", "(GB/s)");
    fflush(stdout);
    for (int s = 0; s < nsz; s++) {
        int counts[2] = {1, nthreads};
        for (int k = 0; k < (nthreads > 1 ? 2 : 1); k++) {
            int n = counts[k];
            if (phys > 0 && 2.0 * (double)sz[s] * n > 0.5 * phys) {
                int fit = (int)(0.5 * phys / (2.0 * (double)sz[s]));
                fprintf(stderr, "memcpy_bw: %d threads x 2 x %zu B exceed half the memory; using %d threads\n", n,
                        sz[s], fit < 1 ? 1 : fit);
                n = fit < 1 ? 1 : fit;
            }
            /* About 512 MiB copied per thread per run (at least 3 copies). */
            int reps = (int)((512.0 * 1024 * 1024) / (double)sz[s]);
            if (reps < 3)
                reps = 3;
            double ns;
            if (measure(n, sz[s], reps, runs, &ns) != 0)
                return 1;
            double per_copy_us = ns / reps / 1e3;
            double gbps = (double)sz[s] * n * reps / ns; /* bytes per ns = GB/s */
            printf("%12zu  %7d  %5d  %12.1f  %9.2f  %9.2f\n", sz[s], n, reps, per_copy_us, gbps, 2 * gbps);
            fflush(stdout);
        }
    }
    return 0;
}
