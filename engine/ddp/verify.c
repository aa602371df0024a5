/* verify.c — exact recomputation of the averaged gradients (see verify.h). */
#include "engine/ddp/verify.h"

#include <math.h>
#include <stdio.h>

#include "engine/ddp/join_schedule.h"
#include "engine/gradgen.h"

int verify_averaged_gradients(const scenario *sc, int rank, int micro_first, int micro_last,
                              const dev_param *params, int nparams, char *err, size_t errlen)
{
    int world = sc->world_size;
    float loss_scale = sc->loss_reduction == LOSS_SUM ? (float)sc->batch : 1.0f;
    float inv_world = 1.0f / (float)world;
    bool hook = sc->comm_hook != COMM_HOOK_NONE;
    for (int p = 0; p < nparams; p++) {
        for (int64_t i = 0; i < params[p].numel; i++) {
            float sum = 0.0f;
            for (int q = 0; q < world; q++) {
                /* With join, a rank out of data shadows the allreduce with zeros: only
                 * the steps it still had data for add to the average. */
                float g = 0.0f;
                for (int mstep = micro_first; mstep <= micro_last; mstep++)
                    if (!sc->join || join_has_data(sc, q, mstep))
                        g = mstep == micro_first ? loss_scale * gradgen_value(q, mstep, p, i)
                                                 : g + loss_scale * gradgen_value(q, mstep, p, i);
                float x = g * inv_world;
                sum = q == 0 ? x : sum + x;
            }
            float got = params[p].grad[i];
            bool ok = hook ? fabsf(got - sum) <= 1e-2f * fabsf(sum) + 1e-2f : got == sum;
            if (!ok) {
                snprintf(err, errlen,
                         "rank %d: gradient of parameter %d element %lld after step %d is %.9g, expected the "
                         "average %.9g",
                         rank, p, (long long)i, micro_last, (double)got, (double)sum);
                return -1;
            }
        }
    }
    return 0;
}
