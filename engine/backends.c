/* backends.c — the list of backends built into this ddpprof, most preferred first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/cpu/cpu_backend.h"
#include "engine/sim/sim_backend.h"
#ifdef DDPPROF_HAVE_CUDA
#include "engine/cuda/cuda_backend.h"
#endif

static const backend_ops *const built_in[] = {
#ifdef DDPPROF_HAVE_CUDA
    &cuda_backend_ops,
#endif
    &cpu_backend_ops,
    /* Last: `auto` must never pick a backend that only models time. */
    &sim_backend_ops,
};
#define NBUILT (sizeof built_in / sizeof built_in[0])

const backend_ops *backend_find(const char *name)
{
    for (size_t i = 0; i < NBUILT; i++)
        if (!strcmp(built_in[i]->name, name))
            return built_in[i];
    return NULL;
}

const backend_ops *backend_auto(char *why, size_t whylen)
{
    why[0] = '\0';
    for (size_t i = 0; i < NBUILT; i++) {
        char reason[256];
        if (built_in[i]->run_ranks)
            continue; /* virtual time is never a default */
        if (built_in[i]->available(reason, sizeof reason))
            return built_in[i];
        if (!why[0])
            snprintf(why, whylen, "%s: %s", built_in[i]->name, reason);
    }
    return NULL;
}

static int by_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

void backend_names(char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
    /* Alphabetical: a stable order whatever the preference. */
    const char *names[NBUILT];
    for (size_t k = 0; k < NBUILT; k++)
        names[k] = built_in[k]->name;
    qsort(names, NBUILT, sizeof names[0], by_name);
    for (size_t k = 0; k < NBUILT; k++) {
        int w = snprintf(out + len, outlen - len, "%s%s", len ? ", " : "", names[k]);
        if (w < 0 || (size_t)w >= outlen - len)
            return;
        len += (size_t)w;
    }
}
