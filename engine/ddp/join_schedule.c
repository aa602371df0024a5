/* join_schedule.c — which ranks have data at which step under join (join_schedule.h). */
#include "engine/ddp/join_schedule.h"

bool join_has_data(const scenario *sc, int rank, int iter)
{
    return sc->nrank_steps == 0 || iter < sc->rank_steps[rank];
}

int join_ranks_training(const scenario *sc, int iter)
{
    int n = 0;
    for (int q = 0; q < sc->world_size; q++)
        n += join_has_data(sc, q, iter);
    return n;
}

int join_authoritative_rank(const scenario *sc, int iter)
{
    for (int q = sc->world_size - 1; q >= 0; q--)
        if (join_has_data(sc, q, iter))
            return q;
    return 0;
}

float join_div_factor(const reducer *r)
{
    if (!r->sc->join || r->sc->divide_by_initial_world_size)
        return (float)r->world;
    int n = join_ranks_training(r->sc, r->iter);
    return (float)(n > 0 ? n : 1);
}
