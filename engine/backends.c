/* backends.c — the list of backends built into this ddpprof. */
#include <string.h>

#include "backend.h"
#include "cpu/cpu_backend.h"

const backend_ops *backend_find(const char *name)
{
    static const backend_ops *const built_in[] = {&cpu_backend_ops};
    for (size_t i = 0; i < sizeof built_in / sizeof built_in[0]; i++)
        if (!strcmp(built_in[i]->name, name))
            return built_in[i];
    return NULL;
}
