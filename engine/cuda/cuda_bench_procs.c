/* cuda_bench_procs.c — the allreduce benchmark with ranks as processes (more ranks than
 * GPUs, so ranks share GPUs): this executable run again per rank for the one size, with
 * CUDA_BENCH_CHILD_ENV naming its rank, the fd it answers on and the NCCL id (see
 * cuda_bench.h). */
#include "engine/cuda/cuda_bench_procs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/cuda/cuda_bench_measure.h"
#include "engine/cuda/cuda_kernels.h"
#include "engine/cuda/cuda_plan.h"
#include "engine/cuda/nccl_id.h"

extern char **environ;

/* The file descriptor a rank process writes its time to. */
#define CHILD_FD 3
/* A rank process that has not answered by then is stuck (a peer died in NCCL set-up). */
#define CHILD_LIMIT_S 300

/* This process is rank `rank` of a process benchmark: one communicator, one buffer. */
static int child_rank(int rank, int ranks, int ngpus, const ncclUniqueId *id, int64_t bytes, int iters, int warmup,
                      double *us, char *err, size_t errlen)
{
    cuda_placement p;
    if (cuda_place_rank(rank, rank, ranks, ngpus, &p, err, errlen) != 0)
        return -1;
    for (int i = 0; i < p.nvars; i++)
        if (setenv(p.vars[i].name, p.vars[i].value, p.vars[i].overwrite) != 0) {
            snprintf(err, errlen, "setenv %s: %s", p.vars[i].name, strerror(errno));
            return -1;
        }
    bench_state *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    b->ranks = 1;
    b->count = bytes / 4;
    int rc = -1;
    cudaError_t cr = cudaSetDevice(p.device);
    ncclResult_t nr = ncclSuccess;
    if (cr != cudaSuccess)
        snprintf(err, errlen, "cudaSetDevice(%d): %s", p.device, cudaGetErrorString(cr));
    else if ((nr = ncclCommInitRank(&b->comm[0], ranks, *id, rank)) != ncclSuccess)
        snprintf(err, errlen, "ncclCommInitRank: %s", ncclGetErrorString(nr));
    else if ((cr = cudaStreamCreateWithFlags(&b->stream[0], cudaStreamNonBlocking)) != cudaSuccess ||
             (cr = cudaMalloc((void **)&b->buf[0], (size_t)b->count * sizeof(float))) != cudaSuccess ||
             (cr = (cudaError_t)cuda_k_fill(b->stream[0], b->buf[0], b->count)) != cudaSuccess ||
             (cr = cudaEventCreate(&b->start[0])) != cudaSuccess || (cr = cudaEventCreate(&b->end[0])) != cudaSuccess)
        snprintf(err, errlen, "setting up rank %d's buffer: %s", rank, cudaGetErrorString(cr));
    else
        rc = cuda_bench_measure(b, iters, warmup, us, err, errlen);
    /* teardown() sets device r for rank r: this process's one rank is on p.device. */
    if (b->comm[0]) {
        nr = ncclCommDestroy(b->comm[0]);
        if (nr != ncclSuccess)
            fprintf(stderr, "ddpprof: bench: ncclCommDestroy: %s\n", ncclGetErrorString(nr));
    }
    if (b->buf[0] && (cr = cudaFree(b->buf[0])) != cudaSuccess)
        fprintf(stderr, "ddpprof: bench: cudaFree: %s\n", cudaGetErrorString(cr));
    free(b);
    return rc;
}

/* The rank-process side, when CUDA_BENCH_CHILD_ENV is set: runs its rank, writes "us" or "error
 * ..." to CHILD_FD.  Returns what bench_allreduce returns. */
int cuda_bench_child(const char *spec, int ranks, int ngpus, int64_t bytes, int iters, int warmup, double *us,
                        char *err, size_t errlen)
{
    int rank, fd, off = 0;
    char idtext[NCCL_ID_TEXT + 1];
    ncclUniqueId id;
    if (sscanf(spec, "%d %d %n", &rank, &fd, &off) != 2 || off <= 0 ||
        snprintf(idtext, sizeof idtext, "%s", spec + off) >= (int)sizeof idtext ||
        nccl_id_parse(idtext, &id, err, errlen) != 0 || rank < 0 || rank >= ranks) {
        if (!err[0])
            snprintf(err, errlen, "%s is malformed", CUDA_BENCH_CHILD_ENV);
        return -1;
    }
    alarm(CHILD_LIMIT_S);
    int rc = child_rank(rank, ranks, ngpus, &id, bytes, iters, warmup, us, err, errlen);
    char line[600];
    int n = rc == 0 ? snprintf(line, sizeof line, "%.6f\n", *us) : snprintf(line, sizeof line, "error %s\n", err);
    if (n > 0 && write(fd, line, (size_t)n) != n && rc == 0) {
        snprintf(err, errlen, "cannot report to the benchmark: %s", strerror(errno));
        rc = -1;
    }
    close(fd);
    return rc;
}

static int spawn_rank(int rank, int ranks, const char *idtext, int64_t bytes, int iters, int warmup, int *read_fd,
                      pid_t *pid, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    char spec[NCCL_ID_TEXT + 64], env_kv[NCCL_ID_TEXT + 128], a_ranks[16], a_size[32], a_iters[16], a_warm[16];
    snprintf(spec, sizeof spec, "%d %d %s", rank, CHILD_FD, idtext);
    snprintf(env_kv, sizeof env_kv, "%s=%s", CUDA_BENCH_CHILD_ENV, spec);
    snprintf(a_ranks, sizeof a_ranks, "%d", ranks);
    snprintf(a_size, sizeof a_size, "%lld", (long long)bytes);
    snprintf(a_iters, sizeof a_iters, "%d", iters);
    snprintf(a_warm, sizeof a_warm, "%d", warmup);
    char *argv[] = {"ddpprof", "bench", "allreduce", "--backend", "cuda", "--ranks", a_ranks, "--sizes", a_size,
                    "--iters", a_iters, "--warmup", a_warm, NULL};
    size_t n = 0;
    while (environ[n])
        n++;
    char **envp = calloc(n + 2, sizeof *envp);
    posix_spawn_file_actions_t fa;
    int rc = -1;
    if (!envp) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        envp[i] = environ[i];
    envp[n] = env_kv;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        snprintf(err, errlen, "posix_spawn_file_actions_init failed");
        goto out;
    }
    /* Its report goes to CHILD_FD; its own table to nowhere. */
    int e = posix_spawn_file_actions_adddup2(&fa, p[1], CHILD_FD);
    if (e == 0)
        e = posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (e == 0)
        e = posix_spawn(pid, "/proc/self/exe", &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) {
        snprintf(err, errlen, "cannot start benchmark rank %d: %s", rank, strerror(e));
        goto out;
    }
    *read_fd = p[0];
    p[0] = -1;
    rc = 0;
out:
    free(envp);
    if (p[0] >= 0)
        close(p[0]);
    close(p[1]);
    return rc;
}

/* Reads one rank's answer (a line), then reaps it. */
static int collect_rank(int rank, int fd, pid_t pid, double *us, char *err, size_t errlen)
{
    char line[640];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof line - 1 && (r = read(fd, line + len, sizeof line - 1 - len)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    line[len] = '\0';
    close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = '\0';
    if (sscanf(line, "%lf", us) == 1)
        return 0;
    if (!strncmp(line, "error ", 6))
        snprintf(err, errlen, "benchmark rank %d: %.440s", rank, line + 6);
    else if (WIFSIGNALED(status))
        snprintf(err, errlen, "benchmark rank %d was killed by signal %d", rank, WTERMSIG(status));
    else
        snprintf(err, errlen, "benchmark rank %d exited with status %d without an answer", rank,
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
}

int cuda_bench_processes(int ranks, int64_t bytes, int iters, int warmup, double *us_per_iter, char *err,
                           size_t errlen)
{
    char idtext[NCCL_ID_TEXT];
    if (nccl_id_new(idtext, err, errlen) != 0)
        return -1;
    int fds[MAX_RANKS];
    pid_t pids[MAX_RANKS];
    int started = 0, rc = 0;
    for (; started < ranks; started++)
        if (spawn_rank(started, ranks, idtext, bytes, iters, warmup, &fds[started], &pids[started], err, errlen) != 0) {
            rc = -1;
            break;
        }
    double sum = 0;
    char first[512] = "";
    for (int r = 0; r < started; r++) {
        if (rc != 0) /* a rank missing: the others would wait in NCCL set-up */
            kill(pids[r], SIGKILL);
        double us = 0;
        char why[512];
        if (collect_rank(r, fds[r], pids[r], &us, why, sizeof why) != 0) {
            if (!first[0])
                snprintf(first, sizeof first, "%s", why);
            if (rc == 0)
                for (int q = r + 1; q < started; q++)
                    kill(pids[q], SIGKILL);
            rc = -1;
        }
        sum += us;
    }
    if (rc == 0)
        *us_per_iter = sum / ranks;
    else if (first[0] && !err[0])
        snprintf(err, errlen, "%s", first);
    return rc;
}

