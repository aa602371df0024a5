/* tmp_store.h — test helpers shared by the store, report and engine tests: a results
 * database in a fresh temporary file (removed with its WAL files afterwards), and a
 * span built from its fields. */
#ifndef DDPPROF_TMP_STORE_H
#define DDPPROF_TMP_STORE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profiler/store.h"

static inline void remove_db(const char *path)
{
    char p[512];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* Creates /tmp/<prefix>XXXXXX (written into path, pathlen >= 64) and opens it as a
 * store.  Returns 0, or -1 with the reason on stderr and nothing left behind. */
static inline int open_tmp_store(char *path, size_t pathlen, const char *prefix, store **st, char *err,
                                 size_t errlen)
{
    snprintf(path, pathlen, "/tmp/%sXXXXXX", prefix);
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd); /* an empty file is an empty SQLite database */
    if (store_open(path, st, err, errlen) != 0) {
        fprintf(stderr, "store_open: %s\n", err);
        remove_db(path);
        return -1;
    }
    return 0;
}

static inline span mk(int rank, int iter, span_stream stream, span_kind kind, int bucket, int64_t seq,
                      int64_t bytes, int64_t start, int64_t end)
{
    span s = {.rank = rank,
              .iter = iter,
              .stream = (uint8_t)stream,
              .kind = (uint8_t)kind,
              .layer = -1,
              .bucket = bucket,
              .seq = seq,
              .bytes = bytes,
              .start_ns = start,
              .end_ns = end};
    snprintf(s.name, sizeof s.name, "%s", span_kind_name(kind));
    return s;
}

#endif
