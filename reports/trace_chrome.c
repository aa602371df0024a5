/* trace_chrome.c — a run as one Chrome trace-event file (chrome://tracing, Perfetto
 * UI): a process per rank, a thread per stream, an "X" event per span, and flow
 * arrows from the last rank to reach each collective to every rank that waited for
 * it.  Contract and layout: trace_export.h. */
#include "common/errmsg.h"
#include "profiler/store_read_layout.h"
#include "profiler/store_read_span_rows.h"
#include "profiler/store_read_spans.h"
#include "reports/trace_export.h"
#include "reports/trace_internal.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char *const STREAM_NAMES[] = {"host", "compute", "comm"};

/* Comma handling for the traceEvents array, written one event at a time. */
typedef struct {
    FILE *out;
    bool first;
} event_list;

static FILE *next_event(event_list *l)
{
    if (!l->first)
        fputs(",\n", l->out);
    l->first = false;
    return l->out;
}

/* The rank table's speeds, to label each rank's process with. */
typedef struct {
    store_rank_row *v;
    size_t n, cap;
    char *err;
    size_t errlen;
} rank_rows;

static int add_rank(const store_rank_row *row, void *ctx)
{
    rank_rows *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        store_rank_row *grown = realloc(l->v, cap * sizeof *grown);
        if (!grown) {
            set_err(l->err, l->errlen, "out of memory");
            return -1;
        }
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = *row;
    return 0;
}

static const store_rank_row *find_rank(const rank_rows *l, int rank)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].rank == rank)
            return &l->v[i];
    return NULL;
}

static int write_metadata(store *st, int64_t run_id, event_list *l, char *err, size_t errlen)
{
    int *ranks;
    size_t n;
    if (trace_run_ranks(st, run_id, &ranks, &n, err, errlen) < 0)
        return -1;
    rank_rows rows = {.err = err, .errlen = errlen};
    if (store_each_rank(st, run_id, add_rank, &rows, err, errlen) != 0) {
        free(rows.v);
        free(ranks);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int r = ranks[i];
        FILE *o = next_event(l);
        fprintf(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"name\":\"rank %d\"}},\n", r, r);
        fprintf(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"sort_index\":%d}}", r, r);
        const store_rank_row *row = find_rank(&rows, r);
        if (row)
            fprintf(next_event(l),
                    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%d,\"tid\":0,"
                    "\"args\":{\"labels\":\"speed %g\"}}",
                    r, row->speed);
        for (int t = 0; t < 3; t++) {
            fprintf(next_event(l),
                    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"name\":\"%s\"}},\n"
                    "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
                    "\"args\":{\"sort_index\":%d}}",
                    r, t, STREAM_NAMES[t], r, t, t);
        }
    }
    free(rows.v);
    free(ranks);
    return 0;
}

static int write_span(const store_span_row *s, void *ctx)
{
    event_list *l = ctx;
    int tid = trace_stream_index(s->stream);
    FILE *o = next_event(l);
    fprintf(o, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", s->rank, tid < 0 ? 3 : tid);
    tj_us(o, s->start_ns);
    fputs(",\"dur\":", o);
    tj_us(o, s->end_ns - s->start_ns);
    fputs(",\"name\":", o);
    tj_str(o, s->name);
    fputs(",\"cat\":", o);
    tj_str(o, s->kind);
    fputs(",\"args\":{\"kind\":", o);
    tj_str(o, s->kind);
    fprintf(o, ",\"iter\":%d,\"layer\":", s->iter);
    tj_int_or_null(o, s->has_layer, s->layer);
    fputs(",\"bucket\":", o);
    tj_int_or_null(o, s->has_bucket, s->bucket);
    fputs(",\"bytes\":", o);
    tj_int_or_null(o, s->has_bytes, s->bytes);
    fputs(",\"seq\":", o);
    tj_int_or_null(o, s->has_seq, s->seq);
    fputs("}}", o);
    return 0;
}

static int write_spans(store *st, int64_t run_id, event_list *l, char *err, size_t errlen)
{
    return store_each_span(st, run_id, &STORE_SPAN_FILTER_ALL, write_span, l, err, errlen);
}

static void write_flow(event_list *l, const char *ph, int64_t id, int64_t seq, int rank,
                       int64_t ts)
{
    FILE *o = next_event(l);
    fprintf(o, "{\"ph\":\"%s\",\"id\":%lld,\"pid\":%d,\"tid\":2,\"ts\":", ph, (long long)id,
            rank);
    tj_us(o, ts);
    fprintf(o, ",\"cat\":\"collective\",\"name\":\"allreduce seq %lld\"%s}", (long long)seq,
            ph[0] == 'f' ? ",\"bp\":\"e\"" : "");
}

/* The arrows being drawn: rows come per collective, last arrival first, and that
 * rank is the arrow's source. */
typedef struct {
    event_list *l;
    int64_t world;
    int64_t seq, last_arrival;
    int last_rank; /* -1: no collective yet */
} flows;

static int add_flow(const store_collective_arrival *a, void *ctx)
{
    flows *f = ctx;
    if (a->seq != f->seq || f->last_rank < 0) {
        f->seq = a->seq;
        f->last_rank = a->rank;
        f->last_arrival = a->arrival_ns;
        return 0;
    }
    int64_t id = a->seq * f->world + a->rank + 1;
    write_flow(f->l, "s", id, a->seq, f->last_rank, f->last_arrival);
    write_flow(f->l, "f", id, a->seq, a->rank, f->last_arrival);
    return 0;
}

static int write_flows(store *st, int64_t run_id, int world_size, event_list *l, char *err, size_t errlen)
{
    flows f = {.l = l, .world = world_size > 0 ? world_size : 1, .seq = -1, .last_rank = -1};
    return store_each_collective_arrival(st, run_id, add_flow, &f, err, errlen);
}

/* The ranks whose spans the trace holds, as a JSON array, or null when it holds every
 * rank's (all `world` ranks have spans). */
static int write_spans_ranks(store *st, int64_t run_id, int world, FILE *out, char *err, size_t errlen)
{
    int *ranks;
    size_t n;
    if (trace_run_ranks(st, run_id, &ranks, &n, err, errlen) < 0)
        return -1;
    if ((int)n >= world) {
        fputs("null", out);
    } else {
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%d", i ? "," : "[", ranks[i]);
        fputs(n ? "]" : "[]", out);
    }
    free(ranks);
    return 0;
}

int trace_export_chrome(store *st, int64_t run_id, FILE *out, char *err, size_t errlen)
{
    trace_run run;
    if (trace_load_run(st, run_id, &run, err, errlen) < 0)
        return -1;
    fputs("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"ddpprof\",\"run_id\":", out);
    fprintf(out, "%lld,\"run_name\":", (long long)run_id);
    tj_str(out, run.name);
    fputs(",\"backend\":", out);
    tj_str(out, run.backend);
    fputs(",\"model\":", out);
    tj_str(out, run.model);
    fprintf(out, ",\"world_size\":%d,\"spans_ranks\":", run.world_size);
    if (write_spans_ranks(st, run_id, run.world_size, out, err, errlen) < 0)
        return -1;
    fputs("},\n\"traceEvents\":[\n", out);
    event_list l = {.out = out, .first = true};
    if (write_metadata(st, run_id, &l, err, errlen) < 0 ||
        write_spans(st, run_id, &l, err, errlen) < 0 ||
        write_flows(st, run_id, run.world_size, &l, err, errlen) < 0)
        return -1;
    fputs("\n]}\n", out);
    return trace_finish_output(out, err, errlen);
}
