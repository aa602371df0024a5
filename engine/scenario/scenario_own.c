/* scenario_own.c — what a scenario owns (scenario.h, "Who frees what"): scenario_free()
 * releases its lists, sweep axes and include paths; scenario_copy() gives a copy its own.
 * The sweep axes' memory is here too (scenario_own.h), so that the sweep's logic
 * (scenario_sweep.c) builds on what a scenario owns, and nothing here on the sweep. */
#include "engine/scenario/scenario_own.h"

#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void scenario_free(scenario *sc)
{
    if (sc == NULL)
        return;
    for (size_t i = 0; i < scn_nkeys; i++)
        if (scn_is_list(&scn_keys[i]))
            scn_list_replace(sc, &scn_keys[i], NULL, 0);
    scn_sweep_clear(sc);
    for (int i = 0; i < sc->ninclude; i++)
        free(sc->include_path[i]);
    free(sc->include_path);
    sc->include_path = NULL;
    sc->ninclude = 0;
}

int scenario_copy(scenario *dst, const scenario *src, char *err, size_t errlen)
{
    *dst = *src; /* every value; then dst's own copy of what src owns, pointers first cut */
    for (size_t i = 0; i < scn_nkeys; i++)
        if (scn_is_list(&scn_keys[i])) {
            void *none = NULL;
            memcpy((char *)dst + scn_keys[i].offset, &none, sizeof none);
        }
    dst->include_path = NULL;
    dst->ninclude = 0;
    bool ok = scn_sweep_copy(dst, src) == 0;
    for (size_t i = 0; i < scn_nkeys && ok; i++) {
        const key_def *k = &scn_keys[i];
        int n;
        memcpy(&n, (const char *)src + k->count_offset, sizeof n);
        if (!scn_is_list(k) || n <= 0)
            continue;
        size_t bytes = (size_t)n * scn_elem_size(k->type);
        void *items = malloc(bytes);
        if (items == NULL) {
            memcpy((char *)dst + k->count_offset, &(int){0}, sizeof(int));
            ok = false;
            break;
        }
        memcpy(items, scn_list_items(src, k), bytes);
        scn_list_replace(dst, k, items, n);
    }
    if (ok && src->ninclude > 0) {
        dst->include_path = calloc((size_t)src->ninclude, sizeof *dst->include_path);
        ok = dst->include_path != NULL;
        for (int i = 0; ok && i < src->ninclude; i++, dst->ninclude++)
            ok = (dst->include_path[i] = strdup(src->include_path[i])) != NULL;
    }
    if (!ok) {
        /* Lists not reached still count src's elements: empty them before freeing. */
        for (size_t i = 0; i < scn_nkeys; i++)
            if (scn_is_list(&scn_keys[i]) && scn_list_items(dst, &scn_keys[i]) == NULL)
                memcpy((char *)dst + scn_keys[i].count_offset, &(int){0}, sizeof(int));
        scenario_free(dst);
        return scn_errf(err, errlen, "out of memory");
    }
    return 0;
}

void scn_axis_clear(sweep_axis *axis)
{
    for (int v = 0; v < axis->nvalues; v++)
        free(axis->values[v]);
    free(axis->values);
    axis->values = NULL;
    axis->nvalues = 0;
}

void scn_sweep_clear(scenario *sc)
{
    for (int a = 0; a < sc->nsweep; a++)
        scn_axis_clear(&sc->sweep[a]);
    free(sc->sweep);
    sc->sweep = NULL;
    sc->nsweep = 0;
}

int scn_sweep_append(scenario *sc, const char *key, int line)
{
    sweep_axis *grown = realloc(sc->sweep, (size_t)(sc->nsweep + 1) * sizeof *grown);
    if (grown == NULL)
        return -1;
    sc->sweep = grown;
    sweep_axis *axis = &sc->sweep[sc->nsweep];
    memset(axis, 0, sizeof *axis);
    scn_bprintf(axis->key, sizeof axis->key, "%s", key);
    axis->line = line;
    return sc->nsweep++;
}

int scn_sweep_copy(scenario *dst, const scenario *src)
{
    dst->sweep = NULL;
    dst->nsweep = 0;
    for (int a = 0; a < src->nsweep; a++) {
        const sweep_axis *from = &src->sweep[a];
        int at = scn_sweep_append(dst, from->key, from->line);
        if (at < 0)
            goto fail;
        sweep_axis *to = &dst->sweep[at];
        to->values = malloc((size_t)(from->nvalues > 0 ? from->nvalues : 1) * sizeof *to->values);
        if (to->values == NULL)
            goto fail;
        for (; to->nvalues < from->nvalues; to->nvalues++)
            if ((to->values[to->nvalues] = strdup(from->values[to->nvalues])) == NULL)
                goto fail;
    }
    return 0;
fail:
    scn_sweep_clear(dst);
    return -1;
}
