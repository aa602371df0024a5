/* two_rank_store.h — the runs that the store's read tests (test_store_read.c and
 * test_store_read_rows.c) write and read back, kept in one place so that both read the
 * same data.
 *
 * The contract:
 *  - two_rank_run() begins a run named `name` in the fixture's store: 2 ranks of speed 1
 *    and 1.5, 3 iterations of which 1 warm-up, 1000 parameters, buckets of cap_mb; it
 *    fails the test when the store refuses, and returns the run's id.
 *  - two_rank_iterations() writes into s (room for at least 36 spans) two ranks'
 *    iterations 0 to 2: per rank and iteration a forward, a backward, a copy into each of
 *    two buckets and the buckets' allreduces (seq from 1, two a step), rank r's times
 *    10 r ns after rank 0's.  It returns the number of spans written, and in *next_seq the
 *    seq after the last allreduce's, for a test that adds a collective of its own.
 * Include it after cmocka.h (it asserts). */
#ifndef DDPPROF_TESTS_TWO_RANK_STORE_H
#define DDPPROF_TESTS_TWO_RANK_STORE_H

#include "tmp_store.h"

static inline int64_t two_rank_run(store_fixture *f, const char *name, double cap_mb)
{
    double speed[2] = {1.0, 1.5};
    store_run_info info = {.name = name,
                           .source = "test.ini",
                           .scenario_ini = "[run]\nworld_size = 2\n",
                           .backend = "sim",
                           .model = "mlp",
                           .world_size = 2,
                           .iterations = 3,
                           .warmup = 1,
                           .total_params = 1000,
                           .bucket_cap_mb = cap_mb,
                           .rank_speed = speed};
    int64_t id = -1;
    assert_int_equal(store_begin_run(f->st, &info, &id, f->err, sizeof f->err), 0);
    return id;
}

static inline int two_rank_iterations(span *s, int64_t *next_seq)
{
    int n = 0;
    int64_t seq = 1;
    for (int it = 0; it < 3; it++) {
        for (int r = 0; r < 2; r++) {
            int64_t t = 1000 * it + 10 * r;
            s[n++] = mk(r, it, STREAM_COMPUTE, SPAN_FORWARD, -1, -1, 0, t, t + 100);
            s[n++] = mk(r, it, STREAM_COMPUTE, SPAN_BACKWARD, -1, -1, 0, t + 100, t + 300);
            s[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, 0, -1, 0, t + 150, t + 160);
            s[n++] = mk(r, it, STREAM_COMPUTE, SPAN_COPY_IN, 1, -1, 0, t + 290, t + 310);
            s[n++] = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, 0, seq, 64, t + 160, 1000 * it + 400);
            s[n++] = mk(r, it, STREAM_COMM, SPAN_ALLREDUCE, 1, seq + 1, 128, t + 310, 1000 * it + 500);
        }
        seq += 2;
    }
    *next_seq = seq;
    return n;
}

#endif
