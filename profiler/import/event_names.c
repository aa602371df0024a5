/* event_names.c — see event_names.h. */
#include "profiler/import/event_names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool istarts(const char *s, const char *prefix)
{
    return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

int name_phase(const char *name)
{
    if (!strcmp(name, "DistributedDataParallel.forward"))
        return SPAN_FORWARD;
    /* The reducer's grad / world_size into the bucket (reducer.cpp mark_variable_ready),
     * under the AccumulateGrad node that made the gradient ready. */
    if (strstr(name, "reducer::mul_out"))
        return SPAN_COPY_IN;
    if (strstr(name, "reducer::copy_bucket_to_grad"))
        return SPAN_COPY_OUT;
    if (starts(name, "autograd::engine::evaluate_function: "))
        return strstr(name, "AccumulateGrad") ? SPAN_COPY_IN : SPAN_BACKWARD;
    if (starts(name, "Optimizer.step"))
        return SPAN_OPTIMIZER;
    return -1;
}

bool name_profiler_step(const char *name, long long *n)
{
    /* HTA's pattern: ProfilerStep\s*#\s*(\d+) */
    if (!starts(name, "ProfilerStep"))
        return false;
    const char *p = name + strlen("ProfilerStep");
    while (isspace((unsigned char)*p))
        p++;
    if (*p++ != '#')
        return false;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (v < 0 || v > 1000000000LL)
        return false;
    *n = v;
    return true;
}

bool name_is_nccl_kernel(const char *name)
{
    return istarts(name, "nccl") || strstr(name, "ncclKernel") || strstr(name, "ncclDevKernel");
}

span_kind name_nccl_kind(const char *name)
{
    const char *p = NULL;
    const char *schemes[] = {"ncclKernel_", "ncclDevKernel_"};
    for (size_t i = 0; i < 2 && !p; i++) {
        size_t n = strlen(schemes[i]);
        for (const char *q = name; *q; q++)
            if (!strncasecmp(q, schemes[i], n)) {
                p = q + n;
                break;
            }
    }
    if (!p)
        return SPAN_COLLECTIVE;
    static const struct {
        const char *token;
        span_kind kind;
    } t[] = {{"AllReduce", SPAN_ALLREDUCE},       {"Broadcast", SPAN_BROADCAST},
             {"AllGather", SPAN_ALL_GATHER},      {"ReduceScatter", SPAN_REDUCE_SCATTER},
             {"AllToAll", SPAN_ALL_TO_ALL},       {"SendRecv", SPAN_SEND_RECV},
             {"Send", SPAN_SEND_RECV},            {"Recv", SPAN_SEND_RECV},
             {"Reduce", SPAN_REDUCE}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        size_t n = strlen(t[i].token);
        if (!strncasecmp(p, t[i].token, n) && !isalpha((unsigned char)p[n]))
            return t[i].kind;
    }
    return SPAN_COLLECTIVE;
}

/* "all_gather", "_allgather_base", "allgather_into_tensor_coalesced": lower case, with
 * the underscores and the variant suffixes dropped, then looked up. */
int name_coll_kind(const char *coll)
{
    char k[64];
    size_t n = 0;
    for (const char *p = coll; *p && n < sizeof k - 1; p++)
        if (*p != '_')
            k[n++] = (char)tolower((unsigned char)*p);
    k[n] = '\0';
    static const struct {
        const char *prefix;
        int kind;
    } t[] = {{"allreduce", SPAN_ALLREDUCE},      {"broadcast", SPAN_BROADCAST},
             {"allgather", SPAN_ALL_GATHER},     {"reducescatter", SPAN_REDUCE_SCATTER},
             {"alltoall", SPAN_ALL_TO_ALL},      {"send", SPAN_SEND_RECV},
             {"recv", SPAN_SEND_RECV},           {"barrier", SPAN_BARRIER},
             {"reduce", SPAN_REDUCE},            {"gather", SPAN_COLLECTIVE},
             {"scatter", SPAN_COLLECTIVE}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (starts(k, t[i].prefix))
            return t[i].kind;
    return -1;
}

bool name_gloo(const char *name, span_kind *kind)
{
    if (!starts(name, "gloo:"))
        return false;
    int k = name_coll_kind(name + 5);
    *kind = k < 0 ? SPAN_COLLECTIVE : (span_kind)k;
    return true;
}

bool name_is_collective_launch(const char *name)
{
    return !strcmp(name, "record_param_comms") || starts(name, "c10d::");
}

/* HTA's regexes, as re.match (anchored at the start) applies them. */
hta_class name_hta_class(const char *name)
{
    if (starts(name, "nccl") || starts(name, "hip") || starts(name, "hccl") || strstr(name, "ncclKernel"))
        return HTA_COMMUNICATION;
    if (starts(name, "Memcpy") || starts(name, "Memset") || starts(name, "hipMemcpy") ||
        starts(name, "hipMemset") || starts(name, "dma"))
        return HTA_MEMORY;
    /* ComputeKernelGroupingPattern, inverted: (^nccl)|(.*Memcpy)|(.*Memset)|(.*dma)|
     * (^.*Sync)|(^Stream Wait Event)|(cuda.*LaunchKernel)|(^runFunction)|(^hip)|
     * (^job_exe)|(^packet)|(^pe_exe)|(^cpum_exe_subgraph)|(^hccl)|
     * (^collective_subgraph_execution).  re.match anchors each alternative at the start,
     * so "cuda.*LaunchKernel" must begin the name. */
    static const char *const prefix[] = {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe",
                                         "packet", "pe_exe", "cpum_exe_subgraph", "hccl",
                                         "collective_subgraph_execution"};
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (starts(name, prefix[i]))
            return HTA_OTHER;
    if (strstr(name, "Memcpy") || strstr(name, "Memset") || strstr(name, "dma") || strstr(name, "Sync"))
        return HTA_OTHER;
    if (starts(name, "cuda") && strstr(name + 4, "LaunchKernel"))
        return HTA_OTHER;
    return HTA_COMPUTATION;
}
