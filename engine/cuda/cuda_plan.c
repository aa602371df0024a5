/* cuda_plan.c — the cuda backend's pure decisions (see cuda_plan.h). */
#include "engine/cuda/cuda_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cuda_stretch_plan(double stretch, int64_t m, int *repeats, int64_t *tail_m)
{
    *repeats = 1;
    *tail_m = 0;
    if (!(stretch > 1.0))
        return 0;
    double whole = floor(stretch);
    if (whole > CUDA_MAX_GEMM_REPEATS)
        return -1;
    *repeats = (int)whole;
    *tail_m = llround((stretch - whole) * (double)m);
    if (*tail_m >= m) { /* rounding up to a whole extra run */
        (*repeats)++;
        *tail_m = 0;
    }
    return 0;
}

int64_t cuda_grad_base(int rank, int micro_step, int param)
{
    return (int64_t)(rank + 1) * 7 + (int64_t)micro_step * 3 + (int64_t)param * 5;
}

static int plan_collective(const dev_op *op, cuda_op_plan *out, char *err, size_t errlen)
{
    out->count = op->u.coll.count;
    out->prescale = 1.0f;
    if (op->work == WORK_BROADCAST) {
        out->coll = CUDA_COLL_BROADCAST;
        out->wire = CUDA_WIRE_I32;
        return 0;
    }
    out->coll = CUDA_COLL_ALLREDUCE;
    switch (op->u.coll.dtype) {
    case DEV_F32:
        out->wire = CUDA_WIRE_F32;
        if (op->u.coll.prescale != 1.0f) {
            /* No conversion copy to fold it into: scaled by a separate pass would be a
             * different op from what DDP runs. */
            snprintf(err, errlen, "%s: an fp32 allreduce with a prescale is not an operation DDP runs", op->name);
            return -1;
        }
        return 0;
    case DEV_F16:
    case DEV_BF16:
        out->wire = op->u.coll.dtype == DEV_F16 ? CUDA_WIRE_F16 : CUDA_WIRE_BF16;
        out->convert = true;
        out->prescale = op->u.coll.prescale;
        return 0;
    case DEV_I32:
        out->wire = CUDA_WIRE_I32;
        return 0;
    }
    snprintf(err, errlen, "%s: unknown collective dtype %d", op->name, (int)op->u.coll.dtype);
    return -1;
}

int cuda_plan_op(const dev_op *op, dev_stream s, cuda_op_plan *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    bool coll = op->work == WORK_ALLREDUCE || op->work == WORK_BROADCAST;
    if (coll != (s == DEV_STREAM_COMM) && op->work != WORK_FAIL) {
        snprintf(err, errlen, "%s: %s work cannot run on the %s stream", op->name, coll ? "collective" : "compute",
                 s == DEV_STREAM_COMM ? "comm" : "compute");
        return -1;
    }
    if (coll)
        return plan_collective(op, out, err, errlen);
    if (op->gemm.m > 0 && op->gemm.n > 0 && op->gemm.k > 0) {
        out->gemm_m = op->gemm.m;
        out->gemm_n = op->gemm.n;
        out->gemm_k = op->gemm.k;
        if (cuda_stretch_plan(op->stretch, op->gemm.m, &out->gemm_repeats, &out->gemm_tail_m) != 0) {
            snprintf(err, errlen, "%s: stretch %.3g asks for more than %d runs of its GEMM", op->name, op->stretch,
                     CUDA_MAX_GEMM_REPEATS);
            return -1;
        }
    }
    switch (op->work) {
    case WORK_GRAD:
        if (op->u.grad.np < 0 || op->u.grad.np > DEV_MAX_LAYER_PARAMS) {
            snprintf(err, errlen, "%s: %d parameters in one gradient op", op->name, op->u.grad.np);
            return -1;
        }
        out->grad_kernels = op->u.grad.np;
        break;
    case WORK_SCALE_COPY:
        out->scale_copy = !(op->u.copy.scale == 1.0f && op->u.copy.dst == op->u.copy.src) && op->u.copy.n > 0;
        break;
    case WORK_SGD:
        out->sgd_kernels = op->u.sgd.n;
        break;
    case WORK_FAIL:
        out->fail = true;
        return 0;
    case WORK_MLP_FORWARD:
    case WORK_MLP_BACKWARD:
        snprintf(err, errlen, "%s: the mlp preset's real training runs on the host (the cpu backend), not on a GPU",
                 op->name);
        return -1;
    default:
        break;
    }
    out->spin_ns = op->model_ns;
    return 0;
}

bool cuda_plan_runs_no_kernel(const cuda_op_plan *p, int world_size)
{
    return p->coll != CUDA_COLL_NONE && !p->convert && world_size == 1;
}

static int pos_int(const char *s, int *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > 1 << 20)
        return -1;
    *out = (int)v;
    return 0;
}

void cuda_local_ranks(const char *(*get)(const char *name), int rank, int world, int *local_rank,
                      int *local_world)
{
    static const char *const pairs[][2] = {{"LOCAL_RANK", "LOCAL_WORLD_SIZE"},
                                           {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                                           {"SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int lr, lw;
        if (pos_int(get(pairs[i][0]), &lr) == 0 && pos_int(get(pairs[i][1]), &lw) == 0 && lw > 0 && lr < lw) {
            *local_rank = lr;
            *local_world = lw;
            return;
        }
    }
    *local_rank = rank;
    *local_world = world;
}

static void add_var(cuda_placement *p, const char *name, const char *value, bool overwrite)
{
    if (p->nvars >= CUDA_ENV_MAX)
        return;
    cuda_env_var *v = &p->vars[p->nvars++];
    snprintf(v->name, sizeof v->name, "%s", name);
    snprintf(v->value, sizeof v->value, "%s", value);
    v->overwrite = overwrite;
}

int cuda_place_rank(int rank, int local_rank, int local_world, int ngpus, cuda_placement *out, char *err,
                    size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (ngpus <= 0) {
        snprintf(err, errlen, "rank %d: no CUDA GPU to run on", rank);
        return -1;
    }
    if (rank < 0 || local_world <= 0 || local_rank < 0 || local_rank >= local_world) {
        snprintf(err, errlen, "rank %d: local rank %d of %d is not a rank of this node", rank, local_rank,
                 local_world);
        return -1;
    }
    out->device = local_rank % ngpus;
    /* Local ranks d, d + ngpus, d + 2 ngpus, ... share GPU d. */
    out->ranks_on_device = (local_world - out->device + ngpus - 1) / ngpus;
    out->shared = local_world > ngpus;
    if (!out->shared)
        return 0;
    char host[64];
    snprintf(host, sizeof host, "ddpprof-rank-%d", rank);
    /* The host id must differ per process whatever the user set: a common one is what
     * makes NCCL refuse the shared GPU. */
    add_var(out, "NCCL_HOSTID", host, true);
    add_var(out, "NCCL_NET", "Socket", false);
    add_var(out, "NCCL_SOCKET_IFNAME", "lo", false);
    add_var(out, "NCCL_P2P_DISABLE", "1", false);
    add_var(out, "NCCL_SHM_DISABLE", "1", false);
    add_var(out, "NCCL_NVLS_ENABLE", "0", false);
    return 0;
}

static void describe_coll(const cuda_watch_input *in, char *out, size_t outlen)
{
    if (in->bucket >= 0)
        snprintf(out, outlen, "collective seq %lld (bucket %d, iteration %d, \"%s\")", (long long)in->seq,
                 in->bucket, in->iter, in->name ? in->name : "");
    else
        snprintf(out, outlen, "collective seq %lld (iteration %d, \"%s\")", (long long)in->seq, in->iter,
                 in->name ? in->name : "");
}

cuda_watch_verdict cuda_watch_decide(const cuda_watch_input *in, char *why, size_t whylen)
{
    char coll[256];
    describe_coll(in, coll, sizeof coll);
    if (in->nccl_async != 0 && in->nccl_async != 7) {
        if (in->coll_started)
            snprintf(why, whylen, "rank %d: NCCL error during %s: %s; communicator aborted", in->rank, coll,
                     in->nccl_text ? in->nccl_text : "unknown error");
        else
            snprintf(why, whylen, "rank %d: NCCL error: %s; communicator aborted", in->rank,
                     in->nccl_text ? in->nccl_text : "unknown error");
        return CUDA_WATCH_NCCL_ERROR;
    }
    if (in->coll_started && in->timeout_s > 0 &&
        (double)(in->now_ns - in->coll_started_ns) > in->timeout_s * 1e9) {
        snprintf(why, whylen,
                 "rank %d: %s did not complete within %g s (timeout_s): a peer did not arrive; communicator aborted",
                 in->rank, coll, in->timeout_s);
        return CUDA_WATCH_TIMEOUT;
    }
    return CUDA_WATCH_OK;
}

int64_t cuda_event_run_ns(int64_t anchor_host_ns, int64_t t0_ns, double elapsed_ms)
{
    return anchor_host_ns - t0_ns + (int64_t)llround(elapsed_ms * 1e6);
}
