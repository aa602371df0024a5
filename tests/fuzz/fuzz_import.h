/* fuzz_import.h — what the importer's fuzz targets share: an input as a file (a memfd,
 * so that the readers open it by path as they open a trace) with the limits every reader
 * is given (fuzz_input: 200,000 events, 64 MiB), and the checks on what a
 * reader made of it: every rank analysed into spans (rank_spans.c), each span ending
 * at or after its start, of a known stream and kind, its bucket only on an allreduce or
 * a copy into a bucket.  A broken property aborts, so that libFuzzer keeps the input. */
#ifndef DDPPROF_FUZZ_IMPORT_H
#define DDPPROF_FUZZ_IMPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profiler/import/import_internal.h"
#include "profiler/span.h"

/* The input as /proc/self/fd/N; -1 when it cannot be made (not the input's fault). */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t n)
{
    int fd = memfd_create("fuzz-trace", 0);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

/* libFuzzer's entry, which each importer target defines. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An input made a file for a reader: the memfd and its path, the reader's limits,
 * counting the events it takes into used (so the struct stays where it was opened), and
 * room for the reader's error. */
typedef struct {
    int fd;
    char path[64];
    size_t used;
    trace_limits lim;
    char err[1024];
} fuzz_input;

/* fuzz_file of the input into in, with the limits; 0, or -1 when the file cannot be made
 * (not the input's fault: the target returns 0).  The target closes in->fd. */
static inline int fuzz_input_open(fuzz_input *in, const uint8_t *data, size_t size)
{
    in->fd = fuzz_file(data, size, in->path, sizeof in->path);
    in->used = 0;
    in->lim = (trace_limits){.max_events = 200000, .max_file_bytes = 64 << 20, .events_used = &in->used};
    return in->fd < 0 ? -1 : 0;
}

static inline void fuzz_check_rank(trace_rank *tr, bool device_job)
{
    rank_result rr;
    char err[512];
    if (rank_spans_build(&rr, tr, device_job, err, sizeof err) < 0) {
        rank_result_free(&rr);
        return; /* out of memory, or the event budget: a refusal, not a bug */
    }
    for (size_t i = 0; i < rr.nsp; i++) {
        const pspan *p = &rr.sp[i];
        if (p->end < p->start || p->stream >= STREAM_COUNT || p->kind >= SPAN_KIND_COUNT ||
            (p->bucket >= 0 && p->kind != SPAN_ALLREDUCE && p->kind != SPAN_COPY_IN) ||
            p->name < 0 || (size_t)p->name >= tr->names.n) {
            fprintf(stderr, "import property failed: span %zu [%lld, %lld] stream %u kind %u bucket %d\n", i,
                    (long long)p->start, (long long)p->end, p->stream, p->kind, p->bucket);
            abort();
        }
    }
    rank_result_free(&rr);
}

#endif
