/* coordinator.h — the one writer of a run whose ranks are processes.
 *
 * Contract: coordinator_open() records the run ('running'), starts the span writer,
 * creates the backend's shared world and listens for the ranks (port 0: any free
 * port, coordinator_port() tells which).  coordinator_serve() meets the world_size rank
 * processes at the rendezvous — they join as rendezvous ranks 1..world (rank r as r+1),
 * the coordinator being rendezvous rank 0 — hands them the run id, the world's handle and
 * the clock origin, stores each rank's clock offset and uncertainty, then gathers their
 * spans as they stream in and watches them until every rank has said it is done or the
 * run has failed.  The first failure wins and aborts the shared world at once, so every
 * other rank stops: a rank's own failure message, a rank whose stream closes without a
 * word (it died: its exit status or signal is named when it is a child), a failed span
 * write, or an interrupt.  Ranks that have not exited timeout_s + 2 s after an abort are
 * killed when they are this process's children (`children`, may be NULL).  Spans on rank
 * r's clock are stored on the coordinator's: t - offset(r).
 * coordinator_close() stores rank 0's rebuilt buckets, marks the run 'complete' or
 * 'failed', and frees everything; the result mirrors launch_run()'s.
 */
#ifndef DDPPROF_COORDINATOR_H
#define DDPPROF_COORDINATOR_H

#include <stddef.h>
#include <sys/types.h>

#include "engine/backend.h"
#include "engine/launch/launcher.h"
#include "engine/workload/model_zoo.h"
#include "engine/scenario/scenario.h"
#include "profiler/store.h"

typedef struct coordinator coordinator;

typedef struct {
    const scenario *sc;
    const model *m;
    store *st;
    const launch_options *opt;
    const backend_ops *be;
    const char *bind_addr; /* NULL: every interface */
    int port;
} coordinator_args;

int coordinator_open(const coordinator_args *a, coordinator **out, char *err, size_t errlen);
int coordinator_port(const coordinator *c);
/* Returns 0 when every rank finished, 1 when the run failed (the reason is kept). */
int coordinator_serve(coordinator *c, const pid_t *children, int nchildren);
/* Fails the run with `why` (first failure wins) and aborts the shared world. */
void coordinator_fail(coordinator *c, const char *why);
/* Records the end; returns as launch_run() does (0 complete, 1 failed, -1 unrecorded). */
int coordinator_close(coordinator *c, launch_result *res, char *err, size_t errlen);

#endif
