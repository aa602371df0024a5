/* memory_budget.c — the up-front memory estimate and the MemAvailable check. */
#include "engine/launch/memory_budget.h"

#include "engine/device.h"

#include <stdio.h>
#include <string.h>

#include "profiler/span.h"

/* Span rings of the recorder: one per (rank, stream) plus the host's. */
#define RINGS_PER_RANK 3
#define RING_SPANS 8192.0

static double largest_bucket_bytes(const scenario *sc, const model *m)
{
    /* Iteration 0 reduces the whole model as one bucket (PyTorch >= 1.13), so the
     * largest bucket a hook compresses is the model itself. */
    (void)sc;
    return (double)m->total_numel * FP32_BYTES;
}

static double gemm_scratch_bytes(const scenario *sc, const model *m)
{
    if (sc->compute != COMPUTE_REAL)
        return 0.0;
    double a = 0, b = 0, c = 0;
    for (int l = 0; l < m->nlayers; l++) {
        const model_layer *L = &m->layers[l];
        /* backward runs twice the rows of forward (input and weight gradients) */
        double rows = (double)L->gemm_m * sc->batch * 2.0;
        double la = rows * (double)L->gemm_k, lb = (double)L->gemm_k * (double)L->gemm_n,
               lc = rows * (double)L->gemm_n;
        a = la > a ? la : a;
        b = lb > b ? lb : b;
        c = lc > c ? lc : c;
    }
    /* The three operands grow independently to their largest size, in floats. */
    return (a + b + c) * FP32_BYTES;
}

void memory_run_estimate(const scenario *sc, const model *m, memory_estimate *out)
{
    double world = sc->world_size, n = (double)m->total_numel;
    memset(out, 0, sizeof *out);
    out->params = world * n * FP32_BYTES;
    out->grads = world * n * FP32_BYTES;
    out->buckets = world * n * FP32_BYTES;
    out->hook_copies = sc->comm_hook != COMM_HOOK_NONE ? world * largest_bucket_bytes(sc, m) / 2.0 : 0.0;
    out->gemm_scratch = world * gemm_scratch_bytes(sc, m);
    out->span_rings = world * RINGS_PER_RANK * RING_SPANS * (double)sizeof(span);
    out->total = out->params + out->grads + out->buckets + out->hook_copies + out->gemm_scratch + out->span_rings;
}

double memory_bench_estimate(int ranks, int64_t bytes)
{
    return (double)ranks * (double)bytes;
}

int memory_available(double *bytes)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long kib;
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
            *bytes = (double)kib * 1024.0;
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

int memory_check(double need, const char *what, const char *detail, char *err, size_t errlen)
{
    double have;
    if (memory_available(&have) != 0)
        return 0;
    /* Leave a tenth of what is free to the rest of the process and the page cache. */
    if (need <= 0.9 * have)
        return 0;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    snprintf(err, errlen, "%s needs about %.2f GiB (%s); %.2f GiB are available now (MemAvailable)", what,
             need / gib, detail, have / gib);
    return -1;
}
