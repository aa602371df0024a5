/* bucket_plan.c — DDP's bucket assignment of a model under a scenario (bucket_plan.h). */
#include "engine/ddp/bucket_plan.h"

#include <stdlib.h>

#define MIB (1024.0 * 1024.0)

static int assign(const model *m, const int *order, const int64_t *limits, int nlimits,
                  bucket_assignment *out)
{
    int n = m->nparams;
    int64_t *bytes = malloc((size_t)n * sizeof *bytes);
    if (!bytes)
        return -1;
    for (int p = 0; p < n; p++)
        bytes[p] = m->params[p].numel * (int64_t)sizeof(float);
    int rc = bucket_assign(n, bytes, NULL, order, limits, nlimits, out);
    free(bytes);
    return rc;
}

int bucket_plan_sized(const model *m, const scenario *sc, const int *order, bucket_assignment *out)
{
    int64_t limits[2] = {(int64_t)(sc->first_bucket_mb * MIB), (int64_t)(sc->bucket_cap_mb * MIB)};
    return assign(m, order, limits, 2, out);
}

int bucket_plan_initial(const model *m, const scenario *sc, bucket_assignment *out)
{
    int rc;
    if (sc->static_graph || !sc->find_unused_parameters) {
        /* PyTorch (1.13 and later): the real execution order is unknown before the first
         * backward, so iteration 1 reduces the whole model as one bucket. */
        int64_t unlimited = INT64_MAX;
        rc = assign(m, NULL, &unlimited, 1, out);
    } else {
        rc = bucket_plan_sized(m, sc, NULL, out);
    }
    if (rc == 0)
        bucket_reverse(out);
    return rc;
}
