/* trace_kineto.c — one rank of a run as a PyTorch profiler (Kineto) trace file, the
 * input Holistic Trace Analysis reads: distributedInfo, host ops, ProfilerStep
 * annotations, and the device streams' spans as CUDA-like kernels with stream ids,
 * allreduces named like NCCL's kernels.  Contract and naming: trace_export.h.
 *
 * HTA finds a file's rank with the regex "rank":\s+(\d+) anywhere in it, so
 * distributedInfo comes first, is written with a space after the colon, and no arg
 * of any event is called "rank". */
#include "common/errmsg.h"
#include "engine/device.h"
#include "reports/trace_export.h"
#include "reports/trace_internal.h"

#include <stdbool.h>
#include <string.h>

#include "profiler/store_read_span_rows.h"
#include "profiler/store_read_spans.h"

typedef struct {
    FILE *out;
    bool first;
    int rank, world_size;
    int64_t correlation; /* last id handed out */
} kineto_writer;

static FILE *next_event(kineto_writer *k)
{
    if (!k->first)
        fputs(",\n", k->out);
    k->first = false;
    return k->out;
}

static int host_pid(const kineto_writer *k)
{
    return TRACE_KINETO_HOST_PID_BASE + k->rank;
}

static void write_header(kineto_writer *k, const trace_run *run)
{
    FILE *o = k->out;
    fprintf(o, "{\"schemaVersion\": 1,\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d,"
               " \"world_size\": %d, \"pg_count\": 1, \"pg_config\": [{\"pg_name\": \"0\","
               " \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": %d,"
               " \"ranks\": [",
            k->rank, k->world_size, k->world_size);
    for (int r = 0; r < k->world_size; r++)
        fprintf(o, "%s%d", r ? ", " : "", r);
    fprintf(o, "]}]},\n\"deviceProperties\": [{\"id\": %d, \"name\": ", k->rank);
    char device[200];
    snprintf(device, sizeof device, "ddpprof %s device", run->backend[0] ? run->backend : "?");
    tj_str(o, device);
    fputs("}],\n\"traceName\": ", o);
    tj_str(o, run->name);
    fputs(",\n\"displayTimeUnit\": \"ms\",\n\"traceEvents\": [\n", o);
    int hp = host_pid(k);
    fprintf(next_event(k),
            "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0,"
            " \"args\": {\"name\": \"ddpprof rank %d\"}},\n"
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": 1,"
            " \"args\": {\"name\": \"host\"}},\n"
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": 2,"
            " \"args\": {\"name\": \"launch\"}},\n"
            "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0,"
            " \"args\": {\"name\": \"GPU %d\"}},\n"
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d,"
            " \"args\": {\"name\": \"stream %d (compute)\"}},\n"
            "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d,"
            " \"args\": {\"name\": \"stream %d (comm)\"}}",
            hp, k->rank, hp, hp, k->rank, k->rank, k->rank, TRACE_KINETO_COMPUTE_STREAM,
            TRACE_KINETO_COMPUTE_STREAM, k->rank, TRACE_KINETO_COMM_STREAM,
            TRACE_KINETO_COMM_STREAM);
}

static void write_span_args(FILE *o, const store_span_row *s)
{
    fputs("\"kind\": ", o);
    tj_str(o, s->kind);
    fprintf(o, ", \"iter\": %d, \"layer\": ", s->iter);
    tj_int_or_null(o, s->has_layer, s->layer);
    fputs(", \"bucket\": ", o);
    tj_int_or_null(o, s->has_bucket, s->bucket);
    fputs(", \"bytes\": ", o);
    tj_int_or_null(o, s->has_bytes, s->bytes);
    fputs(", \"seq\": ", o);
    tj_int_or_null(o, s->has_seq, s->seq);
}

/* HTA counts a kernel as computation unless its name matches one of these (its
 * ComputeKernelGroupingPattern, inverted); a span name that would is replaced by its
 * kind alone. */
static bool hta_non_compute_name(const char *name)
{
    static const char *const anywhere[] = {"Memcpy", "Memset", "dma"};
    static const char *const prefix[] = {"nccl", "hip", "hccl", "job_exe", "packet", "pe_exe",
                                         "cpum_exe_subgraph", "collective_subgraph_execution",
                                         "runFunction", "Stream Wait Event"};
    for (size_t i = 0; i < sizeof anywhere / sizeof *anywhere; i++)
        if (strstr(name, anywhere[i]))
            return true;
    for (size_t i = 0; i < sizeof prefix / sizeof *prefix; i++)
        if (strncmp(name, prefix[i], strlen(prefix[i])) == 0)
            return true;
    const char *cuda = strstr(name, "cuda");
    return strstr(name, "Sync") || (cuda && strstr(cuda, "LaunchKernel"));
}

static void kernel_name(char *buf, size_t n, const char *kind, const char *name)
{
    if (!strcmp(kind, "allreduce")) {
        snprintf(buf, n, "%s", TRACE_KINETO_ALLREDUCE_KERNEL);
    } else if (!strcmp(kind, "broadcast")) {
        snprintf(buf, n, "%s", TRACE_KINETO_BROADCAST_KERNEL);
    } else {
        snprintf(buf, n, "%s: %s", kind, name ? name : "");
        if (hta_non_compute_name(buf))
            snprintf(buf, n, "%s", kind);
    }
}

static void write_device_span(kineto_writer *k, const store_span_row *s, int stream)
{
    const char *kind = s->kind;
    int64_t start = s->start_ns, end = s->end_ns;
    int64_t corr = ++k->correlation;
    char name[256];
    kernel_name(name, sizeof name, kind ? kind : "", s->name);
    /* The launch: a host runtime call ending where the kernel starts. */
    int64_t launch = start >= 1000 ? start - 1000 : 0;
    FILE *o = next_event(k);
    fprintf(o, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\","
               " \"pid\": %d, \"tid\": 2, \"ts\": ", host_pid(k));
    tj_us(o, launch);
    fputs(", \"dur\": ", o);
    tj_us(o, start - launch);
    fprintf(o, ", \"args\": {\"cbid\": 211, \"correlation\": %lld}}", (long long)corr);
    o = next_event(k);
    fprintf(o, "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
    tj_str(o, name);
    fprintf(o, ", \"pid\": %d, \"tid\": %d, \"ts\": ", k->rank, stream);
    tj_us(o, start);
    fputs(", \"dur\": ", o);
    tj_us(o, end - start);
    fprintf(o, ", \"args\": {\"device\": %d, \"stream\": %d, \"correlation\": %lld,"
               " \"External id\": %lld, \"span name\": ",
            k->rank, stream, (long long)corr, (long long)corr);
    tj_str(o, s->name);
    fputs(", ", o);
    write_span_args(o, s);
    if (kind && (!strcmp(kind, "allreduce") || !strcmp(kind, "broadcast"))) {
        long long elems = (s->has_bytes ? s->bytes : 0) / FP32_BYTES;
        fprintf(o, ", \"Collective name\": \"%s\", \"In msg nelems\": %lld,"
                   " \"Out msg nelems\": %lld, \"Group size\": %d, \"dtype\": \"Float\"",
                strcmp(kind, "allreduce") ? "broadcast" : "allreduce", elems, elems,
                k->world_size);
    }
    fputs("}}", o);
}

static void write_host_span(kineto_writer *k, const store_span_row *s)
{
    int64_t start = s->start_ns, end = s->end_ns;
    FILE *o = next_event(k);
    fputs("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": ", o);
    tj_str(o, s->name);
    fprintf(o, ", \"pid\": %d, \"tid\": 1, \"ts\": ", host_pid(k));
    tj_us(o, start);
    fputs(", \"dur\": ", o);
    tj_us(o, end - start);
    fputs(", \"args\": {", o);
    write_span_args(o, s);
    fputs("}}", o);
}

static int write_span(const store_span_row *s, void *ctx)
{
    kineto_writer *k = ctx;
    int stream = trace_stream_index(s->stream);
    if (stream == 1)
        write_device_span(k, s, TRACE_KINETO_COMPUTE_STREAM);
    else if (stream == 2)
        write_device_span(k, s, TRACE_KINETO_COMM_STREAM);
    else
        write_host_span(k, s);
    return 0;
}

static int write_spans(store *st, int64_t run_id, kineto_writer *k, char *err, size_t errlen)
{
    store_span_filter rank = STORE_SPAN_FILTER_ALL;
    rank.rank = k->rank;
    return store_each_span(st, run_id, &rank, write_span, k, err, errlen);
}

static int write_step(const store_span_group *g, void *ctx)
{
    kineto_writer *k = ctx;
    FILE *o = next_event(k);
    fprintf(o, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\","
               " \"pid\": %d, \"tid\": 1, \"ts\": ",
            g->iter, host_pid(k));
    tj_us(o, g->first_start_ns);
    fputs(", \"dur\": ", o);
    tj_us(o, g->last_end_ns - g->first_start_ns);
    fputs(", \"args\": {}}", o);
    return 0;
}

/* ProfilerStep#N over each iteration's spans on this rank, as HTA numbers steps. */
static int write_steps(store *st, int64_t run_id, kineto_writer *k, char *err, size_t errlen)
{
    return store_each_rank_iteration(st, run_id, k->rank, write_step, k, err, errlen);
}

int trace_export_kineto(store *st, int64_t run_id, int rank, FILE *out, char *err, size_t errlen)
{
    trace_run run;
    if (trace_load_run(st, run_id, &run, err, errlen) < 0)
        return -1;
    kineto_writer k = {.out = out, .first = true, .rank = rank, .world_size = run.world_size};
    write_header(&k, &run);
    if (write_steps(st, run_id, &k, err, errlen) < 0 || write_spans(st, run_id, &k, err, errlen) < 0)
        return -1;
    fputs("\n]}\n", out);
    return trace_finish_output(out, err, errlen);
}
