/* whatif.h — a scenario derived from a run, recorded or imported, that predict replays:
 * what `ddpprof whatif` runs before the user's overrides.
 *
 * Contract: whatif_derive() reads run `run_id` of the store (profiler's read API) and fills a scenario that keeps what
 * was measured, over the run's measured iterations (the first after DDP's rebuild and the
 * warm-up on), each figure the mean over iterations (the job's throughput is its mean period):
 *  - compute on the wall clock, idle gaps included (a step bound by the host's launches
 *    stays so): the forward phase (first forward op to first backward op), then per
 *    bucket, in launch order, the time from the previous bucket's gradients being ready
 *    (the end of its last copy into the bucket) to this one's; as model.layer_forward_us
 *    and layer_backward_us of a representative rank (the median rank by compute), the
 *    other ranks as skew.speed factors of it;
 *  - the optimizer phase (from the later of the last bucket allreduce's end and the last
 *    backward op's end to the step's end) as device.optimizer_gbps over the SGD step's
 *    bytes; copies cost nothing apart (their time is in the measured intervals);
 *  - communication from the last arrival: each bucket size's median allreduce time from
 *    the last rank's arrival to its end (a rank's allreduce contains its wait for the
 *    others) as network.algorithm = measured at the run's world size, and a ring
 *    alpha-beta fitted to the same points for any other world size;
 *  - DDP's buckets: the model's own parameters where it is known (the recorded run's
 *    scenario, `model` naming a zoo preset, or a zoo preset whose buckets at the run's
 *    bucket_cap_mb reproduce the run's exactly), each bucket's measured time spread over
 *    its layers by their FLOPs; else one flat parameter per bucket (re-bucketing then
 *    works at bucket granularity, and the notes say so).
 * [host] is reset (the measured times hold the host's effects) and buffers are not
 * broadcast apart (their time is in the measured forward).  Returns 0 with *out filled
 * (free with whatif_free), or -1 with err: a run without DDP buckets, sizes or
 * measured iterations, or the store's error.
 */
#ifndef DDPPROF_WHATIF_H
#define DDPPROF_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/scenario/scenario.h"
#include "profiler/store.h"

typedef struct {
    const char *model; /* a zoo preset the run's buckets hold, or NULL: found */
} whatif_options;

typedef struct {
    scenario *sc;          /* the derived scenario (malloc'ed) */
    bool bucket_granularity; /* one parameter per bucket: re-bucketing merges whole buckets */
    bool sizes_unknown;    /* the run gave no message sizes: bucket_cap_mb and first_bucket_mb
                            * cannot change (each bucket is its time's equivalent bytes) */
    char notes[4096];      /* what was found and assumed, one remark per line */
} whatif_derived;

int whatif_derive(store *st, int64_t run_id, const whatif_options *o, whatif_derived *out, char *err,
                  size_t errlen);
void whatif_free(whatif_derived *d);

#endif
