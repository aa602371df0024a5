/* fuzz_import.h — what the importer's fuzz targets share: an input as a file (a memfd,
 * so that the readers open it by path as they open a trace), and the checks on what a
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
