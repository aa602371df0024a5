/* cuda_plan.h — the cuda backend's decisions that need no GPU: what GPU work each
 * ddpprof op becomes, how [skew] stretches it, which GPU a rank takes and the NCCL
 * environment when ranks share one, the watchdog's verdict, and CUDA-event times on
 * the run's clock.  Pure functions over plain data (no CUDA runtime), so that every
 * machine tests them.
 *
 * Op plans.  A compute-stream op becomes, in this order: its GEMM (compute = real: an
 * m x n x k sgemm on device scratch, repeated for [skew], below), then its work kernel
 * (WORK_GRAD: one gradient kernel per parameter with gradgen.h's values; WORK_SCALE_COPY:
 * one scale-copy kernel, none when in place with scale 1; WORK_SGD: one update kernel per
 * parameter), then (compute = model) a kernel that spins on the GPU's global timer for
 * model_ns.  A comm-stream op is one NCCL call: WORK_ALLREDUCE a SUM ncclAllReduce in
 * place (an fp16/bf16 hook converts the fp32 bucket ×prescale into a half copy, reduces
 * that, and converts back), WORK_BROADCAST an int32 ncclBroadcast from rank 0.  WORK_FAIL
 * launches nothing and fails the stream when the stream reaches it.
 *
 * Stretch.  A rank `stretch` times slower (stretch > 1) runs its GEMM floor(stretch)
 * times, then once more over round(frac(stretch) · m) rows: the GEMM work, and so its
 * time, scales by `stretch` at the GEMM's own arithmetic intensity.  Element-wise
 * kernels are not stretched (they are memory-bound and short beside the GEMMs).
 */
#ifndef DDPPROF_CUDA_PLAN_H
#define DDPPROF_CUDA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/device.h"

typedef enum { CUDA_COLL_NONE = 0, CUDA_COLL_ALLREDUCE, CUDA_COLL_BROADCAST } cuda_coll_kind;
/* Element type of a collective on the wire (mapped to ncclDataType_t by the device). */
typedef enum { CUDA_WIRE_F32 = 0, CUDA_WIRE_F16, CUDA_WIRE_BF16, CUDA_WIRE_I32 } cuda_wire_type;

/* More repeats than this is a scenario mistake, not a slow GPU. */
#define CUDA_MAX_GEMM_REPEATS 1000

typedef struct {
    int64_t gemm_m, gemm_n, gemm_k; /* 0: no GEMM */
    int gemm_repeats;               /* whole runs of the m x n x k GEMM */
    int64_t gemm_tail_m;            /* then one of tail_m x n x k (0: none) */
    int grad_kernels;               /* WORK_GRAD: one per parameter */
    bool scale_copy;
    int sgd_kernels;                /* WORK_SGD: one per parameter */
    uint64_t spin_ns;               /* compute = model: the spin kernel's duration */
    cuda_coll_kind coll;
    cuda_wire_type wire;
    bool convert;   /* fp32 buffer <-> half wire copy around the allreduce */
    float prescale; /* applied when converting (hooks divide by world size) */
    int64_t count;  /* elements of the collective */
    bool fail;      /* WORK_FAIL */
} cuda_op_plan;

/* Plans `op` for stream `s`.  0, or -1 with err when the op cannot run there (a
 * collective on the compute stream, compute work on the comm stream, a dtype a
 * collective does not take, a stretch beyond CUDA_MAX_GEMM_REPEATS). */
int cuda_plan_op(const dev_op *op, dev_stream s, cuda_op_plan *out, char *err, size_t errlen);

/* Whether the planned op launches no GPU work that CUPTI could record, so that its span
 * must come from its CUDA events: a collective on a one-rank communicator, which NCCL
 * completes without a kernel (in place; seen with NCCL 2.28 on an H200), unless a half
 * conversion runs around it. */
bool cuda_plan_runs_no_kernel(const cuda_op_plan *p, int world_size);

/* The stretch of an m-row GEMM: *repeats whole runs then *tail_m rows (see above).
 * stretch <= 1 (or NaN): one run, no tail.  0, or -1 beyond CUDA_MAX_GEMM_REPEATS. */
int cuda_stretch_plan(double stretch, int64_t m, int *repeats, int64_t *tail_m);

/* gradgen_value(rank, micro_step, param, elem) == (base + elem % 11) % 64 - 32 with this
 * base: what the gradient kernel is given, so it needs no division but one. */
int64_t cuda_grad_base(int rank, int micro_step, int param);

/* ---- placement: which GPU, and sharing ------------------------------------------------ */

#define CUDA_ENV_MAX 8

typedef struct {
    char name[32];
    char value[64];
    bool overwrite; /* false: a value the user set is kept */
} cuda_env_var;

typedef struct {
    int device;          /* CUDA ordinal this rank uses */
    int ranks_on_device; /* of this node's ranks, how many use that GPU (1: not shared) */
    bool shared;
    int nvars;
    cuda_env_var vars[CUDA_ENV_MAX]; /* to set before the first NCCL call of the process */
} cuda_placement;

/* This node's ranks are local_rank 0 .. local_world-1; rank is the global rank (names
 * the NCCL host id).  Local rank i takes GPU i mod ngpus.  When the node has more ranks
 * than GPUs every rank of the node is told to be its own NCCL host (a distinct
 * NCCL_HOSTID) and to talk over sockets on loopback, since NCCL refuses two ranks of a
 * communicator on one GPU of one host.  0, or -1 with err (no GPU, bad ranks). */
int cuda_place_rank(int rank, int local_rank, int local_world, int ngpus, cuda_placement *out, char *err,
                    size_t errlen);

/* This node's local rank and size from a launcher's variables (torchrun LOCAL_RANK /
 * LOCAL_WORLD_SIZE, Open MPI OMPI_COMM_WORLD_LOCAL_RANK / _LOCAL_SIZE, Slurm SLURM_LOCALID /
 * SLURM_NTASKS_PER_NODE), read through `get` (getenv in the backend); none set, or not
 * numbers: one node, local = global. */
void cuda_local_ranks(const char *(*get)(const char *name), int rank, int world, int *local_rank,
                      int *local_world);

/* ---- watchdog ---------------------------------------------------------------------------- */

typedef enum { CUDA_WATCH_OK = 0, CUDA_WATCH_NCCL_ERROR, CUDA_WATCH_TIMEOUT } cuda_watch_verdict;

typedef struct {
    int rank;
    double timeout_s;
    int64_t now_ns;
    /* The collective at the head of the comm stream, if the stream has reached it. */
    bool coll_started;
    int64_t coll_started_ns;
    int64_t seq;
    int bucket;
    int iter;
    const char *name;
    /* ncclCommGetAsyncError's answer: 0 ncclSuccess, 7 ncclInProgress (not an error). */
    int nccl_async;
    const char *nccl_text; /* ncclGetErrorString of it */
} cuda_watch_input;

/* OK, or the verdict with `why` naming the rank and the collective (seq, bucket). */
cuda_watch_verdict cuda_watch_decide(const cuda_watch_input *in, char *why, size_t whylen);

/* ---- CUDA-event timing -------------------------------------------------------------------- */

/* An event `elapsed_ms` after an anchor event that completed at host time anchor_host_ns
 * (the midpoint of the host readings around its synchronisation), on the run's clock
 * whose origin is t0_ns on the host clock. */
int64_t cuda_event_run_ns(int64_t anchor_host_ns, int64_t t0_ns, double elapsed_ms);

#endif
